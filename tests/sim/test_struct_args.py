"""Struct arguments field by field: `struct:` specs, dicts of fields and `auto`, with layouts from a stand-in probe."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.frontend.kernels import KernelInfo, ParamInfo
from gpurace.frontend.type_probe import Field, LayoutUnknown, StructLayout
from gpurace.sim.arg_values import AutoBuffer, AutoScalar, Buffer, StructArg
from gpurace.sim.args import Resolver, parse_bytes_spec, resolve_args
from gpurace.sim.struct_args import is_struct_type, split_struct_spec
from gpurace.limits import Limits

JOB = StructLayout("Job", 24, 8, (Field("in", "const float*", 0, 8, 8), Field("out", "int*", 8, 8, 8), Field("n", "int", 16, 4, 4)))
OUTER = StructLayout("Outer", 32, 8, (Field("job", "Job", 0, 24, 8), Field("scale", "float", 24, 4, 4)))


class Layouts:
    """A stand-in for `TypeProbe`: known layouts, LayoutUnknown for any other type."""

    def struct_layout(self, type_name):
        known = {"Job": JOB, "Outer": OUTER}
        if type_name not in known:
            raise LayoutUnknown(f"cannot tell the layout of {type_name}: no definition")
        return known[type_name]


KERNEL = KernelInfo("k", "_Z1k", (ParamInfo("p0", "Job", "b8", 24, "job"), ParamInfo("p1", "Outer", "b8", 32, "o")), 0)


def resolve(args, types=Layouts()):
    return resolve_args(KERNEL, args, np.random.default_rng(0), nthreads=100, types=types).values


def test_split_struct_spec():
    assert split_struct_spec("a=buf:64, inner.p=f32:8:rand ,n=64", "L") == {"a": "buf:64", "inner": {"p": "f32:8:rand"}, "n": "64"}
    # a bytes: value keeps its commas; only `,NAME=` starts the next field
    assert split_struct_spec("raw=bytes:1i,2i,n=3", "L") == {"raw": "bytes:1i,2i", "n": "3"}


@pytest.mark.parametrize(
    "body, message",
    [("a", "expected FIELD=SPEC"), ("a=1,a=2", "field a is given twice"), ("1x=2", "expected FIELD=SPEC"), ("a.b=1,a=2", "given twice")],
)
def test_split_struct_spec_errors(body, message):
    with pytest.raises(UserError, match=message):
        split_struct_spec(body, "L")


@pytest.mark.parametrize(
    "cpp, expected",
    [("Job", True), ("ns::Job<int>", True), ("float2", False), ("int4", False), ("dim3", False), ("__half", False),
     ("unsigned int", False), ("size_t", False), ("int*", False), ("int [3]", False), ("enum Mode", False), (None, False)],
)  # fmt: skip
def test_is_struct_type(cpp, expected):
    assert is_struct_type(cpp) is expected


def test_struct_spec_places_buffers_in_fields():
    job, outer = resolve(["struct:in=buf:8:iota,n=8", "struct:job.out=buf:4,scale=2.5"])
    assert isinstance(job, StructArg) and job.name == "job (Job)"
    assert job.data == bytes(16) + struct.pack("<i", 8) + bytes(4)  # pointer fields stay zero until placed
    [(offset, buf)] = job.pointers
    assert offset == 0 and isinstance(buf, Buffer) and buf.name == "job.in (const float*)"
    assert buf.array.dtype == np.float32 and list(buf.array) == list(range(8))
    [(offset, buf)] = outer.pointers
    assert offset == 8 and buf.name == "o.job.out (int*)" and buf.array.dtype == np.int32
    assert outer.data[24:28] == struct.pack("<f", 2.5)


def test_dict_of_fields_in_python():
    out = np.zeros(4, np.int32)
    job, _ = resolve([{"out": out, "n": 4}, {"job": {"n": 1}}])
    [(offset, buf)] = job.pointers
    assert offset == 8 and buf.array is out
    assert job.data[16:20] == struct.pack("<i", 4)


def test_auto_gives_every_field_its_own_auto():
    job, outer = resolve(None)
    assert [(o, type(b).__name__, b.name) for o, b in job.pointers] == [(0, "AutoBuffer", "job.in (const float*)"), (8, "AutoBuffer", "job.out (int*)")]
    assert [(a.name, a.value) for a in job.auto_scalars] == [("job.n (int)", 100)]
    assert [b.name for _, b in outer.pointers] == ["o.job.in (const float*)", "o.job.out (int*)"]
    assert [(a.name, a.value) for a in outer.auto_scalars] == [("o.job.n (int)", 100), ("o.scale (float)", 1.0)]
    assert isinstance(job.pointers[0][1], AutoBuffer) and job.pointers[0][1].dtype == np.float32


def test_auto_without_a_layout_is_zero_bytes_with_the_reason():
    kernel = KernelInfo("k", "_Z1k", (ParamInfo("p0", "Mystery", "b8", 16, "m"),), 0)
    [value] = resolve_args(kernel, None, np.random.default_rng(0), nthreads=1, types=Layouts()).values
    assert isinstance(value, AutoScalar) and value.data == bytes(16) and "cannot tell the layout of Mystery" in value.note
    [value] = resolve_args(kernel, None, np.random.default_rng(0), nthreads=1).values  # no probe at all
    assert value == AutoScalar("m (Mystery)", None, bytes(16))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("struct:nope=1", "argument 1 (Job): Job has no field 'nope' (its fields: in, out, n)"),
        ("struct:n=buf:4", "field n (int): a buffer was given for a non-pointer parameter"),
        ("struct:in=7", "field in (const float*): a pointer parameter needs a buffer"),
        ("struct:n=x", "field n (int): expected an integer"),
        ("struct:in=buf:-1", "COUNT must not be negative"),
    ],
)
def test_struct_spec_errors_name_the_argument_and_field(spec, message):
    with pytest.raises(UserError, match=f"^--arg '{re.escape(spec)}' for .*" + re.escape(message)):
        resolve([spec, "auto"])


def test_struct_spec_without_a_layout_is_an_error():
    kernel = KernelInfo("k", "_Z1k", (ParamInfo("p0", "Mystery", "b8", 16, "m"),), 0)
    with pytest.raises(UserError, match="cannot tell the layout of Mystery"):
        resolve_args(kernel, ["struct:a=buf:4"], np.random.default_rng(0), nthreads=1, types=Layouts())
    with pytest.raises(UserError, match="not a struct"):
        Resolver(np.random.default_rng(0), Limits(), 1, Layouts()).value("struct:a=1", ParamInfo("p", "int", "u32", 4, "n"), "L")


def test_a_layout_that_does_not_fit_the_parameter_is_refused():
    kernel = KernelInfo("k", "_Z1k", (ParamInfo("p0", "Job", "b8", 16, "job"),), 0)  # PTX says 16 bytes, the probe 24
    with pytest.raises(UserError, match="it is 24 bytes as the compiler lays it out, but the kernel takes 16"):
        resolve_args(kernel, ["struct:n=1"], np.random.default_rng(0), nthreads=1, types=Layouts())
    [value] = resolve_args(kernel, None, np.random.default_rng(0), nthreads=1, types=Layouts()).values
    assert isinstance(value, AutoScalar) and value.data == bytes(16) and "but the kernel takes 16" in value.note


def test_a_bytes_value_beyond_its_types_range_is_an_input_error():
    assert parse_bytes_spec("1.5f,2i", 8, "L") == struct.pack("<fi", 1.5, 2)
    with pytest.raises(UserError, match=r"L: bad value '3.5e38f'"):
        parse_bytes_spec("3.5e38f", 4, "L")


def test_a_built_structs_pointer_may_point_inside_its_buffer():
    """A front end that lays out its own structs (CuPy's `CArray` of a reversed view) puts the offset of the pointed-at
    byte in the pointer field; it must lie inside the buffer, whose address `sim.placement` adds to it."""
    memory = np.zeros(4, np.float32)
    inside = StructArg("x", struct.pack("<q", 12) + bytes(16), pointers=[(0, Buffer(memory.view(np.uint8), "x"))])
    assert resolve([inside, {"job": {"n": 1}}])[0] is inside
    past = StructArg("x", struct.pack("<q", 16) + bytes(16), pointers=[(0, Buffer(memory.view(np.uint8), "x"))])
    with pytest.raises(UserError, match="the pointer to x points past its 16 bytes"):
        resolve([past, {"job": {"n": 1}}])
