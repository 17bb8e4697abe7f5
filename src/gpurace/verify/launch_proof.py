"""`check --prove`: verify the checked launch's kernel for its grid and block, then simulate what is left.

verify answers for every input of one launch shape (the check's grid and
block; every parameter value, memory content and schedule), the simulation
for the one input and the schedules it runs. `check --prove` puts the two
together in one report (`Report.proof`, built by `attach_proof`):

- An object verify proves race-free needs no witness. When every object is
  proved and the barriers are proved uniform, no schedule can show a race,
  so the check runs one schedule instead of exploring several: that run is
  still needed for what verify does not prove (out-of-bounds accesses,
  uninitialised reads, deadlocks, invalid warp synchronisation, assertions).
  A `--schedules` the user gives is run as given.
- An alarm whose two lines the simulation reports a race between (a
  divergence alarm: a barrier divergence at its line) is `found`: the
  simulation is its witness. Any other alarm keeps verify's status,
  certain or possible (witness launches are not run here: `gpurace verify`
  does that).
- An unknown object (or kernel) has the simulation's answer only.

A race the simulation reports on an object verify proved race-free (or any
race at all when everything was proved; a barrier divergence when barriers
were proved uniform) contradicts the proof: a bug in verify, or one of the
assumptions verify makes (distinct pointer parameters point to distinct
buffers; accesses stay within their object) does not hold for the launch.
The finding stays, and the proof lists the contradiction for the renderers
to show loudly.

verify's race rules are those of the `cuda` memory model. The `ptx` model
calls a race only what `cuda` calls one, so the proofs hold under it too;
`scord`'s rules differ, and `--prove` refuses it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Module
from gpurace.report.model import Report
from gpurace.report.proof import FOUND
from gpurace.sim.launch import as_dims, select_kernel
from gpurace.verify import verify_module
from gpurace.verify.confirm import race_lines, source_positions
from gpurace.verify.report import verdicts_as_dict
from gpurace.verify.verdicts import KernelVerdict

SCHEMA = "gpurace-check-proof/1"
PROVED_BARRIERS = ("no barriers", "proved uniform")
PROVED_MODELS = ("cuda", "ptx")
SCHEDULE_REASONS = ("proved", "asked", "not proved")
"""Why the check ran the schedules it ran: one because everything was proved, as many as `--schedules` asked, or
check's default because something was not proved."""


@dataclass
class LaunchProof:
    """verify's verdict on one kernel for one launch shape, the notes on that scope, and the time it took."""

    verdict: KernelVerdict
    scope: list[str]
    seconds: float
    benign_same_value: bool = False  # proved under GPUVerify's convention: same-value races contradict nothing

    @property
    def proved(self) -> bool:
        """Every object race-free and the barriers uniform: no schedule of any input can race."""
        v = self.verdict
        return v.unknown is None and v.barriers in PROVED_BARRIERS and all(o.verdict == "race-free" for o in v.objects)


def prove_launch(
    module: Module,
    *,
    kernel: str | None,
    grid,
    block,
    model: str,
    benign_same_value: bool = False,
    deadline: float | None = None,
) -> LaunchProof:
    """verify's verdict on the kernel `check` launches (`kernel` as `check` names it), for its grid and block
    (`benign_same_value`: two stores of the same value do not race, as `verify --benign-same-value`; `deadline`:
    the check's wall-clock budget, see `verify_module`)."""
    if model not in PROVED_MODELS:
        raise UserError(
            f"--prove proves race freedom under the cuda memory model (which also covers ptx); --model {model} "
            "has rules of its own: check without --prove, or with --model cuda"
        )
    start = time.perf_counter()
    mangled = select_kernel(module, kernel)
    (verdict,), notes = verify_module(
        module,
        kernel=mangled,
        grid=as_dims(grid, "--grid"),
        block=as_dims(block, "--block"),
        confirm=False,
        benign_same_value=benign_same_value,
        deadline=deadline,
    )
    return LaunchProof(verdict, notes.get(verdict.name, []), time.perf_counter() - start, benign_same_value)


def attach_proof(report: Report, proof: LaunchProof, *, asked: bool) -> None:
    """Give `report` its proof section, each alarm's status set against the report's findings (`asked`: the
    number of schedules was given, not chosen), and verify's time in `stats["verify_seconds"]`."""
    (section,) = verdicts_as_dict(report.source or "", [proof.verdict], {proof.verdict.name: proof.scope})["kernels"]
    findings = [f for f in report.findings if not (proof.benign_same_value and f.same_value)]
    races = race_lines(findings)
    diverged = {where for f in findings if f.kind == "barrier-divergence" for where in source_positions(f) or ()}
    for alarm in section["barrier_divergence"]:
        _settle(alarm, alarm["first"] in diverged)
    for obj in section["objects"]:
        for alarm in obj["alarms"]:
            _settle(alarm, tuple(sorted((alarm["first"], alarm["second"]))) in races)
    reason = "asked" if asked else "proved" if proof.proved else "not proved"
    count = report.launch.get("schedules", {}).get("count", 1)
    report.proof = {
        "schema": SCHEMA,
        **section,
        "proved": proof.proved,
        "schedules": {"count": count, "reason": reason},
        "contradictions": _contradictions(section, proof, findings),
    }
    report.stats["verify_seconds"] = round(proof.seconds, 4)


def _settle(alarm: dict, found: bool) -> None:
    """Keep verify's status as `verify_status`; the status is `found` when the simulation showed the alarm."""
    alarm["verify_status"] = alarm["status"]
    if found:
        alarm["status"] = FOUND


def _contradictions(section: dict, proof: LaunchProof, findings) -> list[dict]:
    """The findings that contradict a proof: a data race on an object proved race-free (any data race when
    everything was proved: its object may go by another name in the simulation), a barrier divergence where
    barriers were proved uniform."""
    free = {o["object"] for o in section["objects"] if o["verdict"] == "race-free"}
    out = []
    for f in findings:
        obj = f.address.allocation if f.address is not None else None
        if f.kind == "data-race" and (proof.proved or obj in free):
            out.append({"kind": f.kind, "object": obj, "lines": list(source_positions(f) or ())})
        elif f.kind == "barrier-divergence" and section["unknown"] is None and section["barriers"] == "proved uniform":
            out.append({"kind": f.kind, "object": None, "lines": list(source_positions(f) or ())})
    return out
