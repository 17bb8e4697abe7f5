"""Atomics against a serial Python reference, on random inputs with heavy address collisions."""

import math
import zlib
import struct

import numpy as np
import pytest

from gpurace.sim.memory import ErrorKind, Memory, Space

SIZES = {"u32": 4, "s32": 4, "b32": 4, "u64": 8, "s64": 8, "b64": 8, "b16": 2, "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "f16x2": 4, "bf16x2": 4}


# ---------------------------------------------------------------- reference


def bits_to_float(ptx_type, raw):
    if ptx_type == "f16":
        return struct.unpack("<e", struct.pack("<H", raw))[0]
    if ptx_type == "bf16":
        return struct.unpack("<f", struct.pack("<I", raw << 16))[0]
    if ptx_type == "f32":
        return struct.unpack("<f", struct.pack("<I", raw))[0]
    return struct.unpack("<d", struct.pack("<Q", raw))[0]


def round_to_bits(ptx_type, x):
    """Correctly rounded (nearest even) encoding of the real number x (given as a double)."""
    if ptx_type == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if ptx_type == "f32":
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if ptx_type == "f16":
        return struct.unpack("<H", struct.pack("<e", x))[0]
    # bf16: 8 significant bits, exponent range of f32
    if x == 0 or math.isinf(x):
        return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
    e = max(math.frexp(abs(x))[1] - 1, -126)
    quantum = 2.0 ** (e - 7)
    q = round(x / quantum) * quantum
    if abs(q) >= 2.0**128:
        q = math.copysign(math.inf, x)
    return struct.unpack("<I", struct.pack("<f", q))[0] >> 16


def to_signed(v, bits):
    return v - (1 << bits) if v >> (bits - 1) else v


def reference_step(op, ptx_type, old, a, b):
    bits = 8 * SIZES[ptx_type]
    mask = (1 << bits) - 1
    kind = ptx_type[0]
    if op == "add":
        if ptx_type in ("f16x2", "bf16x2"):
            half = ptx_type[:-2]
            lo = reference_step("add", half, old & 0xFFFF, a & 0xFFFF, None)
            hi = reference_step("add", half, old >> 16, a >> 16, None)
            return lo | hi << 16
        if ptx_type[0] == "f" or ptx_type == "bf16":
            if ptx_type == "f32":
                s = float(np.float32(bits_to_float("f32", old)) + np.float32(bits_to_float("f32", a)))
            else:
                s = bits_to_float(ptx_type, old) + bits_to_float(ptx_type, a)
            return round_to_bits(ptx_type, s)
        return (old + a) & mask
    if op in ("min", "max"):
        if ptx_type[0] == "f" or ptx_type == "bf16":
            fo, fa = bits_to_float(ptx_type, old), bits_to_float(ptx_type, a)
            return a if (fa < fo if op == "min" else fa > fo) else old
        if kind == "s":
            o, v = to_signed(old, bits), to_signed(a, bits)
            return a if (v < o if op == "min" else v > o) else old
        return min(old, a) if op == "min" else max(old, a)
    if op == "and":
        return old & a
    if op == "or":
        return old | a
    if op == "xor":
        return old ^ a
    if op == "exch":
        return a
    if op == "cas":
        return b if old == a else old
    if op == "inc":
        return 0 if old >= a else old + 1
    if op == "dec":
        return a if old == 0 or old > a else old - 1
    raise AssertionError(op)


def reference(op, ptx_type, memory, idx, a, b):
    memory = list(memory)
    olds = []
    for lane, i in enumerate(idx):
        old = memory[i]
        olds.append(old)
        memory[i] = reference_step(op, ptx_type, old, int(a[lane]), None if b is None else int(b[lane]))
    return olds, memory


# ---------------------------------------------------------------- helpers


def run_atomic(op, ptx_type, initial, idx, a, b=None, space=Space.GLOBAL, nblocks=1):
    size = SIZES[ptx_type]
    n = len(idx)
    dtype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[size]
    mem = Memory(nblocks, n // nblocks)
    buf = mem.allocate_global("buf", size * len(initial), init=np.array(initial, dtype=dtype))
    t = np.arange(n)
    acc = mem.resolve(space, (buf.base + size * np.asarray(idx)).astype(np.uint64), t, t // (n // nblocks), size, write=True)
    old = mem.atomic(acc, op, ptx_type, a, b)
    return old.tolist(), np.frombuffer(mem.read(buf), dtype).tolist()


def random_bits(rng, ptx_type, n):
    bits = 8 * SIZES[ptx_type]
    if ptx_type in ("f32", "f64", "f16", "bf16"):
        scale = {"f16": 100.0, "bf16": 1e6, "f32": 1e7, "f64": 1e15}[ptx_type]
        vals = rng.choice([1.0, scale, -scale, 1 / scale]) * rng.standard_normal(n)
        return [round_to_bits(ptx_type, float(v)) for v in vals]
    if ptx_type in ("f16x2", "bf16x2"):
        half = ptx_type[:-2]
        return [random_bits(rng, half, 1)[0] | random_bits(rng, half, 1)[0] << 16 for _ in range(n)]
    return [int(x) for x in rng.integers(0, 1 << bits, n, dtype=np.uint64 if bits == 64 else np.int64)]


def colliding_indices(rng, n, nelems):
    """Some lanes on one hot element, the rest spread over a few others, in shuffled order."""
    hot = rng.integers(0, nelems)
    idx = rng.integers(0, nelems, n)
    idx[rng.random(n) < 0.5] = hot
    return idx


CASES = [
    ("add", t) for t in ("u32", "s32", "u64", "s64", "f32", "f64", "f16", "bf16", "f16x2", "bf16x2")
] + [
    (op, t) for op in ("min", "max") for t in ("u32", "s32", "u64", "s64", "f32", "f64", "f16", "bf16")
] + [
    (op, t) for op in ("and", "or", "xor") for t in ("b32", "b64")
] + [("exch", t) for t in ("b16", "b32", "b64")] + [("cas", t) for t in ("b16", "b32", "b64")] + [
    ("inc", "u32"), ("dec", "u32")
]


@pytest.mark.parametrize("op,ptx_type", CASES)
@pytest.mark.parametrize("seed", range(3))
def test_atomic_matches_serial_reference(op, ptx_type, seed):
    rng = np.random.default_rng(seed * 1000 + zlib.crc32(f"{op}.{ptx_type}".encode()) % 1000)
    n, nelems = 300, (5, 64, 64)[seed]
    initial = random_bits(rng, ptx_type, nelems)
    idx = colliding_indices(rng, n, nelems)
    a = random_bits(rng, ptx_type, n)
    b = None
    if op == "cas":
        # compare values drawn from a small pool that includes the initial values, so some succeed
        pool = initial + random_bits(rng, ptx_type, 3)
        a = [pool[i] for i in rng.integers(0, len(pool), n)]
        b = [pool[i] for i in rng.integers(0, len(pool), n)]
    if op in ("inc", "dec"):
        a = [int(x) for x in rng.choice([3, 7, 2**32 - 1, 0], n)] if seed == 2 else [5] * n
        initial = ([0, 5, 9, 2**32 - 1, 3] * nelems)[:nelems]
    dt = {2: np.uint16, 4: np.uint32, 8: np.uint64}[SIZES[ptx_type]]
    old, final = run_atomic(op, ptx_type, initial, idx, np.array(a, dtype=dt), None if b is None else np.array(b, dtype=dt))
    ref_old, ref_final = reference(op, ptx_type, initial, idx, a, b)
    assert old == ref_old
    assert final == ref_final


def test_inc_and_dec_wrap_around_their_bound():
    old, final = run_atomic("inc", "u32", [2], [0] * 6, np.full(6, 3))
    assert old == [2, 3, 0, 1, 2, 3] and final == [0]
    old, final = run_atomic("inc", "u32", [9], [0] * 4, np.full(4, 3))
    assert old == [9, 0, 1, 2] and final == [3]
    old, final = run_atomic("dec", "u32", [1], [0] * 5, np.full(5, 3))
    assert old == [1, 0, 3, 2, 1] and final == [0]
    old, final = run_atomic("dec", "u32", [9], [0] * 3, np.full(3, 3))
    assert old == [9, 3, 2] and final == [1]


def test_cas_chain_and_lock():
    # each lane expects what the previous one wrote: the whole chain succeeds in batch order
    n = 50
    old, final = run_atomic("cas", "b32", [0], [0] * n, np.arange(n), np.arange(1, n + 1))
    assert old == list(range(n)) and final == [n]
    # every lane tries to take a free lock: exactly the first succeeds
    old, final = run_atomic("cas", "b32", [0], [0] * n, np.zeros(n), np.ones(n))
    assert old == [0] + [1] * (n - 1) and final == [1]


def test_float_add_keeps_the_serial_rounding_order():
    big, one = struct.unpack("<I", struct.pack("<f", 1e8))[0], struct.unpack("<I", struct.pack("<f", 1.0))[0]
    vals = np.array([big] + [one] * 8, dtype=np.uint32)
    _, final = run_atomic("add", "f32", [0], [0] * 9, vals)
    assert struct.unpack("<f", struct.pack("<I", final[0]))[0] == 1e8  # each +1 is lost when added after 1e8
    _, final = run_atomic("add", "f32", [0], [0] * 9, vals[::-1].copy())
    assert struct.unpack("<f", struct.pack("<I", final[0]))[0] == 1e8 + 8


def test_integer_add_wraps():
    old, final = run_atomic("add", "u32", [2**32 - 2], [0] * 4, np.full(4, 1))
    assert old == [2**32 - 2, 2**32 - 1, 0, 1] and final == [2]


def test_shared_atomics_are_per_block():
    nblocks, bs = 4, 8
    mem = Memory(nblocks, bs)
    mem.define_shared([("counter", 4, 4)])
    t = np.arange(nblocks * bs)
    acc = mem.resolve(Space.SHARED, np.zeros(len(t), np.uint64), t, t // bs, 4, write=True)
    old = mem.atomic(acc, "add", "u32", np.ones(len(t)))
    assert old.tolist() == list(range(bs)) * nblocks
    assert all(mem.shared_bytes(blk) == struct.pack("<I", bs) for blk in range(nblocks))


def test_atomics_skip_lanes_that_are_not_ok():
    mem = Memory(1, 3)
    buf = mem.allocate_global("buf", 4)
    t = np.arange(3)
    acc = mem.resolve(Space.GLOBAL, np.array([buf.base, buf.base + 4, buf.base + 2], np.uint64), t, t * 0, 4, write=True)
    assert list(acc.error) == [ErrorKind.OK, ErrorKind.OUT_OF_BOUNDS, ErrorKind.MISALIGNED]
    assert mem.atomic(acc, "exch", "b32", np.array([5, 6, 7])).tolist() == [0, 0, 0]
    assert mem.read(buf) == struct.pack("<I", 5)


def test_unknown_atomics_are_rejected():
    with pytest.raises(ValueError):
        run_atomic("inc", "u64", [0], [0], np.ones(1, np.uint64))
    with pytest.raises(ValueError):
        run_atomic("nand", "b32", [0], [0], np.ones(1, np.uint32))
