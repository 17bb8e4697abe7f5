"""Damaged traces are input errors: exit status 2 with a message naming the file and the field (or line).

One test per class of damage the fuzz tests (tests/fuzz/test_fuzz_traces.py)
found crashing `gpurace analyze` before the readers checked their input:
members of the wrong dtype, shape or length, codes and indices out of range,
`ev_start` offsets that do not add up, npy headers and zip members that
promise more memory than there is, metadata of the wrong type or range, and
launches or addresses that would make the detectors allocate terabytes.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

from gpurace.cli import cli
from gpurace.errors import UserError
from gpurace.limits import Limits
from gpurace.trace import binary, text

SOURCE = """grid 2 block 64
var shared s 256
var global g 64
var global lock 4
t 0 0 write s[0] 4
barrier block 0
t 0 1 read s[0] 4
t 1 5 acquire lock.gpu lock
t 1 5 write g[0] 4
t 1 5 release lock.gpu lock
barrier warp 1 0
t 1 0 fence.gpu
t 1 0 exit
"""
# Rows of SOURCE's events: 0 write s, 1 barrier, 2 read s, 3 cas, 4 write g, 5 exch, 6 warp sync, 7 fence, 8 exit.
CAS, WRITE_G, WARP_SYNC, EXIT = 3, 4, 6, 8


@pytest.fixture(scope="module")
def members(tmp_path_factory) -> dict[str, np.ndarray]:
    """The members of SOURCE stored as a binary trace (a valid one: see test_valid_trace_is_analysed)."""
    path = tmp_path_factory.mktemp("seed") / "seed.trace"
    binary.write(text.parse(SOURCE), path)
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def npy(array: np.ndarray, shape: tuple | None = None) -> bytes:
    """`array` as .npy bytes; a `shape` of another size makes the header lie about the data."""
    buf = io.BytesIO()
    if shape is None:
        np.lib.format.write_array(buf, array)
    else:
        np.lib.format.write_array_header_1_0(buf, {"descr": array.dtype.str, "fortran_order": False, "shape": shape})
        buf.write(array.tobytes())
    return buf.getvalue()


def store(path, members: dict[str, np.ndarray], **raw: bytes) -> None:
    """A binary trace of `members`, with the members in `raw` stored as the .npy bytes given."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, array in members.items():
            z.writestr(f"{name}.npy", raw.get(name) or npy(array))


def meta_of(members) -> dict:
    return json.loads(members["meta"].tobytes())


def with_meta(members, meta) -> dict[str, np.ndarray]:
    return {**members, "meta": np.frombuffer(json.dumps(meta).encode("utf-8", "surrogatepass"), dtype=np.uint8)}


def with_value(members, name: str, index: int, value) -> dict[str, np.ndarray]:
    column = members[name].astype(np.int64 if value < 2**63 else np.uint64)
    column[index] = value
    return {**members, name: column}


def assert_refused(path, *fragments: str) -> None:
    result = CliRunner().invoke(cli, ["analyze", str(path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and f"gpurace: error: {path}" in result.output, result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


def test_valid_trace_is_analysed(tmp_path, members):
    path = tmp_path / "t.trace"
    store(path, members)
    result = CliRunner().invoke(cli, ["analyze", str(path)])
    assert result.exit_code in (0, 1), result.output


# ---------------------------------------------------------------------- the zip and the npy headers


def test_npy_header_promising_petabytes_is_refused_before_allocating(tmp_path, members):
    path = tmp_path / "t.trace"
    store(path, members, threads=npy(members["threads"], (2**50,)))
    assert_refused(path, "member threads", "promises 1,125,899,906,842,624 elements")


def test_zip_bomb_is_refused_from_the_declared_sizes(tmp_path, members):
    path = tmp_path / "t.trace"
    store(path, {**members, "values": np.zeros(1 << 20, dtype=np.uint64)})  # 8 MiB that compress to a few KiB
    assert path.stat().st_size < 1 << 16
    with pytest.raises(UserError, match=r"t\.trace: the trace's members needs 8\.\d MiB, more than the memory budget"):
        binary.read(path, Limits(max_memory=4 << 20))


@pytest.mark.parametrize(
    "name, array, message",
    [
        ("space", np.zeros(3, dtype=np.float64), "member space: holds float64, not integers"),
        ("ev_seq", np.zeros((3, 3), dtype=np.int64), "member ev_seq: expected a 1-D column, got shape (3, 3)"),
        ("meta", np.zeros(4, dtype=np.int32), "member meta: expected UTF-8 bytes, got int32"),
        ("ev_type", np.full(9, 2**64 - 1, dtype=np.uint64), "member ev_type: row 0 holds 18446744073709551615, beyond the int64 range"),
    ],
)
def test_member_of_the_wrong_dtype_or_shape(tmp_path, members, name, array, message):
    path = tmp_path / "t.trace"
    store(path, {**members, name: array})
    assert_refused(path, message)


def test_missing_member(tmp_path, members):
    path = tmp_path / "t.trace"
    store(path, {k: v for k, v in members.items() if k != "pcs"})
    assert_refused(path, "member pcs is missing")


# ---------------------------------------------------------------------- metadata


def _deep_location(depth: int):
    loc = None
    for _ in range(depth):
        loc = ["f.cu", 1, 0, None, loc]
    return loc


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: m.update(grid=[0, 1, 1]), "meta.grid[0]: 0 is outside 1.."),
        (lambda m: m.update(grid="2"), "meta.grid: expected a list of 3, got '2'"),
        (lambda m: m.update(block=[2048, 1, 1]), "meta.grid/block: block x dimension 2048 is outside 1..1,024"),
        (lambda m: m.update(grid=[2**31 - 1, 65535, 1]), "meta.grid/block: the launch: 9,007,061,811,593,280 threads are more than"),
        (lambda m: m.update(shared_stride=-1), "meta.shared_stride: -1 is outside 0..4,294,967,296"),
        (lambda m: m.pop("instructions"), "meta.instructions: missing"),
        (lambda m: m["variables"][0].__setitem__(1, "local"), "meta.variables[0].space: expected 'shared' or 'global', got 'local'"),
        (lambda m: m["variables"][1].__setitem__(3, 2**63), "meta.variables[1].size: 9223372036854775808 is outside"),
        (lambda m: m["instructions"][0].__setitem__(2, 10**9), "meta.instructions[0].operands: 1000000000 is outside 0..1,024"),
        (lambda m: m["instructions"][0].__setitem__(6, _deep_location(200)), "an inlining chain deeper than 128"),
        (lambda m: m["instructions"][0].__setitem__(3, 1.5), "meta.instructions[0].ptx_line: expected an integer, got 1.5"),
        (lambda m: m.update(kernel="\udcff"), "meta.kernel: '\\udcff' is not valid Unicode text"),
        (lambda m: m.update(version=True), "binary trace version True is not supported"),
    ],
)
def test_metadata_field_of_the_wrong_type_or_range(tmp_path, members, edit, message):
    meta = meta_of(members)
    edit(meta)
    path = tmp_path / "t.trace"
    store(path, with_meta(members, meta))
    assert_refused(path, message)


def test_metadata_nested_too_deep_for_json(tmp_path, members):
    path = tmp_path / "t.trace"
    store(path, {**members, "meta": np.frombuffer(b"[" * 100_000 + b"]" * 100_000, dtype=np.uint8)})
    assert_refused(path, "not a gpurace binary trace (its metadata is not UTF-8 JSON")


# ---------------------------------------------------------------------- event columns


@pytest.mark.parametrize(
    "name, index, value, message",
    [
        ("ev_type", 0, 7, "member ev_type: row 0 holds 7, not one of 0..3"),
        ("ev_start", 2, 1, "member ev_start: row 1: event 1 would have 0 threads"),
        ("ev_start", 0, -5, "member ev_start: row 0 holds -5: the first event starts at lane 0"),
        ("ev_pc", WRITE_G, 10_000, f"member ev_pc: row {WRITE_G} holds 10000, outside 0.."),
        ("ev_scope", CAS, 9, f"member ev_scope: row {CAS} holds 9, not one of 0..4"),
        ("ev_scope", WRITE_G, 3, f"row {WRITE_G}: a strong access needs a scope, a weak one has none"),
        ("ev_op", WRITE_G, 1, f"row {WRITE_G}: an atomic access needs an operation, other accesses have none"),
        ("ev_size", WRITE_G, 3, f"member ev_size: row {WRITE_G} holds 3, not one of 1, 2, 4, 8, 16, 32"),
        ("ev_kind", 7, 5, None),  # a fence's kind is unused
        ("ev_values_width", CAS, 2, f"member ev_values_width: row {CAS} holds 2: one value per thread"),
        ("ev_compare_width", WRITE_G, 1, f"member ev_compare_width: row {WRITE_G} holds 1: one value per thread, 0 when absent"),
        ("ev_seq", 2, 0, "member ev_seq: row 2: sequence numbers must rise"),
        ("threads", 0, 128, "member threads: lane 0 holds 128, outside 0..127"),
        ("threads", 2, 0, "member threads: event 1 names thread 0 twice"),
        ("space", 0, 3, "member space: lane 0 holds 3, not one of 0, 1"),
        ("pcs", 0, -1, "member pcs: lane 0 holds -1, outside 0.."),
        ("groups", 0, 1, "member groups: lane 0: barrier group 1 is not the block of thread 0"),
        ("groups", 64, 0, "member groups: lane 64: warp group 0x0 is not warp 2 with a mask naming lane 0"),
    ],
)
def test_event_column_value_out_of_range(tmp_path, members, name, index, value, message):
    path = tmp_path / "t.trace"
    store(path, with_value(members, name, index, value))
    if message is None:
        result = CliRunner().invoke(cli, ["analyze", str(path)])
        assert result.exit_code in (0, 1), result.output
    else:
        assert_refused(path, "damaged binary trace", message)


@pytest.mark.parametrize(
    "edits, message",
    [
        ((("ev_compare_size", WRITE_G, 4), ("ev_compare_width", WRITE_G, 1)), f"row {WRITE_G}: a write access has no compare"),
        ((("ev_values_size", CAS, 0), ("ev_values_width", CAS, 0)), f"row {CAS}: a compare-and-swap with a compare value needs the value it read"),
    ],
)
def test_value_column_where_the_simulator_gives_none(tmp_path, members, edits, message):
    for name, index, value in edits:
        members = with_value(members, name, index, value)
    path = tmp_path / "t.trace"
    store(path, members)
    assert_refused(path, message)


def test_lane_column_of_the_wrong_length(tmp_path, members):
    path = tmp_path / "t.trace"
    store(path, {**members, "addrs": members["addrs"][:-1]})
    assert_refused(path, "member addrs: 4 lanes, but its events have 5 threads")


def test_thread_exiting_twice_or_acting_after_its_exit(tmp_path, members):
    path = tmp_path / "t.trace"
    twice = with_value(members, "ev_type", EXIT - 1, 3)  # the fence of thread 64 becomes a second exit
    store(path, twice)
    assert_refused(path, "member threads: thread 64 exits twice")
    late = with_value(twice, "ev_type", EXIT, 2)  # and its exit a fence after it
    late = with_value(with_value(late, "ev_scope", EXIT, 3), "ev_sem", EXIT, 6)
    store(path, late)
    assert_refused(path, "member threads: event 8 names thread 64, which exited at event 7")


@pytest.mark.parametrize(
    "lane, delta, message",
    [
        (0, 1, "lane 0: address 0x4000000000000001 is not aligned to its 4-byte access"),
        (0, 1 << 32, "lane 0: shared address 0x4000000100000000 is in block 1, its thread 0 in block 0"),
        (0, 256, "lane 0: shared address 0x4000000000000100 lies past the 256 bytes of shared memory per block"),
        (3, 64, "lane 3: global address"),
        (3, 1 << 62, "lane 3 holds 0x4000001000000000, not a canonical global address"),
    ],
)
def test_address_outside_its_memory(tmp_path, members, lane, delta, message):
    path = tmp_path / "t.trace"
    addrs = members["addrs"].astype(np.uint64)
    addrs[lane] = np.uint64(int(addrs[lane]) + delta)
    store(path, {**members, "addrs": addrs})
    assert_refused(path, "member addrs", message)


# ---------------------------------------------------------------------- what a trace asks of memory


def test_text_launch_beyond_max_threads_names_the_line(tmp_path):
    path = tmp_path / "big.trace"
    path.write_text("# a launch of 2**41 threads\ngrid 2147483647 block 1024\n")
    assert_refused(path, f"{path}:2: the launch: 2,199,023,254,528 threads are more than gpurace simulates")


def test_text_variable_past_the_canonical_shared_offsets(tmp_path):
    path = tmp_path / "big.trace"
    path.write_text("grid 1 block 32\nvar shared s 5000000000\n")
    assert_refused(path, f"{path}:2: variable 's' would end at 0x12a05f200, past the end of the shared memory of a block")


def test_text_source_line_too_long_for_a_number(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text(f"grid 1 block 32\nvar global g 4\nt 0 0 read g 4 @ f.cu:{'9' * 5000}\n")
    assert_refused(path, f"{path}:3: expected a source location FILE:LINE[:COLUMN]")


def test_shadow_memory_beyond_the_budget_is_refused_before_the_detector_runs(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("grid 1024 block 1\nvar shared s 4000000000\nt 1023 0 write s[3999999996] 4\n")
    assert_refused(path, f"{path}: the detectors' shadow of 3.7 TiB of accessed memory needs")


def test_text_trace_is_read_only_as_far_as_the_budget_holds_its_events():
    with pytest.raises(UserError, match=r"/dev/zero: a text trace of more than 16\.0 KiB: its events would need more than the memory budget of 1\.0 MiB"):
        text.read("/dev/zero", Limits(max_memory=1 << 20))


# ---------------------------------------------------------------------- source file names, which reports look up


@pytest.mark.parametrize(
    "name, problem",
    [("a\x00b.cu", "holds a NUL character"), ("/" + "a" * 300 + "/include/k.cu", "has a component longer than 255 bytes")],
    ids=["nul", "long"],
)
def test_source_file_name_the_system_cannot_look_up(tmp_path, members, name, problem):
    path = tmp_path / "t.trace"
    path.write_text(f"grid 1 block 64\nvar shared s 64\nt 0 0 write s[0] 4 @ {name}:3\nt 0 33 write s[0] 4\n")
    assert_refused(path, f"{path}:3: source file", f"names no file: it {problem}")
    meta = meta_of(members)
    meta["instructions"][0][6][0] = name
    store(path, with_meta(members, meta))
    assert_refused(path, "meta.instructions[0].loc.file", f"names no file: it {problem}")
