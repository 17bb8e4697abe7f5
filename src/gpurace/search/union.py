"""The findings of many candidate launches as one set, each finding with the input that first exposed it.

A search checks many inputs of one kernel; the user wants every bug any of
them exposed, once. Findings merge by `Finding.key` (kind, memory space and
source positions), their counts add up, and the first instance, the one from
the earliest candidate that showed it, is kept with that candidate's input.

Redundant barriers are the exception: a barrier is redundant only if *no*
input needs it, so a per-launch verdict cannot simply be merged. The union
keeps, across launches, the barriers executed and those some launch needed,
and reports a barrier only when it was executed and never needed
(`detect.barriers.redundant_barrier_findings` decides).
"""

from __future__ import annotations

from dataclasses import replace

from gpurace.detect.barriers import REDUNDANT_BARRIER, redundant_barrier_findings
from gpurace.detect.findings import Finding, FindingSet
from gpurace.report.model import Report
from gpurace.search.candidates import LaunchInput
from gpurace.sim.program import Program


class FindingUnion:
    """Findings of the candidate reports added so far (see the module docstring)."""

    def __init__(self) -> None:
        self._findings = FindingSet()
        self._barriers = FindingSet()
        self._executed: set[int] = set()
        self._needed: set[int] = set()

    def add(self, report: Report, launch: LaunchInput) -> int:
        """Merge one candidate's report; returns how many findings were new."""
        new = 0
        for f in report.findings:
            target = self._barriers if f.kind == REDUNDANT_BARRIER else self._findings
            if f.key not in target:
                f = replace(f, input=launch.as_dict())  # a copy: merging later ones updates its count
                new += f.kind != REDUNDANT_BARRIER
            target.add(f, f.count)
        barriers = report.stats.get("barriers")
        if barriers is not None:
            self._executed.update(barriers["executed"])
            self._needed.update(barriers["needed"])
        return new

    def __len__(self) -> int:
        return len(self._findings)

    def findings(self, program: Program | None) -> list[Finding]:
        """Everything found, sorted as reports sort; redundant barriers (given the kernel's `program`, when
        they were checked) only where no candidate needed them."""
        merged = FindingSet()
        merged.extend(self._findings.sorted())
        if program is not None:
            # Every barrier executed and never needed was reported by each run that executed it, so each
            # verdict has a per-run finding to take its example, summed count and first input from.
            runs = {f.key: f for f in self._barriers.sorted()}
            redundant = redundant_barrier_findings(
                program,
                self._executed,
                self._needed,
                examples={f.sites[0].pc: f.sites[0] for f in runs.values()},
                instances={f.sites[0].pc: f.count for f in runs.values()},
            )
            for f in redundant:
                f.input = runs[f.key].input
            merged.extend(redundant)
        return merged.sorted()
