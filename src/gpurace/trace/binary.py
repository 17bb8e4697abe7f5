"""The binary trace format: a recorded simulation, compact and fast to load.

A binary trace is a NumPy `.npz` archive (`np.savez_compressed`, so a zip
file: it starts with `MAGIC`, which is how `replay.read_trace` tells it from
text). The member `meta` holds UTF-8 JSON: the format name and `VERSION`, the
launch, the kernel's names, the variables, and the instructions (opcode,
modifiers, operand count, PTX line, text, owning function and source location
with its inlining chain). The events are columns: one row per event in
`ev_*` (type, seq, pc, access kind or sync kind, size, strength, scope,
semantics, atomic operation, and `ev_start`, where its threads begin in the
per-thread columns `threads`, `addrs`, `space`, `groups` and `pcs`).

The values an access read, stored and (for `cas`) compared with, which
detectors that infer locks read, are kept where the simulator gave them: a
flat uint64 column each (`values`, `stored`, `compare`) with, per event, the
element size in bytes (0: absent) and the elements per thread (`ev_*_size`,
`ev_*_width`). Operands survive only as their count (barriers are told apart
by it). A reader refuses other versions rather than guess, and checks every
member and metadata field before it uses it (`read`): the file is untrusted
input, and a detector must only ever see events the simulator could have
produced.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Imm, Instruction, SourceLoc
from gpurace.limits import Limits
from gpurace.sim.events import AccessBatch, AccessKind, Event, ExitEvent, FenceEvent, SyncEvent
from gpurace.sim.geometry import WARP_SIZE
from gpurace.sim.memory.layout import (
    CANON_OFFSET_MASK, CANON_OWNER_MASK, CANON_OWNER_SHIFT, CANON_SHARED_TAG, CANON_TAG_MASK, GLOBAL_BASE, GLOBAL_LIMIT, Space,
)  # fmt: skip
from gpurace.trace.bounds import check_launch, file_name_problem
from gpurace.trace.model import Trace, TraceVariable

MAGIC = b"PK\x03\x04"
FORMAT = "gpurace-trace"
VERSION = 1

ACCESS, SYNC, FENCE, EXIT = 0, 1, 2, 3
SYNC_KINDS = ("barrier", "warp", "collective")
# Codes of the optional strings an event carries (scope, semantics, atomic operation); index 0 is None.
SCOPES = (None, "cta", "cluster", "gpu", "sys")
SEMANTICS = (None, "relaxed", "acquire", "release", "acq_rel", "volatile", "sc")
ATOMIC_OPS = (None, "add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas", "rmw")
_COLUMNS = ("type", "seq", "pc", "kind", "size", "strong", "scope", "sem", "op", "start")
VALUE_FIELDS = ("values", "stored", "compare")


def write(trace: Trace, path: str | os.PathLike) -> None:
    """Write `trace` to `path` in the binary format."""
    cols = {c: [] for c in _COLUMNS}
    lanes = {"threads": [], "addrs": [], "space": [], "groups": [], "pcs": [], **{f: [] for f in VALUE_FIELDS}}
    shapes = {f"{f}_{d}": [] for f in VALUE_FIELDS for d in ("size", "width")}
    start = 0
    for ev in trace.events:
        row = dict(seq=ev.seq, pc=-1, kind=0, size=0, strong=False, scope=0, sem=0, op=0, start=start)
        if isinstance(ev, AccessBatch):
            row.update(type=ACCESS, pc=ev.pc, kind=int(ev.kind), size=ev.size, strong=ev.strong)
            row.update(scope=_code(SCOPES, ev.scope, "scope"), sem=_code(SEMANTICS, ev.sem, "semantics"))
            row.update(op=_code(ATOMIC_OPS, ev.atomic_op, "atomic operation"))
            lanes["addrs"].append(ev.addrs)
            lanes["space"].append(ev.space)
        elif isinstance(ev, SyncEvent):
            row.update(type=SYNC, kind=_code(SYNC_KINDS, ev.kind, "synchronisation kind"))
            lanes["groups"].append(ev.groups)
            lanes["pcs"].append(ev.pcs)
        elif isinstance(ev, FenceEvent):
            row.update(type=FENCE, pc=ev.pc, scope=_code(SCOPES, ev.scope, "scope"), sem=_code(SEMANTICS, ev.sem, "semantics"))
        else:
            row.update(type=EXIT, pc=ev.pc)
        lanes["threads"].append(ev.threads)
        start += len(ev.threads)
        for f in VALUE_FIELDS:
            v = getattr(ev, f, None) if isinstance(ev, AccessBatch) else None
            shapes[f"{f}_size"].append(0 if v is None else v.dtype.itemsize)
            shapes[f"{f}_width"].append(0 if v is None else (v.shape[1] if v.ndim == 2 else 1))
            if v is not None:
                lanes[f].append(v.reshape(-1).view(f"u{v.dtype.itemsize}").astype(np.uint64))
        for c in _COLUMNS:
            cols[c].append(row[c])
    dtypes = dict(type=np.uint8, seq=np.int64, pc=np.int64, kind=np.int8, size=np.int32, strong=np.bool_, scope=np.int8, sem=np.int8, op=np.int8, start=np.int64)
    arrays = {f"ev_{c}": np.array(cols[c], dtype=dtypes[c]) for c in _COLUMNS}
    arrays.update({f"ev_{k}": np.array(v, dtype=np.int8) for k, v in shapes.items()})
    lane_dtypes = dict(threads=np.int64, addrs=np.uint64, space=np.int8, groups=np.int64, pcs=np.int64)
    lane_dtypes.update({f: np.uint64 for f in VALUE_FIELDS})
    for name, parts in lanes.items():
        arrays[name] = np.concatenate(parts).astype(lane_dtypes[name]) if parts else np.zeros(0, dtype=lane_dtypes[name])
    arrays["meta"] = np.frombuffer(json.dumps(_meta(trace)).encode("utf-8"), dtype=np.uint8)
    try:
        with open(path, "wb") as f:
            np.savez_compressed(f, **arrays)
    except OSError as e:
        raise UserError(f"{path}: cannot write trace: {e.strerror}") from None


def read(path: str | os.PathLike, limits: Limits | None = None) -> Trace:
    """Read a binary trace.

    Every member and metadata field is checked before it is used (`_members`,
    `_metadata`, `_Reader`): anything damaged, inconsistent or out of range
    is a UserError naming the file and the member or field, raised before
    anything is allocated from the sizes the file states.
    """
    limits = limits or Limits()
    members = _members(path, limits)
    return _Reader(str(path), limits).trace(_metadata(path, members["meta"]), members)


def _code(table: tuple, value, what: str) -> int:
    try:
        return table.index(value)
    except ValueError:
        raise UserError(f"cannot record {what} {value!r}") from None


def _meta(trace: Trace) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "kernel": trace.kernel,
        "mangled": trace.mangled,
        "source": trace.source,
        "grid": list(trace.grid),
        "block": list(trace.block),
        "shared_stride": trace.shared_stride,
        "variables": [[v.name, v.space, v.base, v.size] for v in trace.variables],
        "instructions": [
            [ins.opcode, list(ins.modifiers), len(ins.operands), ins.ptx_line, ins.text, owner, _loc_json(ins.loc)]
            for ins, owner in zip(trace.instructions, trace.owner)
        ],
    }


def _loc_json(loc: SourceLoc | None):
    if loc is None:
        return None
    return [loc.file, loc.line, loc.column, loc.function, _loc_json(loc.inlined_at)]


# ---------------------------------------------------------------------- reading: the zip and its members

MEMBERS = (
    "meta",
    *(f"ev_{c}" for c in _COLUMNS),
    *(f"ev_{f}_{d}" for f in VALUE_FIELDS for d in ("size", "width")),
    "threads", "addrs", "space", "groups", "pcs", *VALUE_FIELDS,
)  # fmt: skip
_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
# What zipfile and zlib raise for a damaged archive (RuntimeError: an encrypted member; NotImplementedError: an unknown compression).
_ZIP_ERRORS = (OSError, EOFError, ValueError, RuntimeError, NotImplementedError, zipfile.BadZipFile, zlib.error, struct.error)


def _members(path, limits: Limits) -> dict[str, np.ndarray]:
    """Every member of the format, as an array.

    The sizes the zip declares are checked against the memory budget before
    any member is decompressed (zipfile never inflates a member past its
    declared size), so a zip bomb ends here.
    """
    try:
        with zipfile.ZipFile(path) as z:
            infos = {info.filename: info for info in z.infolist()}
            missing = [m for m in MEMBERS if f"{m}.npy" not in infos]
            if missing:
                raise UserError(f"{path}: damaged binary trace: member {missing[0]} is missing")
            declared = sum(infos[f"{m}.npy"].file_size for m in MEMBERS)
            limits.check_memory(declared, f"{path}: the trace's members")
            return {m: _array(path, m, z.read(infos[f"{m}.npy"])) for m in MEMBERS}
    except _ZIP_ERRORS as e:
        raise UserError(f"{path}: not a readable gpurace binary trace ({e})") from None


def _array(path, name: str, data: bytes) -> np.ndarray:
    """One `.npy` member; its header is checked against the bytes that follow it before the array is made,
    since numpy would allocate whatever size the header claims."""
    where = f"{path}: damaged binary trace: member {name}"
    f = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(f)
        if version not in _NPY_HEADERS:
            raise UserError(f"{where}: .npy format version {version} is not supported")
        shape, _, dtype = _NPY_HEADERS[version](f)
    except ValueError as e:
        raise UserError(f"{where}: unreadable .npy header ({e})") from None
    if dtype.kind not in "biu":
        raise UserError(f"{where}: holds {dtype}, not integers")
    if len(shape) != 1:
        raise UserError(f"{where}: expected a 1-D column, got shape {shape}")
    count, body = math.prod(shape), len(data) - f.tell()
    if count * dtype.itemsize != body:
        raise UserError(f"{where}: its header promises {count:,} elements of {dtype.itemsize} bytes, it holds {body:,} bytes")
    return np.frombuffer(data, dtype=dtype, count=count, offset=f.tell())


def _metadata(path, raw: np.ndarray) -> dict:
    """The metadata JSON, once it is one and names this format and version."""
    if raw.dtype != np.uint8:
        raise UserError(f"{path}: damaged binary trace: member meta: expected UTF-8 bytes, got {raw.dtype}")
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise UserError(f"{path}: not a gpurace binary trace (its metadata is not UTF-8 JSON: {e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise UserError(f"{path}: not a gpurace binary trace")
    version = meta.get("version")
    if type(version) is not int or version != VERSION:
        raise UserError(f"{path}: binary trace version {version!r} is not supported (this gpurace reads version {VERSION})")
    return meta


# ---------------------------------------------------------------------- reading: fields

INT64_MAX = 2**63 - 1
MAX_OPERANDS = 1024
"""Operands of one instruction: PTX's widest, calls with their parameter lists, stay far below."""
MAX_INLINE_DEPTH = 128
"""Source locations nested by inlining: compilers' chains are tens deep; reports hash and walk whole chains."""
ACCESS_SIZES = (1, 2, 4, 8, 16, 32)
"""Bytes of one thread's access: a naturally aligned scalar, vector (`.v4.b32`, `.v4.b64`) or `cp.async` copy."""
VALUE_SIZES = (1, 2, 4, 8)
FENCE_SEMANTICS = (SEMANTICS.index("acq_rel"), SEMANTICS.index("sc"))
EVENT_BYTES = 1536
"""Memory of one event once read (its object and array views): about 1,350 bytes measured, rounded up."""


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@functools.cache
def _operands(count: int) -> tuple:
    # Operands are kept as their count only: detectors tell barriers apart by it, never by their values.
    return (Imm(0),) * count


class _Reader:
    """Turns checked members and metadata into a Trace; every `fail` names the file and the field."""

    def __init__(self, path: str, limits: Limits) -> None:
        self.path = path
        self.limits = limits

    def fail(self, field: str, problem: str) -> UserError:
        return UserError(f"{self.path}: damaged binary trace: {field}: {problem}")

    # -------------------------------------------------------------- metadata values

    def integer(self, value, field: str, lo: int = 0, hi: int = INT64_MAX) -> int:
        if type(value) is not int:
            raise self.fail(field, f"expected an integer, got {_shown(value)}")
        if not lo <= value <= hi:
            raise self.fail(field, f"{value} is outside {lo:,}..{hi:,}")
        return value

    def string(self, value, field: str, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {_shown(value)}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise self.fail(field, f"{_shown(value)} is not valid Unicode text") from None
        return value

    def file_name(self, value, field: str, *, optional: bool = False) -> str | None:
        name = self.string(value, field, optional=optional)
        problem = None if name is None else file_name_problem(name)
        if problem:
            raise self.fail(field, f"{_shown(name)} names no file: it {problem}")
        return name

    def items(self, value, field: str, length: int | None = None) -> list:
        if not isinstance(value, list) or (length is not None and len(value) != length):
            expected = "a list" if length is None else f"a list of {length}"
            raise self.fail(field, f"expected {expected}, got {_shown(value)}")
        return value

    def key(self, meta: dict, name: str):
        if name not in meta:
            raise self.fail(f"meta.{name}", "missing")
        return meta[name]

    # -------------------------------------------------------------- metadata

    def trace(self, meta: dict, members: dict[str, np.ndarray]) -> Trace:
        grid, block = self.dims(meta, "grid"), self.dims(meta, "block")
        nthreads = check_launch(grid, block, self.limits, f"{self.path}: meta.grid/block")
        stride = self.integer(self.key(meta, "shared_stride"), "meta.shared_stride", 0, CANON_OFFSET_MASK + 1)
        variables = self.variables(self.key(meta, "variables"), stride)
        instructions, owner = self.instructions(self.key(meta, "instructions"))
        columns = _EventColumns(self, members, _Launch(block[0] * block[1] * block[2], nthreads, stride, len(instructions)), variables)
        return Trace(
            grid=grid,
            block=block,
            kernel=self.string(self.key(meta, "kernel"), "meta.kernel"),
            variables=variables,
            shared_stride=stride,
            instructions=instructions,
            owner=owner,
            events=columns.events(),
            mangled=self.string(self.key(meta, "mangled"), "meta.mangled"),
            source=self.file_name(self.key(meta, "source"), "meta.source", optional=True),
        )

    def dims(self, meta: dict, name: str) -> tuple[int, int, int]:
        x, y, z = self.items(self.key(meta, name), f"meta.{name}", 3)
        return tuple(self.integer(d, f"meta.{name}[{i}]", 1) for i, d in enumerate((x, y, z)))

    def variables(self, data, stride: int) -> list[TraceVariable]:
        out = [self.variable(v, f"meta.variables[{i}]", stride) for i, v in enumerate(self.items(data, "meta.variables"))]
        placed = sorted((v for v in out if v.space == "global"), key=lambda v: v.base)
        for a, b in zip(placed, placed[1:]):
            if b.base < a.end:
                raise self.fail("meta.variables", f"global variables {a.name!r} and {b.name!r} overlap")
        return out

    def variable(self, data, field: str, stride: int) -> TraceVariable:
        name, space, base, size = self.items(data, field, 4)
        name = self.string(name, f"{field}.name")
        if space == "shared":
            base = self.integer(base, f"{field}.base", 0, stride)
            size = self.integer(size, f"{field}.size", 0, stride - base)
        elif space == "global":
            base = self.integer(base, f"{field}.base", GLOBAL_BASE, GLOBAL_LIMIT)
            size = self.integer(size, f"{field}.size", 0, GLOBAL_LIMIT - base)
        else:
            raise self.fail(f"{field}.space", f"expected 'shared' or 'global', got {_shown(space)}")
        return TraceVariable(name, space, base, size)

    def instructions(self, data) -> tuple[list[Instruction], list[str]]:
        """The instruction table and the function owning each instruction."""
        pairs = [self.instruction(entry, f"meta.instructions[{pc}]") for pc, entry in enumerate(self.items(data, "meta.instructions"))]
        return [ins for ins, _ in pairs], [fn for _, fn in pairs]

    def instruction(self, entry, field: str) -> tuple[Instruction, str]:
        opcode, modifiers, noperands, ptx_line, text, fn, loc = self.items(entry, field, 7)
        modifiers = tuple(self.string(m, f"{field}.modifiers[{i}]") for i, m in enumerate(self.items(modifiers, f"{field}.modifiers")))
        ins = Instruction(
            self.string(opcode, f"{field}.opcode"),
            modifiers,
            _operands(self.integer(noperands, f"{field}.operands", 0, MAX_OPERANDS)),
            loc=self.location(loc, f"{field}.loc"),
            ptx_line=self.integer(ptx_line, f"{field}.ptx_line"),
            text=self.string(text, f"{field}.text"),
        )
        return ins, self.string(fn, f"{field}.function")

    def location(self, data, field: str) -> SourceLoc | None:
        """A source location with its inlining chain, read without recursion (the chain is only as deep as the file says)."""
        chain = []
        while data is not None:
            where = field if not chain else f"{field} (inlined_at, level {len(chain)})"
            if len(chain) == MAX_INLINE_DEPTH:
                raise self.fail(where, f"an inlining chain deeper than {MAX_INLINE_DEPTH}")
            file, line, column, function, data = self.items(data, where, 5)
            chain.append((
                self.file_name(file, f"{where}.file"), self.integer(line, f"{where}.line"),
                self.integer(column, f"{where}.column"), self.string(function, f"{where}.function", optional=True),
            ))  # fmt: skip
        loc = None
        for file, line, column, function in reversed(chain):
            loc = SourceLoc(file, line, column, loc, function)
        return loc


@dataclass(frozen=True)
class _Launch:
    """What event columns are checked against: threads per block and in all, the shared stride, the instruction count."""

    block_size: int
    nthreads: int
    stride: int
    ninstructions: int

    def block_of(self, threads: np.ndarray) -> np.ndarray:
        return threads // self.block_size

    def warp_and_lane(self, threads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Global warp id and lane of each thread (warps never span blocks)."""
        within = threads % self.block_size
        warps_per_block = -(-self.block_size // WARP_SIZE)
        return self.block_of(threads) * warps_per_block + within // WARP_SIZE, within % WARP_SIZE


# ---------------------------------------------------------------------- reading: event columns


class _EventColumns:
    """The event columns, checked as a whole (vectorised) against the launch, the instructions and the variables,
    so that every event handed to a detector is one the simulator could have produced:

    one row per event in every `ev_*` column; `ev_start` rising from 0, each event with at least one thread;
    threads inside the launch, distinct within an event and absent after their exit; pcs naming instructions;
    codes inside their tables, with the strength, scope, semantics and atomic operation of an access agreeing;
    accesses naturally aligned, shared ones in their own block's shared memory and global ones inside a
    global variable; barrier groups the threads' blocks, warp groups their warps with masks naming them;
    value columns only where the simulator gives them (one value per thread), and every lane column exactly
    as long as its events need. Cells an event's type does not use (the pc of a synchronisation, whose pcs are
    per thread; the size or scope of an exit) are ignored, as the reader has always ignored them.
    """

    def __init__(self, reader: _Reader, members: dict[str, np.ndarray], launch: _Launch, variables: list[TraceVariable]):
        self.r = reader
        self.m = members
        self.launch = launch
        self.type = self.column("ev_type")
        self.rows = len(self.type)
        reader.limits.check_memory(self.rows * EVENT_BYTES, f"{reader.path}: {self.rows:,} events")
        self.check_codes("ev_type", np.arange(self.rows), self.type, range(4))
        self.count = self.thread_counts()
        self.threads = self.thread_column()
        self.access = self.type == ACCESS
        self.seq = self.column("ev_seq", self.rows)
        self.pc = self.column("ev_pc", self.rows)
        self.kind = self.column("ev_kind", self.rows)
        self.size = self.column("ev_size", self.rows)
        self.scope, self.sem, self.op = (self.column(f"ev_{c}", self.rows) for c in ("scope", "sem", "op"))
        self.strong = self.column("ev_strong", self.rows)
        self.check_rows()
        self.addrs, self.space = self.access_lanes(variables)
        self.groups, self.pcs = self.sync_lanes()
        self.values = self.value_columns()

    # -------------------------------------------------------------- columns

    def column(self, name: str, rows: int | None = None, unsigned: bool = False) -> np.ndarray:
        """A 1-D member as int64 (uint64 when `unsigned`), with `rows` rows when given."""
        a = self.m[name]
        if rows is not None and len(a) != rows:
            raise self.r.fail(f"member {name}", f"{len(a):,} rows, but ev_type has {rows:,}")
        if unsigned:
            return a.astype(np.uint64)
        if a.dtype == np.uint64 and len(a) and int(a.max()) > INT64_MAX:
            i = int(np.argmax(a > np.uint64(INT64_MAX)))
            raise self.r.fail(f"member {name}", f"row {i} holds {int(a[i])}, beyond the int64 range")
        return a.astype(np.int64)

    def reject(self, field: str, bad: np.ndarray, describe) -> None:
        """Fail with `describe(i)` for the first index i where `bad` holds."""
        if bad.any():
            raise self.r.fail(field, describe(int(np.argmax(bad))))

    def check_codes(self, name: str, rows: np.ndarray, values: np.ndarray, allowed, what: str = "row") -> None:
        """`values` (of `rows` of column `name`) are all in `allowed`."""
        bad = ~np.isin(values, list(allowed))
        self.reject(f"member {name}", bad, lambda i: f"{what} {rows[i]} holds {values[i]}, not one of {_codes(allowed)}")

    def check_range(self, name: str, values: np.ndarray, lo: int, hi: int, what: str = "row") -> None:
        bad = (values < lo) | (values > hi)
        self.reject(f"member {name}", bad, lambda i: f"{what} {i} holds {values[i]}, outside {lo:,}..{hi:,}")

    # -------------------------------------------------------------- threads

    def thread_counts(self) -> np.ndarray:
        """Threads per event, from `ev_start` (each event's first lane in the per-thread columns)."""
        start = self.column("ev_start", self.rows)
        lanes = len(self.m["threads"])
        if self.rows == 0:
            if lanes:
                raise self.r.fail("member threads", f"{lanes:,} lanes but no events")
            return np.zeros(0, dtype=np.int64)
        if start[0] != 0:
            raise self.r.fail("member ev_start", f"row 0 holds {start[0]}: the first event starts at lane 0")
        count = np.diff(start, append=lanes)
        self.reject(
            "member ev_start", count <= 0,
            lambda i: f"row {i}: event {i} would have {count[i]} threads (ev_start must rise, up to the {lanes:,} lanes of threads)",
        )  # fmt: skip
        return count

    def thread_column(self) -> np.ndarray:
        """`threads`, once inside the launch, distinct within each event, and absent after each thread's exit."""
        threads = self.column("threads")
        self.check_range("threads", threads, 0, self.launch.nthreads - 1, "lane")
        event = np.repeat(np.arange(self.rows), self.count)
        order = np.lexsort((threads, event))
        twice = (np.diff(event[order]) == 0) & (np.diff(threads[order]) == 0)
        self.reject("member threads", twice, lambda i: f"event {event[order][i]} names thread {threads[order][i]} twice")
        exits = np.repeat(self.type == EXIT, self.count)
        gone = threads[exits]
        _, first, seen = np.unique(gone, return_index=True, return_counts=True)
        self.reject("member threads", seen > 1, lambda i: f"thread {gone[first[i]]} exits twice")
        exit_at = np.full(self.launch.nthreads, self.rows, dtype=np.int64)
        exit_at[gone] = event[exits]
        late = event > exit_at[threads]
        self.reject(
            "member threads", late, lambda i: f"event {event[i]} names thread {threads[i]}, which exited at event {exit_at[threads[i]]}"
        )
        return threads

    # -------------------------------------------------------------- per-event columns

    def check_rows(self) -> None:
        """Sequence numbers rise; every event but a synchronisation (whose pcs are per thread) names an instruction."""
        self.check_range("ev_seq", self.seq, 0, INT64_MAX)
        self.reject("member ev_seq", np.diff(self.seq) <= 0, lambda i: f"row {i + 1}: sequence numbers must rise")
        self.check_range("ev_pc", np.where(self.type != SYNC, self.pc, 0), 0, self.launch.ninstructions - 1)
        self.check_access_rows(np.flatnonzero(self.access))
        fences = np.flatnonzero(self.type == FENCE)
        self.check_codes("ev_scope", fences, self.scope[fences], range(1, len(SCOPES)))
        self.check_codes("ev_sem", fences, self.sem[fences], FENCE_SEMANTICS)
        syncs = np.flatnonzero(self.type == SYNC)
        self.check_codes("ev_kind", syncs, self.kind[syncs], range(len(SYNC_KINDS)))

    def check_access_rows(self, a: np.ndarray) -> None:
        """Codes and sizes of the access rows `a`, and the agreement the simulator keeps: strong accesses have a
        scope and semantics and weak ones neither; atomics are strong and name their operation, others none."""
        self.check_codes("ev_kind", a, self.kind[a], [int(k) for k in AccessKind])
        self.check_codes("ev_size", a, self.size[a], ACCESS_SIZES)
        self.check_codes("ev_strong", a, self.strong[a], (0, 1))
        for name, column, table in (("ev_scope", self.scope, SCOPES), ("ev_sem", self.sem, SEMANTICS), ("ev_op", self.op, ATOMIC_OPS)):
            self.check_codes(name, a, column[a], range(len(table)))
        strong, atomic = self.strong[a] == 1, self.kind[a] == AccessKind.ATOMIC
        for name, column, what in (("ev_scope", self.scope, "a scope"), ("ev_sem", self.sem, "semantics")):
            disagree = (column[a] != 0) != strong
            self.reject(f"member {name}", disagree, lambda i: f"row {a[i]}: a strong access needs {what}, a weak one has none")
        self.reject(
            "member ev_op", (self.op[a] != 0) != atomic, lambda i: f"row {a[i]}: an atomic access needs an operation, other accesses have none"
        )
        self.reject("member ev_strong", atomic & ~strong, lambda i: f"row {a[i]}: an atomic access is strong")

    # -------------------------------------------------------------- per-thread columns

    def lanes_of(self, rows: np.ndarray, name: str, *others: str) -> tuple[np.ndarray, np.ndarray]:
        """(lane positions in `threads`, first lane of each event in the per-kind columns) of the events where `rows`
        holds, after checking that the per-kind columns `name` and `others` have exactly their lanes."""
        need = int(self.count[rows].sum())
        for member in (name, *others):
            if len(self.m[member]) != need:
                raise self.r.fail(f"member {member}", f"{len(self.m[member]):,} lanes, but its events have {need:,} threads")
        mine = np.where(rows, self.count, 0)
        return np.flatnonzero(np.repeat(rows, self.count)), np.cumsum(mine) - mine

    def access_lanes(self, variables: list[TraceVariable]) -> tuple[np.ndarray, np.ndarray]:
        """`addrs` and `space`: a space the simulator reports (global or shared), a canonical address of that
        space, naturally aligned, inside the thread's block's shared memory or inside a global variable."""
        lanes, self.access_at = self.lanes_of(self.access, "addrs", "space")
        addrs, space = self.column("addrs", unsigned=True), self.column("space")
        size = np.repeat(self.size, self.count)[lanes].astype(np.uint64)
        self.check_codes("space", np.arange(len(space)), space, (int(Space.GLOBAL), int(Space.SHARED)), "lane")
        shared = space == Space.SHARED
        tag = np.where(shared, np.uint64(CANON_SHARED_TAG), np.uint64(0))
        self.reject(
            "member addrs", addrs & np.uint64(CANON_TAG_MASK) != tag,
            lambda i: f"lane {i} holds {int(addrs[i]):#x}, not a canonical {Space(int(space[i])).name.lower()} address",
        )  # fmt: skip
        self.reject(
            "member addrs", addrs % size != 0, lambda i: f"lane {i}: address {int(addrs[i]):#x} is not aligned to its {size[i]}-byte access"
        )
        self.check_shared(addrs, size, self.threads[lanes], shared)
        global_ = np.flatnonzero(~shared)
        self.check_inside(addrs[global_], size[global_], global_, [v for v in variables if v.space == "global"])
        return addrs, space.astype(np.int8)

    def check_shared(self, addrs: np.ndarray, size: np.ndarray, threads: np.ndarray, shared: np.ndarray) -> None:
        """Shared accesses lie in the shared memory of their own thread's block."""
        owner = ((addrs >> np.uint64(CANON_OWNER_SHIFT)) & np.uint64(CANON_OWNER_MASK)).astype(np.int64)
        block = self.launch.block_of(threads)
        self.reject(
            "member addrs", shared & (owner != block),
            lambda i: f"lane {i}: shared address {int(addrs[i]):#x} is in block {owner[i]}, its thread {threads[i]} in block {block[i]}",
        )  # fmt: skip
        end = (addrs & np.uint64(CANON_OFFSET_MASK)) + size
        self.reject(
            "member addrs", shared & (end > np.uint64(self.launch.stride)),
            lambda i: f"lane {i}: shared address {int(addrs[i]):#x} lies past the {self.launch.stride} bytes of shared memory per block",
        )  # fmt: skip

    def check_inside(self, addrs: np.ndarray, size: np.ndarray, lanes: np.ndarray, variables: list[TraceVariable]) -> None:
        """Global accesses lie inside a global variable (the recorder keeps every global allocation; they never overlap)."""
        variables = sorted(variables, key=lambda v: v.base)
        base = np.array([v.base for v in variables], dtype=np.uint64)
        end = np.array([v.end for v in variables], dtype=np.uint64)
        at = np.searchsorted(base, addrs, side="right") - 1
        inside = (at >= 0) & (addrs + size <= end[np.maximum(at, 0)]) if variables else np.zeros(len(addrs), dtype=np.bool_)
        self.reject("member addrs", ~inside, lambda i: f"lane {lanes[i]}: global address {int(addrs[i]):#x} is in no global variable")

    def sync_lanes(self) -> tuple[np.ndarray, np.ndarray]:
        """`groups` and `pcs`: barrier groups are the threads' blocks; warp and collective groups their global warp
        times 2**32 plus a lane mask that names them; pcs name instructions."""
        lanes, self.sync_at = self.lanes_of(self.type == SYNC, "groups", "pcs")
        groups, pcs = self.column("groups"), self.column("pcs")
        self.check_range("pcs", pcs, 0, self.launch.ninstructions - 1, "lane")
        threads, kind = self.threads[lanes], np.repeat(self.kind, self.count)[lanes]
        barrier = kind == SYNC_KINDS.index("barrier")
        block = self.launch.block_of(threads)
        self.reject(
            "member groups", barrier & (groups != block), lambda i: f"lane {i}: barrier group {groups[i]} is not the block of thread {threads[i]}"
        )
        warp, lane = self.launch.warp_and_lane(threads)
        named = ((groups & 0xFFFFFFFF) >> lane) & 1 == 1
        self.reject(
            "member groups", ~barrier & ((groups < 0) | (groups >> WARP_SIZE != warp) | ~named),
            lambda i: f"lane {i}: warp group {groups[i]:#x} is not warp {warp[i]} with a mask naming lane {lane[i]}",
        )  # fmt: skip
        return groups, pcs

    def value_columns(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per value field: (column, element size per event, its first element per event).

        Only accesses carry values, one element per thread, where the simulator
        gives them: `values` for reads and atomics, `stored` for writes and
        atomics, `compare` for compare-and-swaps (and then also `values`).
        """
        rows = np.flatnonzero(self.access)
        kind, op = self.kind[rows], self.op[rows]
        allowed = {"values": kind != AccessKind.WRITE, "stored": kind != AccessKind.READ, "compare": op == ATOMIC_OPS.index("cas")}
        sizes = {}
        for field in VALUE_FIELDS:
            size, width = (self.column(f"ev_{field}_{d}", self.rows)[rows] for d in ("size", "width"))
            self.check_codes(f"ev_{field}_size", rows, size, (0, *VALUE_SIZES))
            self.reject(
                f"member ev_{field}_width", width != (size != 0), lambda i: f"row {rows[i]} holds {width[i]}: one value per thread, 0 when absent"
            )
            self.reject(
                f"member ev_{field}_size", (size != 0) & ~allowed[field],
                lambda i: f"row {rows[i]}: a {AccessKind(int(kind[i])).name.lower()} access has no {field}",
            )  # fmt: skip
            sizes[field] = np.zeros(self.rows, dtype=np.int64)
            sizes[field][rows] = size
        lacking = (sizes["compare"] != 0) & (sizes["values"] == 0)
        self.reject("member ev_values_size", lacking, lambda i: f"row {i}: a compare-and-swap with a compare value needs the value it read")
        out = {}
        for field in VALUE_FIELDS:
            _, first = self.lanes_of(sizes[field] != 0, field)
            out[field] = (self.column(field, unsigned=True), sizes[field], first)
        return out

    # -------------------------------------------------------------- events

    def events(self) -> list[Event]:
        """The checked rows as the simulator's event types, their per-thread arrays slices of the checked columns."""
        start = (np.cumsum(self.count) - self.count).tolist()
        rows = zip(self.type.tolist(), self.seq.tolist(), self.pc.tolist(), self.count.tolist(), start)
        out: list[Event] = []
        for i, (t, seq, pc, n, first) in enumerate(rows):
            threads = self.threads[first : first + n]
            if t == ACCESS:
                out.append(self.access_event(i, seq, pc, threads))
            elif t == SYNC:
                at = int(self.sync_at[i])
                out.append(SyncEvent(seq, SYNC_KINDS[self.kind[i]], threads, self.groups[at : at + n], self.pcs[at : at + n]))
            elif t == FENCE:
                out.append(FenceEvent(seq, pc, threads, SCOPES[self.scope[i]], SEMANTICS[self.sem[i]]))
            else:
                out.append(ExitEvent(seq, pc, threads))
        return out

    def access_event(self, i: int, seq: int, pc: int, threads: np.ndarray) -> AccessBatch:
        n, at = len(threads), int(self.access_at[i])
        values = {}
        for field, (column, size, first) in self.values.items():
            if size[i]:
                values[field] = column[first[i] : first[i] + n].astype(f"u{size[i]}")
        return AccessBatch(
            seq, pc, AccessKind(int(self.kind[i])), threads, self.addrs[at : at + n], int(self.size[i]), self.space[at : at + n],
            bool(self.strong[i]), SCOPES[self.scope[i]], SEMANTICS[self.sem[i]], ATOMIC_OPS[self.op[i]], **values,
        )  # fmt: skip


def _codes(allowed) -> str:
    """The allowed codes for a message: `0..4` for a run of more than two, `0, 1` or `1, 2, 4, 8` otherwise."""
    allowed = list(allowed)
    if len(allowed) > 2 and allowed == list(range(allowed[0], allowed[-1] + 1)):
        return f"{allowed[0]}..{allowed[-1]}"
    return ", ".join(map(str, allowed))
