"""The findings model shared by the simulator (out-of-bounds, deadlock, ...) and the detectors (races).

A finding is what a user reads: its kind, severity, the memory space, the
cause in words, and up to two `Site`s (the instructions involved, each with one
concrete thread and its source location). Findings are deduplicated by kind and
the source positions of their sites (`position_key`); `count` says how many
dynamic instances were merged and the first instance is kept as the example.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpurace.frontend.names import variable_name
from gpurace.frontend.ptx.debuginfo import user_frame
from gpurace.frontend.ptx.ir import SourceLoc

ERROR = "error"
WARNING = "warning"
PERFORMANCE = "performance"
_RANK = {ERROR: 0, WARNING: 1, PERFORMANCE: 2}
"""Severities, worst first (reports list errors first; a merged finding takes its worst instance)."""

SAME_VALUE = "both threads wrote the same value"
"""The cause of a write-write race whose two stores wrote equal bytes where they overlap: still a race under the
PTX memory model, but one GPUVerify's convention calls benign, so it is reported as a warning
(`Finding.same_value`) and `--benign-same-value` drops it."""


@dataclass(frozen=True)
class Site:
    """One side of a finding: a static instruction and one thread that executed it."""

    pc: int
    thread: tuple[int, int, int]
    block: tuple[int, int, int]
    warp: int
    lane: int
    op: str  # "read", "write", "atomic add", "barrier", ...
    scope: str | None
    loc: SourceLoc | None
    instruction: str
    function: str


@dataclass(frozen=True)
class Address:
    """Where in memory: allocation name (parameter or variable) and byte offset."""

    allocation: str
    offset: int
    address: int


@dataclass
class Finding:
    kind: str  # data-race, barrier-divergence, deadlock, livelock, invalid-warp-sync, out-of-bounds, ...
    severity: str
    cause: str
    sites: tuple[Site, ...]
    space: str | None = None
    address: Address | None = None
    count: int = 1
    details: dict = field(default_factory=dict)
    # Under an input search, the launch that first exposed it: {"grid": [...], "block": [...], "args": [...]}.
    input: dict | None = None
    # Under several schedules, the one that first exposed it: {"index": 3, "policy": "random", "seed": ...}.
    schedule: dict | None = None
    # Under `gpurace exec`, the launch that first showed it:
    # {"index": 2, "kernel": "reduce", "grid": [...], "block": [...], "host": "prog.cu:41"}.
    launch: dict | None = None
    # A data race between two stores that wrote the same bytes where they overlap (cause SAME_VALUE, a warning);
    # a finding merged from several instances is one only if every instance was.
    same_value: bool = False

    @property
    def key(self) -> tuple:
        """Deduplication key: kind, space and the unordered pair of source positions (`position_key`)."""
        where = tuple(sorted(position_key(s.loc, s.pc) for s in self.sites))
        return (self.kind, where, self.space)


def position_key(loc: SourceLoc | None, pc: int) -> tuple[str, int, int]:
    """Where an instruction is, as findings are told apart and ordered: `(file, line, column)`.

    Source positions, not instructions: one source line often compiles to
    several instructions (unrolled loops, inlined helpers), and the user
    fixes lines. The position is the user's frame of the inlining chain
    (`user_frame`): code inlined from a library header is fixed where the
    user calls it. Instructions without line information fall back to the pc.
    """
    if loc is None:
        return ("", -1, pc)
    lead = user_frame(loc)
    return (lead.file, lead.line, lead.column)


def describe_address(memory, canonical: int) -> Address:
    """The Address of a canonical address, with the allocation's readable name (see `frontend.names`)."""
    loc = memory.describe(canonical)
    return Address(variable_name(loc.allocation) if loc.allocation else "?", int(loc.offset), int(canonical))


def make_site(program, geometry, pc: int, g: int, op: str, scope: str | None = None) -> Site:
    """The Site for global thread `g` executing instruction `pc` (a `Program` and a `Geometry` from the simulator)."""
    ins = program.instructions[pc]
    thread, block = geometry.thread_coords(g)
    return Site(
        pc=pc,
        thread=thread,
        block=block,
        warp=int(geometry.tid_linear[g] // 32),
        lane=int(geometry.lane[g]),
        op=op,
        scope=scope,
        loc=ins.loc,
        instruction=ins.text,
        function=program.owner[pc],
    )


class FindingSet:
    """Collects findings, merging duplicates (same key) into one with a count."""

    def __init__(self) -> None:
        self._by_key: dict[tuple, Finding] = {}

    def add(self, finding: Finding, count: int = 1) -> None:
        """Add `count` instances of `finding`. The worst instance of a key is its example: one that is not a
        same-value race turns a same-value finding into an ordinary one, and an error turns a warning into an
        error (a pair of lines can race for a reason that is only a warning in one instance, such as the
        consumer's missing fence after a flag read, and for a worse one in another)."""
        existing = self._by_key.get(finding.key)
        if existing is None:
            finding.count = count
            self._by_key[finding.key] = finding
        elif (existing.same_value and not finding.same_value) or _RANK.get(finding.severity, 3) < _RANK.get(existing.severity, 3):
            finding.count = existing.count + count
            self._by_key[finding.key] = finding
        else:
            existing.count += count

    def extend(self, findings: list[Finding]) -> None:
        for f in findings:
            self.add(f, f.count)

    def __contains__(self, key: tuple) -> bool:
        return key in self._by_key

    def __len__(self) -> int:
        return len(self._by_key)

    def sorted(self) -> list[Finding]:
        """Errors first, then by the first site's source position, then by the rest of the key.

        The order is total, so a report lists its findings in the same order
        whichever order the detectors produced them in.
        """
        def sort_key(f: Finding) -> tuple:
            first = position_key(f.sites[0].loc, f.sites[0].pc) if f.sites else ("", -1, -1)
            kind, where, space = f.key
            return (_RANK.get(f.severity, 3), first, kind, space or "", where)

        return sorted(self._by_key.values(), key=sort_key)
