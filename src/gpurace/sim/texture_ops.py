"""The handlers of `tex`, `tld4`, `suld.b`, `sust.b`, `txq` and `suq` (the `Decoder` methods delegate here).

They find each lane's object in the launch's table (`DeviceMemory.textures`,
filled by the device server under `gpurace exec`; empty otherwise), let
`sim.textures` compute texel addresses and values, and do every memory
access through the launch's `Memory`, so that a texel read is a global read
event and a surface store a global write event, with the instruction's pc,
as the race detectors expect. A handle that is not a live object of the
right kind stops the run with a message naming the instruction's line: the
hardware's behaviour is undefined there, and nothing sensible can be
simulated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Addr, Reg, Vec, type_size
from gpurace.sim.events import AccessKind
from gpurace.sim.memory import Space
from gpurace.sim.texture_mipmaps import fetch_mipmapped, lod_from_gradients
from gpurace.sim.textures import SURFACE_MODES, SurfaceObject, TextureObject, fetch, gather, surface_addresses

GEOMETRIES = ("1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms")
QUERIES = ("width", "height", "depth")


def _unsupported(dec, why: str) -> UserError:
    """Raised at decode time: the instruction stops the run only if a thread reaches it."""
    return UserError(f"the simulator does not support `{dec.ins.text}` ({why})")


def _source(dec, op, count: int):
    """(handle reader, coordinate operands) of `[handle, {coordinates}]`, with `count` operands."""
    text = dec.ins.text
    if not (isinstance(op, Vec) and len(op.elems) == 2 and isinstance(op.elems[1], Vec)):
        raise UserError(f"`{text}` needs [handle, {{coordinates}}] as its source")
    handle, coords = op.elems
    if not isinstance(handle, Reg):
        raise UserError(f"`{text}`: only texture and surface objects (a 64-bit handle in a register) are supported, not texture or surface references")
    if len(coords.elems) != count:
        raise UserError(f"`{text}` needs {count} coordinate(s), found {len(coords.elems)}")
    return dec.reader(handle, "u64"), list(coords.elems)


def _lookup(dec, kind: type, name: str):
    """(handles, idx) -> [(object, lane mask)] for each distinct handle; an error naming the line for a dead one."""
    where, text = dec.ins.where(), dec.ins.text
    mem = dec.eng.mem

    def lookup(handles: np.ndarray, idx: np.ndarray):
        found = []
        for h in np.unique(handles):
            obj = mem.textures.get(int(h))
            if not isinstance(obj, kind):
                lane = int(np.flatnonzero(handles == h)[0])
                why = f" (under check, pass one with --arg {'tex' if kind is TextureObject else 'surf'}:TYPE:SHAPE...)" if mem.device is None else ""
                raise UserError(f"{where}: `{text}` in thread {int(idx[lane])} uses handle {int(h):#x}, which is not a live {name} object{why}")
            found.append((obj, handles == h))
        return found

    return lookup


@dataclass(frozen=True)
class Shape:
    """A geometry modifier: `dims` coordinates (after the layer index when `layered`), `count` operands in all."""

    name: str
    dims: int
    layered: bool
    count: int

    def split(self, values: list):
        """(coordinates, layer or None) from the operands' values in PTX order."""
        if self.layered:
            return values[1 : 1 + self.dims], values[0]
        return values[: self.dims], None


SHAPES = {
    "1d": Shape("1d", 1, False, 1),
    "2d": Shape("2d", 2, False, 2),
    "3d": Shape("3d", 3, False, 4),
    "a1d": Shape("a1d", 1, True, 2),
    "a2d": Shape("a2d", 2, True, 4),
    "cube": Shape("cube", 3, False, 4),  # a direction (x, y, z); the fourth element is ignored
}


def _check_dims(dec, obj, shape: Shape, name: str) -> None:
    """The object must have the instruction's geometry; a 1D access to a 2D object of one row (or the reverse)
    is fine."""
    res = obj.resource
    if (shape.name == "cube") != res.cubemap:
        has = "a cube map" if res.cubemap else f"a{' layered' if res.layered else ''} {res.dims}D {name}"
        raise UserError(f"{dec.ins.where()}: `{dec.ins.text}` accesses {has} with .{shape.name} coordinates")
    if shape.name == "cube":
        return
    if res.layered != shape.layered or (res.dims != shape.dims and (res.height > 1 or max(res.dims, shape.dims) > 2)):
        has = f"a{' layered' if res.layered else ''} {res.dims}D {name}"
        raise UserError(f"{dec.ins.where()}: `{dec.ins.text}` accesses {has} with .{shape.name} coordinates")


def _geometry(dec) -> Shape | None:
    """The instruction's geometry; None for those gpurace does not support (cube map arrays, multisample)."""
    return SHAPES.get(dec.one_of(GEOMETRIES, "geometry"))


def _access(dec, lanes_idx: np.ndarray, addrs: np.ndarray, size: int, kind: AccessKind):
    """Resolve global accesses of `size` bytes for threads `lanes_idx`, report bad ones; (Access, ok mask)."""
    acc = dec.eng.mem.resolve(Space.GLOBAL, addrs, lanes_idx, dec.eng.geo.block_of[lanes_idx], size, write=kind is AccessKind.WRITE)
    return acc, dec.check_access(acc, lanes_idx, "write" if kind is AccessKind.WRITE else "read", size)


def tex(dec):
    """`tex.{1d,2d,3d,a1d,a2d,cube}.v4`: texel fetches (`sim.textures.fetch`), and of a mipmapped texture at a
    level of detail that is given (`tex.level`), from gradients (`tex.grad`) or 0 (`sim.texture_mipmaps`)."""
    shape = _geometry(dec)
    if shape is None:
        raise _unsupported(dec, "cube map array and multisample textures are not supported")
    types = dec.ins.types
    integer = types[1:] == ("s32",)
    mode = next((m for m in ("level", "grad") if m in dec.ins.modifiers), None)
    if (shape.name == "cube" or mode) and integer:
        raise UserError(f"`{dec.ins.text}` needs .f32 coordinates")
    if mode and shape.name == "cube":
        raise _unsupported(dec, "mipmapped cube maps are not supported")
    extra = _lod_operands(dec, mode, shape)

    def compute(obj, values, layer, read, extras):
        if shape.name == "cube":
            face, s, t = cube_face(*values)
            if not obj.sampling.normalized:
                s, t = s * np.float32(obj.resource.width), t * np.float32(obj.resource.height)
            return fetch(obj, [s, t], False, read, types[0], face)
        if obj.mipmap is None:
            return fetch(obj, values, integer, read, types[0], layer)
        if mode == "grad":
            if obj.mipmap.max_anisotropy > 1:
                raise UserError(
                    f"{dec.ins.where()}: `{dec.ins.text}` reads a texture with anisotropic filtering (maxAnisotropy "
                    f"{obj.mipmap.max_anisotropy}), which gpurace does not support"
                )
            lod = lod_from_gradients(obj, extras[: shape.dims], extras[shape.dims :])
        else:
            lod = extras[0] if mode == "level" else np.zeros(len(values[0]), dtype=np.float32)
        return fetch_mipmapped(obj, values, lod, read, types[0], layer)

    return _texture_read(dec, shape, compute, extra)


def _lod_operands(dec, mode: str | None, shape: Shape) -> list:
    """The operands after the source: `tex.level`'s level of detail; `tex.grad`'s two gradient vectors, the first
    `shape.dims` elements of each (the geometry's coordinates)."""
    if mode is None:
        return []
    ops = dec.operands(3 if mode == "level" else 4)[2:]
    if mode == "level":
        return list(ops)
    if not all(isinstance(g, Vec) and len(g.elems) >= shape.dims for g in ops):
        raise UserError(f"`{dec.ins.text}` needs two gradient vectors of {shape.dims} elements")
    return [e for g in ops for e in g.elems[: shape.dims]]


def cube_face(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The face a direction points at (0 to 5: +x, -x, +y, -y, +z, -z; the axis of largest magnitude, x before y
    before z on ties) and the face's normalized coordinates (s, t), by the CUDA Programming Guide's cube map
    fetch table: s = (sc / |m| + 1) / 2 and t = (tc / |m| + 1) / 2."""
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    on_x = (ax >= ay) & (ax >= az)
    on_y = ~on_x & (ay >= az)
    face = np.where(on_x, np.where(x >= 0, 0, 1), np.where(on_y, np.where(y >= 0, 2, 3), np.where(z >= 0, 4, 5)))
    major = np.where(on_x, ax, np.where(on_y, ay, az))
    sc = np.select([face == 0, face == 1, face == 5], [-z, z, -x], default=x)
    tc = np.select([face == 2, face == 3], [z, -z], default=-y)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (sc / major + 1) / 2
        t = (tc / major + 1) / 2
    return face.astype(np.int32), s.astype(np.float32), t.astype(np.float32)


COMPONENTS = ("r", "g", "b", "a")


def tld4(dec):
    """`tld4.{r,g,b,a}.2d.v4` (tex2Dgather): one channel of the four texels of the bilinear footprint."""
    component = COMPONENTS.index(dec.one_of(COMPONENTS, "component"))
    if dec.one_of(GEOMETRIES, "geometry") != "2d":
        raise _unsupported(dec, "only 2D texture objects are supported")
    if dec.ins.types[1:] != ("f32",):
        raise UserError(f"`{dec.ins.text}` needs .f32 coordinates")
    result = dec.ins.types[0]
    return _texture_read(dec, SHAPES["2d"], lambda obj, values, layer, read, extras: gather(obj, values, component, read, result))


def _texture_read(dec, shape: Shape, compute, extra=()):
    """The handler of a texture read of geometry `shape` whose four results `compute(object, coordinates, layer,
    read, extras)` gives for the lanes of one object; `extras` are the values of the `extra` operands (.f32)."""
    ins = dec.ins
    types = ins.types
    if len(types) != 2 or types[0] not in ("f32", "s32", "u32") or types[1] not in ("f32", "s32"):
        raise UserError(f"`{ins.text}` needs a .f32, .s32 or .u32 result and .f32 or .s32 coordinates")
    if dec.vec_width() != 4:
        raise UserError(f"`{ins.text}` needs .v4")
    dst, src = ins.operands[:2] if extra else dec.operands(2)
    writers = [dec.writer(d, types[0]) for d in dec.elements(dst, 4)]
    handle, operands = _source(dec, src, shape.count)
    coords, layer_operand = shape.split(operands)
    readers = [dec.reader(c, types[1]) for c in coords]
    layer_reader = dec.reader(layer_operand, "s32") if shape.layered else None
    extra_readers = [dec.reader(e, "f32") for e in extra]
    coord_type = np.float32 if types[1] == "f32" else np.int32
    lookup = _lookup(dec, TextureObject, "texture")
    dec._strength = (False, None, None)
    nxt = dec.pc + 1

    def run(idx):
        values = [r(idx).view(coord_type) for r in readers]
        layers = layer_reader(idx).view(np.int32) if layer_reader is not None else None
        extra_values = [r(idx).view(np.float32) for r in extra_readers]
        out = np.zeros((len(idx), 4), dtype=np.uint32)
        for obj, mask in lookup(handle(idx), idx):
            lanes = idx[mask]
            texel_bytes = obj.resource.format.texel_bytes
            _check_dims(dec, obj, shape, "texture")

            def read(at, addrs, lanes=lanes, texel_bytes=texel_bytes):
                threads = lanes[at]
                acc, ok = _access(dec, threads, addrs, texel_bytes, AccessKind.READ)
                raw = dec.eng.mem.load(acc, 1, texel_bytes) if texel_bytes > 1 else dec.eng.mem.load(acc, 1)[:, None]
                dec.emit_access(AccessKind.READ, threads, acc, ok, texel_bytes)
                return raw.astype(np.uint8)

            layer = layers[mask] if layers is not None else None
            out[mask] = compute(obj, [v[mask] for v in values], layer, read, [e[mask] for e in extra_values]).view(np.uint32)
        for i, w in enumerate(writers):
            w(idx, out[:, i])
        return nxt

    return run


def _surface_form(dec):
    """(Shape, element type, vector width, out-of-range mode) of a `suld.b`/`sust.b`; None with a reason when unsupported."""
    ins = dec.ins
    if "b" not in ins.modifiers:
        return None, "only the unformatted (.b) forms of suld and sust are supported"
    shape = _geometry(dec)
    if shape is None:
        return None, "cube map surfaces are not supported"
    types = ins.types
    if len(types) != 1 or types[0] not in ("b8", "b16", "b32", "b64"):
        raise UserError(f"`{ins.text}` needs one of .b8, .b16, .b32, .b64")
    mode = dec.one_of(SURFACE_MODES, "out-of-range mode") if any(m in SURFACE_MODES for m in ins.modifiers) else "trap"
    return (shape, types[0], dec.vec_width(), mode), None


def _data(op, count: int):
    """The data operand of a surface access: PTX writes a scalar one in braces too (`{%r1}`)."""
    if count == 1 and isinstance(op, Vec) and len(op.elems) == 1:
        return op.elems[0]
    return op


def _surface_target(dec, op, shape: Shape):
    """(handle reader, readers of x (bytes), y, z, layer as the geometry has them, in PTX order)."""
    handle, operands = _source(dec, op, shape.count)
    coords, layer = shape.split(operands)
    return handle, [dec.reader(c, "s32") for c in coords + ([layer] if layer is not None else [])]


def _surface_lanes(dec, lookup, handle, coords, shape: Shape, idx, size, mode, op_name):
    """[(object, lanes of idx, addresses, in range)] per object; `.trap` lanes out of range become findings."""
    hs = handle(idx)
    xs = [c(idx).view(np.int32) for c in coords]
    rows = xs[1:]
    if shape.layered and shape.dims == 1:  # the layer is the slice of a one-row array
        rows = [np.zeros(len(idx), dtype=np.int32), xs[1]]
    groups = []
    for obj, mask in lookup(hs, idx):
        _check_dims(dec, obj, shape, "surface")
        addrs, inside = surface_addresses(obj, xs[0][mask], [r[mask] for r in rows], size, mode)
        lanes = idx[mask]
        if mode == "trap" and not inside.all():
            bad = np.flatnonzero(~inside)
            first = int(bad[0])
            coords_text = ", ".join(str(int(x[mask][first])) for x in xs)
            dec.eng.report(
                "out-of-bounds",
                f"{op_name} of {size} bytes at surface coordinates ({coords_text}) (x in bytes) is outside the "
                f"{_extent(obj.resource)} surface of {obj.resource.format.texel_bytes}-byte elements",
                [dec.eng.site(dec.pc, int(lanes[first]), op_name)],
                space="global",
                count=len(bad),
                address=int(addrs[first]),
            )
        groups.append((lanes, addrs, inside, mask))
    return groups


def _extent(res) -> str:
    """`8x2`, `8x2x3`, `8 (4 layers)`: the surface's size as messages give it."""
    size = "x".join(str(n) for n in res.sizes[: res.dims])
    return f"{size} ({res.depth} layers)" if res.layered else size


def suld(dec):
    form, why = _surface_form(dec)
    if form is None:
        raise _unsupported(dec, why)
    shape, t, count, mode = form
    esize = type_size(t)
    size = esize * count
    dst, src = dec.operands(2)
    writers = [dec.writer(d, t) for d in dec.elements(_data(dst, count), count)]
    handle, coords = _surface_target(dec, src, shape)
    lookup = _lookup(dec, SurfaceObject, "surface")
    dec._strength = (False, None, None)
    nxt = dec.pc + 1
    mem = dec.eng.mem

    def run(idx):
        out = np.zeros((len(idx), count), dtype=np.uint64)
        for lanes, addrs, inside, mask in _surface_lanes(dec, lookup, handle, coords, shape, idx, size, mode, "read"):
            if not inside.any():
                continue
            acc, ok = _access(dec, lanes[inside], addrs[inside], size, AccessKind.READ)
            vals = mem.load(acc, esize, count).reshape(len(acc), count)
            rows = np.flatnonzero(mask)[inside]
            out[rows] = vals
            dec.emit_access(AccessKind.READ, lanes[inside], acc, ok, size)
        for i, w in enumerate(writers):
            w(idx, out[:, i])
        return nxt

    return run


def sust(dec):
    form, why = _surface_form(dec)
    if form is None:
        raise _unsupported(dec, why)
    shape, t, count, mode = form
    esize = type_size(t)
    size = esize * count
    dst, src = dec.operands(2)
    readers = [dec.reader(s, t) for s in dec.elements(_data(src, count), count)]
    handle, coords = _surface_target(dec, dst, shape)
    lookup = _lookup(dec, SurfaceObject, "surface")
    dec._strength = (False, None, None)
    nxt = dec.pc + 1
    eng = dec.eng

    def run(idx):
        vals = np.stack([r(idx) for r in readers], axis=1)
        for lanes, addrs, inside, mask in _surface_lanes(dec, lookup, handle, coords, shape, idx, size, mode, "write"):
            if not inside.any():
                continue
            acc, ok = _access(dec, lanes[inside], addrs[inside], size, AccessKind.WRITE)
            stored = vals[mask][inside]
            eng.mem.store(acc, esize, stored if count > 1 else stored[:, 0])
            eng.progress = True
            dec.emit_access(AccessKind.WRITE, lanes[inside], acc, ok, size)
        return nxt

    return run


def query(dec, kind: type, name: str):
    """`txq.width/height/depth.b32` and `suq.width/height/depth.b32`: the object's size in elements."""
    ins = dec.ins
    asked = [m for m in ins.modifiers if m not in ("b32",)]
    if len(asked) != 1 or asked[0] not in QUERIES:
        raise _unsupported(dec, "only the width, height and depth queries are supported")
    dst, src = dec.operands(2)
    if not (isinstance(src, Addr) and isinstance(src.base, Reg) and src.offset == 0):
        raise UserError(f"`{ins.text}`: only {name} objects (a 64-bit handle in a register) are supported")
    write = dec.writer(dst, "b32")
    handle = dec.reader(src.base, "u64")
    lookup = _lookup(dec, kind, name)
    field = asked[0]
    nxt = dec.pc + 1

    def run(idx):
        out = np.zeros(len(idx), dtype=np.uint32)
        for obj, mask in lookup(handle(idx), idx):
            res = obj.resource
            sizes = {"width": res.width, "height": res.height if res.dims > 1 else 0, "depth": res.depth if res.dims > 2 else 0}
            out[mask] = sizes[field]
        write(idx, out)
        return nxt

    return run
