"""`gpurace verify`'s report, as text for people and JSON for tools.

The text names, per kernel, the launch scope and then one line per memory
object (race-free, race, unknown and why); each alarm follows with its two
source lines, its status (certain or possible), its labels and the witness
the solver found. The JSON holds the same, field for field.
"""

from __future__ import annotations

import json

from gpurace.verify.verdicts import Alarm, KernelVerdict

SCHEMA = "gpurace-verify/1"


UNDECIDED = 4
"""Exit status when nothing was found but something could not be decided: not a proof, and not an alarm."""


def exit_status(verdicts: list[KernelVerdict]) -> int:
    """1 when any alarm was raised, 0 when everything was proved race-free, UNDECIDED otherwise."""
    if any(o.alarms for v in verdicts for o in v.objects) or any(v.divergence for v in verdicts):
        return 1
    undecided = any(v.unknown or v.barriers == "unknown" or any(o.verdict == "unknown" for o in v.objects) for v in verdicts)
    return UNDECIDED if undecided else 0


def as_json(path: str, verdicts: list[KernelVerdict], notes: dict[str, list[str]]) -> str:
    return json.dumps(verdicts_as_dict(path, verdicts, notes), indent=2, sort_keys=False) + "\n"


def verdicts_as_dict(path: str, verdicts: list[KernelVerdict], notes: dict[str, list[str]]) -> dict:
    """The JSON report as a dict (also the SARIF run's `properties.verify`)."""
    return {
        "schema": SCHEMA,
        "file": path,
        "kernels": [
            {
                "kernel": v.name,
                "launch": v.launch,
                "scope": notes.get(v.name, []),
                "unknown": v.unknown,
                "barriers": v.barriers,
                "barrier_divergence": [alarm_as_dict(a) for a in v.divergence],
                "warp_barriers": v.warp_barriers,
                "unmodelled_synchronisation": v.unmodelled,
                "objects": [
                    {
                        "object": o.name, "kind": o.kind, "verdict": o.verdict, "reason": o.reason,
                        "benign_same_value": o.benign, "alarms": [alarm_as_dict(a) for a in o.alarms],
                    }
                    for o in v.objects
                ],
            }
            for v in verdicts
        ],
    }


def alarm_as_dict(a: Alarm) -> dict:
    """An alarm as the JSON report writes it (also what the text and SARIF renderers of alarms read)."""
    return {
        "kind": a.kind,
        "status": a.status,
        "first": a.first,
        "second": a.second,
        "accesses": list(a.accesses) if a.accesses else None,
        "cause": a.cause,
        "labels": {"CI": a.ci, "DI": a.di},
        "approximations": a.approximations,
        "witness": a.witness.as_dict(),
        "reproduce": a.reproduce,
    }


def as_text(path: str, verdicts: list[KernelVerdict], notes: dict[str, list[str]]) -> str:
    lines: list[str] = []
    for v in verdicts:
        lines.append(f"kernel {v.name}")
        for note in notes.get(v.name, []):
            lines.append(f"  scope: {note}")
        if v.unknown:
            lines.append(f"  unknown: {v.unknown}")
            continue
        if v.barriers != "no barriers":
            lines.append(f"  barriers: {v.barriers}")
        for a in v.divergence:
            lines.extend(alarm_lines(alarm_as_dict(a)))
        if v.warp_barriers != "no warp barriers":
            lines.append(f"  warp barriers: {v.warp_barriers}")
        for o in v.objects:
            lines.append(object_line(o.name, o.kind, o.verdict, o.reason))
            for pair in o.benign:
                lines.append(f"    benign: both threads write the same value: {pair}")
            for a in o.alarms:
                lines.extend(alarm_lines(alarm_as_dict(a)))
        if v.unmodelled and any(o.alarms for o in v.objects):
            lines.append(f"  note: not modelled, so alarms not confirmed stay possible: {', '.join(v.unmodelled)}")
    return "\n".join(lines) + "\n"


def object_line(name: str, kind: str, verdict: str, reason: str | None) -> str:
    """`  s (shared): race-free`, or `  p (global): unknown: REASON`: an object's verdict in the text report."""
    space = "shared" if kind == "shared" else "global"
    return f"  {name} ({space}): {verdict}" + (f": {reason}" if reason else "")


def alarm_lines(a: dict) -> list[str]:
    """An alarm (as `verdicts_as_dict` writes it) in the text report: its head line, then `alarm_details`."""
    if a["kind"] == "data-race":
        head = f"    {a['status']} race: {a['accesses'][0]} at {a['first']} / {a['accesses'][1]} at {a['second']}"
    else:
        head = f"    {a['status']} barrier divergence at {a['first']}"
    return [head, *alarm_details(a)]


def alarm_details(a: dict) -> list[str]:
    """The lines under an alarm's head: labels and approximations, cause, witness, reproducing command."""
    labels = ", ".join(x for x, ok in a["labels"].items() if ok) or "none"
    approximated = a["approximations"]
    out = [f"      labels: {labels}" + (f"; approximated: {'; '.join(approximated)}" if approximated else "")]
    if a["cause"]:
        out.append(f"      cause: {a['cause']}")
    witness = a["witness"]
    for i, t in enumerate(witness["threads"], 1):
        iters = "".join(f", iteration {k} of the loop at {w}" for w, k in t["iterations"].items())
        offset = f", byte offset {t['offset']}" if "offset" in t else ""
        out.append(f"      thread {i}: threadIdx {tuple(t['thread'])}, blockIdx {tuple(t['block'])}{iters}{offset}")
    if witness["parameters"]:
        out.append("      parameters: " + ", ".join(f"{k}={v}" for k, v in witness["parameters"].items()))
    if witness["dimensions"]:
        out.append("      launch: " + ", ".join(f"{k}={v}" for k, v in witness["dimensions"].items()))
    if a["reproduce"]:
        out.append(f"      confirmed by simulating the witness's launch: {a['reproduce']}")
    return out
