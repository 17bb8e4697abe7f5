"""The text trace format: one event per line, written by hand (the grammar is in README.md, "Traces").

A text trace declares the launch (`grid G block B`), names memory (`var
shared|global NAME BYTES`) and then lists events in execution order: one
thread's access, atomic, lock operation, fence or exit per `t BLOCK THREAD
...` line, and barriers and warp syncs on `barrier ...` lines. Each line may
end in `@ FILE:LINE[:COLUMN]`, the source location findings report; a line
without one is reported at its own position in the trace file.

Parsing builds the simulator's event types directly, with one synthetic
instruction per distinct (operation, location): a PTX-like opcode and
modifiers (`atom.acquire.gpu.global.cas.b32`), so the detectors recognise
release/acquire patterns and `--detector auto` chooses as it does for a
kernel. A lock acquire is an atomic compare-and-swap with acquire semantics
on the lock word, a release an atomic exchange with release semantics, as
`atomicCAS`/`atomicExch` locks compile. `write` turns a trace back into text.
Every malformed line is a `UserError` naming FILE:LINE.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Imm, Instruction, SourceLoc
from gpurace.limits import LimitExceeded, Limits, format_size
from gpurace.sim.events import AccessBatch, AccessKind, Event, ExitEvent, FenceEvent, SyncEvent
from gpurace.sim.geometry import WARP_SIZE, Geometry, parse_dims
from gpurace.sim.memory.layout import (
    CANON_OFFSET_MASK, CANON_SHARED_TAG, CANON_TAG_MASK, GLOBAL_BASE, GLOBAL_LIMIT, REDZONE, Space, align_up,
)  # fmt: skip
from gpurace.trace.bounds import check_launch, file_name_problem
from gpurace.trace.model import Trace, TraceVariable

SCOPES = ("cta", "cluster", "gpu", "sys")
ATOMIC_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")
ATOMIC_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
LOAD_SEMANTICS = ("volatile", "relaxed", "acquire")
STORE_SEMANTICS = ("volatile", "relaxed", "release")
ACCESS_SIZES = (1, 2, 4, 8, 16)
LOCK_BYTES = 4
SHARED_ALIGN = 16
GLOBAL_ALIGN = 256
FULL_MASK = 0xFFFFFFFF
BYTES_PER_TEXT_BYTE = 64
"""Memory of the parsed events and instructions per byte of a text trace: about 49 measured with tracemalloc
(100,000 lines of accesses and lock operations), rounded up."""
MAX_DIGITS = 20
"""Digits of a source line or column: enough for any 64-bit number, and far below Python's int() limit."""

_LOC = re.compile(r"(.+):(\d+)(?::(\d+))?")
_NAME = re.compile(r"[A-Za-z_]\w*")
_REF = re.compile(r"([A-Za-z_]\w*)(?:\[([^\]]+)\])?")


def read(path: str | os.PathLike, limits: Limits | None = None) -> Trace:
    """Parse the text trace in `path`; it and its launch must fit `limits` (default: `Limits()`).

    The file is read only up to the size whose events the memory budget can
    hold, so that neither a huge file nor an endless one (`/dev/zero`) is read whole.
    """
    limits = limits or Limits()
    readable = limits.max_memory // BYTES_PER_TEXT_BYTE
    try:
        with open(path, "rb") as f:
            data = f.read(readable + 1)
    except OSError as e:
        raise UserError(f"{path}: cannot read trace: {e.strerror}") from None
    if len(data) > readable:
        raise LimitExceeded(
            f"{path}: a text trace of more than {format_size(readable)}: its events would need more than "
            f"the memory budget of {format_size(limits.max_memory)} (--max-memory)"
        )
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: neither a binary trace nor UTF-8 text") from None
    return parse(source, str(path), limits)


def parse(source: str, name: str = "<trace>", limits: Limits | None = None) -> Trace:
    """Parse text trace `source`; `name` is the file name errors and default source locations use."""
    p = _Parser(name, limits or Limits())
    for number, raw in enumerate(source.splitlines(), start=1):
        p.lineno = number
        p.line(raw)
    return p.finish()


class _Parser:
    """Line-by-line state: the declared launch and variables, the instructions made so far, who has exited."""

    def __init__(self, name: str, limits: Limits) -> None:
        self.name = name
        self.limits = limits
        self.lineno = 0
        self.geo: Geometry | None = None
        self.variables: dict[str, TraceVariable] = {}
        self.shared_top = 0
        self.global_top = GLOBAL_BASE
        self.pcs: dict[tuple, int] = {}
        self.instructions: list[Instruction] = []
        self.events: list[Event] = []
        self.exited = np.zeros(0, dtype=np.bool_)

    def error(self, message: str) -> UserError:
        return UserError(f"{self.name}:{self.lineno}: {message}")

    # ------------------------------------------------------------------ lines

    def line(self, raw: str) -> None:
        body = raw.split("#", 1)[0]
        body, at, where = body.partition("@")
        words = body.split()
        if not words:
            if at:
                raise self.error("a source location needs an event before it")
            return
        head = words[0]
        if at and head in ("grid", "var"):
            raise self.error(f"a {head} declaration takes no source location")
        loc = self.location(where.strip()) if at else SourceLoc(self.name, self.lineno)
        if head == "grid":
            self.declare_launch(words)
        elif head == "var":
            self.declare_variable(words)
        elif head == "t":
            self.thread_event(words, loc)
        elif head == "barrier":
            self.barrier(words, loc)
        else:
            raise self.error(f"unknown statement {head!r} (expected grid, var, t or barrier)")

    def location(self, text: str) -> SourceLoc:
        m = _LOC.fullmatch(text)
        if m is None or any(len(n) > MAX_DIGITS for n in m.group(2, 3) if n):
            raise self.error(f"expected a source location FILE:LINE[:COLUMN] after '@', got {text!r}")
        problem = file_name_problem(m.group(1))
        if problem:
            raise self.error(f"source file {m.group(1)!r} names no file: it {problem}")
        return SourceLoc(m.group(1), int(m.group(2)), int(m.group(3) or 0))

    def declare_launch(self, words: list[str]) -> None:
        if len(words) != 4 or words[2] != "block":
            raise self.error("expected: grid X[,Y[,Z]] block X[,Y[,Z]]")
        if self.geo is not None:
            raise self.error("the launch is declared twice")
        try:
            grid, block = parse_dims(words[1], "grid"), parse_dims(words[3], "block")
        except UserError as e:
            raise self.error(str(e).removeprefix("--")) from None
        check_launch(grid, block, self.limits, f"{self.name}:{self.lineno}")
        self.geo = Geometry.create(grid, block)
        self.exited = np.zeros(self.geo.nthreads, dtype=np.bool_)

    def declare_variable(self, words: list[str]) -> None:
        if len(words) != 4 or words[1] not in ("shared", "global"):
            raise self.error("expected: var shared|global NAME BYTES")
        name, space = words[2], words[1]
        if not _NAME.fullmatch(name):
            raise self.error(f"invalid variable name {name!r}")
        if name in self.variables:
            raise self.error(f"variable {name!r} is declared twice")
        size = self.integer(words[3], "variable size")
        if size <= 0:
            raise self.error(f"variable {name!r} needs a positive size, got {size}")
        if space == "shared":
            base = align_up(self.shared_top, SHARED_ALIGN)
            self.shared_top = self.placed(name, base + size, CANON_OFFSET_MASK + 1, "shared memory of a block")
        else:
            gap = REDZONE if self.global_top > GLOBAL_BASE else 0
            base = align_up(self.global_top + gap, GLOBAL_ALIGN)
            self.global_top = self.placed(name, base + size, GLOBAL_LIMIT, "global address space")
        self.variables[name] = TraceVariable(name, space, base, size)

    def placed(self, name: str, end: int, limit: int, region: str) -> int:
        """`end`, the new top of a region, once the variable ending there fits in its region (so its addresses are canonical)."""
        if end > limit:
            raise self.error(f"variable {name!r} would end at {end:#x}, past the end of the {region} ({limit:#x})")
        return end

    def integer(self, text: str, what: str) -> int:
        try:
            return int(text, 0)
        except ValueError:
            raise self.error(f"expected an integer for the {what}, got {text!r}") from None

    def launch(self) -> Geometry:
        if self.geo is None:
            raise self.error("events need the launch first: grid X[,Y[,Z]] block X[,Y[,Z]]")
        return self.geo

    # ------------------------------------------------------------------ thread events

    def thread_event(self, words: list[str], loc: SourceLoc) -> None:
        geo = self.launch()
        if len(words) < 4:
            raise self.error("expected: t BLOCK THREAD OPERATION ...")
        block, thread = self.integer(words[1], "block"), self.integer(words[2], "thread")
        if not 0 <= block < geo.nblocks:
            raise self.error(f"block {block} is outside the grid ({geo.nblocks} blocks)")
        if not 0 <= thread < geo.block_size:
            raise self.error(f"thread {thread} is outside the block ({geo.block_size} threads)")
        g = block * geo.block_size + thread
        if self.exited[g]:
            raise self.error(f"thread {thread} of block {block} has exited")
        op, args = words[3], words[4:]
        threads = np.array([g], dtype=np.int64)
        if op == "exit":
            self.no_arguments(op, args)
            self.events.append(ExitEvent(len(self.events), self.pc("exit", (), loc), threads))
            self.exited[g] = True
        elif op.startswith("fence"):
            self.no_arguments(op, args)
            sem, scope = self.fence_spec(op)
            self.events.append(FenceEvent(len(self.events), self.pc("fence", (sem, scope), loc), threads, scope, sem))
        elif op in ("acquire", "release"):
            self.lock(op, args, block, threads, loc)
        elif op == "atomic":
            if len(args) != 3:
                raise self.error("expected: atomic OP[.SEMANTICS][.SCOPE] VAR[OFFSET] BYTES")
            atomic_op, sem, scope = self.atomic_spec(args[0])
            self.access(AccessKind.ATOMIC, args[1:], block, threads, loc, True, scope, sem, atomic_op)
        elif op in ("read", "write"):
            if len(args) != 2:
                raise self.error(f"expected: {op} VAR[OFFSET] BYTES")
            kind = AccessKind.READ if op == "read" else AccessKind.WRITE
            self.access(kind, args, block, threads, loc, False, None, None, None)
        elif op.startswith(("ld.", "st.")):
            if len(args) != 2:
                raise self.error(f"expected: {op} VAR[OFFSET] BYTES")
            kind, sem, scope = self.strong_spec(op)
            self.access(kind, args, block, threads, loc, True, scope, sem, None)
        else:
            raise self.error(
                f"unknown operation {op!r} (expected read, write, ld.SEM, st.SEM, atomic, acquire, release, fence.SCOPE or exit)"
            )

    def no_arguments(self, op: str, args: list[str]) -> None:
        if args:
            raise self.error(f"{op} takes no operands, got {' '.join(args)!r}")

    def fence_spec(self, op: str) -> tuple[str, str]:
        parts = op.split(".")
        if parts[0] != "fence" or len(parts) not in (2, 3) or parts[-1] not in SCOPES or (len(parts) == 3 and parts[1] not in ("sc", "acq_rel")):
            raise self.error(f"expected fence[.sc|.acq_rel].SCOPE with SCOPE one of {', '.join(SCOPES)}, got {op!r}")
        return (parts[1] if len(parts) == 3 else "sc"), parts[-1]

    def atomic_spec(self, text: str) -> tuple[str, str, str]:
        atomic_op, *mods = text.split(".")
        if atomic_op not in ATOMIC_OPS:
            raise self.error(f"unknown atomic operation {atomic_op!r} (choose from {', '.join(ATOMIC_OPS)})")
        sem, scope = "relaxed", "gpu"
        for m in mods:
            if m in ATOMIC_SEMANTICS:
                sem = m
            elif m in SCOPES:
                scope = m
            else:
                raise self.error(f"unknown atomic modifier {m!r} in {text!r} (semantics {', '.join(ATOMIC_SEMANTICS)}; scopes {', '.join(SCOPES)})")
        return atomic_op, sem, scope

    def strong_spec(self, op: str) -> tuple[AccessKind, str, str]:
        head, *mods = op.split(".")
        allowed = LOAD_SEMANTICS if head == "ld" else STORE_SEMANTICS
        if not mods or mods[0] not in allowed or len(mods) > 2:
            raise self.error(f"expected {head}.SEMANTICS[.SCOPE] with SEMANTICS one of {', '.join(allowed)}, got {op!r}")
        sem = mods[0]
        if len(mods) == 2:
            if sem == "volatile" or mods[1] not in SCOPES:
                raise self.error(f"{op!r}: volatile takes no scope; other semantics take one of {', '.join(SCOPES)}")
        scope = mods[1] if len(mods) == 2 else "sys"
        return (AccessKind.READ if head == "ld" else AccessKind.WRITE), sem, scope

    def lock(self, op: str, args: list[str], block: int, threads: np.ndarray, loc: SourceLoc) -> None:
        if len(args) != 2 or not args[0].startswith("lock.") or args[0][5:] not in SCOPES:
            raise self.error(f"expected: {op} lock.SCOPE VAR[OFFSET] with SCOPE one of {', '.join(SCOPES)}")
        scope = args[0][5:]
        # The lock word goes from free (0) to taken (1) and back, as the successful atomicCAS/atomicExch would.
        if op == "acquire":
            words = dict(values=np.zeros(1, np.uint32), compare=np.zeros(1, np.uint32), stored=np.ones(1, np.uint32))
            atomic_op = "cas"
        else:
            words = dict(values=np.ones(1, np.uint32), stored=np.zeros(1, np.uint32))
            atomic_op = "exch"
        self.access(AccessKind.ATOMIC, [args[1], str(LOCK_BYTES)], block, threads, loc, True, scope, op, atomic_op, words)

    def access(self, kind, args, block, threads, loc, strong, scope, sem, atomic_op, words: dict | None = None) -> None:
        var, offset = self.reference(args[0])
        size = self.integer(args[1], "access size")
        if size not in ACCESS_SIZES:
            raise self.error(f"access size {size} is not one of {', '.join(map(str, ACCESS_SIZES))} bytes")
        if offset % size:
            raise self.error(f"{args[0]}: offset {offset} is not aligned to the {size}-byte access")
        if not 0 <= offset <= var.size - size:
            raise self.error(f"{args[0]}: {size} bytes at offset {offset} lie outside {var.name!r} ({var.size} bytes)")
        if var.space == "shared":
            address, space = CANON_SHARED_TAG | (block << 32) | (var.base + offset), Space.SHARED
        else:
            address, space = var.base + offset, Space.GLOBAL
        pc = self.pc(*access_instruction(kind, var.space, size, strong, scope, sem, atomic_op), loc)
        self.events.append(
            AccessBatch(
                len(self.events), pc, kind, threads, np.array([address], dtype=np.uint64), size,
                np.array([space], dtype=np.int8), strong, scope, sem, atomic_op, **(words or {}),
            )
        )

    def reference(self, text: str) -> tuple[TraceVariable, int]:
        m = _REF.fullmatch(text)
        if m is None:
            raise self.error(f"expected VAR or VAR[OFFSET], got {text!r}")
        var = self.variables.get(m.group(1))
        if var is None:
            raise self.error(f"unknown variable {m.group(1)!r} (declare it with: var shared|global NAME BYTES)")
        return var, self.integer(m.group(2), "offset") if m.group(2) else 0

    # ------------------------------------------------------------------ barriers

    def barrier(self, words: list[str], loc: SourceLoc) -> None:
        geo = self.launch()
        if len(words) == 3 and words[1] == "block":
            block = self.block_index(words[2])
            members = np.arange(block * geo.block_size, (block + 1) * geo.block_size, dtype=np.int64)
            members = members[~self.exited[members]]
            if len(members) == 0:
                raise self.error(f"every thread of block {block} has exited")
            groups = np.full(len(members), block, dtype=np.int64)
            kind, pc = "barrier", self.pc("bar", ("sync",), loc, (Imm(0),))
        elif len(words) in (4, 6) and words[1] == "warp" and (len(words) == 4 or words[4] == "mask"):
            block = self.block_index(words[2])
            warp = self.integer(words[3], "warp")
            if not 0 <= warp < geo.warps_per_block:
                raise self.error(f"warp {warp} is outside the block ({geo.warps_per_block} warps)")
            mask = self.integer(words[5], "mask") if len(words) == 6 else FULL_MASK
            if not 0 < mask <= FULL_MASK:
                raise self.error(f"mask {mask:#x} is not a non-zero 32-bit lane mask")
            first = block * geo.block_size + warp * WARP_SIZE
            lanes = np.flatnonzero((mask >> np.arange(WARP_SIZE)) & 1)
            if warp * WARP_SIZE + int(lanes[-1]) >= geo.block_size:
                raise self.error(f"mask {mask:#x} names lanes that warp {warp} of a {geo.block_size}-thread block does not have")
            members = first + lanes.astype(np.int64)
            gone = members[self.exited[members]]
            if len(gone):
                raise self.error(f"lane {int(gone[0] - first)} of warp {warp} in block {block} has exited")
            global_warp = block * geo.warps_per_block + warp
            groups = np.full(len(members), (global_warp << 32) | mask, dtype=np.int64)
            kind, pc = "warp", self.pc("bar", ("warp", "sync"), loc, (Imm(mask),))
        else:
            raise self.error("expected: barrier block BLOCK, or barrier warp BLOCK WARP [mask MASK]")
        self.events.append(SyncEvent(len(self.events), kind, members, groups, np.full(len(members), pc, dtype=np.int64)))

    def block_index(self, text: str) -> int:
        block = self.integer(text, "block")
        if not 0 <= block < self.launch().nblocks:
            raise self.error(f"block {block} is outside the grid ({self.launch().nblocks} blocks)")
        return block

    # ------------------------------------------------------------------ instructions

    def pc(self, opcode: str, modifiers: tuple[str, ...], loc: SourceLoc, operands: tuple = ()) -> int:
        """The pc of the synthetic instruction for this operation at this location (one per distinct pair)."""
        key = (opcode, modifiers, operands, loc)
        pc = self.pcs.get(key)
        if pc is None:
            pc = self.pcs[key] = len(self.instructions)
            text = ".".join((opcode, *modifiers)) + "".join(f" {o.value:#x}" for o in operands)
            self.instructions.append(Instruction(opcode, modifiers, operands, loc=loc, ptx_line=self.lineno, text=text))
        return pc

    def finish(self) -> Trace:
        geo = self.launch()
        return Trace(
            grid=geo.grid,
            block=geo.block,
            kernel=Path(self.name).stem,
            variables=list(self.variables.values()),
            shared_stride=align_up(self.shared_top, SHARED_ALIGN),
            instructions=self.instructions,
            owner=[Path(self.name).stem] * len(self.instructions),
            events=self.events,
            source=self.name,
        )


def access_instruction(kind, space: str, size: int, strong: bool, scope, sem, atomic_op) -> tuple[str, tuple[str, ...]]:
    """PTX-like opcode and modifiers of an access, as the detectors and `--detector auto` read them."""
    bits = f"b{8 * size}"
    if kind == AccessKind.ATOMIC:
        return "atom", (sem, scope, space, atomic_op, bits)
    opcode = "ld" if kind == AccessKind.READ else "st"
    if not strong:
        return opcode, (space, bits)
    if sem == "volatile":
        return opcode, ("volatile", space, bits)
    return opcode, (sem, scope, space, bits)


# ---------------------------------------------------------------------- writing


def write(trace: Trace, path: str | os.PathLike) -> None:
    """Write `trace` as text; an event batch of several threads becomes one line per thread."""
    try:
        Path(path).write_text(dumps(trace), encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot write trace: {e.strerror}") from None


def dumps(trace: Trace) -> str:
    """The text form of `trace` (see `write`)."""
    geo = Geometry.create(trace.grid, trace.block)
    lines = [f"grid {_dims(trace.grid)} block {_dims(trace.block)}"]
    lines += [f"var {v.space} {v.name} {v.size}" for v in trace.variables]
    shared = sorted((v for v in trace.variables if v.space == "shared"), key=lambda v: v.base)
    globals_ = sorted((v for v in trace.variables if v.space == "global"), key=lambda v: v.base)
    exited = np.zeros(geo.nthreads, dtype=np.bool_)
    for ev in trace.events:
        at = _where(trace.instructions[ev.pc if not isinstance(ev, SyncEvent) else int(ev.pcs[0])])
        if isinstance(ev, AccessBatch):
            for g, addr in zip(ev.threads, ev.addrs):
                lines.append(f"{_thread(geo, int(g))} {_access_text(ev, int(addr), shared, globals_)}{at}")
        elif isinstance(ev, FenceEvent):
            op = f"fence.{ev.scope}" if ev.sem == "sc" else f"fence.{ev.sem}.{ev.scope}"
            lines += [f"{_thread(geo, int(g))} {op}{at}" for g in ev.threads]
        elif isinstance(ev, ExitEvent):
            lines += [f"{_thread(geo, int(g))} exit{at}" for g in ev.threads]
            exited[ev.threads] = True
        elif ev.kind == "barrier":
            for b in np.unique(ev.groups):
                expect = np.arange(b * geo.block_size, (b + 1) * geo.block_size)
                if not np.array_equal(np.sort(ev.threads[ev.groups == b]), expect[~exited[expect]]):
                    raise UserError(f"event {ev.seq}: a barrier of part of block {b} cannot be written as text")
                lines.append(f"barrier block {b}{at}")
        elif ev.kind == "warp":
            for grp in np.unique(ev.groups):
                warp, mask = int(grp) >> 32, int(grp) & FULL_MASK
                lines.append(f"barrier warp {warp // geo.warps_per_block} {warp % geo.warps_per_block} mask {mask:#x}{at}")
        else:
            raise UserError(f"event {ev.seq}: {ev.kind} synchronisation has no text form")
    return "\n".join(lines) + "\n"


def _dims(d: tuple[int, int, int]) -> str:
    return ",".join(map(str, d))


def _where(ins: Instruction) -> str:
    loc = ins.loc
    if loc is None:
        return ""
    return f"  @ {loc.file}:{loc.line}" + (f":{loc.column}" if loc.column else "")


def _thread(geo: Geometry, g: int) -> str:
    return f"t {g // geo.block_size} {g % geo.block_size}"


def _access_text(ev: AccessBatch, addr: int, shared: list[TraceVariable], globals_: list[TraceVariable]) -> str:
    if addr & CANON_TAG_MASK == CANON_SHARED_TAG:
        offset, variables = addr & CANON_OFFSET_MASK, shared
    else:
        offset, variables = addr, globals_
    var = next((v for v in variables if v.base <= offset < v.end), None)
    if var is None:
        raise UserError(f"event {ev.seq}: address {addr:#x} is in no declared variable")
    ref = f"{var.name}[{offset - var.base}]"
    if ev.kind == AccessKind.ATOMIC:
        if ev.size == LOCK_BYTES and (ev.atomic_op, ev.sem) in (("cas", "acquire"), ("exch", "release")):
            return f"{ev.sem} lock.{ev.scope} {ref}"
        return f"atomic {ev.atomic_op}.{ev.sem}.{ev.scope} {ref} {ev.size}"
    if not ev.strong:
        return f"{'read' if ev.kind == AccessKind.READ else 'write'} {ref} {ev.size}"
    head = "ld" if ev.kind == AccessKind.READ else "st"
    spec = "volatile" if ev.sem == "volatile" else f"{ev.sem}.{ev.scope}"
    return f"{head}.{spec} {ref} {ev.size}"
