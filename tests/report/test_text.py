"""The terminal renderer: compiler-style headers, source snippets with carets, the summary line."""

import io

from report_samples import (
    deadlock_without_lines,
    make_report,
    out_of_bounds,
    race,
    redundant_barrier,
    volatile_race,
)
from rich.console import Console

from gpurace.report.text import render_text
from gpurace.words import plural


def render(report, terminal=False) -> str:
    out = io.StringIO()
    render_text(report, Console(file=out, width=100, force_terminal=terminal, color_system="standard" if terminal else None))
    return out.getvalue()


def caret_column(lines: list[str], focus: str) -> int:
    """Index of the caret in the line after the snippet line containing `focus`, and of `focus` itself."""
    i = next(i for i, line in enumerate(lines) if line.endswith(focus) and "|" in line)
    caret_line = lines[i + 1]
    assert caret_line.strip().endswith("^"), caret_line
    return caret_line.index("^"), lines[i].index(focus)


def test_race_header_names_position_severity_space_and_allocation(source_file):
    text = render(make_report(source_file, [race(source_file)]))
    assert text.splitlines()[0] == f"{source_file}:8:5: error: data race on shared memory (s[+4]) [data-race]"
    assert "  cause: no synchronisation between the two accesses" in text
    assert "seen 3 times" in text


def test_race_shows_both_sites_with_threads_source_lines_and_instructions(source_file):
    text = render(make_report(source_file, [race(source_file)]))
    assert "write by thread (1,0,0) of block (0,0,0), warp 0 lane 1, in reduce" in text
    assert "read by thread (0,0,0) of block (0,0,0), warp 0 lane 0, in reduce" in text
    assert f"--> {source_file}:8:5" in text
    assert f"--> {source_file}:2:13" in text
    assert " 8 |     s[tid] = tid;" in text
    assert " 2 |     s[i] += s[i + 1];" in text
    assert "= ptx: st.shared.u32 [%r4], %r1;" in text
    assert "= ptx: ld.shared.u32 %r5, [%r4+4];" in text
    # the write comes before the read, as in the finding
    assert text.index("s[tid] = tid;") < text.index("s[i] += s[i + 1];")


def test_snippet_has_context_lines_and_a_caret_under_the_column(source_file):
    lines = render(make_report(source_file, [race(source_file)])).splitlines()
    caret, start = caret_column(lines, "    s[tid] = tid;")
    assert caret == start + 4  # column 5
    caret, start = caret_column(lines, "    s[i] += s[i + 1];")
    assert caret == start + 12  # column 13: the second s
    # two lines of context on each side of line 8
    for n, code in [(6, "__shared__ int s[256];"), (7, "int tid = threadIdx.x;"), (9, "accumulate(s, tid);"), (10, "out[tid] = s[tid];")]:
        assert any(line.lstrip().startswith(f"{n} |") and line.endswith(code) for line in lines), n


def test_caret_follows_tab_expansion(source_file):
    lines = render(make_report(source_file, [volatile_race(source_file)])).splitlines()
    caret, start = caret_column(lines, "    flag[0] = tid;")
    assert caret == start + 4  # the tab before column 2 is shown as four spaces


def test_inlined_site_names_the_call_site_and_the_inlined_function(source_file):
    text = render(make_report(source_file, [race(source_file)]))
    assert f"= in accumulate inlined from {source_file}:9:5" in text


def test_out_of_bounds_has_one_site(source_file):
    text = render(make_report(source_file, [out_of_bounds(source_file)]))
    assert text.splitlines()[0] == f"{source_file}:10:5: error: out-of-bounds access to global memory (out[+1024]) [out-of-bounds]"
    assert text.count("-->") == 1
    assert "write by thread (255,0,0) of block (0,0,0), warp 7 lane 31" in text
    assert "out[tid] = s[tid];" in text


def test_summary_counts_findings_by_severity(source_file):
    findings = [race(source_file), out_of_bounds(source_file), volatile_race(source_file)]
    text = render(make_report(source_file, findings))
    assert text.rstrip().splitlines()[-1] == "2 errors, 1 warning in reduce (grid 1x1x1, block 256x1x1)"
    assert f"{source_file}:11:2: warning: data race on global memory (flag[+0])" in text


def test_performance_findings_are_counted_as_notes(source_file):
    text = render(make_report(source_file, [redundant_barrier(source_file)]))
    assert f"{source_file}:12:5: performance: redundant barrier [redundant-barrier]" in text
    assert text.rstrip().splitlines()[-1] == "1 performance note in reduce (grid 1x1x1, block 256x1x1)"


def test_clean_report_says_no_issues_found(source_file):
    text = render(make_report(source_file, []))
    assert text.strip() == "no issues found in reduce (grid 1x1x1, block 256x1x1)"


def test_unreadable_source_prints_location_without_snippet(tmp_path):
    missing = tmp_path / "gone.cu"
    text = render(make_report(missing, [race(missing)]))
    assert f"--> {missing}:8:5" in text
    assert f"--> {missing}:2:13" in text
    assert "|" not in text
    assert "= ptx: st.shared.u32 [%r4], %r1;" in text


def test_sites_without_line_information(tmp_path):
    text = render(make_report(None, [deadlock_without_lines()]))
    assert text.splitlines()[0] == "reduce: error: deadlock [deadlock]"
    assert "barrier by thread (0,0,0)" in text
    assert "exit by thread (64,0,0) of block (0,0,0), warp 2 lane 0" in text
    assert "= ptx: ret;" in text
    assert "-->" not in text


def test_paths_below_the_cwd_are_relative(source_file, monkeypatch):
    monkeypatch.chdir(source_file.parent)
    text = render(make_report(source_file, [race(source_file)]))
    assert text.startswith("reduce.cu:8:5: error: data race")
    assert "= in accumulate inlined from reduce.cu:9:5" in text


def test_relative_source_names_are_found_next_to_the_checked_file(source_file, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    text = render(make_report(source_file, [race("reduce.cu")]))
    assert "reduce.cu:8:5: error:" in text
    assert " 8 |     s[tid] = tid;" in text


def test_no_colour_codes_unless_the_console_is_a_terminal(source_file):
    report = make_report(source_file, [race(source_file), volatile_race(source_file)])
    assert "\x1b[" not in render(report)
    coloured = render(report, terminal=True)
    assert "\x1b[1;31merror:" in coloured  # bold red
    assert "\x1b[1;33mwarning:" in coloured  # bold yellow


def test_counts_of_one_are_singular(source_file):
    report = make_report(source_file, [race(source_file)])
    report.stats["buffers"] = [{"name": "out (int*)", "bytes_used": 1, "pages": 1}]
    report.stats["search"] = {"candidates": 1, "generations": 1, "searched": [], "discarded": {}, "step_budget": 10}
    report.launch["search"] = {"population": 1, "generations": 1, "seed": 0}
    report.launch["schedules"] = {"count": 1, "planned": 1, "seed": 0}
    report.findings[0].schedule = {"index": 1, "policy": "reverse", "seed": None}
    text = render(report)
    assert "automatic buffer out (int*): 1 byte used, 1 page touched" in text
    assert "input search: 1 candidate input over 1 of 1 generation (population 1, seed 0)" in text
    assert "1 of 1 schedule per launch" in text and ": 1 finding first exposed by another schedule" in text
    assert text.rstrip().splitlines()[-1] == "1 error in reduce (grid 1x1x1, block 256x1x1)"
    assert "1 bytes" not in text and "1 pages" not in text


def test_plural():
    assert [plural(n, "byte") for n in (0, 1, 2)] == ["0 bytes", "1 byte", "2 bytes"]
    assert plural(2, "match", "matches") == "2 matches"
