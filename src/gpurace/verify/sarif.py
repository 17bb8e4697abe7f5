"""`gpurace verify --format sarif`: alarms and undecided objects as a SARIF 2.1.0 log for code-scanning services.

Each alarm is a result of rule `data-race` or `barrier-divergence` (the rules
`check` reports under, with the same descriptions), at its first source line
with the second as a related location; certain and confirmed alarms are
errors, possible ones warnings, and the result's properties hold the status,
labels, approximations, witness and reproducing command. An object verify
could not decide is a `note` of rule `verify-unknown` with the reason, so
that a code-scanning service shows what was not proved. Race-free objects
produce no result: the run's properties list every verdict.
"""

from __future__ import annotations

import hashlib

from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.sarif import SCHEMA_URI, artifact_location, rule, run_header
from gpurace.verify.report import alarm_as_dict, verdicts_as_dict
from gpurace.verify.verdicts import Alarm, KernelVerdict

UNKNOWN_RULE = {
    "id": "verify-unknown",
    "name": "VerifyUnknown",
    "shortDescription": {"text": "Not proved race-free"},
    "fullDescription": {"text": "gpurace verify could neither prove the object race-free nor find a race; the message says why."},
    "defaultConfiguration": {"level": "note"},
}


def as_sarif(path: str, verdicts: list[KernelVerdict], notes: dict[str, list[str]]) -> dict:
    kinds = ["data-race", "barrier-divergence"]
    results = []
    for v in verdicts:
        for a in v.divergence:
            results.append(_alarm(a, v.name, None, 1, path))
        for o in v.objects:
            results += [_alarm(a, v.name, o.name, 0, path) for a in o.alarms]
            if o.verdict == "unknown":
                results.append(unknown_result(v.name, f"{o.name}: {o.reason}", path))
        if v.unknown:
            results.append(unknown_result(v.name, v.unknown, path))
    run = {
        **run_header([*(rule(k) for k in kinds), UNKNOWN_RULE]),
        "artifacts": [{"location": artifact_location(path), "roles": ["analysisTarget"]}],
        "results": results,
        "properties": {"verify": verdicts_as_dict(path, verdicts, notes)},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _alarm(a: Alarm, kernel: str, obj: str | None, rule: int, path: str) -> dict:
    return alarm_result(alarm_as_dict(a), kernel, obj, rule, [_location(loc, path) for loc in a.locations])


def alarm_result(a: dict, kernel: str, obj: str | None, rule: int, locations: list[dict]) -> dict:
    """The SARIF result of an alarm (as `verdicts_as_dict` writes it) on `obj` (None: a barrier divergence), at
    `locations` (its first line, then its second)."""
    what = f"{a['status']} race on {obj}" if obj else f"{a['status']} barrier divergence"
    text = f"{what} in {kernel}" + (f": {a['cause']}" if a["cause"] else "")
    result = {
        "ruleId": a["kind"],
        "ruleIndex": rule,
        "level": "warning" if a["status"] == "possible" else "error",
        "message": {"text": text},
        "locations": locations[:1],
        "partialFingerprints": {"gpurace/verify/v1": _fingerprint(a["kind"], kernel, obj, [a["first"], a["second"] or ""])},
        "properties": {
            "status": a["status"],
            "labels": a["labels"],
            "approximations": a["approximations"],
            "witness": a["witness"],
            "reproduce": a["reproduce"],
        },
    }
    if len(locations) > 1:
        result["relatedLocations"] = [{"id": 1, **locations[1]}]
    return result


def unknown_result(kernel: str, reason: str, path: str, rule: int = 2) -> dict:
    """The `note` result of rule `verify-unknown` (at index `rule` of the run's rules) for what was not decided."""
    return {
        "ruleId": UNKNOWN_RULE["id"],
        "ruleIndex": rule,
        "level": "note",
        "message": {"text": f"{kernel}: {reason}"},
        "locations": [{"physicalLocation": {"artifactLocation": artifact_location(path)}}],
        "partialFingerprints": {"gpurace/verify/v1": _fingerprint("unknown", kernel, reason, [])},
    }


def _location(loc: SourceLoc | None, path: str) -> dict:
    if loc is None:
        return {"physicalLocation": {"artifactLocation": artifact_location(path)}}
    physical = {"artifactLocation": artifact_location(loc.file)}
    if loc.line > 0:
        physical["region"] = {"startLine": loc.line, **({"startColumn": loc.column} if loc.column > 0 else {})}
    return {"physicalLocation": physical}


def position_location(where: str, path: str) -> dict:
    """A SARIF location for a position as an alarm's `first`/`second` write it (`file:line`, or `PTX line N`
    without a source position: then the checked file `path`)."""
    file, _, line = where.rpartition(":")
    if where.startswith("PTX line") or not file or not line.isdigit():
        return {"physicalLocation": {"artifactLocation": artifact_location(path)}}
    return {"physicalLocation": {"artifactLocation": artifact_location(file), "region": {"startLine": int(line)}}}


def _fingerprint(kind: str, kernel: str, what: str | None, places: list[str]) -> str:
    text = "|".join([kind, kernel, what or "", *sorted(places)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
