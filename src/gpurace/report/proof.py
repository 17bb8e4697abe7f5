"""The proof section of `check --prove` (`Report.proof`, built by `verify.launch_proof`) in text and SARIF.

Text: after the findings, a `proof` block in the words of `gpurace verify`'s
report (one line per memory object; alarms with their lines, and the
labels and witness of those the simulation did not find), a line saying how
many schedules ran and why, and first of all, in bold red, any finding that
contradicts a proof. SARIF: as `gpurace verify --format sarif` does it
(`verify.sarif`), undecided objects are notes of rule `verify-unknown` and
the alarms the simulation did not find are results (a found alarm is
already the simulation's finding); the section itself is the run's
`properties.proof`, and each contradiction an error notification of the
run's invocation.

verify's renderers are imported where used: `gpurace.verify` imports
`gpurace.check`, which imports this package.
"""

from __future__ import annotations

from rich.text import Text

from gpurace.report.model import format_dims
from gpurace.words import plural

SCHEDULE_WHY = {
    "proved": "no other can show a race, as every object is proved race-free and the barriers uniform (the run "
    "checks what verify does not prove: out-of-bounds accesses, uninitialised reads, deadlocks, warp synchronisation)",
    "asked": "the number asked for (--schedules; --record records one)",
    "not proved": "check's default, as not everything was proved",
}
FOUND = "found"
"""An alarm's status once the simulation reported the same race (or divergence): the simulation is its witness."""
FOUND_STATUS = "found by the simulation"
ASSUMPTIONS = (
    "a bug in gpurace verify, or one of its assumptions (distinct pointer parameters point to distinct buffers; "
    "accesses stay within their object) does not hold for this launch"
)


def proof_text(proof: dict) -> list[Text]:
    """The proof block of the text report."""
    from gpurace.verify.report import alarm_lines, object_line

    launch = proof["launch"]
    grid = format_dims([launch[f"nctaid.{d}"] for d in "xyz"])
    block = format_dims([launch[f"ntid.{d}"] for d in "xyz"])
    lines = [Text(f"proof for every input of this launch shape (grid {grid}, block {block}):", style="bold")]
    lines += [Text(contradiction_message(c), style="bold red") for c in proof["contradictions"]]
    body = [f"  scope: {note}" for note in proof["scope"]]
    if proof["unknown"]:
        body.append(f"  unknown: {proof['unknown']}")
    elif proof["barriers"] != "no barriers":
        body.append(f"  barriers: {proof['barriers']}")
    for a in proof["barrier_divergence"]:
        body += _alarm(a, alarm_lines)
    for o in proof["objects"]:
        body.append(object_line(o["object"], o["kind"], o["verdict"], o["reason"]))
        for a in o["alarms"]:
            body += _alarm(a, alarm_lines)
    schedules = proof["schedules"]
    body.append(f"  schedules: {plural(schedules['count'], 'schedule')} ran, {SCHEDULE_WHY[schedules['reason']]}")
    return lines + [Text(line) for line in body]


def _alarm(a: dict, alarm_lines) -> list[str]:
    """An alarm the simulation found: its head only (the finding above gives the rest); any other: verify's lines."""
    if a["status"] != FOUND:
        return alarm_lines(a)
    if a["kind"] == "data-race":
        return [f"    race {FOUND_STATUS}: {a['accesses'][0]} at {a['first']} / {a['accesses'][1]} at {a['second']} (verify: {a['verify_status']})"]
    return [f"    barrier divergence at {a['first']} {FOUND_STATUS} (verify: {a['verify_status']})"]


def contradiction_message(c: dict) -> str:
    """`CONTRADICTION: ...`: a finding on what verify proved, said as loudly as a report can."""
    what = f"a data race on {c['object']}" if c["kind"] == "data-race" and c["object"] else c["kind"].replace("-", " ")
    proved = "barriers uniform" if c["kind"] == "barrier-divergence" else "it race-free"
    where = f" ({' / '.join(c['lines'])})" if c["lines"] else ""
    return f"  CONTRADICTION: the simulation reports {what}{where}, but verify proved {proved}: {ASSUMPTIONS}"


def add_proof_to_sarif(run: dict, proof: dict, kernel: str, checked: str | None, rule_index: dict[str, int]) -> None:
    """Add the proof section to a SARIF run of `check` (see the module docstring)."""
    from gpurace.verify.sarif import UNKNOWN_RULE, alarm_result, position_location, unknown_result

    path = checked or ""
    rules = run["tool"]["driver"]["rules"]
    unknown_index = len(rules)
    rules.append(UNKNOWN_RULE)
    results = run["results"]
    if proof["unknown"]:
        results.append(unknown_result(kernel, proof["unknown"], path, unknown_index))
    for obj, alarms in [(None, proof["barrier_divergence"]), *((o["object"], o["alarms"]) for o in proof["objects"])]:
        for a in alarms:
            if a["status"] != FOUND:
                places = [position_location(w, path) for w in (a["first"], a["second"]) if w]
                results.append(alarm_result(a, kernel, obj, rule_index[a["kind"]], places))
    for o in proof["objects"]:
        if o["verdict"] == "unknown":
            results.append(unknown_result(kernel, f"{o['object']}: {o['reason']}", path, unknown_index))
    run["properties"]["proof"] = proof
    if proof["contradictions"]:
        notifications = [
            {"level": "error", "message": {"text": contradiction_message(c).strip()}, "locations": [position_location(w, path) for w in c["lines"]]}
            for c in proof["contradictions"]
        ]
        run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": notifications}]
