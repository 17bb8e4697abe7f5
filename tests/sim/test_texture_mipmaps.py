"""Mipmapped fetches (`sim.texture_mipmaps`) against values worked out by hand from the rules in its docstring:
the level of detail (bias, clamps, the levels there are), the nearest level of point mipmap filtering, the blend of
linear mipmap filtering, and the level of detail of gradients."""

from __future__ import annotations

import numpy as np

from gpurace.sim.texture_mipmaps import fetch_mipmapped, level_of_detail, lod_from_gradients
from gpurace.sim.textures import ChannelFormat, FilterMode, Mipmap, Resource, Sampling, TextureObject

F32 = np.float32
FLOAT = ChannelFormat.from_desc(32, 0, 0, 0, 2)


def mipmapped(filter_mode: FilterMode, bias=0.0, lo=0.0, hi=3.0):
    """An 8x8 float texture of 4 levels whose texel (x, y) of level l holds 10 l + x, and its memory's reader."""
    store, levels, base = [], [], 0
    for level in range(4):
        n = 8 >> level
        levels.append(Resource("array", base, FLOAT, n, n, 4 * n, 2))
        store += [10.0 * level + x for _ in range(n) for x in range(n)]
        base += 4 * n * n
    memory = np.array(store, dtype=F32).view(np.uint8)
    mip = Mipmap(tuple(levels), filter_mode, bias, lo, hi)
    tex = TextureObject(levels[0], Sampling(normalized=True), mip)
    reads = []

    def read(at, addrs):
        reads.append((at, addrs))
        return np.stack([memory[int(a) : int(a) + 4] for a in addrs])

    return tex, read, reads


def values(tex, read, lods, x=0.0625):
    n = len(lods)
    coords = [np.full(n, x, dtype=F32), np.full(n, 0.0625, dtype=F32)]
    return fetch_mipmapped(tex, coords, np.array(lods, dtype=F32), read, "f32").view(F32)[:, 0].tolist()


def test_the_level_of_detail_is_biased_then_clamped_to_the_clamps_and_the_levels():
    mip = mipmapped(FilterMode.POINT, bias=1.0, lo=0.5, hi=2.5)[0].mipmap
    assert level_of_detail(mip, np.array([-3, 0, 1, 9, np.nan], dtype=F32)).tolist() == [0.5, 1.0, 2.0, 2.5, 0.0]
    assert level_of_detail(Mipmap(mip.levels, max_clamp=9.0), np.array([7], dtype=F32)).tolist() == [3.0]


def test_point_mipmap_filtering_reads_the_nearest_level_only():
    tex, read, reads = mipmapped(FilterMode.POINT)
    assert values(tex, read, [0, 0.5, 0.51, 1.49, 1.5, 2.6, 5]) == [0, 0, 10, 10, 10, 30, 30]
    assert sum(len(at) for at, _ in reads) == 7  # one texel per lane


def test_linear_mipmap_filtering_weighs_two_levels_by_the_fraction_in_eighths_of_bits():
    tex, read, reads = mipmapped(FilterMode.LINEAR)
    assert values(tex, read, [0.25, 1, 2.5, 3]) == [2.5, 10, 25, 30]
    assert values(tex, read, [1 / 3]) == [float(F32(10 * 85 / 256))]  # the fraction rounded to 85/256
    reads.clear()
    values(tex, read, [1.0])
    assert sum(len(at) for at, _ in reads) == 1  # a level of weight 0 is not read


def test_levels_are_sampled_at_their_own_size_with_normalized_coordinates():
    tex, read, _ = mipmapped(FilterMode.POINT)
    assert values(tex, read, [0, 1, 2], x=0.6) == [4, 12, 21]


def test_the_level_of_detail_of_gradients_is_log2_of_the_longer_in_level_zero_texels():
    tex = mipmapped(FilterMode.POINT)[0]
    ddx = [np.array([0.125, 0.5, 0], dtype=F32), np.zeros(3, dtype=F32)]
    ddy = [np.zeros(3, dtype=F32), np.array([0.0625, 0.125, 0], dtype=F32)]
    assert lod_from_gradients(tex, ddx, ddy).tolist() == [0.0, 2.0, -np.inf]
