"""`--arg tex:...` and `--arg surf:...`: texture and surface objects for a kernel checked without its host code.

A kernel that takes a `cudaTextureObject_t` or `cudaSurfaceObject_t` gets
from its host code a handle the runtime made over memory the host filled.
Under `check` there is no host code, so the argument describes the object
and its texels instead:

    tex:TYPE:SHAPE[:INIT][:OPTIONS]      surf:TYPE:SHAPE[:INIT]

- TYPE is a channel type of `--arg` buffers (`f32`, `f16`, `i8` ... `u32`),
  optionally with a channel count: `f32x2`, `u8x4` (1, 2 or 4 channels);
- SHAPE is `W`, `WxH` or `WxHxD` texels;
- INIT fills the texels' channels as a buffer's INIT does (`zeros`, `ones`,
  `iota`, `rand`, `file:PATH.npy`);
- OPTIONS, comma-separated: an address mode (`wrap`, `clamp`, `mirror`,
  `border`; default `clamp`), a filter (`point`, default, or `linear`),
  `normalized-coords`, `normalized-float` (cudaReadModeNormalizedFloat) and
  `array` (a 1D texture over a CUDA array rather than linear memory).

A 1D texture is over linear memory (what `tex1Dfetch` reads) unless `array`
says otherwise; 2D and 3D ones, and every surface, are over CUDA arrays,
row-major as the runtime under `exec` lays them out (`sim.textures`). The
object is what CUDA would make of the same descriptors: a combination CUDA
refuses (linear filtering of integer texels, say) is refused the same way.
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.sim.arg_values import Buffer, TextureArg
from gpurace.sim.textures import (
    AddressMode,
    ChannelFormat,
    ChannelKind,
    FilterMode,
    ReadMode,
    Resource,
    Sampling,
    TextureObject,
    invalid_texture,
)

PREFIXES = ("tex", "surf")

_KINDS = {"f": ChannelKind.FLOAT, "i": ChannelKind.SIGNED, "u": ChannelKind.UNSIGNED}
_MODES = {"wrap": AddressMode.WRAP, "clamp": AddressMode.CLAMP, "mirror": AddressMode.MIRROR, "border": AddressMode.BORDER}
_FILTERS = {"point": FilterMode.POINT, "linear": FilterMode.LINEAR}
_FLAGS = ("normalized-coords", "normalized-float", "array")
OPTIONS = (*_MODES, *_FILTERS, *_FLAGS)
_INITS = ("zeros", "ones", "iota", "rand", "file")


def texture_arg(spec: str, name: str, label: str, make_buffer) -> TextureArg:
    """The object `spec` (`tex:...` or `surf:...`) describes; `make_buffer(count, dtype, init)` makes its texels'
    buffer (checked against the memory budget by the caller), `label` names the argument in errors."""
    head, _, rest = spec.partition(":")
    fields = rest.split(":")
    if len(fields) < 2:
        raise UserError(f"{label}: a {head} object is {head}:TYPE:SHAPE[:INIT]{'[:OPTIONS]' if head == 'tex' else ''}")
    type_text, shape_text, tail = fields[0], fields[1], fields[2:]
    options: list[str] = []
    if head == "tex" and tail and all(o in OPTIONS for o in tail[-1].split(",")):
        options = tail.pop().split(",")
    if tail and not (tail[0] == "file" or (len(tail) == 1 and tail[0] in _INITS)):
        raise UserError(
            f"{label}: {':'.join(tail)!r} is neither an INIT ({', '.join(_INITS)}) nor OPTIONS ({', '.join(OPTIONS if head == 'tex' else ())})"
        )
    fmt = _format(type_text, label)
    shape = _shape(shape_text, label)
    init = ":".join(tail) or "zeros"
    texels = int(np.prod(shape))
    array = make_buffer(texels * fmt.channels, fmt.dtype, init)
    over_array = head == "surf" or len(shape) > 1 or "array" in options
    width, height, depth = (*shape, 1, 1)[:3]
    resource = Resource(
        "array" if over_array else "linear", 0, fmt, width, height,
        pitch=width * fmt.texel_bytes if over_array else 0, dims=len(shape), depth=depth,
    )
    if head == "surf":
        return TextureArg(name, Buffer(array, name), resource, None)
    sampling = _sampling(options, label)
    why = invalid_texture(TextureObject(resource, sampling))
    if why is not None:
        raise UserError(f"{label}: CUDA would refuse this texture object: {why}")
    return TextureArg(name, Buffer(array, name), resource, sampling)


def _format(text: str, label: str) -> ChannelFormat:
    base, _, channels = text.partition("x")
    kind = _KINDS.get(base[:1])
    if kind is None or not base[1:].isdigit() or (channels and not channels.isdigit()):
        raise UserError(f"{label}: texel type {text!r} is not one of f16, f32, i8, i16, i32, u8, u16, u32, optionally xN")
    bits, count = int(base[1:]), int(channels or 1)
    try:
        return ChannelFormat.from_desc(*[bits if c < count else 0 for c in range(4)], int(kind))
    except UserError as e:
        raise UserError(f"{label}: texel type {text!r}: {e}") from None


def _shape(text: str, label: str) -> tuple[int, ...]:
    parts = text.split("x")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise UserError(f"{label}: SHAPE must be W, WxH or WxHxD texels (positive integers), got {text!r}")
    return tuple(int(p) for p in parts)


def _sampling(options: list[str], label: str) -> Sampling:
    modes = [o for o in options if o in _MODES]
    filters = [o for o in options if o in _FILTERS]
    if len(modes) > 1 or len(filters) > 1:
        raise UserError(f"{label}: give at most one address mode and one filter, got {','.join(options)}")
    mode = _MODES[modes[0]] if modes else AddressMode.CLAMP
    return Sampling(
        (mode,) * 3,
        _FILTERS[filters[0]] if filters else FilterMode.POINT,
        ReadMode.NORMALIZED_FLOAT if "normalized-float" in options else ReadMode.ELEMENT_TYPE,
        "normalized-coords" in options,
    )
