"""Tensor-core instructions through real PTX, the parser and the engine, against NumPy references.

Each `mma` case is a hand-written kernel of one warp: lane L loads its A, B and
C fragment registers from per-lane slices of three buffers, runs the `mma`,
and stores its D registers. The fragments are built here from random matrices
(fixed seed) with the placements the PTX ISA gives ("Matrix fragments for
mma.m16n8k16" and its siblings), written out again independently of the
simulator's tables, and D is compared bit for bit with A*B + C computed in
NumPy in the order the README states (from C, one k at a time, in float32).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate

HEADER = """\
.version 8.0
.target sm_80
.address_size 64
"""


def _load(reg: str, count: int, size: int, param: str) -> list[str]:
    """PTX lines loading `count` registers `%{reg}0..` of `size` bytes from lane tid's slice of buffer `param`."""
    lines = [
        f"    ld.param.u64 %p, [{param}];",
        f"    mul.wide.u32 %o, %t, {count * size};",
        "    add.s64 %p, %p, %o;",
    ]
    lines += [f"    ld.global.b{8 * size} %{reg}{r}, [%p+{r * size}];" for r in range(count)]
    return lines


def _store(reg: str, count: int, size: int, param: str) -> list[str]:
    lines = [
        f"    ld.param.u64 %p, [{param}];",
        f"    mul.wide.u32 %o, %t, {count * size};",
        "    add.s64 %p, %p, %o;",
    ]
    lines += [f"    st.global.b{8 * size} [%p+{r * size}], %{reg}{r};" for r in range(count)]
    return lines


def _vec(reg: str, count: int) -> str:
    return "{" + ", ".join(f"%{reg}{r}" for r in range(count)) + "}"


def run_mma(instruction: str, counts: dict[str, int], size: int, words: dict[str, np.ndarray], cd_size: int | None = None):
    """Run `instruction d, a, b, c` in one warp; `words[x]` is `[32, registers]` for a, b, c; returns D's words."""
    cd = cd_size or size
    sizes = {"a": size, "b": size, "c": cd, "d": cd}
    decls = [f"    .reg .b{8 * sizes[x]} %{x}<{counts[x]}>;" for x in "abcd"]
    body = [
        ".visible .entry probe(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)",
        "{",
        "    .reg .b32 %t;",
        "    .reg .b64 %o, %p;",
        *decls,
        "    mov.u32 %t, %tid.x;",
        *_load("a", counts["a"], size, "pa"),
        *_load("b", counts["b"], size, "pb"),
        *_load("c", counts["c"], cd, "pc"),
        f"    {instruction} " + ", ".join(_vec(x, counts[x]) for x in "dabc") + ";",
        *_store("d", counts["d"], cd, "pd"),
        "    ret;",
        "}",
    ]
    args = [np.ascontiguousarray(words[x]).ravel() for x in "abc"]
    d = np.zeros(32 * counts["d"], dtype=args[2].dtype)
    res = simulate(parse_ptx(HEADER + "\n".join(body) + "\n", "probe.ptx"), grid=1, block=32, args=[*args, d])
    assert not res.findings, res.findings
    return d.reshape(32, counts["d"])


# ------------------------------------------------------------------ the ISA's placements, lane by lane


def place_a(shape: str, kind: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if kind == "16bit" and shape == "m16n8k16":
        row = g if (i < 2 or 4 <= i < 6) else g + 8
        col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
        return row, col
    if kind == "16bit" and shape == "m16n8k8":
        return (g if i < 2 else g + 8), t * 2 + (i & 1)
    if kind == "tf32" and shape == "m16n8k8":
        return (g if i in (0, 2) else g + 8), (t if i in (0, 1) else t + 4)
    if kind == "tf32" and shape == "m16n8k4":
        return (g if i == 0 else g + 8), t
    if kind == "f64":
        return g, t
    if kind == "8bit" and shape == "m16n8k16":
        return (g if i < 4 else g + 8), t * 4 + (i & 3)
    if kind == "8bit" and shape == "m16n8k32":
        row = g if (i < 4 or 8 <= i < 12) else g + 8
        return row, t * 4 + (i & 3) + (16 if i >= 8 else 0)
    if kind == "8bit" and shape == "m8n8k16":
        return g, t * 4 + i
    raise AssertionError((shape, kind))


def place_b(shape: str, kind: str, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if kind == "16bit" and shape == "m16n8k16":
        return t * 2 + (i & 1) + (8 if i >= 2 else 0), g
    if kind == "16bit" and shape == "m16n8k8":
        return t * 2 + i, g
    if kind == "tf32" and shape == "m16n8k8":
        return (t if i == 0 else t + 4), g
    if kind == "tf32" and shape == "m16n8k4":
        return t, g
    if kind == "f64":
        return t, g
    if kind == "8bit" and shape == "m16n8k16":
        return t * 4 + i, g
    if kind == "8bit" and shape == "m16n8k32":
        return t * 4 + (i & 3) + (16 if i >= 4 else 0), g
    if kind == "8bit" and shape == "m8n8k16":
        return t * 4 + i, g
    raise AssertionError((shape, kind))


def place_c(m: int, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if m == 16:
        return (g if i < 2 else g + 8), t * 2 + (i & 1)
    return g, t * 2 + i


def distribute(matrix_bits: np.ndarray, per_lane: int, per_reg: int, bits: int, place) -> np.ndarray:
    """`[32, registers]` words holding `matrix_bits` (raw element bits) as `place(lane, i)` says, low element first."""
    regs = per_lane // per_reg
    out = np.zeros((32, regs), dtype=np.uint64)
    for lane in range(32):
        for i in range(per_lane):
            r, c = place(lane, i)
            out[lane, i // per_reg] |= np.uint64(int(matrix_bits[r, c])) << np.uint64(bits * (i % per_reg))
    return out


def collect(words: np.ndarray, m: int, n: int, per_lane: int, per_reg: int, bits: int, place) -> np.ndarray:
    out = np.zeros((m, n), dtype=np.uint64)
    mask = (1 << bits) - 1
    for lane in range(32):
        for i in range(per_lane):
            r, c = place(lane, i)
            out[r, c] = (int(words[lane, i // per_reg]) >> (bits * (i % per_reg))) & mask
    return out


# ------------------------------------------------------------------ element values


def f16_bits(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float16).view(np.uint16)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # truncated: any bf16 will do as input


def bf16_value(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """C + A*B: products exact, one addition per k in increasing k, in C's float type."""
    acc = c.copy()
    for k in range(a.shape[1]):
        acc = acc + a[:, k][:, None] * b[k, :][None, :]
    return acc


rng = np.random.default_rng(15)

FLOAT_CASES = [
    # shape, input, C/D type
    ("m16n8k16", "f16", "f32"),
    ("m16n8k16", "f16", "f16"),
    ("m16n8k8", "f16", "f32"),
    ("m16n8k8", "f16", "f16"),
    ("m16n8k16", "bf16", "f32"),
    ("m16n8k8", "bf16", "f32"),
]


@pytest.mark.parametrize("shape,itype,ctype", FLOAT_CASES)
def test_mma_16bit_inputs(shape, itype, ctype):
    k = int(shape.split("k")[1])
    m, n = 16, 8
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32) * 4
    if itype == "f16":
        a_bits, b_bits = f16_bits(a), f16_bits(b)
        a_val, b_val = a_bits.view(np.float16).astype(np.float32), b_bits.view(np.float16).astype(np.float32)
    else:
        a_bits, b_bits = bf16_bits(a), bf16_bits(b)
        a_val, b_val = bf16_value(a_bits), bf16_value(b_bits)
    if ctype == "f16":
        c_bits = f16_bits(c)
        c_val = c_bits.view(np.float16).astype(np.float32)
        cbits, cper = 16, 2
    else:
        c_bits = c.view(np.uint32)
        c_val = c
        cbits, cper = 32, 1
    na, nb = (8, 4) if k == 16 else (4, 2)
    words = {
        "a": distribute(a_bits, na, 2, 16, lambda L, i: place_a(shape, "16bit", L, i)).astype(np.uint32),
        "b": distribute(b_bits, nb, 2, 16, lambda L, i: place_b(shape, "16bit", L, i)).astype(np.uint32),
        "c": distribute(c_bits, 4, cper, cbits, lambda L, i: place_c(16, L, i)).astype(np.uint32),
    }
    counts = {"a": na // 2, "b": nb // 2, "c": 4 // cper, "d": 4 // cper}
    instr = f"mma.sync.aligned.{shape}.row.col.{ctype}.{itype}.{itype}.{ctype}"
    d_words = run_mma(instr, counts, 4, words)
    got = collect(d_words, m, n, 4, cper, cbits, lambda L, i: place_c(16, L, i))
    want = accumulate(a_val, b_val, c_val)
    want_bits = f16_bits(want) if ctype == "f16" else want.astype(np.float32).view(np.uint32)
    np.testing.assert_array_equal(got, want_bits.astype(np.uint64))


@pytest.mark.parametrize("shape", ["m16n8k8", "m16n8k4"])
def test_mma_tf32_ignores_the_low_13_bits(shape):
    k = int(shape.split("k")[1])
    a = rng.standard_normal((16, k)).astype(np.float32)
    b = rng.standard_normal((k, 8)).astype(np.float32)
    c = rng.standard_normal((16, 8)).astype(np.float32)
    tf32 = lambda x: (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)  # noqa: E731
    na, nb = (4, 2) if k == 8 else (2, 1)
    words = {
        "a": distribute(a.view(np.uint32), na, 1, 32, lambda L, i: place_a(shape, "tf32", L, i)).astype(np.uint32),
        "b": distribute(b.view(np.uint32), nb, 1, 32, lambda L, i: place_b(shape, "tf32", L, i)).astype(np.uint32),
        "c": distribute(c.view(np.uint32), 4, 1, 32, lambda L, i: place_c(16, L, i)).astype(np.uint32),
    }
    d_words = run_mma(f"mma.sync.aligned.{shape}.row.col.f32.tf32.tf32.f32", {"a": na, "b": nb, "c": 4, "d": 4}, 4, words)
    got = collect(d_words, 16, 8, 4, 1, 32, lambda L, i: place_c(16, L, i))
    want = accumulate(tf32(a), tf32(b), c)
    np.testing.assert_array_equal(got, want.view(np.uint32).astype(np.uint64))


def test_mma_f64_m8n8k4():
    a, b, c = rng.standard_normal((8, 4)), rng.standard_normal((4, 8)), rng.standard_normal((8, 8))
    words = {
        "a": distribute(a.view(np.uint64), 1, 1, 64, lambda L, i: place_a("m8n8k4", "f64", L, i)),
        "b": distribute(b.view(np.uint64), 1, 1, 64, lambda L, i: place_b("m8n8k4", "f64", L, i)),
        "c": distribute(c.view(np.uint64), 2, 1, 64, lambda L, i: place_c(8, L, i)),
    }
    d_words = run_mma("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", {"a": 1, "b": 1, "c": 2, "d": 2}, 8, words)
    got = collect(d_words, 8, 8, 2, 1, 64, lambda L, i: place_c(8, L, i))
    np.testing.assert_array_equal(got, accumulate(a, b, c).view(np.uint64))


INT_CASES = [
    (s, at, bt, sat)
    for s in ("m16n8k16", "m16n8k32", "m8n8k16")
    for at, bt in (("s8", "s8"), ("u8", "u8"), ("s8", "u8"))
    for sat in (False, True)
]


@pytest.mark.parametrize("shape,atype,btype,sat", INT_CASES)
def test_mma_8bit_integers(shape, atype, btype, sat):
    k = int(shape.split("k")[1])
    m = 16 if shape.startswith("m16") else 8
    span = {"s8": (-128, 128), "u8": (0, 256)}
    a = rng.integers(*span[atype], (m, k))
    b = rng.integers(*span[btype], (k, 8))
    c = rng.integers(-(2**31), 2**31, (m, 8))
    c[0, :4] = [2**31 - 5, -(2**31) + 5, 2**31 - 1, -(2**31)]  # sums that overflow: wrap, or saturate with .satfinite
    na, nb, nc = {"m16n8k16": (8, 4, 4), "m16n8k32": (16, 8, 4), "m8n8k16": (4, 4, 2)}[shape]
    words = {
        "a": distribute(a & 0xFF, na, 4, 8, lambda L, i: place_a(shape, "8bit", L, i)).astype(np.uint32),
        "b": distribute(b & 0xFF, nb, 4, 8, lambda L, i: place_b(shape, "8bit", L, i)).astype(np.uint32),
        "c": distribute(c & 0xFFFFFFFF, nc, 1, 32, lambda L, i: place_c(m, L, i)).astype(np.uint32),
    }
    if atype == btype == "s8":
        a[0, :] = 127
        b[:, 0] = 127
        words["a"] = distribute(a & 0xFF, na, 4, 8, lambda L, i: place_a(shape, "8bit", L, i)).astype(np.uint32)
        words["b"] = distribute(b & 0xFF, nb, 4, 8, lambda L, i: place_b(shape, "8bit", L, i)).astype(np.uint32)
    satf = ".satfinite" if sat else ""
    instr = f"mma.sync.aligned.{shape}.row.col{satf}.s32.{atype}.{btype}.s32"
    d_words = run_mma(instr, {"a": na // 4, "b": nb // 4, "c": nc, "d": nc}, 4, words)
    got = collect(d_words, m, 8, nc, 1, 32, lambda L, i: place_c(m, L, i)).astype(np.int64)
    exact = c + a @ b
    want = np.clip(exact, -(2**31), 2**31 - 1) if sat else ((exact + 2**31) % 2**32) - 2**31
    np.testing.assert_array_equal(np.where(got >= 2**31, got - 2**32, got), want)
    if atype == btype == "s8":
        assert (exact > 2**31 - 1).any() or (exact < -(2**31)).any()  # the case exercises overflow


@pytest.mark.parametrize("atype,btype,ctype", [("e4m3", "e4m3", "f32"), ("e4m3", "e5m2", "f32"), ("e5m2", "e5m2", "f16")])
def test_mma_8bit_floats(atype, btype, ctype):
    """m16n8k32 on e4m3/e5m2 (sm_89): the integer fragments, each code decoded by its format (values computed
    here from sign, exponent and mantissa fields), products exact, sums in float32, an f16 D rounded once."""
    def value(codes, exponent_bits):
        mantissa_bits, bias = 7 - exponent_bits, (1 << (exponent_bits - 1)) - 1
        e, f = (codes >> mantissa_bits) & ((1 << exponent_bits) - 1), (codes & ((1 << mantissa_bits) - 1)) / (1 << mantissa_bits)
        magnitude = np.where(e == 0, f * 2.0 ** (1 - bias), (1 + f) * 2.0 ** (e - bias))
        return np.where(codes & 0x80, -magnitude, magnitude).astype(np.float32)

    bits = {"e4m3": 4, "e5m2": 5}
    a = rng.integers(0, 256, (16, 32)) & ~np.int64(0x40)  # the top exponent bit clear: finite values
    b = rng.integers(0, 256, (32, 8)) & ~np.int64(0x40)
    c = rng.standard_normal((16, 8)).astype(np.float32)
    c_bits, cper, cbits = (f16_bits(c), 2, 16) if ctype == "f16" else (c.view(np.uint32), 1, 32)
    c_val = c_bits.view(np.float16).astype(np.float32) if ctype == "f16" else c
    words = {
        "a": distribute(a, 16, 4, 8, lambda L, i: place_a("m16n8k32", "8bit", L, i)).astype(np.uint32),
        "b": distribute(b, 8, 4, 8, lambda L, i: place_b("m16n8k32", "8bit", L, i)).astype(np.uint32),
        "c": distribute(c_bits, 4, cper, cbits, lambda L, i: place_c(16, L, i)).astype(np.uint32),
    }
    instr = f"mma.sync.aligned.m16n8k32.row.col.{ctype}.{atype}.{btype}.{ctype}"
    d_words = run_mma(instr, {"a": 4, "b": 2, "c": 4 // cper, "d": 4 // cper}, 4, words)
    got = collect(d_words, 16, 8, 4, cper, cbits, lambda L, i: place_c(16, L, i))
    want = accumulate(value(a, bits[atype]), value(b, bits[btype]), c_val)
    want_bits = f16_bits(want) if ctype == "f16" else want.view(np.uint32)
    np.testing.assert_array_equal(got, want_bits.astype(np.uint64))


# ------------------------------------------------------------------ ldmatrix, stmatrix, movmatrix

TILE = """\
.visible .entry probe(.param .u64 pin, .param .u64 pout)
{{
    .shared .align 16 .b8 tile[1024];
    .reg .b32 %t, %lane, %s, %x<4>, %r<4>;
    .reg .b64 %o, %p, %q;
    .reg .pred %far;
    mov.u32 %t, %tid.x;
    mov.u32 %s, tile;
    ld.param.u64 %p, [pin];
    ld.param.u64 %q, [pout];
    mul.wide.u32 %o, %t, 32;
    add.s64 %p, %p, %o;
{body}
    ret;
}}
"""
# Matrix m, row r of the shared tile starts at byte m*256 + r*32: rows padded to 32 bytes.
ROW_ADDRESS = """\
    shr.u32 %x0, %t, 3;
    and.b32 %x1, %t, 7;
    shl.b32 %x0, %x0, 8;
    shl.b32 %x1, %x1, 5;
    add.u32 %x2, %x0, %x1;
    add.u32 %x2, %x2, %s;
    setp.ge.u32 %far, %t, {lanes};
    @%far mov.u32 %x2, 0x7ffffff0;
"""


def _tile_rows(tile_bytes: np.ndarray, count: int) -> np.ndarray:
    """`[count, 8, 8]` b16 elements of the matrices in a 1024-byte tile laid out as ROW_ADDRESS says."""
    return tile_bytes.view(np.uint16).reshape(4, 8, 16)[:count, :, :8]


def isa_ldmatrix(rows: np.ndarray, trans: bool) -> np.ndarray:
    """`[32, count]` registers: lane L gets row L/4, elements 2(L%4) and 2(L%4)+1 (of the transpose with .trans)."""
    out = np.zeros((32, len(rows)), dtype=np.uint32)
    for m, mat in enumerate(rows):
        src = mat.T if trans else mat
        for lane in range(32):
            r, c = lane // 4, 2 * (lane % 4)
            out[lane, m] = int(src[r, c]) | (int(src[r, c + 1]) << 16)
    return out


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_gives_each_lane_its_row_pairs(count, trans):
    tile = rng.integers(0, 2**16, 512).astype(np.uint16).view(np.uint8)
    regs = _vec("r", count)
    body = "\n".join(
        [
            "    shl.b32 %x3, %t, 5;",
            "    add.u32 %x3, %x3, %s;",
            "    ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%p];",
            "    st.shared.v4.b32 [%x3], {%r0, %r1, %r2, %r3};",
            "    ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%p+16];",
            "    st.shared.v4.b32 [%x3+16], {%r0, %r1, %r2, %r3};",
            "    bar.sync 0;",
            ROW_ADDRESS.format(lanes=8 * count),
            f"    ldmatrix.sync.aligned.m8n8.x{count}{'.trans' if trans else ''}.shared.b16 {regs}, [%x2];",
            f"    mul.wide.u32 %o, %t, {4 * count};",
            "    add.s64 %q, %q, %o;",
            *[f"    st.global.b32 [%q+{4 * r}], %r{r};" for r in range(count)],
        ]
    )
    out = np.zeros(32 * count, dtype=np.uint32)
    res = simulate(parse_ptx(HEADER + TILE.format(body=body), "probe.ptx"), grid=1, block=32, args=[tile.copy(), out])
    assert not res.findings, res.findings  # lanes past 8*count give an address outside shared memory: never used
    np.testing.assert_array_equal(out.reshape(32, count), isa_ldmatrix(_tile_rows(tile, count), trans))


@pytest.mark.parametrize("count", [1, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_writes_what_ldmatrix_reads(count, trans):
    rows = rng.integers(0, 2**16, (count, 8, 8)).astype(np.uint16)
    regs_in = isa_ldmatrix(rows, trans)
    regs = _vec("r", count)
    body = "\n".join(
        [
            f"    mul.wide.u32 %o, %t, {4 * count};",
            "    ld.param.u64 %p, [pin];",
            "    add.s64 %p, %p, %o;",
            *[f"    ld.global.b32 %r{r}, [%p+{4 * r}];" for r in range(count)],
            ROW_ADDRESS.format(lanes=8 * count),
            f"    stmatrix.sync.aligned.m8n8.x{count}{'.trans' if trans else ''}.shared.b16 [%x2], {regs};",
            "    bar.sync 0;",
            "    shl.b32 %x3, %t, 5;",
            "    add.u32 %x3, %x3, %s;",
            "    mul.wide.u32 %o, %t, 32;",
            "    add.s64 %q, %q, %o;",
            "    ld.shared.v4.b32 {%r0, %r1, %r2, %r3}, [%x3];",
            "    st.global.v4.b32 [%q], {%r0, %r1, %r2, %r3};",
            "    ld.shared.v4.b32 {%r0, %r1, %r2, %r3}, [%x3+16];",
            "    st.global.v4.b32 [%q+16], {%r0, %r1, %r2, %r3};",
        ]
    )
    tile = np.zeros(1024, dtype=np.uint8)
    module = parse_ptx(HEADER + TILE.format(body=body), "probe.ptx")
    res = simulate(module, grid=1, block=32, args=[regs_in.ravel().copy(), tile])
    assert not res.findings, res.findings
    np.testing.assert_array_equal(_tile_rows(tile, count), rows)


def test_movmatrix_transposes_the_warps_matrix():
    rows = rng.integers(0, 2**16, (1, 8, 8)).astype(np.uint16)
    regs_in = isa_ldmatrix(rows, False)[:, 0]
    body = "\n".join(
        [
            "    mul.wide.u32 %o, %t, 4;",
            "    ld.param.u64 %p, [pin];",
            "    add.s64 %p, %p, %o;",
            "    ld.global.b32 %r0, [%p];",
            "    movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r0;",
            "    add.s64 %q, %q, %o;",
            "    st.global.b32 [%q], %r1;",
        ]
    )
    out = np.zeros(32, dtype=np.uint32)
    simulate(parse_ptx(HEADER + TILE.format(body=body), "probe.ptx"), grid=1, block=32, args=[regs_in.copy(), out])
    np.testing.assert_array_equal(out, isa_ldmatrix(rows, True)[:, 0])


# ------------------------------------------------------------------ whole kernels (tests/kernels/tensor_core)

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "tensor_core"


def test_mma_tile_kernel_computes_the_product():
    a = rng.standard_normal(256).astype(np.float16)
    b = rng.standard_normal(256).astype(np.float16)
    c = np.zeros(256, dtype=np.float32)
    res = simulate(KERNELS / "mma_tile.cu", grid=1, block=64, args=[a, b, c], arch="compute_80")
    assert not res.findings
    ab = a.reshape(16, 16).astype(np.float32), b.reshape(16, 16).astype(np.float32)
    np.testing.assert_array_equal(c.reshape(16, 16), accumulate(*ab, np.zeros((16, 16), np.float32)))


def test_wmma_gemm_kernel_computes_the_product():
    n = 32
    a = rng.standard_normal(n * n).astype(np.float16)  # row-major
    b = rng.standard_normal(n * n).astype(np.float16)  # column-major
    c = np.zeros(n * n, dtype=np.float32)
    res = simulate(KERNELS / "wmma_gemm.cu", grid=1, block=128, args=[a, b, c], arch="compute_80")
    assert not res.findings
    am = a.reshape(n, n).astype(np.float32)
    bm = b.reshape(n, n).T.astype(np.float32)
    want = np.zeros((n, n), np.float32)
    for k0 in (0, 16):  # two 16x16x16 steps, each from the accumulator so far
        want = accumulate(am[:, k0 : k0 + 16], bm[k0 : k0 + 16, :], want)
    np.testing.assert_array_equal(c.reshape(n, n), want)


def _wmma_kernel(name: str, *args: np.ndarray) -> None:
    res = simulate(KERNELS / "wmma_shapes.cu", kernel=name, grid=1, block=32, args=list(args), arch="compute_80")
    assert not res.findings, res.findings


def test_wmma_m32n8k16_row_major_b_column_major_store():
    a = rng.standard_normal(32 * 16).astype(np.float16)
    b = rng.standard_normal(16 * 8).astype(np.float16)
    c = np.zeros(32 * 8, dtype=np.float32)
    _wmma_kernel("wmma_m32n8k16", a, b, c)
    am, bm = a.reshape(32, 16).astype(np.float32), b.reshape(16, 8).astype(np.float32)
    want = accumulate(am, bm, np.zeros((32, 8), np.float32))
    np.testing.assert_array_equal(c.reshape(8, 32).T, want)


def test_wmma_m8n32k16_bf16():
    a = bf16_bits(rng.standard_normal(8 * 16))
    b = bf16_bits(rng.standard_normal(16 * 32))
    c = np.zeros(8 * 32, dtype=np.float32)
    _wmma_kernel("wmma_m8n32k16_bf16", a, b, c)
    want = accumulate(bf16_value(a).reshape(8, 16), bf16_value(b).reshape(32, 16).T, np.zeros((8, 32), np.float32))
    np.testing.assert_array_equal(c.reshape(8, 32), want)


def test_wmma_s8_saturates():
    a = rng.integers(-128, 128, 256).astype(np.int8)
    b = rng.integers(-128, 128, 256).astype(np.int8)
    a[:16], b[:16] = 127, 127  # row 0 of A and column 0 of B: 16 * 127 * 127 on top of C[0, 0]
    c = rng.integers(-(2**20), 2**20, 256).astype(np.int32)
    c[0] = 2**31 - 10
    c0 = c.copy()
    _wmma_kernel("wmma_s8_saturating", a, b, c)
    exact = c0.reshape(16, 16).astype(np.int64) + a.reshape(16, 16).astype(np.int64) @ b.reshape(16, 16).T.astype(np.int64)
    assert exact[0, 0] > 2**31 - 1
    np.testing.assert_array_equal(c.reshape(16, 16), np.clip(exact, -(2**31), 2**31 - 1))


def test_wmma_f16_accumulator_round_trips_through_memory():
    a = rng.standard_normal(256).astype(np.float16)  # column-major
    b = rng.standard_normal(256).astype(np.float16)  # row-major
    c = rng.standard_normal(256).astype(np.float16)  # read column-major, written row-major
    cm = c.reshape(16, 16).T.astype(np.float32)
    _wmma_kernel("wmma_f16_accumulate", a, b, c)
    want = accumulate(a.reshape(16, 16).T.astype(np.float32), b.reshape(16, 16).astype(np.float32), cm).astype(np.float16)
    np.testing.assert_array_equal(c.reshape(16, 16).view(np.uint16), want.view(np.uint16))


# ------------------------------------------------------------------ divergence and refusals

DIVERGENT = """\
.visible .entry probe(.param .u64 pd)
{{
    .reg .b32 %t, %a<4>, %b<2>, %c<4>;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.b32 %a0, 0;
    mov.b32 %a1, 0;
    mov.b32 %a2, 0;
    mov.b32 %a3, 0;
    mov.b32 %b0, 0;
    mov.b32 %b1, 0;
    mov.b32 %c0, 0;
    mov.b32 %c1, 0;
    mov.b32 %c2, 0;
    mov.b32 %c3, 0;
    setp.ge.u32 %p, %t, 16;
    @%p {leave};
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
        {{%c0, %c1, %c2, %c3}}, {{%a0, %a1, %a2, %a3}}, {{%b0, %b1}}, {{%c0, %c1, %c2, %c3}};
DONE:
    bar.sync 0;
    ret;
}}
"""


@pytest.mark.parametrize("leave,kind", [("ret", "invalid-warp-sync"), ("bra DONE", "deadlock")])
def test_a_divergent_mma_is_a_finding(leave, kind):
    """Half a warp at an mma whose other half exited (or waits at a barrier) never computes a product."""
    d = np.zeros(1, dtype=np.uint32)
    res = simulate(parse_ptx(HEADER + DIVERGENT.format(leave=leave), "probe.ptx"), grid=1, block=32, args=[d])
    kinds = {f.kind for f in res.findings}
    assert kind in kinds, res.findings
    finding = next(f for f in res.findings if f.kind == kind)
    assert any(s.instruction.startswith("mma.sync") for s in finding.sites), finding


REFUSED = [
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "no .m8n8k4 form"),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", ".sp"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32", "no .m16n8k16 form with .e4m3 x .e4m3 inputs"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.s8.f32", "no .m16n8k32 form with .e4m3 x .s8 inputs"),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", "modifier(s)"),
    ("mma.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32", ".satfinite only with integer inputs"),
    ("mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16", "accumulate in .f32"),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.e4m3.e4m3", "modifier(s) .sp"),
    ("wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3.satfinite", "and m64nNk32 with e4m3/e5m2 inputs"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.f16.bf16.bf16", "(.f32 accumulators, or .f16 for f16)"),
    ("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.e4m3", "s8/u8 inputs (.s32)"),
    ("wgmma.mma_async.sync.aligned.m64n8k16.s32.s8.s8", "m64nNk32 with"),
]


@pytest.mark.parametrize("instruction,why", REFUSED)
def test_unsupported_tensor_core_forms_stop_with_a_message(instruction, why):
    body = DIVERGENT.format(leave="ret").replace("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", instruction)
    with pytest.raises(UserError, match="does not support|accumulate") as err:
        simulate(parse_ptx(HEADER + body, "probe.ptx"), grid=1, block=32, args=[np.zeros(1, np.uint32)])
    assert why in str(err.value)


def test_an_mma_in_a_warp_of_16_threads_is_a_finding_that_stops_the_run():
    module = parse_ptx(HEADER + DIVERGENT.format(leave="ret"), "probe.ptx")
    res = simulate(module, grid=1, block=16, args=[np.zeros(1, np.uint32)])
    (finding,) = res.findings
    assert finding.kind == "invalid-warp-sync"
    assert "only lanes 0x0000ffff" in finding.cause
    assert finding.sites[0].instruction.startswith("mma.sync")


def test_ldmatrix_through_a_generic_address_outside_shared_memory_stops_the_run():
    body = "\n".join(
        [
            "    mul.wide.u32 %o, %t, 16;",
            "    add.s64 %p, %p, %o;",  # a global address, generic
            "    ldmatrix.sync.aligned.m8n8.x4.b16 {%r0, %r1, %r2, %r3}, [%p];",
        ]
    )
    with pytest.raises(UserError, match="outside shared memory"):
        module = parse_ptx(HEADER + TILE.format(body=body), "probe.ptx")
        simulate(module, grid=1, block=32, args=[np.zeros(512, np.uint32), np.zeros(1, np.uint32)])
