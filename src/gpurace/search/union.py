"""The findings of many launches as one set, each finding with the run that first exposed it.

A search checks many inputs of one kernel, and `check --schedules` many
schedules of one input; the user wants every bug any of them exposed, once.
Findings merge by `Finding.key` (kind, memory space and source positions),
their counts add up, and the first instance, the one from the earliest run
that showed it, is kept with what identifies that run (its `input`, its
`schedule`, or both when a search checks several schedules of each input),
unless a later run shows a worse one (`FindingSet.add`: an error where the
first was a warning), which is then kept with its own run.

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
from gpurace.sim.program import Program

ORIGINS = ("input", "schedule")
"""The `Finding` fields that say which run exposed a finding."""


class FindingUnion:
    """Findings of the reports added so far (see the module docstring)."""

    def __init__(self) -> None:
        self._findings = FindingSet()
        self._barriers = FindingSet()
        self._barriers_checked = False
        self._executed: set[int] = set()
        self._needed: set[int] = set()

    def add(self, report: Report, **origin: dict) -> int:
        """Merge one run's report, recording `origin` (`input=...`, `schedule=...`; see ORIGINS) on the
        findings it is the first to show; returns how many findings were new."""
        new = 0
        for f in report.findings:
            target = self._barriers if f.kind == REDUNDANT_BARRIER else self._findings
            if f.key not in target:
                new += f.kind != REDUNDANT_BARRIER
            # a copy (merging later ones updates its count) that says where it is from, should it become
            # the example of its key (`FindingSet.add`)
            target.add(replace(f, **origin), f.count)
        barriers = report.stats.get("barriers")
        if barriers is not None:
            self._barriers_checked = True
            self._executed.update(barriers["executed"])
            self._needed.update(barriers["needed"])
        return new

    def __len__(self) -> int:
        return len(self._findings)

    def barriers(self) -> dict | None:
        """The barriers executed and needed over every run (as `check` puts them in `stats`), or None when
        no run checked redundant barriers."""
        if not self._barriers_checked:
            return None
        return {"executed": sorted(self._executed), "needed": sorted(self._needed)}

    def findings(self, program: Program | None) -> list[Finding]:
        """Everything found, sorted as reports sort; redundant barriers (given the kernel's `program`, when
        they were checked) only where no run needed them."""
        merged = FindingSet()
        merged.extend(self._findings.sorted())
        if program is not None:
            # Every barrier executed and never needed was reported by each run that executed it, so each
            # verdict has a per-run finding to take its example, summed count and origin from.
            runs = {f.key: f for f in self._barriers.sorted()}
            redundant = redundant_barrier_findings(
                program,
                self._executed,
                self._needed,
                examples={f.sites[0].pc: f.sites[0] for f in runs.values()},
                instances={f.sites[0].pc: f.count for f in runs.values()},
            )
            for f in redundant:
                for field in ORIGINS:
                    setattr(f, field, getattr(runs[f.key], field))
            merged.extend(redundant)
        return merged.sorted()
