"""Kernel arguments: `--arg` specs and Python values to the values a launch places (`sim.arg_values`).

Each kernel parameter gets one argument, in order. Pointer parameters take
buffers (NumPy arrays; from the command line `buf:COUNT[:INIT]` in elements of
the pointee type, or an explicit element type such as `f32:COUNT[:INIT]`; a
pointer to arrays, `float (*)[256]`, counts elements of the arrays' scalar
type); scalar parameters take numbers, packed with the parameter's C++ type
(or its PTX type for `extern "C"` kernels); a struct passed by value takes
its bytes (`bytes:...`) or its fields (`struct:a=buf:64,n=64`, a dict in
Python; `sim.struct_args`). Every mismatch is a UserError naming the
argument. `__device__` variables take the same values (`sim.device_vars`),
resolved by the same `Resolver`.

Buffers are checked against the memory budget (`Limits.max_memory`) before
they are allocated. `buf:0` is a real zero-size buffer: its address is valid,
but every access through it is out of bounds, as with any other buffer's end.
A `file:PATH.npy` initialiser is untrusted input: only numeric and bool `.npy`
files are read (never pickles, strings or records), no larger than the memory
budget, and their values are converted to the buffer's element type only
when they fit (a float64 file in a `u8` buffer is an error, not wrapped
bytes: name the buffer's type, `f64:COUNT:file:x.npy`, or save the file with
the buffer's dtype).

`auto` (or no arguments at all) lets gpurace choose, for kernels that come
without inputs: a pointer parameter gets an automatic buffer (zero-filled,
large, committed page by page as the kernel touches it; see
`Memory.allocate_automatic`), a scalar parameter a default value that lets a
typical kernel run: integers the launch's total thread count (so bounds
guards such as `if (i < n)` admit every thread), floating point 1.0, bool
true, and a struct passed by value its fields' own `auto` (pointer fields
automatic buffers) when its layout is known (`frontend.type_probe`), all
zero bytes otherwise.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.kernels import KernelInfo, ParamInfo
from gpurace.frontend.type_probe import LayoutUnknown, StructLayout, TypeProbe
from gpurace.limits import Limits, format_size
from gpurace.sim import tensor_maps
from gpurace.sim.arg_values import AutoBuffer, AutoScalar, Buffer, Launch, StructArg, TensorMapArg, TextureArg, Value
from gpurace.sim.memory.layout import AUTO_FILL_BYTES
from gpurace.sim.texture_args import PREFIXES as TEXTURE_PREFIXES
from gpurace.sim.texture_args import texture_arg
from gpurace.sim.struct_args import STRUCT_PREFIX, assemble, by_field_path, check_field_names, field_param, is_struct_type, split_struct_spec

# C++ fundamental types (as the demangler spells them) to NumPy dtypes.
CPP_DTYPES = {
    "bool": np.bool_,
    "char": np.int8,
    "signed char": np.int8,
    "unsigned char": np.uint8,
    "short": np.int16,
    "unsigned short": np.uint16,
    "int": np.int32,
    "unsigned int": np.uint32,
    "long": np.int64,
    "unsigned long": np.uint64,
    "long long": np.int64,
    "unsigned long long": np.uint64,
    "float": np.float32,
    "double": np.float64,
    "__half": np.float16,
    "half": np.float16,
    "int8_t": np.int8,
    "uint8_t": np.uint8,
    "int16_t": np.int16,
    "uint16_t": np.uint16,
    "int32_t": np.int32,
    "uint32_t": np.uint32,
    "int64_t": np.int64,
    "uint64_t": np.uint64,
    "size_t": np.uint64,
}

# Explicit element types in `--arg` specs.
SPEC_DTYPES = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}

SPEC_NAMES = {np.dtype(dt): name for name, dt in SPEC_DTYPES.items()}

NPY_KINDS = {"b": "bools", "i": "integers", "u": "unsigned integers", "f": "floating-point numbers"}
"""The kinds of `.npy` data a buffer can be filled from, as messages name them."""

# Scalars of `extern "C"` kernels, by PTX parameter type.
PTX_DTYPES = {
    "u8": np.uint8, "s8": np.int8, "b8": np.uint8,
    "u16": np.uint16, "s16": np.int16, "b16": np.uint16,
    "u32": np.uint32, "s32": np.int32, "b32": np.uint32,
    "u64": np.uint64, "s64": np.int64, "b64": np.uint64,
    "f32": np.float32, "f64": np.float64, "f16": np.float16,
}

# Element suffixes of `bytes:` specs (struct parameters passed by value), as struct format codes.
BYTES_SUFFIXES = {"b": "b", "B": "B", "h": "h", "H": "H", "i": "i", "I": "I", "l": "q", "L": "Q", "f": "f", "d": "d"}


AUTO = "auto"
AUTO_FILLS = ("zeros", "ones", "iota", "rand")
"""What `auto:PATTERN` can fill an automatic buffer's start with (`make_buffer`'s initialisers)."""


def is_pointer(p: ParamInfo) -> bool:
    """Whether parameter `p` takes a buffer (see `ParamInfo.is_pointer`)."""
    return p.is_pointer


def scalar_dtype(p: ParamInfo) -> np.dtype | None:
    if p.type is not None:
        core = " ".join(w for w in p.type.split() if w not in ("const", "volatile"))
        dt = CPP_DTYPES.get(core)
        if dt is None and core.startswith("enum "):
            dt = np.int32
        return None if dt is None else np.dtype(dt)
    dt = PTX_DTYPES.get(p.ptx_type)
    return None if dt is None else np.dtype(dt)


def pointee_dtype(p: ParamInfo) -> np.dtype | None:
    pointee = p.pointee
    if pointee is None:
        return None
    dt = CPP_DTYPES.get(pointee[0])
    return None if dt is None else np.dtype(dt)


def param_label(i: int, p: ParamInfo) -> str:
    return f"argument {i + 1} ({p.type or p.ptx_type})"


def buffer_name(i: int, p: ParamInfo) -> str:
    """How reports name the buffer passed for parameter `i`: its C++ name when known, else `argN`, and its type."""
    name = p.cpp_name or f"arg{i}"
    return name if p.type is None else f"{name} ({p.type})"


def pack_scalar(value, dtype: np.dtype, label: str) -> bytes:
    """Pack one scalar with range checking (ints wrap only for unsigned reinterpretation of negatives).

    A finite float too large for a floating-point type is an error rather than
    a silent infinity (`inf` itself is accepted), like an integer that does not fit.
    """
    try:
        if dtype.kind == "f":
            return _pack_float(float(value), dtype, label)
        if dtype.kind == "b":
            return np.array(bool(value), dtype=dtype).tobytes()
        iv = int(value)
    except (TypeError, ValueError, OverflowError):
        raise UserError(f"{label}: expected a number, got {value!r}") from None
    info = np.iinfo(dtype)
    if dtype.kind == "u" and iv < 0 and iv >= -(1 << (8 * dtype.itemsize - 1)):
        iv += 1 << (8 * dtype.itemsize)
    if not info.min <= iv <= info.max:
        raise UserError(f"{label}: {value} does not fit in {dtype.name}")
    return np.array(iv, dtype=dtype).tobytes()


def _pack_float(value: float, dtype: np.dtype, label: str) -> bytes:
    with np.errstate(over="ignore"):
        packed = np.array(value, dtype=dtype)
    if math.isfinite(value) and not np.isfinite(packed):
        raise UserError(f"{label}: {value:g} does not fit in {dtype.name} (largest {float(np.finfo(dtype).max):g})")
    return packed.tobytes()


def parse_scalar_text(text: str, dtype: np.dtype, label: str) -> bytes:
    try:
        value = float(text) if dtype.kind == "f" else int(text, 0)
    except ValueError:
        raise UserError(f"{label}: expected {'a number' if dtype.kind == 'f' else 'an integer'}, got {text[:40]!r}") from None
    if dtype.kind == "f" and math.isinf(value) and "inf" not in text.lower():
        raise UserError(f"{label}: {text[:40]} does not fit in {dtype.name} (largest {float(np.finfo(dtype).max):g})")
    return pack_scalar(value, dtype, label)


def make_buffer(count: int, dtype: np.dtype, init: str, rng: np.random.Generator, label: str, limits: Limits) -> np.ndarray:
    if init == "zeros":
        return np.zeros(count, dtype=dtype)
    if init == "ones":
        return np.ones(count, dtype=dtype)
    if init == "iota":
        return np.arange(count).astype(dtype)
    if init == "rand":
        if dtype.kind == "f":
            return rng.random(count).astype(dtype)
        if dtype.kind == "b":
            return rng.integers(0, 2, count).astype(dtype)
        hi = min(np.iinfo(dtype).max, 1000) + 1
        return rng.integers(0, hi, count).astype(dtype)
    if init.startswith("file:"):
        return load_npy(Path(init[5:]), count, dtype, label, limits)
    raise UserError(f"{label}: unknown initialiser {init!r} (use zeros, ones, iota, rand or file:PATH.npy)")


def load_npy(path: Path, count: int, dtype: np.dtype, label: str, limits: Limits) -> np.ndarray:
    """The first `count` elements (in C order) of the array in the `.npy` file at `path`, as `dtype`.

    The header is read and checked before any data: the file must hold
    numbers or bools (never pickled objects, strings or records) and no more
    bytes than the memory budget. The data is then memory-mapped, so only
    the `count` elements used are read.
    """
    label = f"{label}: {path}"
    if not path.is_file():
        raise UserError(f"{label}: not a .npy file (no such file, or not a regular one)")
    shape, file_dtype = _npy_header(path, label)
    _check_npy_dtype(file_dtype, label)
    size = math.prod(shape)
    limits.check_memory(size * file_dtype.itemsize, f"{label} ({size:,} elements of {file_dtype})")
    if size < count:
        raise UserError(f"{label}: holds {size} element{'' if size == 1 else 's'}, the spec asks for {count}")
    try:
        values = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise UserError(f"{label}: cannot read it as a .npy file: {e}") from None
    return _convert_npy(np.ascontiguousarray(values).reshape(-1)[:count], dtype, path, label)


def _npy_header(path: Path, label: str) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) from the header of the `.npy` file at `path`; a UserError when it is not one.

    NumPy's header parser evaluates the header as a Python literal, and a
    corrupt one fails in many ways (ValueError, SyntaxError, TypeError,
    tokenize.TokenError, ...): whatever it raises means the file is not a
    valid `.npy` file, which is the user's input, not a bug.
    """
    try:
        with path.open("rb") as f:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _fortran_order, dtype = read(f)  # read_array_header_2_0 also reads 3.0, which differs in encoding
    except OSError as e:
        raise UserError(f"{label}: cannot read it: {e.strerror}") from None
    except Exception as e:  # any failure of the parser: see the docstring
        raise UserError(f"{label}: not a valid .npy file: {e}") from None
    if not all(isinstance(d, int) and d >= 0 for d in shape):
        raise UserError(f"{label}: not a valid .npy file: its shape {shape} has a negative dimension")
    return shape, dtype


def _check_npy_dtype(dtype: np.dtype, label: str) -> None:
    """A UserError unless `.npy` data of `dtype` can fill a buffer (numbers or bools, not records)."""
    if dtype.fields is not None:
        raise UserError(f"{label}: holds records ({dtype}); a buffer is filled from an array of numbers or bools")
    if dtype.kind not in NPY_KINDS:
        what = {"O": "pickled Python objects", "U": "strings", "S": "byte strings", "c": "complex numbers"}
        raise UserError(
            f"{label}: holds {what.get(dtype.kind, 'values')} ({dtype}); a buffer is filled from an array of "
            "numbers or bools"
        )


def _convert_npy(values: np.ndarray, dtype: np.dtype, path: Path, label: str) -> np.ndarray:
    """`values` as `dtype`, when every value survives: no float into an integer buffer, no wrapped integer,
    no finite value that overflows to infinity."""
    src = values.dtype
    if src.kind == "f" and dtype.kind != "f":
        spec = SPEC_NAMES.get(src.newbyteorder("="), "f64")
        raise UserError(
            f"{label}: holds {NPY_KINDS['f']} ({src}), the buffer's elements are {dtype}: give the buffer the "
            f"file's type ({spec}:COUNT:file:{path}) or save the file as {dtype}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        out = values.astype(dtype)
    if dtype.kind == "f":
        bad = np.isfinite(values) & ~np.isfinite(out)
    else:
        lo, hi = (0, 1) if dtype.kind == "b" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        bad = (values < lo) | (values > hi)
    if bad.any():
        i = int(np.argmax(bad))
        wider = "f64" if dtype.kind == "f" else "i64"
        raise UserError(
            f"{label}: element {i} ({values[i]}) does not fit the buffer's elements ({dtype}); "
            f"give the buffer a wider type ({wider}:COUNT:file:{path}) or change the file"
        )
    return out


def parse_bytes_spec(body: str, size: int, label: str) -> bytes:
    """`bytes:2.0f,1.0f,64i,1i`: values with a type suffix (b/B 8, h/H 16, i/I 32, l/L 64-bit ints; f float; d double),
    each at its natural alignment, zero-padded to the parameter's size, like a C struct."""
    out = bytearray()
    for item in filter(None, (x.strip() for x in body.split(","))):
        code = BYTES_SUFFIXES.get(item[-1])
        if code is None:
            raise UserError(f"{label}: {item!r} needs a type suffix (one of {''.join(BYTES_SUFFIXES)})")
        width = struct.calcsize(code)
        out.extend(b"\0" * (-len(out) % width))
        try:
            value = float(item[:-1]) if code in "fd" else int(item[:-1], 0)
            out.extend(struct.pack("<" + code, value))
        except (ValueError, OverflowError, struct.error) as e:  # OverflowError: a float beyond the type's range
            raise UserError(f"{label}: bad value {item!r}: {e}") from None
    if len(out) > size:
        raise UserError(f"{label}: {len(out)} bytes do not fit the {size}-byte parameter")
    return bytes(out) + b"\0" * (size - len(out))


def auto_scalar_value(dtype: np.dtype, nthreads: int) -> int | float | bool:
    """The default of an `auto` scalar of `dtype` (see the module docstring); ints saturate at the type's maximum."""
    if dtype.kind == "f":
        return 1.0
    if dtype.kind == "b":
        return True
    return min(nthreads, int(np.iinfo(dtype).max))


class Resolver:
    """Turns the inputs of one launch into values (`sim.arg_values`), one parameter, field or variable at a time.

    It keeps the bytes of the buffers made so far, so that each new one is
    checked against the memory budget together with them, and asks `types`
    (a `TypeProbe`, or None: struct layouts unknown) for the layouts of
    structs whose fields it fills.
    """

    def __init__(self, rng: np.random.Generator, limits: Limits, nthreads: int, types: TypeProbe | None = None):
        self.rng = rng
        self.limits = limits
        self.nthreads = nthreads
        self.types = types
        self.buffered = 0

    def arguments(self, kernel: KernelInfo, args: list | None, bounds: Mapping[int, tuple] = {}) -> list[Value]:
        """One value per parameter of `kernel` (`args` None: `auto` for all); `bounds` by parameter index."""
        if args is None:
            args = [AUTO] * len(kernel.params)
        if len(args) != len(kernel.params):
            names = ", ".join(p.type or p.ptx_type for p in kernel.params) or "none"
            raise UserError(f"kernel {kernel.name} takes {len(kernel.params)} argument(s) ({names}), {len(args)} given")
        values = []
        for i, (p, a) in enumerate(zip(kernel.params, args)):
            p = replace(p, cpp_name=p.cpp_name or f"arg{i}")
            label = param_label(i, p)
            if isinstance(a, str) and a.strip() != AUTO:
                shown = a if len(a) <= 200 else a[:197] + "..."  # a COUNT of thousands of digits
                label = f"--arg {shown!r} for {label}"
            values.append(self.value(a, p, label, bounds.get(i, (None, None))))
        for i, v in enumerate(values):
            if isinstance(v, TensorMapArg):
                target = values[v.arg] if 0 <= v.arg < len(values) else None
                if not isinstance(target, Buffer):
                    raise UserError(f"{param_label(i, kernel.params[i])}: tensormap:...:{v.arg} names argument {v.arg} "
                                    "(0-based), which must be a buffer (buf:COUNT or an array)")  # fmt: skip
                v.buffer = target
        return values

    def value(self, a, p: ParamInfo, label: str, bounds: tuple = (None, None)) -> Value:
        """The value of input `a` (a spec string, `auto`, a NumPy array, a number, bytes, or a dict of fields)
        for `p`; `label` names it in messages (`argument 2 (int*)`), `bounds` are `__requires` bounds for `auto`."""
        if isinstance(a, str) and a.strip() == AUTO:
            return self.auto(p, bounds)
        if isinstance(a, str):
            return self.spec(a, p, label)
        if isinstance(a, dict):
            return self.struct(a, p, label)
        if isinstance(a, StructArg):
            return self.built_struct(a, p, label)
        if isinstance(a, np.ndarray):
            return self._buffer(_array_buffer(a, p, label), p)
        if isinstance(a, (bool, int, float, np.generic)):
            if is_pointer(p):
                if a == 0:
                    return struct.pack("<Q", 0)
                raise UserError(f"{label}: a pointer parameter needs a NumPy array")
            dtype = scalar_dtype(p)
            if dtype is None:
                raise UserError(f"{label}: values of type {p.type} need raw bytes or a dict of fields")
            return pack_scalar(a, dtype, label)
        if isinstance(a, (bytes, bytearray)):
            if len(a) != p.size:
                raise UserError(f"{label}: {len(a)} bytes given for a {p.size}-byte value")
            return bytes(a)
        raise UserError(f"{label}: unsupported value of type {type(a).__name__}")

    def auto(self, p: ParamInfo, bounds: tuple = (None, None)) -> Value:
        """What `auto` means for `p`: an automatic buffer for a pointer; for a struct whose layout is known, each
        field's own `auto`; otherwise a default scalar moved inside `bounds` (lo, hi; None for an open side),
        so that `__requires(width == 512)` gets 512; a function pointer bounded to one function's address
        (`__requires(f == g)`) gets it; all zero bytes (null) for anything else."""
        if is_pointer(p):
            return AutoBuffer(_name(p), pointee_dtype(p) or np.dtype(np.uint8))
        if p.is_function_pointer and bounds[0] is not None and bounds[0] == bounds[1]:  # __requires(f == g)
            return AutoScalar(_name(p), bounds[0], struct.pack("<Q", bounds[0]), note="the function __requires names")
        dtype = scalar_dtype(p)
        if dtype is None or dtype.itemsize != p.size:  # a struct passed by value (`.b8 name[N]` in PTX)
            if self.types is not None and is_struct_type(p.type):
                try:
                    layout = self._layout(p)
                except LayoutUnknown as e:
                    return AutoScalar(_name(p), None, bytes(p.size), note=str(e))
                return assemble(_name(p), layout, {f.name: self.auto(field_param(p, f, p.cpp_name)) for f in layout.fields})
            return AutoScalar(_name(p), None, bytes(p.size))
        value = auto_scalar_value(dtype, self.nthreads)
        lo, hi = bounds
        if dtype.kind in "iu":
            lo, hi = (None if lo is None else math.ceil(lo)), (None if hi is None else math.floor(hi))
        if dtype.kind != "b" and lo is not None and value < lo:
            value = lo
        if dtype.kind != "b" and hi is not None and value > hi:
            value = hi
        return AutoScalar(_name(p), value, pack_scalar(value, dtype, _name(p)))

    def spec(self, spec: str, p: ParamInfo, label: str) -> Buffer | StructArg | TextureArg | bytes:
        """One spec (other than `auto`) for `p`: a buffer, `null`, a number, `bytes:...`, `struct:...` or a texture
        or surface object (`tex:...`, `surf:...`)."""
        head, _, rest = spec.partition(":")
        if head == "tensormap":
            if is_pointer(p) or p.size != tensor_maps.SIZE:
                raise UserError(f"{label}: tensormap: makes a CUtensorMap, 128 bytes passed by value "
                                f"(const __grid_constant__ CUtensorMap); this parameter is {p.type or p.ptx_type}")  # fmt: skip
            return TensorMapArg(_name(p), *tensor_maps.parse_spec(rest, label))
        if head in TEXTURE_PREFIXES:
            if is_pointer(p) or p.size != 8:
                raise UserError(f"{label}: {head}: makes a texture or surface object, a 64-bit handle passed by value "
                                f"(cudaTextureObject_t, cudaSurfaceObject_t); this parameter is {p.type or p.ptx_type}")
            return texture_arg(spec, _name(p), label, lambda count, dtype, init: self._buffer(self._spec_array(count, dtype, init, label), p).array)
        if head == "bytes":
            if is_pointer(p):
                raise UserError(f"{label}: bytes: is for parameters passed by value, this one is a pointer")
            return parse_bytes_spec(rest, p.size, label)
        if spec.startswith(STRUCT_PREFIX):
            if is_pointer(p):
                raise UserError(f"{label}: struct: is for structs passed by value, this one is a pointer")
            return self.struct(split_struct_spec(spec[len(STRUCT_PREFIX) :], label), p, label)
        if head == AUTO:
            return self.filled_auto(rest, p, label)
        if rest:
            if not is_pointer(p):
                raise UserError(f"{label}: a buffer was given for a non-pointer parameter")
            dtype = _buffer_dtype(head, p, label)
            count_text, _, init = rest.partition(":")
            count = _buffer_count(count_text, label)
            return self._buffer(self._spec_array(count, dtype, init or "zeros", label), p)
        if is_pointer(p):
            if spec in ("null", "0"):
                return struct.pack("<Q", 0)
            raise UserError(f"{label}: a pointer parameter needs a buffer, e.g. buf:1024 or f32:1024:rand")
        dtype = scalar_dtype(p)
        if dtype is None:
            hint = "; give its fields with struct:FIELD=SPEC,... or its bytes with bytes:..." if is_struct_type(p.type) else ""
            raise UserError(f"{label}: values of type {p.type} cannot be given as a number{hint}")
        return parse_scalar_text(spec, dtype, label)

    def filled_auto(self, fill: str, p: ParamInfo, label: str) -> AutoBuffer:
        """`auto:PATTERN` for a pointer: an automatic buffer whose first AUTO_FILL_BYTES hold `fill` (`ones`,
        `iota`, `rand`; `zeros` is plain `auto`), so kernels that index or branch on loaded values can be run,
        and searched, with contents other than zeros."""
        if not is_pointer(p):
            raise UserError(f"{label}: auto:{fill} fills an automatic buffer; this parameter is not a pointer")
        buffer = self.auto(p)
        if fill != "zeros":
            buffer.init = self.filled(AUTO_FILL_BYTES // buffer.dtype.itemsize, buffer.dtype, fill, label)
            self.buffered += buffer.init.nbytes
        return buffer

    def filled(self, count: int, dtype: np.dtype, fill: str, label: str) -> np.ndarray:
        """`count` elements of `dtype` holding the `auto:PATTERN` contents `fill` (one of AUTO_FILLS)."""
        if fill not in AUTO_FILLS:
            sized = f"; an automatic buffer has no size: buf:{fill} is a buffer of {fill} elements" if fill.isdigit() else ""
            raise UserError(f"{label}: unknown automatic contents {fill!r} (use {', '.join(AUTO_FILLS)}){sized}")
        return self._spec_array(count, dtype, fill, label)

    def struct(self, given: dict, p: ParamInfo, label: str) -> StructArg:
        """A struct `p` from values for some of its fields, by name (`sim.struct_args`); the others stay zero."""
        if p.type is None and not is_pointer(p):
            raise UserError(f"{label}: its C++ type is unknown (PTX does not record it), so its fields are too: give bytes:...")
        if is_pointer(p) or not is_struct_type(p.type):
            raise UserError(f"{label}: fields were given for a value of type {p.type or p.ptx_type}, which is not a struct")
        if self.types is None:
            raise UserError(f"{label}: cannot tell the layout of {p.type} without its source")
        try:
            layout = self._layout(p)
        except LayoutUnknown as e:
            raise UserError(f"{label}: {e}") from None
        given = by_field_path(layout, given)
        check_field_names(layout, given, label)
        values = {}
        for f in layout.fields:
            if f.name in given:
                values[f.name] = self.value(given[f.name], field_param(p, f, p.cpp_name), f"{label}, field {f.name} ({f.type})")
        return assemble(_name(p), layout, values)

    def built_struct(self, given: StructArg, p: ParamInfo, label: str) -> StructArg:
        """A struct whose layout its maker knew (a front end that generates the kernel, such as CuPy's
        `ElementwiseKernel`, lays out its `CArray`s itself): its bytes must be the parameter's size, its arrays
        are checked as arrays given for pointers are, and counted against the memory budget."""
        if is_pointer(p) or len(given.data) != p.size:
            raise UserError(f"{label}: a {len(given.data)}-byte struct was given for a {p.size}-byte {p.type or p.ptx_type}")
        for offset, buffer in given.pointers:
            if not isinstance(buffer, Buffer) or not 0 <= offset <= len(given.data) - 8:
                raise UserError(f"{label}: a struct's pointer fields hold buffers, inside its {len(given.data)} bytes")
            check_buffer_array(buffer.array, f"{label}, {buffer.name}")
            if int.from_bytes(given.data[offset : offset + 8], "little") > max(buffer.array.nbytes - 1, 0):
                raise UserError(f"{label}: the pointer to {buffer.name} points past its {buffer.array.nbytes} bytes")
            self.buffered += buffer.array.nbytes
        return given

    def _layout(self, p: ParamInfo) -> StructLayout:
        """The layout of struct `p`, which must be as large as PTX says the value is; LayoutUnknown otherwise."""
        layout = self.types.struct_layout(p.type)
        if layout.size != p.size:
            raise LayoutUnknown(
                f"cannot tell the layout of {p.type}: it is {layout.size} bytes as the compiler lays it out, but the "
                f"kernel takes {p.size}"
            )
        return layout

    def _spec_array(self, count: int, dtype: np.dtype, init: str, label: str) -> np.ndarray:
        """A buffer's array made from a spec, once the memory budget is known to hold it with the earlier ones."""
        earlier = f" (with the {format_size(self.buffered)} of earlier buffers)" if self.buffered else ""
        self.limits.check_memory(self.buffered + count * dtype.itemsize, label + earlier)
        return make_buffer(count, dtype, init, self.rng, label, self.limits)

    def _buffer(self, array: np.ndarray, p: ParamInfo) -> Buffer:
        self.buffered += array.nbytes
        return Buffer(array, _name(p))


def _name(p: ParamInfo) -> str:
    """How reports name the value of `p` (`n (int)`; `cpp_name` is set for every input the Resolver sees)."""
    return p.cpp_name if p.type is None else f"{p.cpp_name} ({p.type})"


def _buffer_dtype(head: str, p: ParamInfo, label: str) -> np.dtype:
    """The element type of a buffer spec: the pointee type for `buf`, else the spec's own TYPE."""
    if head in SPEC_DTYPES:
        return np.dtype(SPEC_DTYPES[head])
    if head != "buf":
        raise UserError(f"{label}: unknown buffer kind {head!r} (use buf or one of {', '.join(SPEC_DTYPES)})")
    dtype = pointee_dtype(p)
    if dtype is not None:
        return dtype
    if p.type is not None and "void" not in p.type:
        raise UserError(f"{label}: cannot tell the element type of {p.type}; name one, e.g. u8:COUNT")
    return np.dtype(np.uint32)  # untyped or void*: 4-byte elements


def _buffer_count(text: str, label: str) -> int:
    """COUNT of a buffer spec: a non-negative integer (0 is a zero-size buffer, see the module docstring)."""
    try:
        count = int(text, 0)
    except ValueError:
        raise UserError(f"{label}: COUNT must be an integer, got {text[:40]!r}") from None
    if count < 0:
        raise UserError(f"{label}: COUNT must not be negative")
    return count


def resolve_args(
    kernel: KernelInfo,
    args: list | None,
    rng: np.random.Generator,
    *,
    nthreads: int,
    bounds: Mapping[int, tuple] = {},
    limits: Limits | None = None,
    types: TypeProbe | None = None,
) -> Launch:
    """Python values or `--arg` strings (one per parameter; None: `auto` for all) to a Launch of `nthreads` threads.

    `bounds` are the `__requires` bounds per parameter index, for `auto` scalars (see `Resolver.auto`);
    buffers made from specs must fit `limits.max_memory` together. `types` tells struct layouts (None: structs
    take raw bytes only, and `auto` gives them zero bytes).
    """
    return Launch(Resolver(rng, limits or Limits(), nthreads, types).arguments(kernel, args, bounds))


def copy_arg(a):
    """An argument as given, with its arrays copied (in dicts of fields and built structs too): for a run whose outputs must not
    reach the caller's arrays (another schedule of the same input, a first run)."""
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, dict):
        return {k: copy_arg(v) for k, v in a.items()}
    if isinstance(a, StructArg):
        return replace(a, pointers=[(offset, replace(b, array=b.array.copy())) for offset, b in a.pointers])
    return a


def _array_buffer(a: np.ndarray, p: ParamInfo, label: str) -> np.ndarray:
    """A NumPy array given for a pointer, checked: its bytes are the buffer and it is updated in place."""
    if not is_pointer(p):
        raise UserError(f"{label}: an array was given for a non-pointer parameter")
    return check_buffer_array(a, label)


def check_buffer_array(a: np.ndarray, label: str) -> np.ndarray:
    """An array that can be a buffer: C-contiguous, not of Python objects, writeable (it is updated in place)."""
    if not a.flags.c_contiguous:
        raise UserError(f"{label}: arrays must be C-contiguous")
    if a.dtype.hasobject:
        raise UserError(f"{label}: an array of Python objects ({a.dtype}) has no bytes to put in a buffer")
    if not a.flags.writeable:
        raise UserError(f"{label}: the array is read-only, but buffers are updated in place after the run")
    return a
