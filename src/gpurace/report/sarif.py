"""The SARIF 2.1.0 report, for code-scanning services and editors.

One run; the driver lists a rule for every finding kind gpurace knows (plus
any other kind the report holds), so rule indices are stable from one report
to the next. Each finding becomes one result: its first site is the primary
location, the second site and the inlining call sites are related locations,
and each site is also a one-step thread flow whose id names the thread, so
viewers that show code flows show which thread did what. The same thread ids
are in the result's properties for scripts.

Paths below the current directory are written relative to it, against the
`%SRCROOT%` base whose absolute URI the run records; other paths become
`file:` URIs. `partialFingerprints` hash the kind and the (unordered) source
positions, so a finding keeps its fingerprint across runs and schedules even
when the example threads differ.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import quote

import gpurace
from gpurace.detect.findings import Finding, Site
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.json_format import plain
from gpurace.report.model import KINDS, SARIF_LEVELS, Report, describe_site, format_address, headline, kind_info

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/gpurace/"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "gpurace/v1"


def to_sarif(report: Report) -> dict:
    """The report as a SARIF 2.1.0 log (a dict ready for `json.dumps`)."""
    kinds = list(KINDS) + sorted({f.kind for f in report.findings} - KINDS.keys())
    rule_index = {k: i for i, k in enumerate(kinds)}
    run = {
        "tool": {
            "driver": {
                "name": "gpurace",
                "informationUri": INFORMATION_URI,
                "version": gpurace.__version__,
                "rules": [_rule(k) for k in kinds],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri() + "/"}},
        "results": [_result(f, rule_index[f.kind]) for f in report.findings],
        "properties": {
            "kernel": report.kernel,
            "mangled": report.mangled,
            "launch": plain(report.launch),
            "stats": plain(report.stats),
        },
    }
    if report.source:
        run["artifacts"] = [{"location": artifact_location(report.source), "roles": ["analysisTarget"]}]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule(kind: str) -> dict:
    info = kind_info(kind)
    return {
        "id": kind,
        "name": "".join(w.capitalize() for w in kind.split("-")),
        "shortDescription": {"text": info.title[0].upper() + info.title[1:]},
        "fullDescription": {"text": info.description},
        "defaultConfiguration": {"level": info.level},
    }


def _result(f: Finding, rule_index: int) -> dict:
    result = {
        "ruleId": f.kind,
        "ruleIndex": rule_index,
        "level": SARIF_LEVELS.get(f.severity, "warning"),
        "message": {"text": f.cause},
        "occurrenceCount": max(1, int(f.count)),
        "partialFingerprints": {FINGERPRINT: fingerprint(f)},
        "properties": {
            "headline": headline(f),
            "space": f.space,
            "accesses": [_thread_ids(s) for s in f.sites],
        },
    }
    if f.address is not None:
        result["properties"]["allocation"] = f.address.allocation
        result["properties"]["offset"] = int(f.address.offset)
        result["properties"]["location"] = format_address(f.address)
    if f.input is not None:
        result["properties"]["input"] = plain(f.input)
    if f.schedule is not None:
        result["properties"]["schedule"] = plain(f.schedule)
    if f.sites:
        result["locations"] = [_location(f.sites[0], message=describe_site(f.sites[0]))]
        related = [_location(s, message=describe_site(s)) for s in f.sites[1:]]
        related += [_call_site(inner, outer) for s in f.sites if s.loc for inner, outer in zip(s.loc.chain(), s.loc.chain()[1:])]
        if related:
            result["relatedLocations"] = [dict(loc, id=i) for i, loc in enumerate(related)]
        result["codeFlows"] = [{"threadFlows": [_thread_flow(s) for s in f.sites]}]
    return result


def _thread_ids(s: Site) -> dict:
    return {
        "thread": list(s.thread),
        "block": list(s.block),
        "warp": int(s.warp),
        "lane": int(s.lane),
        "op": s.op,
        "scope": s.scope,
        "instruction": s.instruction,
    }


def _thread_flow(s: Site) -> dict:
    thread = ",".join(str(v) for v in s.thread)
    block = ",".join(str(v) for v in s.block)
    return {
        "id": f"block ({block}) thread ({thread})",
        "locations": [{"location": _location(s, message=describe_site(s))}],
    }


def _location(s: Site, message: str | None = None) -> dict:
    """A SARIF location for a site: the source position when known, always the function it runs in."""
    loc = _location_of(s.loc, message) if s.loc else ({"message": {"text": message}} if message else {})
    loc["logicalLocations"] = [
        {"name": demangle_signature(s.function).name, "decoratedName": s.function, "kind": "function"}
    ]
    return loc


def _call_site(inner: SourceLoc, outer: SourceLoc) -> dict:
    """The related location of a call that was inlined, naming the inlined function when the PTX does."""
    return _location_of(outer, f"{inner.function} inlined here" if inner.function else "inlined here")


def _location_of(loc: SourceLoc, message: str | None) -> dict:
    physical: dict = {"artifactLocation": artifact_location(loc.file)}
    if loc.line > 0:
        region = {"startLine": loc.line}
        if loc.column > 0:
            region["startColumn"] = loc.column
        physical["region"] = region
    out: dict = {"physicalLocation": physical}
    if message:
        out["message"] = {"text": message}
    return out


def artifact_location(path: str) -> dict:
    """A relative URI against %SRCROOT% for paths below the cwd, else an absolute `file:` URI."""
    absolute = Path(os.path.abspath(path))
    try:
        rel = absolute.relative_to(Path.cwd())
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(rel.as_posix()), "uriBaseId": SRCROOT}


def fingerprint(f: Finding) -> str:
    """A hash of the kind, the space and the unordered source positions (paths relative when possible)."""
    positions = sorted(_position_key(s) for s in f.sites)
    text = "|".join([f.kind, f.space or ""] + positions)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _position_key(s: Site) -> str:
    if s.loc is None:
        return f"pc:{s.function}:{s.pc}"
    uri = artifact_location(s.loc.file)["uri"]
    return f"{uri}:{s.loc.line}:{s.loc.column}"
