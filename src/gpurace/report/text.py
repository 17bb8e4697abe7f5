"""The terminal report: one compiler-style diagnostic per finding, then a summary line.

The layout follows clang and rustc because GPU programmers already read those
(and editors already turn `path:line:col:` into links):

    reduce.cu:12:5: error: data race on shared memory (s[+4]) [data-race]
      cause: ...
      write by thread (3,0,0) of block (0,0,0), warp 0 lane 3, in reduce
        --> reduce.cu:12:5
         |
      12 |     s[tid] += s[tid + 1];
         |     ^
         = inlined from reduce.cu:30:3
         = ptx: st.shared.u32 [%r5], %r6;

When gpurace chose arguments (`auto`), a line per automatic buffer says how
much of it the kernel used and a line per automatic scalar its value, just
before the summary.

Styles only mark the severity, the header and the focus line; rich drops them
when the console is not a terminal, so the plain text is what pipes and tests
see. Source lines are read from the files the `.loc` directives name (relative
names are also tried next to the checked file); when a file cannot be read the
location is printed without a snippet.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.text import Text

from gpurace.detect.findings import ERROR, PERFORMANCE, WARNING, Finding, Site
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.model import (
    SEVERITY_RANK,
    Report,
    describe_site,
    format_dims,
    format_input,
    format_schedule,
    headline,
)

CONTEXT_LINES = 2  # source lines shown above and below the focus line
TAB_WIDTH = 4

SEVERITY_STYLES = {ERROR: "bold red", WARNING: "bold yellow", PERFORMANCE: "bold cyan"}
SEVERITY_NOUNS = {ERROR: ("error", "errors"), WARNING: ("warning", "warnings"), PERFORMANCE: ("performance note", "performance notes")}


def render_text(report: Report, console: Console) -> None:
    """Print every finding of `report` as a diagnostic, then the summary line."""
    sources = SourceCache(report.source)
    for finding in report.findings:
        for line in diagnostic(finding, report, sources):
            console.print(line, soft_wrap=True)
        console.print()
    for line in automatic_arguments(report):
        console.print(line, soft_wrap=True)
    if "search" in report.stats:
        console.print(search_summary(report), soft_wrap=True)
    if "schedules" in report.launch:
        console.print(schedules_summary(report), soft_wrap=True)
    console.print(summary(report), soft_wrap=True)


def automatic_arguments(report: Report) -> list[Text]:
    """`automatic buffer out (int*): 4096 bytes used, 1 page touched` and `automatic value n (int) = 1024` lines."""
    lines = []
    for b in report.stats.get("buffers", []):
        pages = b["pages"]
        lines.append(
            Text(f"automatic buffer {b['name']}: {b['bytes_used']} bytes used, {pages} page{'' if pages == 1 else 's'} touched")
        )
    for a in report.launch.get("auto_scalars", []):
        value = "all zero bytes" if a["value"] is None else str(a["value"]).lower()
        lines.append(Text(f"automatic value {a['name']} = {value}"))
    return lines


DISCARD_REASONS = {
    "precondition": "violated a __requires",
    "step_budget": "exceeded the step budget of {step_budget} steps",
    "invalid_access": "accessed memory out of bounds or misaligned",
}


def search_summary(report: Report) -> Text:
    """`input search: 57 candidate inputs over 10 of 10 generations (population 8), searching stride (int); 12 discarded: ...`."""
    stats, config = report.stats["search"], report.launch["search"]
    text = (
        f"input search: {stats['candidates']} candidate inputs over {stats['generations']} of {config['generations']} "
        f"generations (population {config['population']}, seed {config['seed']}"
    )
    text += ", stopped early)" if stats["generations"] < config["generations"] else ")"
    text += f", searching {', '.join(stats['searched'])}" if stats["searched"] else ", nothing to search"
    discarded = stats["discarded"]
    total = sum(discarded.values())
    if total:
        reasons = ", ".join(f"{n} {DISCARD_REASONS.get(r, r).format(**stats)}" for r, n in discarded.items() if n)
        text += f"; {total} discarded: {reasons}"
    else:
        text += "; none discarded"
    return Text(text)


def schedules_summary(report: Report) -> Text:
    """`4 schedules per launch (seed 0): 2 findings first exposed by another schedule than schedule 0 (min-pc)`;
    `1 of 3 schedules per launch (seed 0; a livelock ended the exploration)` when the default exploration stopped."""
    config = report.launch["schedules"]
    if "planned" in config:
        text = f"{config['count']} of {config['planned']} schedules per launch (seed {config['seed']}; a livelock ended the exploration)"
    else:
        text = f"{config['count']} schedules per launch (seed {config['seed']})"
    if not report.findings:
        return Text(text)
    later = sum(1 for f in report.findings if f.schedule is not None and f.schedule["index"] > 0)
    return Text(f"{text}: {later} finding{'' if later == 1 else 's'} first exposed by another schedule than schedule 0 (min-pc)")


def summary(report: Report) -> Text:
    """`2 errors, 1 warning in reduce (grid 1x1x1, block 256x1x1)`, or `no issues found in ...`.

    Under an input search, a grid or block that was searched reads `grid searched`.
    """
    launch = report.launch
    where = f" in {report.kernel}"
    if "grid" in launch and "block" in launch:
        grid, block = (("searched" if d is None else format_dims(d)) for d in (launch["grid"], launch["block"]))
        where += f" (grid {grid}, block {block})"
    if report.clean:
        return Text("no issues found" + where, style="bold green")
    counts: dict[str, int] = {}
    for f in report.findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    out = Text()
    for i, severity in enumerate(sorted(counts, key=lambda s: (SEVERITY_RANK.get(s, len(SEVERITY_RANK)), s))):
        n = counts[severity]
        one, many = SEVERITY_NOUNS.get(severity, (severity, severity + "s"))
        if i:
            out.append(", ")
        out.append(f"{n} {one if n == 1 else many}", style=SEVERITY_STYLES.get(severity, "bold"))
    out.append(where)
    return out


def diagnostic(finding: Finding, report: Report, sources: SourceCache) -> list[Text]:
    """The lines of one finding: header, cause, count, then each site with its source."""
    first = finding.sites[0].loc if finding.sites else None
    header = Text()
    header.append(f"{_position(first) if first else report.source or report.kernel}: ", style="bold")
    header.append(f"{finding.severity}:", style=SEVERITY_STYLES.get(finding.severity, "bold"))
    header.append(f" {headline(finding)}", style="bold")
    header.append(f" [{finding.kind}]", style="dim")
    lines = [header, Text(f"  cause: {finding.cause}")]
    if finding.count > 1:
        lines.append(Text(f"  seen {finding.count} times; the first instance is shown", style="dim"))
    origin = [format_input(finding.input)] if finding.input is not None else []
    if finding.schedule is not None:
        origin.append(format_schedule(finding.schedule))
    if origin:
        lines.append(Text(f"  exposed by: {', '.join(origin)}"))
    for site in finding.sites:
        lines.extend(_site(site, sources))
    return lines


def _site(site: Site, sources: SourceCache) -> list[Text]:
    lines = [Text(f"  {describe_site(site)}, in {demangle_signature(site.function).name}")]
    loc = site.loc
    gutter = 0
    if loc is not None:
        lines.append(Text(f"    --> {_position(loc)}", style="cyan"))
        snippet = _snippet(loc, sources)
        gutter = len(str(loc.line + CONTEXT_LINES))
        lines.extend(snippet)
        chain = loc.chain()
        for inner, outer in zip(chain, chain[1:]):
            inlined = f"in {inner.function} inlined from" if inner.function else "inlined from"
            lines.append(Text(f"    {' ' * gutter} = {inlined} {_position(outer)}"))
    lines.append(Text(f"    {' ' * gutter} = ptx: {site.instruction}", style="dim"))
    return lines


def _snippet(loc: SourceLoc, sources: SourceCache) -> list[Text]:
    """The focus line with CONTEXT_LINES around it and a caret under the column; empty when unreadable."""
    text = sources.lines(loc.file)
    if text is None or not 1 <= loc.line <= len(text):
        return []
    first = max(1, loc.line - CONTEXT_LINES)
    last = min(len(text), loc.line + CONTEXT_LINES)
    width = len(str(loc.line + CONTEXT_LINES))
    out = [Text(f"    {' ' * width} |", style="blue")]
    for n in range(first, last + 1):
        line = Text(f"    {n:>{width}} | ", style="blue")
        source = text[n - 1].expandtabs(TAB_WIDTH)
        line.append(source, style="bold" if n == loc.line else "")
        out.append(line)
        if n == loc.line and loc.column > 0:
            indent = len(text[n - 1][: loc.column - 1].expandtabs(TAB_WIDTH))
            caret = Text(f"    {' ' * width} | ", style="blue")
            caret.append(" " * indent + "^", style="bold green")
            out.append(caret)
    return out


def _position(loc: SourceLoc) -> str:
    """`path:line:col` (`path:line` when the column is unknown), the path relative to the cwd when inside it."""
    text = f"{display_path(loc.file)}:{loc.line}"
    return f"{text}:{loc.column}" if loc.column > 0 else text


def display_path(path: str) -> str:
    """`path` relative to the current directory when it lies below it, else unchanged."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith("..") else rel


class SourceCache:
    """Source files read once per report; a file that cannot be read is remembered as None.

    A relative name in `.loc` is relative to where the compiler ran, which is
    usually the directory of the checked file, so that is tried after the cwd.
    """

    def __init__(self, checked: str | None):
        self._base = Path(checked).parent if checked else None
        self._files: dict[str, list[str] | None] = {}

    def lines(self, name: str) -> list[str] | None:
        if name not in self._files:
            self._files[name] = self._read(name)
        return self._files[name]

    def _read(self, name: str) -> list[str] | None:
        candidates = [Path(name)]
        if self._base is not None and not Path(name).is_absolute():
            candidates.append(self._base / name)
        for path in candidates:
            try:
                return path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
        return None
