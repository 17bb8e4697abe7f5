"""Launches that use texture and surface objects, run as `gpurace exec` runs them (`runtime.launch.run_launch`
on a `Device` whose table holds the objects), from hand-written PTX: what `tex`, `suld.b`, `sust.b`, `txq` and
`suq` compute, which accesses the detectors see (racy and race-free twins), and out-of-range surface
accesses under each mode."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.limits import Limits
from gpurace.runtime.device import Device
from gpurace.runtime.launch import run_launch
from gpurace.runtime.protocol import MemoryKind, WireSite
from gpurace.runtime.sites import SourceLines
from gpurace.sim.textures import AddressMode, ChannelFormat, ChannelKind, FilterMode, Resource, Sampling, SurfaceObject, TextureObject

HEAD = ".version 8.0\n.target sm_75\n.address_size 64\n"

QUERY = """
.visible .entry query(.param .u64 t, .param .u64 s, .param .u64 out) {
  .reg .b32 %r<5>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd2, [s];
  ld.param.u64 %rd3, [out];
  txq.width.b32 %r1, [%rd1];
  txq.height.b32 %r2, [%rd1];
  suq.width.b32 %r3, [%rd2];
  suq.depth.b32 %r4, [%rd2];
  st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
  ret;
}
"""

# Block 0 stores one int per thread through the surface (row 0); block 1 fetches row `row` through the texture.
SURFACE_THEN_TEXTURE = """
.visible .entry mixed(.param .u64 s, .param .u64 t, .param .u64 out, .param .u32 row) {
  .reg .pred %p1; .reg .b32 %r<10>; .reg .f32 %f<8>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [s];
  ld.param.u64 %rd2, [t];
  ld.param.u64 %rd3, [out];
  ld.param.u32 %r9, [row];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra READ;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, 0;
  sust.b.2d.b32.trap [%rd1, {%r3, %r4}], {%r1};
  ret;
READ:
  tex.2d.v4.s32.s32 {%r5, %r6, %r7, %r8}, [%rd2, {%r1, %r9}];
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r5;
  ret;
}
"""

# Each thread loads 4 bytes at byte x = 4 * tid - 4 of row 0 under `mode` and stores them to out[tid].
SURFACE_LOAD = """
.visible .entry load(.param .u64 s, .param .u64 out) {
  .reg .b32 %r<6>; .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [s];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  sub.s32 %r2, %r2, 4;
  suld.b.1d.b32.MODE {%r3}, [%rd1, {%r2}];
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r3;
  ret;
}
"""

LINEAR_FETCH = """
.visible .entry fetch(.param .u64 t, .param .u64 out, .param .f32 x) {
  .reg .f32 %f<6>; .reg .b64 %rd<2>;
  ld.param.u64 %rd0, [t];
  ld.param.u64 %rd1, [out];
  ld.param.f32 %f5, [x];
  tex.1d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd0, {%f5}];
  st.global.f32 [%rd1], %f1;
  ret;
}
"""

SITE = WireSite("test", ())


def device_for(ptx: str) -> Device:
    module = parse_ptx(HEAD + ptx, "k.ptx")
    device = Device([module], arch="compute_75", limits=Limits(max_memory=1 << 30), source_lines=SourceLines())
    device.register_function(1, module.kernels[0].name)
    return device


@pytest.fixture
def make_device():
    made = []

    def make(ptx: str) -> Device:
        made.append(device_for(ptx))
        return made[-1]

    yield make
    for device in made:
        device.close()


def allocate(device: Device, data: bytes) -> int:
    """A cudaMalloc block holding `data`, written as by a host copy (so its bytes count as initialised)."""
    base = device.heap.allocate(len(data), MemoryKind.DEVICE, SITE).allocation.base
    device.global_arena.view(base, len(data))[:] = np.frombuffer(data, dtype=np.uint8)
    at = device.global_arena.canonical(base)  # written bytes are recorded where they are in the arena (`heap`)
    device.heap.written.host_wrote(np.array([at], dtype=np.uint64), np.array([at + len(data)], dtype=np.uint64))
    return base


def launch(device: Device, grid: int, block: int, params: bytes):
    name = device.modules[0].kernels[0].name
    device.launches += 1
    return run_launch(device, 0, name, (grid, 1, 1), (block, 1, 1), 0, params, device.source_lines.frame(SITE))


def ints(device: Device, base: int, n: int) -> list[int]:
    return np.frombuffer(bytes(device.global_arena.view(base, 4 * n)), dtype=np.int32).tolist()


def int_array(base: int, width: int, height: int) -> Resource:
    return Resource("array", base, ChannelFormat(ChannelKind.SIGNED, 32, 1), width, height, 4 * width, 2 if height > 1 else 1)


def test_txq_and_suq_give_the_objects_sizes(make_device):
    device = make_device(QUERY)
    array = allocate(device, bytes(4 * 6 * 3))
    out = allocate(device, bytes(16))
    device.textures[5] = TextureObject(int_array(array, 6, 3), Sampling())
    device.textures[9] = SurfaceObject(int_array(array, 6, 3))
    status, _ = launch(device, 1, 1, struct.pack("<QQQ", 5, 9, out))
    assert status == 0 and ints(device, out, 4) == [6, 3, 6, 0]


@pytest.mark.parametrize("row, racy", [(0, True), (1, False)])
def test_a_texel_written_through_a_surface_by_another_block_races(make_device, row, racy):
    device = make_device(SURFACE_THEN_TEXTURE)
    array = allocate(device, bytes(4 * 32 * 2))
    out = allocate(device, bytes(4 * 32))
    device.textures[1] = SurfaceObject(int_array(array, 32, 2))
    device.textures[2] = TextureObject(int_array(array, 32, 2), Sampling())
    launch(device, 2, 32, struct.pack("<QQQI", 1, 2, out, row))
    races = [f for f in device.findings.sorted() if f.kind == "data-race"]
    if not racy:
        assert device.findings.sorted() == []
        return
    assert len(races) == 1 and races[0].space == "global"
    sides = sorted((site.instruction.split()[0], site.op, site.block[0]) for site in races[0].sites)
    assert sides == [("sust.b.2d.b32.trap", "write", 0), ("tex.2d.v4.s32.s32", "read", 1)]


@pytest.mark.parametrize(
    "mode, loaded, finding",
    [
        ("trap", [0, 10, 11, 12], "out-of-bounds"),  # thread 0 reads x = -4: a finding, and no value
        ("clamp", [10, 10, 11, 12], None),
        ("zero", [0, 10, 11, 12], None),
    ],
)
def test_out_of_range_surface_loads(make_device, mode, loaded, finding):
    device = make_device(SURFACE_LOAD.replace("MODE", mode))
    array = allocate(device, struct.pack("<4i", 10, 11, 12, 13))
    out = allocate(device, bytes(16))
    device.textures[3] = SurfaceObject(int_array(array, 4, 1))
    launch(device, 1, 4, struct.pack("<QQ", 3, out))
    assert ints(device, out, 4) == loaded
    found = [(f.kind, f.space, f.sites[0].instruction.split()[0]) for f in device.findings.sorted()]
    assert found == ([(finding, "global", f"suld.b.1d.b32.{mode}")] if finding else [])


def test_a_linear_filtered_fetch_on_the_device(make_device):
    device = make_device(LINEAR_FETCH)
    data = allocate(device, np.array([1.0, 3.0, 11.0], dtype=np.float32).tobytes())
    out = allocate(device, bytes(4))
    res = Resource("array", data, ChannelFormat(ChannelKind.FLOAT, 32, 1), 3)
    device.textures[4] = TextureObject(res, Sampling((AddressMode.CLAMP,) * 3, FilterMode.LINEAR))
    launch(device, 1, 1, struct.pack("<QQf", 4, out, 2.25))  # between texels 1 and 2, 3/4 of the way
    assert np.frombuffer(bytes(device.global_arena.view(out, 4)), dtype=np.float32)[0] == np.float32(3.0 + 0.75 * 8.0)


def test_a_surface_used_as_a_texture_stops_the_launch(make_device):
    device = make_device(LINEAR_FETCH)
    out = allocate(device, bytes(4))
    device.textures[4] = SurfaceObject(int_array(out, 1, 1))
    with pytest.raises(UserError, match=r"PTX line \d+: `tex.1d.v4.f32.f32 .*` in thread 0 uses handle 0x4, which is not a live texture object$"):
        launch(device, 1, 1, struct.pack("<QQf", 4, out, 0.0))


def test_a_1d_fetch_needs_a_texture_of_one_row(make_device):
    device = make_device(LINEAR_FETCH)
    data = allocate(device, np.array([5.0, 6.0, 7.0, 8.0], dtype=np.float32).tobytes())
    out = allocate(device, bytes(4))
    one_row = Resource("array", data, ChannelFormat(ChannelKind.FLOAT, 32, 1), 2, 1, 8, 2)
    device.textures[4] = TextureObject(one_row, Sampling())
    launch(device, 1, 1, struct.pack("<QQf", 4, out, 1.5))
    assert np.frombuffer(bytes(device.global_arena.view(out, 4)), dtype=np.float32)[0] == 6.0
    device.textures[4] = TextureObject(Resource("array", data, one_row.format, 2, 2, 8, 2), Sampling())
    with pytest.raises(UserError, match="accesses a 2D texture with .1d coordinates"):
        launch(device, 1, 1, struct.pack("<QQf", 4, out, 1.5))


LAYERED_1D = """
.visible .entry layers(.param .u64 s, .param .u64 t, .param .u64 out) {
  .reg .b32 %r<10>; .reg .f32 %f<2>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [s];
  ld.param.u64 %rd2, [t];
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  shl.b32 %r3, %r1, 2;
  mad.lo.s32 %r4, %r2, 10, %r1;
  sust.b.a1d.b32.trap [%rd1, {%r2, %r3}], {%r4};
  bar.sync 0;
  cvt.rn.f32.u32 %f1, %r1;
  add.f32 %f1, %f1, 0f3F000000;
  tex.a1d.v4.s32.f32 {%r5, %r6, %r7, %r8}, [%rd2, {%r2, %f1}];
  mad.lo.s32 %r9, %r2, 4, %r1;
  mul.wide.u32 %rd4, %r9, 4;
  add.s64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r5;
  ret;
}
"""


def test_a_layered_1d_array_through_a_surface_and_a_texture(make_device):
    device = make_device(LAYERED_1D)
    array = allocate(device, bytes(4 * 4 * 3))
    out = allocate(device, bytes(4 * 12))
    res = Resource("array", array, ChannelFormat(ChannelKind.SIGNED, 32, 1), 4, 1, 16, 1, 3, layered=True)
    device.textures[1] = SurfaceObject(res)
    device.textures[2] = TextureObject(res, Sampling())
    launch(device, 3, 4, struct.pack("<QQQ", 1, 2, out))  # block b writes and reads layer b only: no race
    assert ints(device, out, 12) == [10 * layer + x for layer in range(3) for x in range(4)]
    assert device.findings.sorted() == []
    device.textures[2] = TextureObject(Resource("array", array, res.format, 4, 1, 16, 1), Sampling())
    with pytest.raises(UserError, match=r"accesses a 1D texture with .a1d coordinates"):
        launch(device, 3, 4, struct.pack("<QQQ", 1, 2, out))
