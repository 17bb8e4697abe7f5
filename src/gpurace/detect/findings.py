"""The findings model shared by the simulator (out-of-bounds, deadlock, ...) and the detectors (races).

A finding is what a user reads: its kind, severity, the memory space, the
cause in words, and up to two `Site`s (the instructions involved, each with one
concrete thread and its source location). Findings are deduplicated by kind and
the pair of static instructions; `count` says how many dynamic instances were
merged and the first instance is kept as the example.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpurace.frontend.names import variable_name
from gpurace.frontend.ptx.ir import SourceLoc

ERROR = "error"
WARNING = "warning"
PERFORMANCE = "performance"


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

    @property
    def key(self) -> tuple:
        """Deduplication key: kind, space and the unordered pair of source locations.

        Source positions, not instructions: one source line often compiles to
        several instructions (unrolled loops, inlined helpers), and the user
        fixes lines. Sites without line information fall back to the pc.
        """
        where = tuple(sorted((s.loc.file, s.loc.line, s.loc.column) if s.loc else ("", -1, s.pc) for s in self.sites))
        return (self.kind, where, self.space)


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
        existing = self._by_key.get(finding.key)
        if existing is None:
            finding.count = count
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
        """Errors first, then by the first site's source position."""
        rank = {ERROR: 0, WARNING: 1, PERFORMANCE: 2}

        def sort_key(f: Finding) -> tuple:
            loc = f.sites[0].loc if f.sites else None
            return (rank.get(f.severity, 3), loc.file if loc else "", loc.line if loc else 0, f.kind)

        return sorted(self._by_key.values(), key=sort_key)
