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
         = in accumulate inlined from reduce.cu:30:3
         = ptx: st.shared.u32 [%r5], %r6;

A site inside a library header (`cuda::atomic_ref`, the toolkit's atomics)
leads with the user's line that calls it, followed by `= through FUNCTION
at header:line:col` lines for the library function it calls and the one the
instruction is in (`report.locations`). Paths are relative to the current
directory when the file lies below it, absolute otherwise, as in the JSON and
SARIF reports.

When gpurace chose arguments (`auto`), a line per automatic buffer says how
much of it the kernel used and a line per automatic scalar its value (and a
line the size and use of automatic dynamic shared memory), just before the
summary; with `stats`, a statistics line with the counters and
the time taken comes before the summary too. The proof section of `check
--prove` comes after the automatic arguments (`report.proof`).

Styles only mark the severity, the header and the focus line; rich drops them
when the console is not a terminal, so the plain text is what pipes and tests
see. Source lines are read from the files the `.loc` directives name (relative
names are also tried next to the checked file); when a file cannot be read the
location is printed without a snippet.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from gpurace.detect.findings import ERROR, PERFORMANCE, WARNING, Finding, Site
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.debuginfo import display_path, read_named_source
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.benign import STAT as SAME_VALUE_DROPPED
from gpurace.report.locations import frames, function_label
from gpurace.report.proof import proof_text
from gpurace.report.model import (
    SEVERITY_RANK,
    Report,
    describe_site,
    format_dims,
    format_input,
    format_launch,
    format_schedule,
    headline,
)
from gpurace.words import plural

CONTEXT_LINES = 2  # source lines shown above and below the focus line
TAB_WIDTH = 4

SEVERITY_STYLES = {ERROR: "bold red", WARNING: "bold yellow", PERFORMANCE: "bold cyan"}
SEVERITY_NOUNS = {ERROR: ("error", "errors"), WARNING: ("warning", "warnings"), PERFORMANCE: ("performance note", "performance notes")}

COUNTERS = (("threads", "thread"), ("steps", "step"), ("thread_instructions", "thread-instruction"), ("events", "event"))
"""The simulation counters of `Report.stats` that the statistics line shows, with their nouns."""


def render_text(report: Report, console: Console, *, stats: bool = False) -> None:
    """Print every finding of `report` as a diagnostic, then the summary line; `stats` adds a statistics line
    (counters and time taken) before it."""
    sources = SourceCache(report.source)
    for finding in report.findings:
        for line in diagnostic(finding, report, sources):
            console.print(line, soft_wrap=True)
        console.print()
    for line in automatic_arguments(report):
        console.print(line, soft_wrap=True)
    if report.proof is not None:
        for line in proof_text(report.proof):
            console.print(line, soft_wrap=True)
    if "search" in report.stats:
        console.print(search_summary(report), soft_wrap=True)
    if "schedules" in report.launch:
        console.print(schedules_summary(report), soft_wrap=True)
    for note in report.launch.get("notes", []):
        console.print(Text(f"note: {note}"), soft_wrap=True)
    if stats:
        console.print(statistics(report), soft_wrap=True)
    console.print(summary(report), soft_wrap=True)


def statistics(report: Report) -> Text:
    """`statistics: 512 threads, 19 steps, 9526 thread-instructions, 3 events in 0.029 s` (the counters present)."""
    counts = ", ".join(plural(report.stats[key], noun) for key, noun in COUNTERS if key in report.stats)
    seconds = report.stats.get("seconds")
    proof = report.stats.get("verify_seconds")
    text = f"statistics: {counts}" + (f" in {seconds} s" if seconds is not None else "")
    return Text(text + (f", after {proof} s of verify (--prove)" if proof is not None else ""))


def automatic_arguments(report: Report) -> list[Text]:
    """`automatic buffer out (int*): 4096 bytes used, 1 page touched`, `automatic value n (int) = 1024` and
    `automatic dynamic shared memory buf: 512 bytes per block (the most a first run with 49152 bytes used)` lines."""
    lines = []
    for b in report.stats.get("buffers", []):
        lines.append(Text(f"automatic buffer {b['name']}: {plural(b['bytes_used'], 'byte')} used, {plural(b['pages'], 'page')} touched"))
    for a in report.launch.get("auto_scalars", []):
        value = "all zero bytes" if a["value"] is None else str(a["value"]).lower()
        if a.get("note"):
            value += f" ({a['note']})"
        lines.append(Text(f"automatic value {a['name']} = {value}"))
    shared = report.stats.get("dynamic_shared")
    if shared is not None:
        lines.append(
            Text(
                f"automatic dynamic shared memory {shared['name']}: {plural(shared['bytes'], 'byte')} per block "
                f"(the most a first run with {shared['first_run_bytes']} bytes used)"
            )
        )
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
        f"input search: {plural(stats['candidates'], 'candidate input')} over {stats['generations']} of "
        f"{plural(config['generations'], 'generation')} (population {config['population']}, seed {config['seed']}"
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


ENDED_BY = {
    "timeout": "the time budget",
    "livelock": "a livelock",
    "locks": "every access inside a critical section of one lock, on a path no lock order changes,",
}
"""What ended a default exploration before its last schedule (`check._check_schedules`), as the summary says it."""


def schedules_summary(report: Report) -> Text:
    """`4 schedules per launch (seed 0): 2 findings first exposed by another schedule than schedule 0 (min-pc)`;
    `1 of 3 schedules per launch (seed 0; a livelock ended the exploration)` when the default exploration stopped
    (or `the time budget ended ...` when `--timeout` did)."""
    config = report.launch["schedules"]
    if "planned" in config:
        why = ENDED_BY.get(config.get("ended_by"), ENDED_BY["livelock"])
        text = f"{config['count']} of {plural(config['planned'], 'schedule')} per launch (seed {config['seed']}; {why} ended the exploration)"
    else:
        text = f"{plural(config['count'], 'schedule')} per launch (seed {config['seed']})"
    if not report.findings:
        return Text(text)
    later = sum(1 for f in report.findings if f.schedule is not None and f.schedule["index"] > 0)
    return Text(f"{text}: {plural(later, 'finding')} first exposed by another schedule than schedule 0 (min-pc)")


def summary(report: Report) -> Text:
    """`2 errors, 1 warning in reduce (grid 1x1x1, block 256x1x1)`, or `no issues found in ...`, followed by
    `(3 suppressed)` when a suppressions file took findings out (`report.suppressions`), and
    `(2 same-value races dropped)` when `--benign-same-value` did (`report.benign`).

    Under an input search, a grid or block that was searched reads `grid searched`.
    """
    launch = report.launch
    where = f" in {report.kernel}"
    if "grid" in launch and "block" in launch:
        grid, block = (("searched" if d is None else format_dims(d)) for d in (launch["grid"], launch["block"]))
        where += f" (grid {grid}, block {block})"
    if report.stats.get("suppressed"):
        where += f" ({report.stats['suppressed']} suppressed)"
    if report.stats.get(SAME_VALUE_DROPPED):
        where += f" ({plural(report.stats[SAME_VALUE_DROPPED], 'same-value race')} dropped)"
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
        out.append(plural(n, one, many), style=SEVERITY_STYLES.get(severity, "bold"))
    out.append(where)
    return out


def diagnostic(finding: Finding, report: Report, sources: SourceCache) -> list[Text]:
    """The lines of one finding: header, cause, count, then each site with its source."""
    first = finding.sites[0].loc if finding.sites else None
    checked = report.source
    where = _position(frames(first).lead, checked) if first else (display_path(checked) if checked else report.kernel)
    header = Text()
    header.append(f"{where}: ", style="bold")
    header.append(f"{finding.severity}:", style=SEVERITY_STYLES.get(finding.severity, "bold"))
    header.append(f" {headline(finding)}", style="bold")
    header.append(f" [{finding.kind}]", style="dim")
    lines = [header, Text(f"  cause: {finding.cause}")]
    if finding.count > 1:
        lines.append(Text(f"  seen {finding.count} times; the first instance is shown", style="dim"))
    origin = [format_input(finding.input)] if finding.input is not None else []
    if finding.schedule is not None:
        origin.append(format_schedule(finding.schedule))
    if finding.launch is not None:
        origin.append(format_launch(finding.launch))
    if origin:
        lines.append(Text(f"  exposed by: {', '.join(origin)}"))
    for site in finding.sites:
        lines.extend(_site(site, sources, checked))
    return lines


def _site(site: Site, sources: SourceCache, checked: str | None) -> list[Text]:
    """A site's thread and function, then the user's line with its snippet, the library frames below it and the
    call sites above it (`locations.Frames`), and the PTX instruction."""
    function = demangle_signature(site.function).name if site.function else "?"
    lines = [Text(f"  {describe_site(site)}, in {function}")]
    gutter = 0
    if site.loc is not None:
        where = frames(site.loc)
        lines.append(Text(f"    --> {_position(where.lead, checked)}", style="cyan"))
        lines.extend(_snippet(where.lead, sources))
        gutter = len(str(where.lead.line + CONTEXT_LINES))
        lines += [Text(f"    {' ' * gutter} = {text}") for text in _library_frames(where.inside, checked)]
        for inner, outer in zip((where.lead, *where.outside), where.outside):
            inlined = f"in {function_label(inner)} inlined from" if inner.function else "inlined from"
            lines.append(Text(f"    {' ' * gutter} = {inlined} {_position(outer, checked)}"))
    if site.thread is not None:  # a host call has no PTX
        lines.append(Text(f"    {' ' * gutter} = ptx: {site.instruction}", style="dim"))
    return lines


def _library_frames(inside: tuple[SourceLoc, ...], checked: str | None) -> list[str]:
    """`through FUNCTION at header:line:col` for the library function the user's line calls and for the one the
    instruction is in, with a count of the frames between them.

    Library code nests deeply (six frames for `atomic_ref::fetch_add`) and the
    frames between the two ends say little; JSON and SARIF list them all.
    """
    outward = list(reversed(inside))
    ends = outward if len(outward) <= 2 else [outward[0], outward[-1]]
    lines = [f"through {function_label(f)} at {_position(f, checked)}" for f in ends]
    if len(outward) > 2:
        lines.insert(1, f"... {plural(len(outward) - 2, 'more library frame')}")
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


def _position(loc: SourceLoc, checked: str | None) -> str:
    """`path:line:col` (`path:line` when the column is unknown), the path as `debuginfo.display_path` writes it."""
    text = f"{display_path(loc.file, checked)}:{loc.line}"
    return f"{text}:{loc.column}" if loc.column > 0 else text


class SourceCache:
    """Source files read once per report; a file that cannot be read is remembered as None.

    A relative name in `.loc` is relative to where the compiler ran, which is
    usually the directory of the checked file (`debuginfo.resolve_source`).
    """

    def __init__(self, checked: str | None):
        self._checked = checked
        self._files: dict[str, list[str] | None] = {}

    def lines(self, name: str) -> list[str] | None:
        if name not in self._files:
            self._files[name] = self._read(name)
        return self._files[name]

    def _read(self, name: str) -> list[str] | None:
        text = read_named_source(name, self._checked)
        return text.splitlines() if text is not None else None
