"""Automatic arguments: what `auto` resolves to, where automatic buffers live, and how their use is counted."""

from __future__ import annotations

import numpy as np
import pytest

import gpurace
from gpurace.errors import UserError
from gpurace.frontend.kernels import KernelInfo, ParamInfo
from gpurace.sim.args import AutoBuffer, AutoScalar, Buffer, auto_scalar_value, resolve_args
from gpurace.sim.memory import AUTO_BUFFER_BYTES, AUTO_GUARD_BYTES, PAGE_SIZE, ErrorKind, Memory, Space
from gpurace.sim.usage import BufferUsage

PARAMS = (
    ParamInfo("p0", "int*", "u64", 8, "data"),
    ParamInfo("p1", "int", "u32", 4, "n"),
    ParamInfo("p2", "float", "f32", 4, "scale"),
    ParamInfo("p3", "bool", "u8", 1, "flag"),
    ParamInfo("p4", "unsigned char", "u8", 1, "small"),
    ParamInfo("p5", "Params", "b8", 12, "params"),
    ParamInfo("p6", "void*", "u64", 8, "raw"),
    ParamInfo("p7", "double", "f64", 8, "x"),
)
KERNEL = KernelInfo("k", "_Z1k", PARAMS, 0)


def resolve(args, nthreads=1000):
    return resolve_args(KERNEL, args, np.random.default_rng(0), nthreads=nthreads).values


def test_no_arguments_means_auto_for_every_parameter():
    values = resolve(None)
    assert [type(v) for v in values] == [AutoBuffer, AutoScalar, AutoScalar, AutoScalar, AutoScalar, AutoScalar, AutoBuffer, AutoScalar]
    assert values == resolve(["auto"] * len(PARAMS))


def test_defaults_of_automatic_scalars():
    _, n, scale, flag, small, params, _, x = resolve(None, nthreads=1000)
    assert (n.name, n.value, np.frombuffer(n.data, np.int32)[0]) == ("n (int)", 1000, 1000)
    assert (scale.value, np.frombuffer(scale.data, np.float32)[0]) == (1.0, 1.0)
    assert (flag.value, flag.data) == (True, b"\x01")
    assert (small.value, small.data) == (255, b"\xff")  # the thread count saturates at the type's maximum
    assert (params.value, params.data) == (None, bytes(12))  # a struct passed by value: zero bytes
    assert (x.value, np.frombuffer(x.data, np.float64)[0]) == (1.0, 1.0)


def test_defaults_move_inside_the_bounds_that_requires_states():
    def values(bounds):
        out = resolve_args(KERNEL, None, np.random.default_rng(0), nthreads=1000, bounds=bounds).values
        return out[1].value, out[2].value, out[4].value

    assert values({}) == (1000, 1.0, 255)
    assert values({1: (512, 512), 2: (2.5, None), 4: (None, 7)}) == (512, 2.5, 7)
    assert values({1: (None, 99.5), 2: (None, 0.25)}) == (99, 0.25, 255)  # integer bounds round inward
    assert values({1: (1, 2000)}) == (1000, 1.0, 255)  # a default inside the bounds stays


def test_auto_scalar_value_by_type():
    assert auto_scalar_value(np.dtype(np.int64), 1 << 20) == 1 << 20
    assert auto_scalar_value(np.dtype(np.int16), 1 << 20) == 32767
    assert auto_scalar_value(np.dtype(np.float16), 7) == 1.0
    assert auto_scalar_value(np.dtype(np.bool_), 7) is True


def test_automatic_buffers_take_the_pointee_type_or_bytes():
    data, *_, raw, _ = resolve(None)
    assert (data.name, data.dtype) == ("data (int*)", np.dtype(np.int32))
    assert (raw.name, raw.dtype) == ("raw (void*)", np.dtype(np.uint8))


def test_auto_mixes_with_explicit_arguments():
    values = resolve(["buf:16", "auto", "2.5", "auto", "7", "bytes:1i", "auto", "auto"])
    assert isinstance(values[0], Buffer) and values[0].array.shape == (16,)
    assert isinstance(values[1], AutoScalar) and values[1].value == 1000
    assert values[2] == np.float32(2.5).tobytes()
    assert values[4] == b"\x07"
    assert isinstance(values[6], AutoBuffer)


def test_some_but_not_all_arguments_is_an_error():
    with pytest.raises(UserError, match=r"kernel k takes 8 argument\(s\) .*, 1 given"):
        resolve(["auto"])


def test_auto_with_a_size_is_not_auto():
    with pytest.raises(UserError, match="unknown automatic contents '64'.*buf:64 is a buffer of 64 elements"):
        resolve(["auto:64"] + ["auto"] * 7)


# ---------------------------------------------------------------------------- memory layout


def test_automatic_buffers_follow_every_other_allocation_with_a_guard():
    mem = Memory(1, 32)
    explicit = mem.allocate_global("x", 100)
    first, second = mem.allocate_automatic(["p", "q"])
    assert first.base - explicit.end >= AUTO_GUARD_BYTES and second.base - first.end >= AUTO_GUARD_BYTES
    assert first.size == second.size == AUTO_BUFFER_BYTES
    assert first.base % PAGE_SIZE == 0 and second.base % PAGE_SIZE == 0
    with pytest.raises(RuntimeError, match="before the automatic buffers"):
        mem.allocate_global("late", 4)


def test_accesses_outside_an_automatic_reservation_are_out_of_bounds():
    mem = Memory(1, 32)
    explicit = mem.allocate_global("x", 100)
    first, second = mem.allocate_automatic(["p", "q"])
    addrs = np.array(
        [
            second.base - 4,  # just before the buffer
            second.base - AUTO_GUARD_BYTES + 4,  # far before it, still short of the buffer below
            first.end,  # just past the reservation
            explicit.end + 4096,  # between an explicit buffer and the first automatic one
            first.base,
            second.end - 4,
        ],
        dtype=np.uint64,
    )
    acc = mem.resolve(Space.GLOBAL, addrs, np.zeros(6, np.int64), np.zeros(6, np.int64), 4, write=True)
    assert acc.error.tolist() == [ErrorKind.OUT_OF_BOUNDS] * 4 + [ErrorKind.OK] * 2
    assert "4 bytes before the start of `q`" in mem.describe_error(acc, 0)


def test_automatic_buffer_starts_zeroed_and_reads_back_a_prefix():
    mem = Memory(1, 32)
    (buf,) = mem.allocate_automatic(["p"])
    assert mem.read(buf, 64) == bytes(64)
    mem.write(buf, b"\x05", offset=3)
    assert mem.read(buf, 4) == b"\0\0\0\x05"


# ---------------------------------------------------------------------------- running with automatic arguments

STRIDED = r"""
__global__ void strided(const int* in, int* out, int* counter, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = in[i * 1024] + 2 * i;
  atomicAdd(&counter[5000], 1);
}
"""


@pytest.fixture(scope="module")
def strided(tmp_path_factory):
    path = tmp_path_factory.mktemp("auto") / "strided.cu"
    path.write_text(STRIDED)
    return path


def test_run_without_arguments_reports_usage_and_returns_the_used_part(strided):
    result = gpurace.run(strided, grid=1, block=32, args=None)
    assert result.clean
    # reads, writes and atomics all count; reads 4 KiB apart touch a page each
    assert result.buffers == [
        BufferUsage("in (const int*)", 31 * 4096 + 4, 32),
        BufferUsage("out (int*)", 32 * 4, 1),
        BufferUsage("counter (int*)", 5001 * 4, 1),
    ]
    assert [(a.name, a.value) for a in result.auto_scalars] == [("n (int)", 32)]
    inp, out, counter, n = result.args
    assert inp.dtype == np.int32 and len(inp) == 31 * 1024 + 1 and not inp.any()
    np.testing.assert_array_equal(out, 2 * np.arange(32, dtype=np.int32))
    assert len(counter) == 5001 and counter[5000] == 32 and not counter[:5000].any()
    assert n == np.int32(32).tobytes()


def test_explicit_arguments_and_auto_together(strided):
    data = np.arange(32 * 1024, dtype=np.int32)
    result = gpurace.run(strided, grid=1, block=32, args=[data, "auto", "buf:5001", 16])
    assert [u.name for u in result.buffers] == ["out (int*)"]
    np.testing.assert_array_equal(result.args[1], np.arange(16) * 1024 + 2 * np.arange(16))
    assert result.args[2][5000] == 32
    assert result.auto_scalars == []
