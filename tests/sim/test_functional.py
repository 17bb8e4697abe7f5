"""Whole kernels through the simulator, each checked against a NumPy reference.

Every kernel lives in `tests/kernels/sim/` with a `@launch` header (the launch
the command line would use) and an `@expect` verdict. A test runs that launch,
optionally replacing some buffers with its own arrays (same element count),
checks the findings against `@expect` and compares the output buffers with a
reference computed here, independently of the simulator.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_files import KERNELS, header, module, run


def test_vector_add_float():
    res = run("vector_add_float.cu")
    a, b, c = res.args[:3]
    np.testing.assert_array_equal(a, np.arange(1000, dtype=np.float32))
    np.testing.assert_array_equal(c, a + np.float32(0.5) * b)
    assert res.stats.thread_instructions > 0


def test_a_group_of_consecutive_threads_runs_through_register_slices(monkeypatch):
    """The 1000 threads under the tail guard are one run of consecutive threads: their registers are read and
    written as slices (`ThreadState.use_group`), with the same results as gathers."""
    from gpurace.sim.state import ThreadState

    spans = []
    use_group = ThreadState.use_group

    def record(self, group):
        use_group(self, group)
        if self.span_group is group:
            spans.append((self.span.start, self.span.stop))

    monkeypatch.setattr(ThreadState, "use_group", record)
    res = run("vector_add_float.cu")
    a, b, c = res.args[:3]
    np.testing.assert_array_equal(c, a + np.float32(0.5) * b)
    assert (0, 1000) in spans and (0, 1024) in spans


def test_loads_at_one_read_only_address_give_every_thread_the_value():
    """Kernel parameters and a `__constant__` element read by symbol: one lane's load stands for the group."""
    out = run("uniform_loads.cu").args[0]
    i = np.arange(288)
    expected = np.where(i < 200, 30 + 7 + (i & 1) * 40 * 7 + i, 0)
    np.testing.assert_array_equal(out, expected)


def test_saxpy_double():
    res = run("saxpy_double.cu")
    y = res.args[2]
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, 2.5 * np.arange(512.0) + 1.0)


def test_int64_arithmetic():
    res = run("vector_int64.cu")
    a = np.arange(256, dtype=np.int64)
    v = a * np.int64(4294967311) - a * 3
    np.testing.assert_array_equal(res.args[2], np.where(v > (1 << 40), v >> 3, -v))


def test_shared_tree_reduction():
    res = run("reduce_tree.cu")
    expected = np.arange(1024, dtype=np.float64).reshape(4, 256).sum(axis=1)
    np.testing.assert_array_equal(res.args[1], expected.astype(np.float32))


def test_warp_shuffle_reduction():
    res = run("warp_reduce_shfl.cu")
    v = np.arange(256, dtype=np.int64) ** 2
    np.testing.assert_array_equal(res.args[1], v.reshape(8, 32).sum(axis=1))


def test_hillis_steele_scan():
    res = run("scan_hillis_steele.cu")
    np.testing.assert_array_equal(res.args[1], np.cumsum(np.arange(512).reshape(2, 256), axis=1).reshape(-1))


def test_blelloch_scan():
    res = run("scan_blelloch.cu")
    blocks = np.arange(512).reshape(2, 256)
    exclusive = np.cumsum(blocks, axis=1) - blocks
    np.testing.assert_array_equal(res.args[1], exclusive.reshape(-1))


def test_tiled_transpose():
    res = run("transpose_tiled.cu")
    matrix = np.arange(6144, dtype=np.float32).reshape(96, 64)
    np.testing.assert_array_equal(res.args[1].reshape(64, 96), matrix.T)


def test_tiled_matmul():
    res = run("matmul_tiled.cu")
    A = np.arange(1536, dtype=np.float64).reshape(32, 48)
    B = np.arange(2304, dtype=np.float64).reshape(48, 48)
    np.testing.assert_allclose(res.args[2].reshape(32, 48), A @ B, rtol=1e-6)


def test_histogram_shared_then_global_atomics():
    res = run("histogram.cu")
    data = np.arange(3000, dtype=np.uint64)
    bins = (data * 2654435761 % (1 << 32)) % 64
    np.testing.assert_array_equal(res.args[1], np.bincount(bins, minlength=64))
    assert res.args[1].sum() == 3000


def test_stencil_1d_with_halo():
    res = run("stencil_1d.cu")
    padded = np.concatenate([np.zeros(3, np.int64), np.arange(512), np.zeros(3, np.int64)])
    expected = sum((k + 4) * padded[3 + k : 3 + k + 512] for k in range(-3, 4))
    np.testing.assert_array_equal(res.args[1], expected)


def test_stencil_2d():
    field_ = ((np.arange(1536) ** 2) % 97).astype(np.float32)
    res = run("stencil_2d.cu", {0: field_})
    f = field_.reshape(32, 48)
    expected = f.copy()
    expected[1:-1, 1:-1] = np.float32(0.25) * (f[1:-1, :-2] + f[1:-1, 2:] + f[:-2, 1:-1] + f[2:, 1:-1]) - f[1:-1, 1:-1]
    np.testing.assert_array_equal(res.args[1].reshape(32, 48), expected)


def test_grid_stride_loop():
    res = run("grid_stride.cu")
    i = np.arange(5000)
    np.testing.assert_array_equal(res.args[1], 3 * i + (i & 7))


def test_device_lock_one_lane_per_block():
    res = run("lock_per_block.cu")
    lock, counters = res.args
    assert lock[0] == 0
    assert list(counters) == [8, sum(range(8))]


def test_device_lock_every_lane_in_turn():
    res = run("lock_per_lane.cu")
    lock, counters = res.args
    assert lock[0] == 0
    assert list(counters) == [128, 2 * sum(range(64))]


def test_2d_launch_indices():
    res = run("launch_2d.cu")
    rows = []
    for by in range(2):
        for bx in range(3):
            for ty in range(4):
                for tx in range(8):
                    rows.append([tx, ty, bx, by, 804, 302, 0, 1])
    np.testing.assert_array_equal(res.args[0].reshape(-1, 8), np.array(rows))


def test_3d_launch_indices():
    res = run("launch_3d.cu")
    rows = []
    for bz in range(2):
        for by in range(3):
            for bx in range(2):
                for tz in range(3):
                    for ty in range(2):
                        for tx in range(4):
                            rows.append([tx, ty, tz, bx, by, bz, 423_232])
    np.testing.assert_array_equal(res.args[0].reshape(-1, 7), np.array(rows))


def test_recursive_noinline_functions():
    res = run("recursive_fib.cu")

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    np.testing.assert_array_equal(res.args[0], [fib(t % 13) for t in range(32)])
    assert [int(v) for v in res.args[1]] == [math.factorial(t % 21) for t in range(32)]


def test_dynamic_shared_memory():
    res = run("dynamic_shared.cu")
    values = np.arange(256).reshape(2, 128)
    np.testing.assert_array_equal(res.args[1], (3 * values[:, ::-1]).reshape(-1))


def test_constant_memory_initializer():
    res = run("constant_table.cu")
    coeffs = np.array([3, -1, 4, -1, 5, -9, 2, 6], dtype=np.float32)
    t = np.arange(64)
    expected = coeffs[t % 8] * np.float32(0.25) * t.astype(np.float32) + coeffs[(t * 3) % 8]
    np.testing.assert_array_equal(res.args[0], expected)


def test_device_global_initializers():
    res = run("device_globals.cu")
    out = res.args[0].reshape(64, 2)
    table = np.array([10, 20, 30, 40])
    np.testing.assert_array_equal(out[:, 0], (table[np.arange(64) % 4] * 1.5).astype(int))
    assert sorted(out[:, 1]) == list(range(100, 164))


def test_local_array_dynamic_index():
    data = np.arange(64, dtype=np.int32) * 7 % 23
    res = run("local_array.cu", {0: data})
    out = []
    for t in range(64):
        a = [int(data[(t + i) % 64]) * (i + 1) for i in range(16)]
        k = int(data[t]) % 16
        a[k] += 1000
        acc = sum(a[(i * 7 + t) % 16] for i in range(0, 16, 1 + (t & 1)))
        out.append(acc + a[k])
    np.testing.assert_array_equal(res.args[1], out)


def test_half_arithmetic():
    res = run("half_arith.cu")
    h = np.float16
    x = (np.arange(64, dtype=np.float32) * np.float32(0.125)).astype(h)
    y = h(1.5)
    z = ((x * y).astype(h) + h(0.0625)).astype(h)
    z = (z.astype(np.float64) * x.astype(np.float64) + 1.5).astype(h)  # fma: one rounding
    expected = np.where(z > h(8.0), (z - y).astype(h), z)
    np.testing.assert_array_equal(res.args[1], expected)
    np.testing.assert_array_equal(res.args[2], expected.astype(np.float32))


def bits(pred) -> int:
    """A warp mask from one boolean per lane."""
    return sum(1 << i for i, p in enumerate(pred) if p)


def test_warp_vote_and_match():
    res = run("warp_vote.cu")
    out = res.args[1].reshape(64, 6)
    v = np.arange(64)
    for w in range(2):
        lanes = v[32 * w : 32 * w + 32]
        for lane, t in enumerate(lanes):
            row = out[t]
            assert row[0] == bits(lanes % 3 == 0)
            assert row[1] == (1 if w == 1 else 0)
            assert row[2] == (1 if w == 0 else 0)
            assert row[3] == bits(lanes // 5 == t // 5)
            assert row[4] == 16
            assert row[5] == (0 if t % 4 == 3 else 0x77777777)
    # any/all return a non-zero int, not necessarily 1
    assert set(np.unique(out[:, 1])) <= {0, 1}


def _bits_reference(t: int) -> list[int]:
    m = 0xFFFFFFFF
    x = (t * 0x9E3779B9 + 0x7F4A7C15) & m
    y = x ^ (x >> 13) ^ 0xA5A5A5A5
    sel = 0x3000 | ((t & 7) << 8) | (((t >> 3) & 7) << 4) | (t % 5)
    source = x | (y << 32)
    perm = sum(((source >> (8 * ((sel >> (4 * n)) & 7))) & 0xFF) << (8 * n) for n in range(4))
    shifted = x >> (t % 32)
    clz = 32 - shifted.bit_length()
    masked = x & ((m << (t % 32)) & m)
    ffs = (masked & -masked).bit_length()
    return [
        x.bit_count(),
        clz,
        int(f"{x:032b}"[::-1], 2),
        perm,
        ((((y << 32) | x) << (t & 31)) >> 32) & m,
        ffs,
        ((x << 32) | y).bit_count(),
    ]


def test_bit_intrinsics():
    res = run("bit_intrinsics.cu")
    out = res.args[1].reshape(64, 7)
    for t in range(64):
        assert [int(v) for v in out[t]] == _bits_reference(t), f"thread {t}"


def _c_div(a: int, b: int) -> tuple[int, int]:
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - q * b


def test_integer_division_negative_operands():
    rng = np.random.default_rng(7)
    a = rng.integers(-100_000, 100_000, 64).astype(np.int32)
    b = rng.integers(-50, 50, 64).astype(np.int32)
    b[b == 0] = -7
    a[:4] = [-7, 7, -7, 2**31 - 1]
    b[:4] = [2, -2, -2, -3]
    res = run("int_divmod.cu", {0: a, 1: b})
    out = res.args[2].reshape(64, 4)
    for t in range(64):
        x, y = int(a[t]), int(b[t])
        q, r = _c_div(x, y)
        uq = (x & 0xFFFFFFFF) // (y & 0xFFFFFFFF)
        _, lr = _c_div(x * 1000003, y)
        assert [int(v) for v in out[t]] == [q, r, uq - (1 << 32) if uq >= 1 << 31 else uq, lr], f"thread {t}"


def test_float_math_functions():
    x = np.linspace(-3.0, 3.0, 128).astype(np.float32)
    x[:4] = [0.0, -0.0, 1.5, -0.5]
    res = run("float_math.cu", {0: x})
    out = res.args[1].reshape(128, 6)
    np.testing.assert_array_equal(out[:, 0], np.minimum(x, np.float32(1.5)))
    np.testing.assert_array_equal(out[:, 1], np.maximum(x, np.float32(-0.5)))
    np.testing.assert_array_equal(out[:, 2], np.sqrt(np.abs(x)))  # sqrtf is correctly rounded by default
    xd = x.astype(np.float64)
    np.testing.assert_allclose(out[:, 3], 1.0 / np.sqrt(np.abs(xd) + 1.0), rtol=2e-7 * 8)  # rsqrt.approx: 2^-22.9
    np.testing.assert_allclose(out[:, 4], np.exp(xd * 0.5), rtol=4e-7 * 4)  # ex2.approx: a few ulp
    np.testing.assert_allclose(out[:, 5], np.sin(xd), rtol=2.5e-7, atol=1.2e-7)  # sinf: 2 ulp


def test_syncthreads_count_and_or():
    res = run("syncthreads_reduce.cu")
    out = res.args[1].reshape(2, 128, 3)
    v = np.arange(256).reshape(2, 128)
    for b in range(2):
        assert (out[b, :, 0] == np.count_nonzero(v[b] % 3 == 0)).all()
        assert ((out[b, :, 1] != 0) == (v[b] < 200).all()).all()
        assert ((out[b, :, 2] != 0) == (v[b] == 77).any()).all()


@pytest.mark.parametrize("name", sorted(p.name for p in KERNELS.glob("*.cu")))
def test_every_kernel_file_has_a_launch_header(name):
    h = header(name)
    assert h.expect, f"{name} has no @expect line"
    assert len(h.args) == len(module(name).kernels[0].params) or h.kernel is not None


def test_shuffle_variants():
    res = run("shuffle_variants.cu")
    out = res.args[1].reshape(64, 4)
    v = np.arange(64) * 10
    for t in range(64):
        lane, base = t % 32, t - t % 32
        seg = lane % 8
        assert out[t, 0] == v[base + (t * 7) % 32]
        assert out[t, 1] == (v[t - 3] if lane >= 3 else v[t])
        assert out[t, 2] == v[base + (lane ^ 5)]
        assert out[t, 3] == (v[t + 2] if seg + 2 < 8 else v[t])


def test_mixed_atomics():
    ints = np.zeros(8, dtype=np.int32)
    ints[2] = -1
    res = run("atomics_mixed.cu", {1: ints})
    g = np.arange(256)
    v = g - 100
    xor = 0
    for x in g:
        xor ^= (int(x) * 2654435761) & 0xFFFFFFFF
    and_ = 0xFFFFFFFF
    for x in g:
        and_ &= ~(1 << (int(x) % 31)) & 0xFFFFFFFF
    expected = [v.min(), v.max(), and_, (1 << 29) - 1, xor, -g.sum(), 0, 0]
    assert [int(x) & 0xFFFFFFFF for x in res.args[1]] == [int(x) & 0xFFFFFFFF for x in expected]
    np.testing.assert_array_equal(res.args[2], [256 * 0.5, 0.25 * v.sum()])


def test_vector_loads_and_ldg():
    res = run("vector_loads.cu")
    a = np.arange(512, dtype=np.float32).reshape(128, 4)
    b = np.arange(512, dtype=np.float32)[(np.arange(128) * 4 + 3) % 512]
    expected = np.stack([a[:, 3] + b, a[:, 2] * 2, a[:, 1] - a[:, 0], a[:, 0]], axis=1)
    np.testing.assert_array_equal(res.args[1].reshape(128, 4), expected)


# Kernels whose outputs do not depend on the schedule (device_globals hands out
# tickets in schedule order, parking_lock_order records the order in which the
# leaders take a lock; the big grid is covered once in test_progress).
SCHEDULE_INDEPENDENT = sorted(
    p.name
    for p in KERNELS.glob("*.cu")
    if header(p.name).expect == ["clean"]
    and p.name not in ("device_globals.cu", "parking_lock_order.cu", "progress_big_grid.cu")
)


@pytest.mark.parametrize("name", SCHEDULE_INDEPENDENT)
def test_random_schedules_give_the_same_results(name):
    reference = run(name)
    for seed in (1, 2):
        other = run(name, policy="random", seed=seed)
        for mine, theirs in zip(reference.args, other.args):
            np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs), err_msg=f"{name} with seed {seed}")
