"""The JSON report: a stable, documented shape for scripts, and a lossless record of a check.

Every field a renderer needs is written out (each access carries its thread,
block, warp, lane, operation, source position with the whole inlining chain,
and PTX instruction), so `from_json` rebuilds the same `Report` and a result
recorded today can be rendered again later in any format. Values that came
from NumPy (counters, details) are turned into plain Python numbers first.
"""

from __future__ import annotations

import json

from gpurace.detect.findings import Address, Finding, Site
from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.model import Report


def to_json(report: Report) -> dict:
    """The report as JSON-compatible data (see the module docstring for why it is this complete)."""
    return {
        "kernel": report.kernel,
        "mangled": report.mangled,
        "source": report.source,
        "launch": plain(report.launch),
        "findings": [_finding(f) for f in report.findings],
        "stats": plain(report.stats),
    }


def dumps(report: Report) -> str:
    """The JSON report as text, indented for people who open it."""
    return json.dumps(to_json(report), indent=2)


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


def _finding(f: Finding) -> dict:
    return {
        "kind": f.kind,
        "severity": f.severity,
        "space": f.space,
        "cause": f.cause,
        "count": int(f.count),
        "accesses": [_access(s) for s in f.sites],
        "address": _address(f.address),
        "details": plain(f.details),
        "input": plain(f.input),
        "schedule": plain(f.schedule),
    }


def _address(a: Address | None) -> dict | None:
    if a is None:
        return None
    return {"allocation": a.allocation, "offset": int(a.offset), "address": int(a.address)}


def _access(s: Site) -> dict:
    loc = s.loc
    return {
        "thread": list(s.thread),
        "block": list(s.block),
        "warp": int(s.warp),
        "lane": int(s.lane),
        "op": s.op,
        "scope": s.scope,
        "file": loc.file if loc else None,
        "line": loc.line if loc else None,
        "column": loc.column if loc else None,
        "inlined_at": [_position(c) for c in loc.chain()[1:]] if loc else [],
        # The function the instruction belongs to, readable; the PTX symbol follows.
        "function": demangle_signature(s.function).name,
        "ptx_function": s.function,
        # The inlined function the source position lies in, when the PTX names it.
        "source_function": loc.function if loc else None,
        "instruction": s.instruction,
        "pc": int(s.pc),
    }


def _position(loc: SourceLoc) -> dict:
    return {"file": loc.file, "line": loc.line, "column": loc.column, "function": loc.function}


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
    )


def _read_access(d: dict) -> Site:
    loc = None
    if d["file"] is not None:
        outer = None
        for pos in reversed(d["inlined_at"]):
            outer = SourceLoc(pos["file"], int(pos["line"]), int(pos["column"]), outer, pos["function"])
        loc = SourceLoc(d["file"], int(d["line"]), int(d["column"]), outer, d.get("source_function"))
    return Site(
        pc=int(d["pc"]),
        thread=_triple(d["thread"]),
        block=_triple(d["block"]),
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
