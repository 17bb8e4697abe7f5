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
by it). A reader refuses other versions rather than guess.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Imm, Instruction, SourceLoc
from gpurace.sim.events import AccessBatch, AccessKind, ExitEvent, FenceEvent, SyncEvent
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


def read(path: str | os.PathLike) -> Trace:
    """Read a binary trace; a damaged file or another format version is a UserError."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise UserError(f"{path}: not a readable gpurace binary trace ({e})") from None
    try:
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
    except (KeyError, ValueError):
        raise UserError(f"{path}: not a gpurace binary trace (no metadata)") from None
    if meta.get("format") != FORMAT:
        raise UserError(f"{path}: not a gpurace binary trace")
    if meta.get("version") != VERSION:
        raise UserError(f"{path}: binary trace version {meta.get('version')} is not supported (this gpurace reads version {VERSION})")
    try:
        return _trace(meta, arrays)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise UserError(f"{path}: damaged binary trace ({e!r})") from None


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


def _loc(data) -> SourceLoc | None:
    if data is None:
        return None
    file, line, column, function, inlined_at = data
    return SourceLoc(file, line, column, _loc(inlined_at), function)


def _trace(meta: dict, a: dict) -> Trace:
    instructions, owner = [], []
    for opcode, modifiers, noperands, ptx_line, text, fn, loc in meta["instructions"]:
        # Operands are kept as their count only: detectors tell barriers apart by it, never by their values.
        instructions.append(Instruction(opcode, tuple(modifiers), (Imm(0),) * noperands, loc=_loc(loc), ptx_line=ptx_line, text=text))
        owner.append(fn)
    return Trace(
        grid=tuple(meta["grid"]),
        block=tuple(meta["block"]),
        kernel=meta["kernel"],
        variables=[TraceVariable(*v) for v in meta["variables"]],
        shared_stride=meta["shared_stride"],
        instructions=instructions,
        owner=owner,
        events=_events(a),
        mangled=meta["mangled"],
        source=meta["source"],
    )


def _events(a: dict) -> list:
    ends = np.append(a["ev_start"][1:], len(a["threads"]))
    out = []
    access = sync = 0  # positions in the per-kind lane columns
    at = dict.fromkeys(VALUE_FIELDS, 0)
    for i, (t, start, end) in enumerate(zip(a["ev_type"].tolist(), a["ev_start"].tolist(), ends.tolist())):
        threads = a["threads"][start:end]
        seq, pc, n = int(a["ev_seq"][i]), int(a["ev_pc"][i]), end - start
        if t == ACCESS:
            values = {}
            for f in VALUE_FIELDS:
                size, width = int(a[f"ev_{f}_size"][i]), int(a[f"ev_{f}_width"][i])
                if size:
                    flat = a[f][at[f] : at[f] + n * width].astype(np.dtype(f"u{size}"))
                    values[f] = flat.reshape(n, width) if width > 1 else flat
                    at[f] += n * width
            out.append(
                AccessBatch(
                    seq, pc, AccessKind(int(a["ev_kind"][i])), threads, a["addrs"][access : access + n], int(a["ev_size"][i]),
                    a["space"][access : access + n], bool(a["ev_strong"][i]), SCOPES[a["ev_scope"][i]],
                    SEMANTICS[a["ev_sem"][i]], ATOMIC_OPS[a["ev_op"][i]], **values,
                )
            )
            access += n
        elif t == SYNC:
            out.append(SyncEvent(seq, SYNC_KINDS[a["ev_kind"][i]], threads, a["groups"][sync : sync + n], a["pcs"][sync : sync + n]))
            sync += n
        elif t == FENCE:
            out.append(FenceEvent(seq, pc, threads, SCOPES[a["ev_scope"][i]], SEMANTICS[a["ev_sem"][i]]))
        elif t == EXIT:
            out.append(ExitEvent(seq, pc, threads))
        else:
            raise ValueError(f"unknown event type {t}")
    return out
