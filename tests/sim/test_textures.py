"""Texel arithmetic (`sim.textures`) against a scalar reference written from the CUDA Programming Guide's
texture-fetching appendix: nearest-point and linear filtering (9-bit fixed-point weights), the four address
modes with normalized and unnormalized coordinates, both read modes, and the channel formats."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from gpurace.errors import UserError
from gpurace.sim.textures import (
    AddressMode,
    ChannelFormat,
    ChannelKind,
    FilterMode,
    ReadMode,
    Resource,
    Sampling,
    SurfaceObject,
    TextureObject,
    fetch,
    gather,
    invalid_texture,
    surface_addresses,
)

BASE = 0x1000
F32 = np.float32


# ---------------------------------------------------------------------- the reference, one sample at a time


def ref_index(i: int, n: int, mode: AddressMode, normalized: bool) -> int | None:
    """The texel an integer index names under `mode`; None for the border."""
    if not normalized and mode in (AddressMode.WRAP, AddressMode.MIRROR):
        mode = AddressMode.CLAMP
    if mode is AddressMode.CLAMP:
        return min(max(i, 0), n - 1)
    if mode is AddressMode.BORDER:
        return i if 0 <= i < n else None
    if mode is AddressMode.WRAP:
        return i % n
    m = i % (2 * n)
    return m if m < n else 2 * n - 1 - m


def ref_value(texel, fmt: ChannelFormat, read_mode: ReadMode) -> list[float]:
    """The four float components of one texel (a tuple of channel values)."""
    out = [0.0, 0.0, 0.0, 1.0]
    for c, v in enumerate(texel):
        if fmt.kind is ChannelKind.FLOAT:
            out[c] = float(v)
        elif read_mode is ReadMode.NORMALIZED_FLOAT and fmt.kind is ChannelKind.UNSIGNED:
            out[c] = float(F32(int(v) / (2**fmt.bits - 1)))
        elif read_mode is ReadMode.NORMALIZED_FLOAT:
            out[c] = max(float(F32(int(v) / (2 ** (fmt.bits - 1) - 1))), -1.0)
        else:
            out[c] = float(v)
    return out


def ref_fetch(grid, fmt, sampling: Sampling, coords: tuple[float, ...]) -> list[float]:
    """tex1D/tex2D(coords) of the texels `grid[y][x]` by the Programming Guide's formulas."""
    sizes = (len(grid[0]), len(grid))[: len(coords)]
    scaled = [F32(c) * F32(n) if sampling.normalized else F32(c) for c, n in zip(coords, sizes)]

    def texel(index: tuple[int, ...]) -> list[float]:
        at = [ref_index(i, n, sampling.address_modes[d], sampling.normalized) for d, (i, n) in enumerate(zip(index, sizes))]
        if None in at:
            return list(sampling.border)
        return ref_value(grid[at[1] if len(at) > 1 else 0][at[0]], fmt, sampling.read_mode)

    if sampling.filter_mode is FilterMode.POINT:
        return texel(tuple(math.floor(s) for s in scaled))
    lows, alphas = [], []
    for s in scaled:
        xb = F32(s - F32(0.5))
        i = math.floor(xb)
        lows.append(i)
        alphas.append(math.floor(float(xb - F32(i)) * 256 + 0.5) / 256)
    if len(coords) == 1:
        (i,), (a,) = lows, alphas
        t0, t1 = texel((i,)), texel((i + 1,))
        return [float(F32((1 - a) * t0[c] + a * t1[c])) for c in range(4)]
    (i, j), (a, b) = lows, alphas
    t00, t10, t01, t11 = texel((i, j)), texel((i + 1, j)), texel((i, j + 1)), texel((i + 1, j + 1))
    return [
        float(F32((1 - a) * (1 - b) * t00[c] + a * (1 - b) * t10[c] + (1 - a) * b * t01[c] + a * b * t11[c]))
        for c in range(4)
    ]


# ---------------------------------------------------------------------- the implementation, over a byte buffer


class Texels:
    """Global memory holding one resource at BASE; `read` is what the simulator's handler gives `fetch`."""

    def __init__(self, raw: np.ndarray):
        self.memory = np.frombuffer(np.ascontiguousarray(raw).tobytes(), dtype=np.uint8)
        self.reads: list[tuple[np.ndarray, np.ndarray]] = []

    def read(self, lanes, addrs):
        self.reads.append((lanes, addrs))
        size = self.size
        offsets = addrs.astype(np.int64) - BASE
        return self.memory[offsets[:, None] + np.arange(size)]


def texture(raw: np.ndarray, fmt: ChannelFormat, sampling: Sampling, dims: int) -> tuple[TextureObject, Texels]:
    height, width = (raw.shape[0], raw.shape[1]) if dims == 2 else (1, raw.shape[0])
    res = Resource("array", BASE, fmt, width, height, width * fmt.texel_bytes, dims)
    mem = Texels(raw)
    mem.size = fmt.texel_bytes
    return TextureObject(res, sampling), mem


def as_grid(raw: np.ndarray, fmt: ChannelFormat, dims: int):
    """The texels as Python tuples, grid[y][x]."""
    rows = raw.reshape(-1 if dims == 2 else 1, raw.shape[1] if dims == 2 else raw.shape[0], fmt.channels)
    return [[tuple(v.item() for v in texel) for texel in row] for row in rows]


FORMATS = [
    ChannelFormat(ChannelKind.FLOAT, 32, 1),
    ChannelFormat(ChannelKind.FLOAT, 32, 2),
    ChannelFormat(ChannelKind.FLOAT, 16, 4),
    ChannelFormat(ChannelKind.UNSIGNED, 8, 4),
    ChannelFormat(ChannelKind.SIGNED, 8, 1),
    ChannelFormat(ChannelKind.UNSIGNED, 16, 2),
    ChannelFormat(ChannelKind.SIGNED, 16, 4),
]


def random_texels(rng, fmt: ChannelFormat, shape) -> np.ndarray:
    if fmt.kind is ChannelKind.FLOAT:
        return rng.uniform(-4, 4, size=(*shape, fmt.channels)).astype(fmt.dtype)
    info = np.iinfo(fmt.dtype)
    return rng.integers(info.min, info.max, size=(*shape, fmt.channels), endpoint=True).astype(fmt.dtype)


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f"{f.kind.name}{f.bits}x{f.channels}")
@pytest.mark.parametrize("mode", list(AddressMode), ids=lambda m: m.name)
@pytest.mark.parametrize("filter_mode", list(FilterMode), ids=lambda m: m.name)
@pytest.mark.parametrize("normalized", [True, False])
def test_float_fetches_match_the_programming_guide(dims, fmt, mode, filter_mode, normalized):
    rng = np.random.default_rng(zlib.crc32(repr((dims, fmt, mode, filter_mode, normalized)).encode()))
    shape = (5, 7) if dims == 2 else (9,)
    raw = random_texels(rng, fmt, shape)
    read_mode = ReadMode.ELEMENT_TYPE if fmt.kind is ChannelKind.FLOAT else ReadMode.NORMALIZED_FLOAT
    sampling = Sampling((mode, mode, mode), filter_mode, read_mode, normalized, (0.25, -0.5, 2.0, 1.5))
    tex, mem = texture(raw, fmt, sampling, dims)
    n = 200
    if normalized:
        coords = [rng.uniform(-1.7, 2.7, n).astype(np.float32) for _ in range(dims)]
    else:
        coords = [rng.uniform(-3, s + 3, n).astype(np.float32) for s in shape[::-1][:dims]]
    got = fetch(tex, coords, False, mem.read, "f32")
    grid = as_grid(raw, fmt, dims)
    want = np.array([ref_fetch(grid, fmt, sampling, tuple(float(c[k]) for c in coords)) for k in range(n)], dtype=np.float32)
    np.testing.assert_array_equal(got, want)


def ref_gather(grid, fmt, sampling: Sampling, x: float, y: float, component: int) -> list[float]:
    """tex2Dgather: channel `component` of texels (i, j+1), (i+1, j+1), (i+1, j), (i, j), counter-clockwise from
    the lower left of the bilinear footprint, i and j the floor of the coordinates less half a texel."""
    w, h = len(grid[0]), len(grid)
    xs, ys = (F32(x) * F32(w), F32(y) * F32(h)) if sampling.normalized else (F32(x), F32(y))
    i, j = math.floor(F32(xs - F32(0.5))), math.floor(F32(ys - F32(0.5)))
    out = []
    for di, dj in ((0, 1), (1, 1), (1, 0), (0, 0)):
        at = [ref_index(v, n, sampling.address_modes[d], sampling.normalized) for d, (v, n) in enumerate(((i + di, w), (j + dj, h)))]
        if None in at:
            out.append(sampling.border[component])
        else:
            out.append(ref_value(grid[at[1]][at[0]], fmt, sampling.read_mode)[component])
    return out


@pytest.mark.parametrize("fmt", [FORMATS[1], FORMATS[3]], ids=["float2", "uchar4-normalized"])
@pytest.mark.parametrize("mode", list(AddressMode), ids=lambda m: m.name)
@pytest.mark.parametrize("component", range(4))
def test_gather_returns_one_channel_of_the_bilinear_footprint(fmt, mode, component):
    rng = np.random.default_rng(zlib.crc32(repr((fmt, mode, component)).encode()))
    raw = random_texels(rng, fmt, (4, 5))
    read_mode = ReadMode.ELEMENT_TYPE if fmt.kind is ChannelKind.FLOAT else ReadMode.NORMALIZED_FLOAT
    sampling = Sampling((mode, mode, mode), FilterMode.POINT, read_mode, True, (0.25, -0.5, 2.0, 1.5))
    tex, mem = texture(raw, fmt, sampling, 2)
    xs, ys = rng.uniform(-1.2, 2.2, 100).astype(np.float32), rng.uniform(-1.2, 2.2, 100).astype(np.float32)
    got = gather(tex, [xs, ys], component, mem.read, "f32").view(np.float32)
    grid = as_grid(raw, fmt, 2)
    want = [ref_gather(grid, fmt, sampling, float(x), float(y), component) for x, y in zip(xs, ys)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))


def test_gather_of_integers_read_as_elements():
    fmt = ChannelFormat(ChannelKind.SIGNED, 16, 2)
    raw = np.array([[[1, -1], [2, -2]], [[3, -3], [4, -4]]], dtype=np.int16)
    tex, mem = texture(raw, fmt, Sampling((AddressMode.CLAMP,) * 3), 2)
    got = gather(tex, [np.array([1.0], dtype=np.float32), np.array([1.0], dtype=np.float32)], 1, mem.read, "s32")
    assert got.view(np.int32).tolist() == [[-3, -4, -2, -1]]


def ref_fetch_3d(cube, fmt, sampling: Sampling, x: float, y: float, z: float) -> list[float]:
    """tex3D by the Programming Guide's formulas: the product of three 1D weights per texel (trilinear)."""
    sizes = (len(cube[0][0]), len(cube[0]), len(cube))
    scaled = [F32(c) * F32(n) if sampling.normalized else F32(c) for c, n in zip((x, y, z), sizes)]

    def texel(index):
        at = [ref_index(i, n, sampling.address_modes[d], sampling.normalized) for d, (i, n) in enumerate(zip(index, sizes))]
        return list(sampling.border) if None in at else ref_value(cube[at[2]][at[1]][at[0]], fmt, sampling.read_mode)

    if sampling.filter_mode is FilterMode.POINT:
        return texel([math.floor(v) for v in scaled])
    lows, alphas = [], []
    for v in scaled:
        b = F32(v - F32(0.5))
        lows.append(math.floor(b))
        alphas.append(math.floor(float(b - F32(math.floor(b))) * 256 + 0.5) / 256)
    total = [0.0] * 4
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                w = 1.0
                for up, a in zip((dx, dy, dz), alphas):
                    w *= a if up else 1 - a
                t = texel([lows[0] + dx, lows[1] + dy, lows[2] + dz])
                total = [acc + w * v for acc, v in zip(total, t)]
    return [float(F32(v)) for v in total]


@pytest.mark.parametrize("mode", list(AddressMode), ids=lambda m: m.name)
@pytest.mark.parametrize("filter_mode", list(FilterMode), ids=lambda m: m.name)
@pytest.mark.parametrize("normalized", [True, False])
def test_3d_fetches_match_the_programming_guide(mode, filter_mode, normalized):
    fmt = ChannelFormat(ChannelKind.FLOAT, 32, 1)
    rng = np.random.default_rng(zlib.crc32(repr((mode, filter_mode, normalized)).encode()))
    raw = rng.uniform(-4, 4, size=(3, 4, 5, 1)).astype(np.float32)  # depth, height, width
    sampling = Sampling((mode, mode, mode), filter_mode, ReadMode.ELEMENT_TYPE, normalized, (0.5, 0, 0, 0))
    res = Resource("array", BASE, fmt, 5, 4, 20, 3, 3)
    mem = Texels(raw)
    mem.size = 4
    span = (-1.5, 2.5) if normalized else (-2.0, 7.0)
    coords = [rng.uniform(*span, 150).astype(np.float32) for _ in range(3)]
    got = fetch(TextureObject(res, sampling), coords, False, mem.read, "f32")
    cube = [[[tuple(v.item() for v in texel) for texel in row] for row in plane] for plane in raw]
    want = [ref_fetch_3d(cube, fmt, sampling, *(float(c[k]) for c in coords)) for k in range(150)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.float32))


def test_a_layered_fetch_filters_within_its_layer_and_clamps_the_layer_index():
    fmt = ChannelFormat(ChannelKind.FLOAT, 32, 1)
    raw = np.array([[0.0, 10.0], [100.0, 110.0], [200.0, 210.0]], dtype=np.float32)  # 3 layers of 2 texels
    res = Resource("array", BASE, fmt, 2, 1, 8, 1, 3, layered=True)
    mem = Texels(raw)
    mem.size = 4
    tex = TextureObject(res, Sampling((AddressMode.CLAMP,) * 3, FilterMode.LINEAR))
    x = np.full(4, 1.25, dtype=np.float32)
    got = fetch(tex, [x], False, mem.read, "f32", layer=np.array([0, 1, 2, 7], dtype=np.int32))
    assert got[:, 0].tolist() == [7.5, 107.5, 207.5, 207.5]


def test_the_weights_are_9_bit_fixed_point():
    """x = 0.5 + 1/512 + tiny: the fraction rounds to 1/256, not to the exact 0.00195..."""
    fmt = ChannelFormat(ChannelKind.FLOAT, 32, 1)
    tex, mem = texture(np.array([[0.0], [256.0]], dtype=np.float32), fmt, Sampling(filter_mode=FilterMode.LINEAR), 1)
    got = fetch(tex, [np.array([0.5 + 1 / 512 + 1 / 4096, 0.5 + 1 / 1024], dtype=np.float32)], False, mem.read, "f32")
    assert got[:, 0].tolist() == [1.0, 0.0]


def test_integer_formats_read_as_elements_are_extended_to_32_bits():
    fmt = ChannelFormat(ChannelKind.SIGNED, 8, 2)
    raw = np.array([[-128, 127], [-1, 5], [3, -7]], dtype=np.int8)
    sampling = Sampling((AddressMode.BORDER,) * 3, border=(9.0, -2.0, 0.0, 0.0))
    tex, mem = texture(raw, fmt, sampling, 1)
    got = fetch(tex, [np.array([0, 1, 2, 3, -1], dtype=np.int32)], True, mem.read, "s32")
    assert got.view(np.int32).tolist() == [[-128, 127, 0, 1], [-1, 5, 0, 1], [3, -7, 0, 1], [9, -2, 0, 0], [9, -2, 0, 0]]


def test_unsigned_32_bit_texels_and_unnormalized_wrap_clamps():
    fmt = ChannelFormat(ChannelKind.UNSIGNED, 32, 1)
    raw = np.array([[7], [0xFFFFFFFF], [3]], dtype=np.uint32)
    tex, mem = texture(raw, fmt, Sampling(), 1)  # wrap, unnormalized: clamp
    got = fetch(tex, [np.array([-5.0, 1.2, 9.0], dtype=np.float32)], False, mem.read, "u32")
    assert got[:, 0].tolist() == [7, 0xFFFFFFFF, 3]


def test_linear_filtering_reads_each_contributing_texel():
    fmt = ChannelFormat(ChannelKind.FLOAT, 32, 1)
    raw = np.arange(12, dtype=np.float32).reshape(3, 4, 1)
    tex, mem = texture(raw, fmt, Sampling(filter_mode=FilterMode.LINEAR), 2)
    fetch(tex, [np.array([1.25], dtype=np.float32), np.array([2.0], dtype=np.float32)], False, mem.read, "f32")
    addresses = sorted(int(a[0]) for _, a in mem.reads)
    assert addresses == [BASE + 4 * (4 * y + x) for y in (1, 2) for x in (0, 1)]


def test_border_texels_are_not_read():
    fmt = ChannelFormat(ChannelKind.FLOAT, 32, 1)
    tex, mem = texture(np.ones((4, 1), dtype=np.float32), fmt, Sampling((AddressMode.BORDER,) * 3), 1)
    got = fetch(tex, [np.array([-2.0, 1.0], dtype=np.float32)], False, mem.read, "f32")
    assert got[:, 0].tolist() == [0.0, 1.0]
    assert [lanes.tolist() for lanes, _ in mem.reads] == [[1]]


@pytest.mark.parametrize(
    "desc, message",
    [
        ((8, 8, 8, 0, 1), "only 1, 2 or 4 channels"),
        ((8, 16, 0, 0, 1), "only 1, 2 or 4 channels of equal size"),
        ((8, 0, 0, 0, 2), "8-bit channels of this kind are not supported"),
        ((32, 0, 0, 0, 3), "only the signed, unsigned and float channel kinds"),
    ],
)
def test_unsupported_channel_formats_are_named(desc, message):
    with pytest.raises(UserError, match=message):
        ChannelFormat.from_desc(*desc)


def test_textures_cuda_refuses():
    u8 = Resource("array", BASE, ChannelFormat(ChannelKind.UNSIGNED, 8, 1), 4)
    assert "linear filtering" in invalid_texture(TextureObject(u8, Sampling(filter_mode=FilterMode.LINEAR)))
    assert invalid_texture(TextureObject(u8, Sampling(filter_mode=FilterMode.LINEAR, read_mode=ReadMode.NORMALIZED_FLOAT))) is None
    linear = Resource("linear", BASE, ChannelFormat(ChannelKind.FLOAT, 32, 1), 4)
    assert "integer coordinates" in invalid_texture(TextureObject(linear, Sampling(normalized=True)))


@pytest.mark.parametrize(
    "mode, x, y, addr, inside",
    [
        ("trap", 12, 1, BASE + 32 + 12, True),
        ("trap", 14, 1, None, False),  # the last 4 bytes would cross the row's end
        ("trap", 0, 3, None, False),
        ("zero", -4, 0, None, False),
        ("clamp", 40, 7, BASE + 2 * 32 + 12, True),
        ("clamp", -8, -1, BASE, True),
    ],
)
def test_surface_coordinates_are_bytes_within_the_row(mode, x, y, addr, inside):
    surf = SurfaceObject(Resource("array", BASE, ChannelFormat(ChannelKind.UNSIGNED, 8, 4), 4, 3, 32, 2))
    got, ok = surface_addresses(surf, np.array([x]), [np.array([y])], 4, mode)
    assert bool(ok[0]) is inside
    if addr is not None:
        assert int(got[0]) == addr


# ---------------------------------------------------------------------- kernels under `gpurace run` (no exec)

FETCH = r"""
__global__ void k(cudaTextureObject_t t, float* out) {
  int i = threadIdx.x;
  out[i] = tex1Dfetch<float>(t, i);  // line 4
}
"""

SURFACE = r"""
__global__ void k(cudaSurfaceObject_t s, int* out, int use) {
  if (use)
    surf2Dwrite(1, s, 4 * threadIdx.x, 0);  // line 4
  out[threadIdx.x] = 2;
}
"""


def run_kernel(tmp_path, source, *args):
    from click.testing import CliRunner

    from gpurace.cli import cli

    path = tmp_path / "k.cu"
    path.write_text(source)
    return CliRunner().invoke(cli, ["run", str(path), "--grid", "1", "--block", "4", *args])


def test_a_fetch_without_exec_names_the_handle_and_the_line(tmp_path):
    result = run_kernel(tmp_path, FETCH, "--arg", "7", "--arg", "buf:4")
    assert result.exit_code == 2
    assert "k.cu:4" in result.output and "handle 0x7, which is not a live texture object" in result.output
    assert "under check, pass one with --arg tex:TYPE:SHAPE" in result.output and "Traceback" not in result.output


def test_a_surface_store_that_never_runs_does_not_stop_the_kernel(tmp_path):
    assert run_kernel(tmp_path, SURFACE, "--arg", "3", "--arg", "buf:4", "--arg", "0").exit_code == 0
    result = run_kernel(tmp_path, SURFACE, "--arg", "3", "--arg", "buf:4", "--arg", "1")
    assert result.exit_code == 2 and "k.cu:4" in result.output and "not a live surface object" in result.output
    assert "--arg surf:TYPE:SHAPE" in result.output


def test_3d_surface_coordinates():
    surf = SurfaceObject(Resource("array", BASE, ChannelFormat(ChannelKind.FLOAT, 32, 1), 4, 2, 16, 3, 3))
    got, ok = surface_addresses(surf, np.array([4, 4]), [np.array([1, 1]), np.array([2, 3])], 4, "trap")
    assert ok.tolist() == [True, False] and int(got[0]) == BASE + 2 * 32 + 16 + 4
