"""OBJECT_CREATE requests (see `protocol`) decoded into the simulator's texture and surface objects.

The shim has already checked the memory an object describes (a CUDA array it
allocated, or linear memory inside one allocation); what is left here is
what the simulator supports and what CUDA itself refuses.
"""

from __future__ import annotations

from dataclasses import replace

from gpurace.runtime.protocol import Reader, ResourceKind
from gpurace.sim.textures import (
    AddressMode,
    ChannelFormat,
    FilterMode,
    Mipmap,
    ReadMode,
    Resource,
    Sampling,
    SurfaceObject,
    TextureObject,
    invalid_texture,
)

LAYERED, CUBEMAP = 1, 2
"""The bits of OBJECT_CREATE's `layered` field: a layered array; a cube map (six layers, its faces)."""

_RESOURCE_NAMES = {ResourceKind.ARRAY: "array", ResourceKind.LINEAR: "linear", ResourceKind.PITCH2D: "pitch2d"}


def read_object(surface: bool, r: Reader) -> TextureObject | SurfaceObject:
    """The object an OBJECT_CREATE payload (after its `object` field, before its site) describes.

    Every field is read before anything is checked, so the caller can read
    the site whatever happens. A UserError: gpurace does not support the
    object (a channel format it cannot read); a ValueError: CUDA refuses it.
    """
    kind, base, width, height, pitch, dims, depth, layered = r.u32(), r.u64(), r.u64(), r.u64(), r.u64(), r.u32(), r.u64(), r.u32()
    fmt = [r.u32() for _ in range(5)]
    modes, filter_mode, read_mode, normalized = [r.u32() for _ in range(3)], r.u32(), r.u32(), r.u32()
    border = tuple(r.f32() for _ in range(4))
    nlevels = r.u32()
    mipmap_fields = (r.u32(), r.f32(), r.f32(), r.f32(), r.u32()) if nlevels else ()
    level_extents = [(r.u64(), r.u64(), r.u64(), r.u64()) for _ in range(nlevels)]
    if kind not in set(ResourceKind):
        raise ValueError(f"resource kind {kind}")
    if dims not in (1, 2, 3) or depth == 0:
        raise ValueError(f"an array of {dims} dimensions and depth {depth}")
    fields = _RESOURCE_NAMES[ResourceKind(kind)], base, ChannelFormat.from_desc(*fmt), width, height, pitch, dims, depth
    resource = Resource(*fields, layered=bool(layered & LAYERED), cubemap=bool(layered & CUBEMAP))
    if resource.cubemap and (dims != 2 or width != height or depth != 6):
        raise ValueError(f"a cube map of {width}x{height}x{depth} texels (six square faces)")
    if surface:
        return SurfaceObject(resource)
    try:
        sampling = Sampling(
            tuple(AddressMode(m) for m in modes), FilterMode(filter_mode), ReadMode(read_mode), bool(normalized), border
        )
    except ValueError:
        raise ValueError("a cudaTextureDesc field out of range") from None
    mipmap = None
    if nlevels:
        filter_mode, bias, min_clamp, max_clamp, anisotropy = mipmap_fields
        if filter_mode not in set(FilterMode):
            raise ValueError("a cudaTextureDesc field out of range")
        levels = tuple(
            replace(resource, base=at, width=w, height=h, pitch=w * resource.format.texel_bytes, depth=d)
            for at, w, h, d in level_extents
        )
        mipmap = Mipmap(levels, FilterMode(filter_mode), bias, min_clamp, max_clamp, anisotropy)
    tex = TextureObject(resource, sampling, mipmap)
    why = invalid_texture(tex)
    if why is not None:
        raise ValueError(why)
    return tex
