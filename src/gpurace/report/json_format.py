"""The JSON report: a stable, documented shape for scripts, and a lossless record of a check.

Every field a renderer needs is written out (each access carries its thread,
block, warp, lane, operation, source position with the whole inlining chain,
and PTX instruction), so `from_json` rebuilds the same `Report` and a result
recorded today can be rendered again later in any format. Values that came
from NumPy (counters, details) are turned into plain Python numbers first.

An access's `file`, `line` and `column` are the user's frame of its inlining
chain (`report.locations`); `library_frames` holds the frames inside library
headers below it and `inlined_at` the call sites above it, both innermost
first. Paths follow `debuginfo.display_path`, and timings are written only
when asked (`stats=True`), so one check run twice writes the same bytes.
A report of `check --prove` has a `proof` key (`Report.proof`, schema
`gpurace-check-proof/1`); other reports have none.
"""

from __future__ import annotations

import json

from gpurace.detect.findings import Address, Finding, Site
from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.debuginfo import display_path
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.locations import frames
from gpurace.report.model import Report, reported_stats


def to_json(report: Report, *, stats: bool = False) -> dict:
    """The report as JSON-compatible data (see the module docstring for why it is this complete);
    `stats` adds the timings (`model.TIMINGS`)."""
    checked = report.source
    data = {
        "kernel": report.kernel,
        "mangled": report.mangled,
        "source": display_path(checked) if checked else None,
        "launch": plain(report.launch),
        "findings": [_finding(f, checked) for f in report.findings],
        "stats": plain(reported_stats(report.stats, stats)),
    }
    if report.proof is not None:
        data["proof"] = plain(report.proof)
    return data


def dumps(report: Report, *, stats: bool = False) -> str:
    """The JSON report as text, indented for people who open it; `stats` as for `to_json`."""
    return json.dumps(to_json(report, stats=stats), indent=2)


def from_json(data: dict) -> Report:
    """The Report that `to_json` wrote; a UserError names what is missing when `data` is not one."""
    try:
        return Report(
            kernel=data["kernel"],
            mangled=data["mangled"],
            source=data["source"],
            launch=dict(data["launch"]),
            findings=[_read_finding(f) for f in data["findings"]],
            stats=dict(data["stats"]),
            proof=data.get("proof"),
        )
    except KeyError as e:
        raise UserError(f"not a gpurace JSON report: missing key {e.args[0]!r}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise UserError(f"not a gpurace JSON report: {e}") from None


def plain(value):
    """`value` with NumPy scalars and arrays, tuples and non-string keys turned into JSON types."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "tolist"):  # NumPy scalar or array
        return plain(value.tolist())
    return value


# ------------------------------------------------------------------ writing


def _finding(f: Finding, checked: str | None) -> dict:
    return {
        "kind": f.kind,
        "severity": f.severity,
        "space": f.space,
        "cause": f.cause,
        "same_value": f.same_value,
        "count": int(f.count),
        "accesses": [_access(s, checked) for s in f.sites],
        "address": _address(f.address),
        "details": plain(f.details),
        "input": plain(f.input),
        "schedule": plain(f.schedule),
        "launch": plain(f.launch),
    }


def _address(a: Address | None) -> dict | None:
    if a is None:
        return None
    return {"allocation": a.allocation, "offset": int(a.offset), "address": int(a.address)}


def _access(s: Site, checked: str | None) -> dict:
    where = frames(s.loc) if s.loc else None
    lead = where.lead if where else None
    return {
        "thread": None if s.thread is None else list(s.thread),
        "block": None if s.block is None else list(s.block),
        "warp": int(s.warp),
        "lane": int(s.lane),
        "op": s.op,
        "scope": s.scope,
        "file": display_path(lead.file, checked) if lead else None,
        "line": lead.line if lead else None,
        "column": lead.column if lead else None,
        "inlined_at": [_position(c, checked) for c in where.outside] if where else [],
        "library_frames": [_position(c, checked) for c in where.inside] if where else [],
        # The function the instruction belongs to, readable; the PTX symbol follows.
        "function": demangle_signature(s.function).name,
        "ptx_function": s.function,
        # The inlined function the source position lies in, when the PTX names it.
        "source_function": lead.function if lead else None,
        "instruction": s.instruction,
        "pc": int(s.pc),
    }


def _position(loc: SourceLoc, checked: str | None) -> dict:
    return {"file": display_path(loc.file, checked), "line": loc.line, "column": loc.column, "function": loc.function}


# ------------------------------------------------------------------ reading


def _read_finding(d: dict) -> Finding:
    address = d["address"]
    return Finding(
        kind=d["kind"],
        severity=d["severity"],
        cause=d["cause"],
        sites=tuple(_read_access(a) for a in d["accesses"]),
        space=d["space"],
        address=Address(address["allocation"], int(address["offset"]), int(address["address"])) if address else None,
        count=int(d["count"]),
        details=dict(d.get("details", {})),
        input=d.get("input"),
        schedule=d.get("schedule"),
        launch=d.get("launch"),
        same_value=bool(d.get("same_value", False)),
    )


def _read_access(d: dict) -> Site:
    loc = None
    if d["file"] is not None:
        lead = {"file": d["file"], "line": d["line"], "column": d["column"], "function": d.get("source_function")}
        for pos in reversed([*d.get("library_frames", []), lead, *d["inlined_at"]]):
            loc = SourceLoc(pos["file"], int(pos["line"]), int(pos["column"]), loc, pos["function"])
    return Site(
        pc=int(d["pc"]),
        thread=None if d["thread"] is None else _triple(d["thread"]),
        block=None if d["block"] is None else _triple(d["block"]),
        warp=int(d["warp"]),
        lane=int(d["lane"]),
        op=d["op"],
        scope=d["scope"],
        loc=loc,
        instruction=d["instruction"],
        function=d.get("ptx_function", d["function"]),
    )


def _triple(values) -> tuple[int, int, int]:
    x, y, z = (int(v) for v in values)
    return (x, y, z)
