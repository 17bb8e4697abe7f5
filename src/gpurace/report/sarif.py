"""The SARIF 2.1.0 report, for code-scanning services and editors.

One run; the driver lists a rule for every finding kind gpurace knows (plus
any other kind the report holds), so rule indices are stable from one report
to the next. Each finding becomes one result: its first site is the primary
location, the second site, the library frames and the inlining call sites are
related locations, and each site is also a one-step thread flow whose id
names the thread, so viewers that show code flows show which thread did what.
The same thread ids are in the result's properties for scripts. A site inside
a library header is located at the user's line that calls it
(`report.locations`), the line a code-scanning alert should mark.

Paths are those of the JSON and text reports (`debuginfo.display_path`):
paths below the current directory are relative URIs against the `%SRCROOT%`
base, other paths `file:` URIs. The run describes `%SRCROOT%` without its
absolute URI, which would make reports of one checkout differ from another's;
code-scanning services resolve it to the repository root, so run gpurace
there. `partialFingerprints` hash the kind and the (unordered) source
positions, so a finding keeps its fingerprint across runs and schedules even
when the example threads differ. The proof section of `check --prove` adds
verify's results and notifications (`report.proof`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePath
from urllib.parse import quote

import gpurace
from gpurace.detect.findings import Finding, Site, position_key
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.debuginfo import display_path
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.json_format import plain
from gpurace.report.locations import frames, function_label
from gpurace.report.model import (
    KINDS,
    SARIF_LEVELS,
    Report,
    describe_site,
    format_address,
    headline,
    kind_info,
    reported_stats,
)
from gpurace.report.proof import add_proof_to_sarif

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/gpurace/"
SRCROOT = "%SRCROOT%"
SRCROOT_DESCRIPTION = "The directory gpurace ran in; gpurace's text and JSON reports write paths relative to it too."
FINGERPRINT = "gpurace/v1"


def to_sarif(report: Report, *, stats: bool = False) -> dict:
    """The report as a SARIF 2.1.0 log (a dict ready for `json.dumps`); `stats` adds the timings (`model.TIMINGS`)."""
    kinds = list(KINDS) + sorted({f.kind for f in report.findings} - KINDS.keys())
    rule_index = {k: i for i, k in enumerate(kinds)}
    checked = report.source
    run = {
        **run_header([rule(k) for k in kinds]),
        "results": [_result(f, rule_index[f.kind], checked) for f in report.findings],
        "properties": {
            "kernel": report.kernel,
            "mangled": report.mangled,
            "launch": plain(report.launch),
            "stats": plain(reported_stats(report.stats, stats)),
        },
    }
    if checked:
        run["artifacts"] = [{"location": artifact_location(checked), "roles": ["analysisTarget"]}]
    if report.proof is not None:
        add_proof_to_sarif(run, report.proof, report.kernel, checked, rule_index)
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def run_header(rules: list[dict]) -> dict:
    """The `tool` and `originalUriBaseIds` of a run of gpurace (`check` and `verify` alike)."""
    return {
        "tool": {"driver": {"name": "gpurace", "informationUri": INFORMATION_URI, "version": gpurace.__version__, "rules": rules}},
        "originalUriBaseIds": {SRCROOT: {"description": {"text": SRCROOT_DESCRIPTION}}},
    }


def rule(kind: str) -> dict:
    """The SARIF rule of a finding kind (also `gpurace verify`'s rules)."""
    info = kind_info(kind)
    return {
        "id": kind,
        "name": "".join(w.capitalize() for w in kind.split("-")),
        "shortDescription": {"text": info.title[0].upper() + info.title[1:]},
        "fullDescription": {"text": info.description},
        "defaultConfiguration": {"level": info.level},
    }


def _result(f: Finding, rule_index: int, checked: str | None) -> dict:
    result = {
        "ruleId": f.kind,
        "ruleIndex": rule_index,
        "level": SARIF_LEVELS.get(f.severity, "warning"),
        "message": {"text": f.cause},
        "occurrenceCount": max(1, int(f.count)),
        "partialFingerprints": {FINGERPRINT: fingerprint(f, checked)},
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
    if f.same_value:
        result["properties"]["same_value"] = True
    if f.input is not None:
        result["properties"]["input"] = plain(f.input)
    if f.schedule is not None:
        result["properties"]["schedule"] = plain(f.schedule)
    if f.launch is not None:
        result["properties"]["launch"] = plain(f.launch)
    if f.sites:
        result["locations"] = [_location(f.sites[0], checked)]
        related = [_location(s, checked) for s in f.sites[1:]]
        related += [loc for s in f.sites if s.loc for loc in _chain_locations(s.loc, checked)]
        if related:
            result["relatedLocations"] = [dict(loc, id=i) for i, loc in enumerate(related)]
        result["codeFlows"] = [{"threadFlows": [_thread_flow(s, checked) for s in f.sites]}]
    return result


def _thread_ids(s: Site) -> dict:
    return {
        "thread": None if s.thread is None else list(s.thread),
        "block": None if s.block is None else list(s.block),
        "warp": int(s.warp),
        "lane": int(s.lane),
        "op": s.op,
        "scope": s.scope,
        "instruction": s.instruction,
    }


def _thread_flow(s: Site, checked: str | None) -> dict:
    if s.thread is None:
        flow = "host"
    else:
        flow = f"block ({','.join(str(v) for v in s.block)}) thread ({','.join(str(v) for v in s.thread)})"
    return {
        "id": flow,
        "locations": [{"location": _location(s, checked)}],
    }


def _location(s: Site, checked: str | None) -> dict:
    """A SARIF location for a site, described in words: the user's source position when known, always the
    function it runs in."""
    message = describe_site(s)
    loc = _location_of(frames(s.loc).lead, message, checked) if s.loc else {"message": {"text": message}}
    loc["logicalLocations"] = [
        {"name": demangle_signature(s.function).name, "decoratedName": s.function, "kind": "function"}
    ]
    return loc


def _chain_locations(loc: SourceLoc, checked: str | None) -> list[dict]:
    """Related locations for the rest of an inlining chain: each library frame below the user's line (from the
    call inward), then each call site the user's line was inlined at."""
    where = frames(loc)
    inside = [_location_of(f, f"through {function_label(f)}", checked) for f in reversed(where.inside)]
    callers = zip((where.lead, *where.outside), where.outside)
    return inside + [_location_of(outer, f"{function_label(inner)} inlined here", checked) for inner, outer in callers]


def _location_of(loc: SourceLoc, message: str, checked: str | None) -> dict:
    physical: dict = {"artifactLocation": artifact_location(loc.file, checked)}
    if loc.line > 0:
        region = {"startLine": loc.line}
        if loc.column > 0:
            region["startColumn"] = loc.column
        physical["region"] = region
    return {"physicalLocation": physical, "message": {"text": message}}


def artifact_location(path: str, checked: str | None = None) -> dict:
    """The `display_path` of `path` as an artifact location: a relative URI against %SRCROOT% for paths below the
    cwd, else an absolute `file:` URI."""
    shown = display_path(path, checked)
    if os.path.isabs(shown):
        return {"uri": Path(shown).as_uri()}
    return {"uri": quote(PurePath(shown).as_posix()), "uriBaseId": SRCROOT}


def fingerprint(f: Finding, checked: str | None = None) -> str:
    """A hash of the kind, the space and the unordered source positions (those findings are told apart by)."""
    positions = sorted(_position_key(s, checked) for s in f.sites)
    text = "|".join([f.kind, f.space or ""] + positions)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _position_key(s: Site, checked: str | None) -> str:
    if s.loc is None:
        return f"pc:{s.function}:{s.pc}"
    file, line, column = position_key(s.loc, s.pc)
    return f"{artifact_location(file, checked)['uri']}:{line}:{column}"
