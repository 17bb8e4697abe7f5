"""Fetches from mipmapped textures (`tex.level`: tex2DLod, `tex.grad`: tex2DGrad, and plain `tex` on a mipmapped
array): which level, or which two, each lane reads, and how they are combined.

CUDA's documents name the fields (cudaTextureDesc's `mipmapFilterMode`,
`mipmapLevelBias`, `minMipmapLevelClamp`, `maxMipmapLevelClamp`,
`maxAnisotropy`) without giving the arithmetic; gpurace takes the rules of
OpenGL and Vulkan, which GPUs' texture units implement:

- the level of detail is the one given (`tex.level`), 0 for a plain `tex`
  (a kernel has no derivatives), or log2 of the larger gradient's length in
  level-0 texels (`tex.grad`; isotropic: `maxAnisotropy` above 1 stops the
  launch, naming the instruction); plus the bias, clamped to the two clamps
  and to the levels there are;
- point mipmap filtering reads the nearest level, ceil(lod + 1/2) - 1 (level
  0 up to 1/2); linear mipmap filtering reads levels floor(lod) and the next
  (the last level stays itself) and weighs them by lod's fraction, which,
  like the texel weights of `sim.textures`, is 8-bit fixed point;
- each level is fetched as a texture of its own (the object's filter and
  address modes, normalized coordinates: a mipmapped texture takes no other),
  and two levels are blended before the one rounding to float32.

A GPU's texture unit computes the level of detail with less precision than
this, so where a lod lands within its rounding of a level boundary the level
may differ.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpurace.sim.textures import FilterMode, Mipmap, ReadTexels, TextureObject, as_result, fetch, filtered_values


def level_of_detail(mip: Mipmap, lod: np.ndarray) -> np.ndarray:
    """The level of detail each lane reads at (float64), from its `lod`: biased, clamped to the texture's clamps and
    to its levels."""
    lam = lod.astype(np.float32).astype(np.float64) + np.float64(np.float32(mip.bias))
    lam = np.minimum(np.maximum(lam, np.float32(mip.min_clamp)), np.float32(mip.max_clamp))
    return np.clip(np.nan_to_num(lam, nan=0.0), 0, len(mip.levels) - 1)


def lod_from_gradients(tex: TextureObject, ddx: Sequence[np.ndarray], ddy: Sequence[np.ndarray]) -> np.ndarray:
    """log2 of the larger of the two gradients' lengths in level-0 texels (normalized coordinates scaled by the
    level's sizes); -inf for zero gradients, which the clamps then raise."""
    sizes = tex.resource.sizes

    def length(d):
        return np.sqrt(sum((c.astype(np.float64) * size) ** 2 for c, size in zip(d, sizes)))

    with np.errstate(divide="ignore"):
        return np.log2(np.maximum(length(ddx), length(ddy)))


def fetch_mipmapped(
    tex: TextureObject,
    coords: Sequence[np.ndarray],
    lod: np.ndarray,
    read: ReadTexels,
    result: str,
    layer: np.ndarray | None = None,
) -> np.ndarray:
    """The four components a fetch at level of detail `lod` (per lane) returns, shape (N, 4): the raw bits of
    `result`, as `sim.textures.fetch` gives them for one level."""
    mip = tex.mipmap
    lam = level_of_detail(mip, lod)
    if mip.filter_mode is FilterMode.POINT:
        nearest = np.where(lam <= 0.5, 0, np.ceil(lam + 0.5) - 1).astype(np.int64)
        out = np.zeros((len(lam), 4), dtype=np.uint32)
        for level, lanes, (sub_coords, sub_read, sub_layer) in _by_level(nearest, coords, layer, read):
            out[lanes] = fetch(_level(tex, level), sub_coords, False, sub_read, result, sub_layer).view(np.uint32)
        return out
    lower = np.floor(lam)
    alpha = np.floor((lam - lower) * 256.0 + 0.5) / 256.0  # 9-bit fixed point, 8 fractional bits
    upper = np.minimum(lower + 1, len(mip.levels) - 1)
    total = np.zeros((len(lam), 4), dtype=np.float64)
    for levels, weight in ((lower, 1.0 - alpha), (upper, alpha)):
        read_levels = np.where(weight > 0, levels, -1).astype(np.int64)  # a level of weight 0 is not read (-1)
        for level, lanes, (sub_coords, sub_read, sub_layer) in _by_level(read_levels, coords, layer, read):
            if level >= 0:
                values = filtered_values(_level(tex, level), sub_coords, sub_read, sub_layer)
                total[lanes] += weight[lanes, None] * values
    return as_result(total, result)


def _level(tex: TextureObject, level: int) -> TextureObject:
    """Level `level` of a mipmapped texture, as a texture of its own."""
    return TextureObject(tex.mipmap.levels[level], tex.sampling)


def _by_level(levels: np.ndarray, coords: Sequence[np.ndarray], layer: np.ndarray | None, read: ReadTexels):
    """(level, lane mask, (coordinates, read, layer) of those lanes) for each level the lanes read; the read takes
    lane numbers among the subset, as `fetch` gives them, and reads as the whole set's lanes."""
    for level in np.unique(levels):
        lanes = levels == level
        where = np.flatnonzero(lanes)

        def sub_read(at, addrs, where=where):
            return read(where[at], addrs)

        yield int(level), lanes, ([c[lanes] for c in coords], sub_read, layer[lanes] if layer is not None else None)
