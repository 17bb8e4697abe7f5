"""Texture and surface objects: what a handle describes, and the texel arithmetic of `tex`, `tld4`, `suld`
and `sust`.

A texture or surface object is a 64-bit handle that a kernel receives as a
parameter. Under `gpurace exec` the device server keeps the table of live
objects (handle -> `TextureObject` / `SurfaceObject`) and hands it to each
launch; under `check` there is no host code that could create one, so the
table is empty and every fetch names its handle as not live.

Every resource lives in global memory, so a texel fetch is a global read of
the texel's bytes and a surface access a global read or write, seen by the
race detectors like any other access. The layouts:

- linear memory (`tex1Dfetch`): texel `x` at `base + x * texel_bytes`;
- pitch2D memory and CUDA arrays: texel `(x, y)` at
  `base + y * pitch + x * texel_bytes`; a CUDA array is row-major with
  `pitch = width * texel_bytes` (the runtime allocates it that way).

Fetch semantics follow the CUDA Programming Guide's texture-fetching
appendix. Texel coordinates are computed in float32 as the hardware does
(`x * N` for normalized coordinates, minus 0.5 for linear filtering); the
linear-filtering weights are 9-bit fixed point with 8 fractional bits
(the fraction rounded to the nearest 1/256, halves up), and the weighted sum
is computed in double precision and rounded once to float32. Address modes
act on integer texel indices: clamp to `[0, N-1]`; border gives the border
colour for each index outside `[0, N)`; wrap takes the index modulo N and
mirror reflects it with period 2N. Wrap and mirror exist only for normalized
coordinates, as in CUDA: with unnormalized ones they clamp. Integer
coordinates (`tex1Dfetch`) are texel indices, never filtered. `tld4`
(`tex2Dgather`) returns one channel of the four texels linear filtering
would weigh. A texture over a mipmapped array (`TextureObject.mipmap`) is
fetched level by level as these rules say, at the levels
`sim.texture_mipmaps` chooses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from gpurace.errors import UserError


class ChannelKind(IntEnum):
    """cudaChannelFormatKind."""

    SIGNED = 0
    UNSIGNED = 1
    FLOAT = 2


class AddressMode(IntEnum):
    """cudaTextureAddressMode."""

    WRAP = 0
    CLAMP = 1
    MIRROR = 2
    BORDER = 3


class FilterMode(IntEnum):
    """cudaTextureFilterMode."""

    POINT = 0
    LINEAR = 1


class ReadMode(IntEnum):
    """cudaTextureReadMode."""

    ELEMENT_TYPE = 0
    NORMALIZED_FLOAT = 1


_CHANNEL_DTYPES = {
    (ChannelKind.SIGNED, 8): np.int8,
    (ChannelKind.SIGNED, 16): np.int16,
    (ChannelKind.SIGNED, 32): np.int32,
    (ChannelKind.UNSIGNED, 8): np.uint8,
    (ChannelKind.UNSIGNED, 16): np.uint16,
    (ChannelKind.UNSIGNED, 32): np.uint32,
    (ChannelKind.FLOAT, 16): np.float16,
    (ChannelKind.FLOAT, 32): np.float32,
}


@dataclass(frozen=True)
class ChannelFormat:
    """A texel's format (cudaChannelFormatDesc): `channels` channels (1, 2 or 4) of `bits` bits each, of `kind`."""

    kind: ChannelKind
    bits: int
    channels: int

    @staticmethod
    def from_desc(x: int, y: int, z: int, w: int, kind: int) -> ChannelFormat:
        """The format a cudaChannelFormatDesc describes; a UserError saying why when gpurace does not support it."""
        bits = [x, y, z, w]
        channels = next((i for i, b in enumerate(bits) if b == 0), 4)
        desc = f"cudaChannelFormatDesc {{{x}, {y}, {z}, {w}, kind {kind}}}"
        if kind not in (0, 1, 2):
            raise UserError(f"{desc}: only the signed, unsigned and float channel kinds are supported")
        if channels not in (1, 2, 4) or len(set(bits[:channels])) != 1 or any(bits[channels:]):
            raise UserError(f"{desc}: only 1, 2 or 4 channels of equal size are supported")
        if (ChannelKind(kind), bits[0]) not in _CHANNEL_DTYPES:
            raise UserError(f"{desc}: {bits[0]}-bit channels of this kind are not supported")
        return ChannelFormat(ChannelKind(kind), bits[0], channels)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_CHANNEL_DTYPES[(self.kind, self.bits)])

    @property
    def texel_bytes(self) -> int:
        return self.channels * self.bits // 8


@dataclass(frozen=True)
class Resource:
    """Where the texels are: `kind` is "linear", "pitch2d" or "array"; `dims` is 1, 2 or 3 (the array's shape).

    Slice z of a 3D array starts `height` rows after slice z-1; a layered
    array (`layered`) is laid out as a 3D one whose `depth` slices are its
    layers, of `dims` dimensions each. A cube map (`cubemap`) is a layered
    2D array of six square faces (+x, -x, +y, -y, +z, -z).
    """

    kind: str
    base: int
    format: ChannelFormat
    width: int
    height: int = 1
    pitch: int = 0
    dims: int = 1
    depth: int = 1
    layered: bool = False
    cubemap: bool = False

    @property
    def sizes(self) -> tuple[int, int, int]:
        return (self.width, self.height, self.depth)

    def address(self, index: Sequence[np.ndarray]) -> np.ndarray:
        """uint64 addresses of texels (x[, y[, z]]), indices already inside the resource."""
        strides = (self.format.texel_bytes, self.pitch, self.pitch * self.height)
        addr = np.full(len(index[0]), self.base, dtype=np.uint64)
        for i, stride in zip(index, strides):
            addr = addr + i.astype(np.uint64) * np.uint64(stride)
        return addr


@dataclass(frozen=True)
class Sampling:
    """cudaTextureDesc, as far as gpurace reads it."""

    address_modes: tuple[AddressMode, AddressMode, AddressMode] = (AddressMode.WRAP,) * 3
    filter_mode: FilterMode = FilterMode.POINT
    read_mode: ReadMode = ReadMode.ELEMENT_TYPE
    normalized: bool = False
    border: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Mipmap:
    """The levels of a mipmapped array (level 0 is the texture's `resource`) and the mipmap fields of the
    cudaTextureDesc (`sim.texture_mipmaps` reads them)."""

    levels: tuple[Resource, ...]
    filter_mode: FilterMode = FilterMode.POINT
    bias: float = 0.0
    min_clamp: float = 0.0
    max_clamp: float = 0.0
    max_anisotropy: int = 0


@dataclass(frozen=True)
class TextureObject:
    resource: Resource
    sampling: Sampling
    mipmap: Mipmap | None = None

    def returns_float(self) -> bool:
        """Whether fetches give floating-point data: a float format, or 8/16-bit integers read as normalized floats."""
        fmt = self.resource.format
        return fmt.kind is ChannelKind.FLOAT or (self.sampling.read_mode is ReadMode.NORMALIZED_FLOAT and fmt.bits <= 16)


@dataclass(frozen=True)
class SurfaceObject:
    resource: Resource


def invalid_texture(tex: TextureObject) -> str | None:
    """Why CUDA refuses to create `tex` (the runtime answers cudaErrorInvalidValue), or None."""
    fmt, s = tex.resource.format, tex.sampling
    if s.filter_mode is FilterMode.LINEAR and not tex.returns_float():
        return "linear filtering needs a texture that returns floating-point data"
    if s.read_mode is ReadMode.NORMALIZED_FLOAT and fmt.kind is not ChannelKind.FLOAT and fmt.bits == 32:
        return "cudaReadModeNormalizedFloat needs 8- or 16-bit integer channels"
    if tex.resource.kind == "linear" and (s.filter_mode is FilterMode.LINEAR or s.normalized):
        return "a texture over linear memory takes integer coordinates only"
    if tex.mipmap is not None and tex.mipmap.filter_mode is FilterMode.LINEAR and not tex.returns_float():
        return "linear mipmap filtering needs a texture that returns floating-point data"
    return None


# ---------------------------------------------------------------------- fetch

ReadTexels = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(lanes, addresses) -> the texel bytes there, shape (len(lanes), texel_bytes) uint8; it also records the reads."""


def fetch(
    tex: TextureObject, coords: Sequence[np.ndarray], integer: bool, read: ReadTexels, result: str, layer: np.ndarray | None = None
) -> np.ndarray:
    """The four components a `tex` returns, shape (N, 4), raw bits of `result` ("f32", "s32" or "u32").

    `coords` holds one array per dimension of the resource: float32 values,
    or int32 texel indices when `integer`; `layer` the layer index of each
    lane for a layered texture (clamped to the layers there are; filtering
    never mixes layers).
    """
    res, s = tex.resource, tex.sampling
    if integer or not tex.returns_float():  # integer texels are never filtered (CUDA refuses it)
        normalized = s.normalized and not integer
        index = [
            c.astype(np.int64) if integer else np.floor(_scaled(c, size, normalized)).astype(np.int64)
            for c, size in zip(coords, res.sizes)
        ]
        texels, inside = _read_tap(tex, index, normalized, read, layer)
        if not tex.returns_float():
            return _integer_result(texels, res.format, inside, s.border, result)
        return as_result(_border_values(texels, inside, tex), result)
    return as_result(filtered_values(tex, coords, read, layer), result)


def filtered_values(tex: TextureObject, coords: Sequence[np.ndarray], read: ReadTexels, layer: np.ndarray | None = None) -> np.ndarray:
    """(N, 4) float64 components of a texture that returns floating-point data, at float32 coordinates, by its
    filter mode, before the one rounding to float32 (`sim.texture_mipmaps` blends two levels' first)."""
    res, s = tex.resource, tex.sampling
    sizes = res.sizes[: len(coords)]
    if s.filter_mode is FilterMode.POINT:
        index = [np.floor(_scaled(c, size, s.normalized)).astype(np.int64) for c, size in zip(coords, sizes)]
        return _border_values(*_read_tap(tex, index, s.normalized, read, layer), tex)
    total = np.zeros((len(coords[0]), 4), dtype=np.float64)
    for index, weight in _linear_taps(coords, sizes, s.normalized):
        total += weight[:, None] * _border_values(*_read_tap(tex, index, s.normalized, read, layer), tex)
    return total


def _border_values(texels: np.ndarray, inside: np.ndarray, tex: TextureObject) -> np.ndarray:
    """The float components of texels read by `_read_tap`, the border colour where there is no texel."""
    values = _float_values(texels, tex)
    values[~inside] = tex.sampling.border
    return values


GATHER_ORDER = (2, 3, 1, 0)
"""`tld4` returns the bilinear footprint counter-clockwise from its lower left texel: (i, j+1), (i+1, j+1),
(i+1, j), (i, j), as corner numbers of `_linear_taps` (bit 0: i+1, bit 1: j+1)."""


def gather(tex: TextureObject, coords: Sequence[np.ndarray], component: int, read: ReadTexels, result: str) -> np.ndarray:
    """What `tld4.{r,g,b,a}.2d` (tex2Dgather) returns, shape (N, 4): channel `component` of the four texels
    linear filtering would weigh (whatever the filter mode), converted as `tex` converts them."""
    res, s = tex.resource, tex.sampling
    taps = _linear_taps(coords, res.sizes[:2], s.normalized)
    out = np.zeros((len(coords[0]), 4), dtype=np.uint32)
    for slot, corner in enumerate(GATHER_ORDER):
        texels, inside = _read_tap(tex, taps[corner][0], s.normalized, read)
        if tex.returns_float():
            raw = as_result(_border_values(texels, inside, tex), result)
        else:
            raw = _integer_result(texels, res.format, inside, s.border, result)
        out[:, slot] = raw[:, component].view(np.uint32)
    return out


def _read_tap(
    tex: TextureObject, index: list[np.ndarray], normalized: bool, read: ReadTexels, layer: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(texel bytes, whether the texel exists) at texel indices `index` (in layer `layer` of a layered texture)
    after the address modes; border lanes read nothing and hold zeros."""
    res, s = tex.resource, tex.sampling
    n = len(index[0])
    inside = np.ones(n, dtype=np.bool_)
    resolved = []
    for d, (i, size) in enumerate(zip(index, res.sizes)):
        r, ok = _resolve(i, size, _effective(s.address_modes[d], normalized))
        resolved.append(r)
        inside &= ok
    if layer is not None:  # a layer is a slice: y is 0 in a 1D layered array
        resolved += [np.zeros(n, dtype=np.int64)] * (2 - len(resolved)) + [np.clip(layer.astype(np.int64), 0, res.depth - 1)]
    texels = np.zeros((n, res.format.texel_bytes), dtype=np.uint8)
    at = np.flatnonzero(inside)
    if len(at):
        texels[inside] = read(at, res.address([r[inside] for r in resolved]))
    return texels, inside


def as_result(values: np.ndarray, result: str) -> np.ndarray:
    """(N, 4) float64 components rounded to float32, as the raw bits of `result`."""
    out = values.astype(np.float32)
    return out if result == "f32" else out.view(np.uint32 if result == "u32" else np.int32)


def _effective(mode: AddressMode, normalized: bool) -> AddressMode:
    """Wrap and mirror need normalized coordinates; with unnormalized ones CUDA clamps."""
    if not normalized and mode in (AddressMode.WRAP, AddressMode.MIRROR):
        return AddressMode.CLAMP
    return mode


def _scaled(c: np.ndarray, size: int, normalized: bool) -> np.ndarray:
    """The coordinate in texels, in float32."""
    c = c.astype(np.float32)
    return c * np.float32(size) if normalized else c


def _linear_taps(coords, sizes, normalized) -> list[tuple[list[np.ndarray], np.ndarray]]:
    """The 2 (1D) or 4 (2D) texels linear filtering reads, each with its weight per lane."""
    per_dim = []
    for c, size in zip(coords, sizes):
        xb = _scaled(c, size, normalized) - np.float32(0.5)
        i = np.floor(xb)
        frac = (xb - i).astype(np.float64)
        alpha = np.floor(frac * 256.0 + 0.5) / 256.0  # 9-bit fixed point, 8 fractional bits
        per_dim.append((i.astype(np.int64), alpha))
    taps = []
    for corner in range(1 << len(per_dim)):
        index, weight = [], 1.0
        for d, (i, alpha) in enumerate(per_dim):
            upper = corner >> d & 1
            index.append(i + upper)
            weight = weight * (alpha if upper else 1.0 - alpha)
        taps.append((index, np.broadcast_to(weight, (len(coords[0]),))))
    return taps


def _resolve(i: np.ndarray, size: int, mode: AddressMode) -> tuple[np.ndarray, np.ndarray]:
    """(index inside [0, size), whether the texel exists) after the address mode."""
    if mode is AddressMode.CLAMP:
        return np.clip(i, 0, size - 1), np.ones(len(i), dtype=np.bool_)
    if mode is AddressMode.BORDER:
        inside = (i >= 0) & (i < size)
        return np.where(inside, i, 0), inside
    if mode is AddressMode.WRAP:
        return np.mod(i, size), np.ones(len(i), dtype=np.bool_)
    m = np.mod(i, 2 * size)
    return np.where(m >= size, 2 * size - 1 - m, m), np.ones(len(i), dtype=np.bool_)


def _channels(texels: np.ndarray, fmt: ChannelFormat) -> np.ndarray:
    """(N, channels) values of the format's dtype."""
    return np.ascontiguousarray(texels).view(fmt.dtype).reshape(len(texels), fmt.channels)


def _float_values(texels: np.ndarray, tex: TextureObject) -> np.ndarray:
    """(N, 4) float64 components: floats as they are, normalized integers as the read mode scales them; absent
    channels read 0 (x, y, z) and 1 (w)."""
    fmt = tex.resource.format
    ch = _channels(texels, fmt)
    if fmt.kind is ChannelKind.FLOAT:
        vals = ch.astype(np.float32).astype(np.float64)
    elif fmt.kind is ChannelKind.UNSIGNED:
        vals = (ch.astype(np.float32) / np.float32((1 << fmt.bits) - 1)).astype(np.float64)
    else:
        vals = np.maximum(ch.astype(np.float32) / np.float32((1 << (fmt.bits - 1)) - 1), np.float32(-1)).astype(np.float64)
    out = np.zeros((len(texels), 4), dtype=np.float64)
    out[:, 3] = 1.0
    out[:, : fmt.channels] = vals
    return out


def _integer_result(texels, fmt: ChannelFormat, inside, border, result: str) -> np.ndarray:
    """(N, 4) 32-bit components of an integer texel read in element-type mode: sign- or zero-extended; absent
    channels 0 (x, y, z) and 1 (w); outside a border-mode texture, the border colour converted to integers."""
    ch = _channels(texels, fmt).astype(np.int64)
    out = np.zeros((len(texels), 4), dtype=np.int64)
    out[:, 3] = 1
    out[:, : fmt.channels] = ch
    out[~inside] = np.array(border, dtype=np.float64).astype(np.int64)
    return out.astype(np.uint32 if result == "u32" else np.int32) if result != "f32" else out.astype(np.int32).view(np.float32)


# ---------------------------------------------------------------------- surfaces

SURFACE_MODES = ("trap", "clamp", "zero")


def surface_addresses(
    surf: SurfaceObject, x_bytes: np.ndarray, rows: Sequence[np.ndarray], size: int, mode: str
) -> tuple[np.ndarray, np.ndarray]:
    """(addresses, in-range mask) of a `suld.b`/`sust.b` of `size` bytes at byte offset `x_bytes` of the row
    that `rows` (y, and z for a 3D surface; none for 1D) name.

    In range means the whole access lies inside the row and the row inside
    the surface. `.clamp` moves an access outside to the nearest location
    inside (the first or last `size` bytes of the nearest row); `.trap` and
    `.zero` leave it to the caller (an out-of-bounds finding, or zero / no
    store), whose addresses here are clamped ones that it must not use.
    """
    res = surf.resource
    row_bytes = res.width * res.format.texel_bytes
    x = x_bytes.astype(np.int64)
    inside = (x >= 0) & (x <= row_bytes - size)
    addr = np.uint64(res.base) + np.clip(x, 0, max(row_bytes - size, 0)).astype(np.uint64)
    for r, size_in_rows, stride in zip(rows, res.sizes[1:], (res.pitch, res.pitch * res.height)):
        r = r.astype(np.int64)
        inside &= (r >= 0) & (r < size_in_rows)
        addr = addr + np.clip(r, 0, size_in_rows - 1).astype(np.uint64) * np.uint64(stride)
    if mode == "clamp":
        inside = np.ones(len(x), dtype=np.bool_)
    return addr, inside
