"""The text and binary trace formats: parse errors name FILE:LINE, and both formats round-trip a trace exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.trace import binary, text
from gpurace.trace.replay import read_trace

TRACES = Path(__file__).resolve().parent.parent / "traces"

HEAD = "grid 2 block 64\nvar shared s 64\nvar global g 64\n"


@pytest.mark.parametrize(
    "line, message",
    [
        ("t 0 0 write s[4] 4", None),  # control: the same header with a valid line parses
        ("t 0 0 write s[3] 4", "offset 3 is not aligned"),
        ("t 0 0 write s[64] 4", "outside 's'"),
        ("t 0 0 write q[0] 4", "unknown variable 'q'"),
        ("t 2 0 read g[0] 4", "block 2 is outside the grid"),
        ("t 0 64 read g[0] 4", "thread 64 is outside the block"),
        ("t 0 0 read g[0] 3", "access size 3"),
        ("t 0 0 atomic sub g[0] 4", "unknown atomic operation 'sub'"),
        ("t 0 0 atomic add.block g[0] 4", "unknown atomic modifier 'block'"),
        ("t 0 0 acquire lock.block g", "acquire lock.SCOPE"),
        ("t 0 0 fence.warp", "fence[.sc|.acq_rel].SCOPE"),
        ("t 0 0 ld.release.gpu g[0] 4", "ld.SEMANTICS"),
        ("t 0 0 st.volatile.gpu g[0] 4", "volatile takes no scope"),
        ("t 0 0 jump", "unknown operation 'jump'"),
        ("barrier warp 0 2", "warp 2 is outside the block"),
        ("barrier warp 0 1 mask 0x1ffffffff", "not a non-zero 32-bit lane mask"),
        ("barrier grid", "expected: barrier block BLOCK"),
        ("t 0 0 write s[0] 4 @ nowhere", "FILE:LINE"),
        ("var local x 4", "var shared|global"),
        ("var shared s 8", "declared twice"),
        ("t 0 0 exit\nt 0 0 read g[0] 4", "has exited"),
        ("frobnicate", "unknown statement"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.trace"
    path.write_text(HEAD + line + "\n")
    result = CliRunner().invoke(cli, ["analyze", str(path)])
    if message is None:
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2
    number = 3 + len(line.splitlines())
    assert f"{path}:{number}: " in result.output and message in result.output, result.output
    assert "Traceback" not in result.output


def test_events_need_the_launch_first(tmp_path):
    path = tmp_path / "nolaunch.trace"
    path.write_text("# no grid\nvar global g 4\nt 0 0 read g[0] 4\n")
    result = CliRunner().invoke(cli, ["analyze", str(path)])
    assert result.exit_code == 2 and f"{path}:3: events need the launch first" in result.output


def test_missing_and_undecodable_files(tmp_path):
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "absent.trace")])
    assert result.exit_code == 2 and "cannot read trace" in result.output
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\xff\xfe\x00garbage")
    result = CliRunner().invoke(cli, ["analyze", str(junk)])
    assert result.exit_code == 2 and "neither a binary trace nor UTF-8 text" in result.output


def test_lock_operations_are_acquire_cas_and_release_exch():
    trace = text.parse(HEAD + "t 1 3 acquire lock.cta g[8]\nt 1 3 release lock.gpu g[8]\n")
    acquire, release = trace.events
    assert (acquire.kind, acquire.atomic_op, acquire.sem, acquire.scope) == (AccessKind.ATOMIC, "cas", "acquire", "cta")
    assert (release.kind, release.atomic_op, release.sem, release.scope) == (AccessKind.ATOMIC, "exch", "release", "gpu")
    assert acquire.addrs[0] == release.addrs[0] == trace.variables[1].base + 8
    assert acquire.threads[0] == 64 + 3 and acquire.size == 4


def test_warp_and_lane_follow_the_declared_block():
    trace = text.parse("grid 2 block 48\nvar shared s 64\nbarrier warp 1 1 mask 0x8001\n")
    (sync,) = trace.events
    # warp 1 of block 1 holds threads 32..47 of that block; mask bits 0 and 15
    assert sync.threads.tolist() == [48 + 32, 48 + 47]
    assert int(sync.groups[0]) == (3 << 32) | 0x8001


def same_events(a, b) -> None:
    assert len(a.events) == len(b.events)
    for x, y in zip(a.events, b.events):
        assert type(x) is type(y)
        for name in x.__slots__:
            u, v = getattr(x, name), getattr(y, name)
            if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
                assert u is not None and v is not None and np.array_equal(u, v), (x, name)
            else:
                assert u == v, (x, name)


@pytest.mark.parametrize("path", sorted(TRACES.glob("*.trace")), ids=lambda p: p.stem)
def test_text_round_trip(tmp_path, path):
    original = text.read(path)
    again = tmp_path / "again.trace"
    text.write(original, again)
    reparsed = text.read(again)
    same_events(original, reparsed)
    assert [(i.opcode, i.modifiers, i.loc) for i in original.instructions] == [(i.opcode, i.modifiers, i.loc) for i in reparsed.instructions]
    assert original.variables == reparsed.variables and (original.grid, original.block) == (reparsed.grid, reparsed.block)


@pytest.mark.parametrize("path", sorted(TRACES.glob("*.trace")), ids=lambda p: p.stem)
def test_binary_round_trip(tmp_path, path):
    original = text.read(path)
    stored = tmp_path / "stored.bin"
    binary.write(original, stored)
    loaded = read_trace(stored)
    same_events(original, loaded)
    assert [(i.opcode, i.modifiers, i.loc, i.text) for i in original.instructions] == [
        (i.opcode, i.modifiers, i.loc, i.text) for i in loaded.instructions
    ]
    assert (loaded.variables, loaded.shared_stride, loaded.owner) == (original.variables, original.shared_stride, original.owner)
    # the same findings from either file
    outs = [CliRunner().invoke(cli, ["analyze", str(p), "--format", "json"]) for p in (path, stored)]
    assert outs[0].exit_code == outs[1].exit_code
    assert json.loads(outs[0].output)["findings"] == json.loads(outs[1].output)["findings"]


def test_binary_version_is_checked(tmp_path):
    trace = text.read(TRACES / "barrier_missing.trace")
    stored = tmp_path / "t.bin"
    binary.write(trace, stored)
    with np.load(stored) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["version"] = binary.VERSION + 1
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(stored, "wb") as f:
        np.savez_compressed(f, **arrays)
    with pytest.raises(UserError, match=f"version {binary.VERSION + 1} is not supported"):
        read_trace(stored)


def test_damaged_binary_trace_is_a_user_error(tmp_path):
    stored = tmp_path / "t.bin"
    stored.write_bytes(binary.MAGIC + b"truncated")
    result = CliRunner().invoke(cli, ["analyze", str(stored)])
    assert result.exit_code == 2 and "not a readable gpurace binary trace" in result.output


def test_text_writer_splits_batches_into_lines():
    trace = text.parse(HEAD)
    trace.instructions = text.parse(HEAD + "t 0 0 read g[0] 4\n").instructions
    batch = AccessBatch(0, 0, AccessKind.READ, np.array([0, 65]), np.array([trace.variables[1].base, trace.variables[1].base + 4], dtype=np.uint64), 4, np.zeros(2, np.int8), False, None, None)
    trace.events = [batch]
    lines = text.dumps(trace).splitlines()
    assert lines[-2:] == ["t 0 0 read g[0] 4  @ <trace>:4", "t 1 1 read g[4] 4  @ <trace>:4"]


def test_readme_example_reports_what_the_readme_says(tmp_path):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("## Traces", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.trace"
    path.write_text(example)
    result = CliRunner().invoke(cli, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 1
    (finding,) = json.loads(result.output)["findings"]
    assert (finding["kind"], finding["space"]) == ("data-race", "shared")
    assert sorted(a["line"] for a in finding["accesses"]) == [21, 22]
