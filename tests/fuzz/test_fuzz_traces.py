"""Fuzzing `gpurace analyze`: a damaged trace, binary or text, ends in exit status 0, 1 or 2, never in a crash.

Valid traces come first: binary ones recorded from corpus kernels through
the Python API (as `check --record` records them: locks with the values
they read, fences, barriers on shared memory, warp syncs and collectives,
inlined source locations), and the hand-written text traces of
tests/traces/, also stored as binary. Then they are damaged the way a
fuzzer or a broken disk would:

* structured edits of the npz members (drop one, change its dtype or shape,
  set elements to extremes, shorten or lengthen it) and of the metadata JSON
  (drop a key or element, give it a value of another type or an extreme);
* npy headers that promise far more data than their member holds (an
  allocation of petabytes if believed);
* flipped bytes anywhere in the zip file;
* edits of text traces line by line (drop, repeat, swap; replace a word by
  an extreme number or another keyword; insert lines built from the grammar).

Each mutator takes its choices from a `Choices`, so that Hypothesis shrinks
a failing case. The property is `fuzzing.assert_handled` with one of the
detectors.
"""

from __future__ import annotations

import copy
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzing import FUZZ, assert_handled
from gpurace.check import DETECTORS, check
from gpurace.trace import binary, text
from gpurace.trace.record import TraceRecorder

ROOT = Path(__file__).resolve().parents[1]
RECORDED = [  # (kernel, grid, block): what the seeds cover
    ("kernels/check/lock_device.cu", 4, 64),  # cas/exch locks: values, stored, compare
    ("kernels/check/reduce_no_last_barrier.cu", 1, 128),  # shared memory, barriers
    ("kernels/check/mp_device_fences.cu", 2, 32),  # fences, strong accesses
    ("kernels/warp_intrinsics.cu", 1, 32),  # collectives and warp syncs
    ("kernels/forceinline.cu", 1, 64),  # inlined source locations
]
TEXT_TRACES = sorted((ROOT / "traces").rglob("*.trace"))

INT_EXTREMES = (0, 1, -1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 255, 256, 1023, 1024, 65535, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
                2**47, 2**62, 2**63 - 1, -(2**31), -(2**63), 2**64 - 1)  # fmt: skip
LONG_NAME = "/" + "a" * 300 + "/include/k.cu"  # a file name the operating system refuses to look up
JSON_EXTREMES = (None, True, False, "", "x", "\udcff", "a\x00b", LONG_NAME, "[/]", "_Z", "é" * 3, 1.5, -0.0, 1e308, -1e308,
                 float("nan"), float("inf"), 2**63, 2**64, -(2**63) - 1, 10**30, [], {}, [0], [None], [[0, 0, 0]], {"x": 1})  # fmt: skip
DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64", "bool", "complex64",
          "U4", "S2", "V3")  # fmt: skip
TEXT_WORDS = ("0", "1", "-1", "31", "32", "33", "64", "1024", "0x0", "0xffffffff", "0x1ffffffff", "2147483647", "2147483648",
              "4294967296", "9223372036854775807", "99999999999999999999999", "1e9", "0x", "-", "s", "g", "s[0]", "g[4]", "s[-4]",
              "g[99999999999999]", "s[0x10]", "x[0]", "[]", "t", "grid", "block", "var", "shared", "global", "barrier", "warp",
              "mask", "read", "write", "atomic", "cas.acquire.cta", "add.relaxed.gpu", "acquire", "release", "lock.cta",
              "lock.gpu", "fence.gpu", "fence.acq_rel.cta", "fence.sc.sys", "ld.acquire.gpu", "st.release.cta", "ld.volatile",
              "exit", "@", "@ f.cu:1", "@ :", "@ a\x00b:1", f"@ {LONG_NAME}:1", "@ [/]:1", "@ f.cu:99999999999999999999", "#",
              "1,1,1", "65536,65536,65536", "1024,1024", "2147483647,65535,65535", "0,1", "é", "\x00", "\t")  # fmt: skip


class Choices:
    """Where a mutator's choices come from: Hypothesis's `st.data()`, so that a failing case shrinks.

    Mutators use only `pick` and `integer`, so a long campaign outside pytest
    can drive them with any object that has the two (a seeded `random.Random` behind them).
    """

    def __init__(self, data) -> None:
        self.data = data

    def pick(self, options):
        """One of a non-empty sequence."""
        return self.data.draw(st.sampled_from(list(options)))

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]."""
        return self.data.draw(st.integers(lo, hi))


# ---------------------------------------------------------------------- seeds


def record_seed(kernel: str, grid: int, block: int, path: Path) -> dict[str, np.ndarray]:
    """The npz members of a binary trace recorded from one corpus kernel."""
    recorder = TraceRecorder()
    report = check(str(ROOT / kernel), grid=(grid, 1, 1), block=(block, 1, 1), sinks=[recorder], schedules=1)
    binary.write(recorder.trace(kernel=report.kernel, mangled=report.mangled, source=report.source), path)
    return load_members(path)


def text_seed(source: Path, path: Path) -> dict[str, np.ndarray]:
    """The npz members of a hand-written text trace stored as binary."""
    binary.write(text.read(source), path)
    return load_members(path)


def load_members(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def make_seeds(folder: Path) -> list[dict[str, np.ndarray]]:
    """The valid binary traces every binary mutation starts from."""
    recorded = [record_seed(*r, folder / f"recorded{i}.trace") for i, r in enumerate(RECORDED)]
    return recorded + [text_seed(p, folder / f"text{i}.trace") for i, p in enumerate(TEXT_TRACES[::4])]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-traces")


@pytest.fixture(scope="module")
def seeds(workdir) -> list[dict[str, np.ndarray]]:
    return make_seeds(workdir)


# ---------------------------------------------------------------------- writing npz files


def npy_bytes(array: np.ndarray, shape: tuple | None = None) -> bytes:
    """`array` as an .npy file; a `shape` other than its own makes the header lie about the data that follows."""
    buf = io.BytesIO()
    if shape is None:
        np.lib.format.write_array(buf, array)
        return buf.getvalue()
    header = {"descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_2_0(buf, header)
    return buf.getvalue() + array.tobytes()


def write_npz(path: Path | io.BytesIO, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name + ".npy", data)


DEEP = "\u0000deep\u0000"
"""A JSON value that `encode_meta` writes as a nesting deeper than a recursive parser can follow."""


def encode_meta(meta) -> np.ndarray:
    """The metadata as the `meta` member holds it (JSON, ASCII: lone surrogates stay escapes), `DEEP` values expanded."""
    body = json.dumps(meta).replace(json.dumps(DEEP), "[" * 100_000 + "]" * 100_000)
    return np.frombuffer(body.encode("ascii"), dtype=np.uint8)


# ---------------------------------------------------------------------- binary mutators


def retyped(array: np.ndarray, dtype) -> np.ndarray:
    """`array` converted to `dtype` however numpy manages: a cast (wrapping, truncating) or its raw bytes."""
    try:
        with np.errstate(all="ignore"):
            return array.astype(dtype)
    except (ValueError, TypeError, OverflowError):
        raw = array.tobytes()
        size = np.dtype(dtype).itemsize
        return np.frombuffer(raw[: len(raw) // size * size], dtype=dtype)


def with_value(array: np.ndarray, index, value) -> np.ndarray:
    """`array` with element(s) `index` of its flat form set to `value`, widening the dtype when the value does not fit."""
    for dtype in (array.dtype, np.int64, np.uint64, np.float64):
        out = retyped(array, dtype).copy()
        try:
            out.reshape(-1)[index] = value
            return out
        except (OverflowError, ValueError, TypeError, IndexError):
            continue
    return array


def damage_array(c: Choices, array: np.ndarray) -> np.ndarray:
    """One structured edit of a member's array: a value, the dtype, the shape or the length."""
    how = c.pick(("value",) * 3 + ("copy", "nudge", "dtype", "shape", "shorter", "longer", "huge", "empty", "fill"))
    if array.dtype.kind not in "biuf":  # strings and raw bytes (an earlier edit's dtype): edit their bytes
        array = np.frombuffer(array.tobytes(), dtype=np.uint8)
    flat = array.reshape(-1)
    if how == "value" and len(flat):
        return with_value(array, c.integer(0, len(flat) - 1), c.pick(INT_EXTREMES))
    if how == "copy" and len(flat):  # a value that is valid somewhere in the column, in the wrong place
        return with_value(array, c.integer(0, len(flat) - 1), flat[c.integer(0, len(flat) - 1)].item())
    if how == "nudge" and len(flat):  # the next thread, warp, address, code or pc
        i = c.integer(0, len(flat) - 1)
        return with_value(array, i, flat[i].item() + c.pick((-1, 1, 4, 32, -32, 1 << 32)))
    if how == "dtype":
        return retyped(array, c.pick(DTYPES))
    if how == "shape":
        return c.pick((flat.reshape(1, -1), flat.reshape(-1, 1), np.array(flat[0] if len(flat) else 0), np.stack([flat, flat])))
    if how == "shorter" and len(flat):
        return flat[: c.integer(0, len(flat) - 1)]
    if how == "longer":
        return with_value(np.concatenate([flat, np.zeros(c.integer(1, 64), dtype=flat.dtype)]), slice(len(flat), None), c.pick(INT_EXTREMES))
    if how == "huge":
        return np.resize(flat, c.pick((1 << 16, 1 << 20)))
    if how == "fill" and len(flat):
        return with_value(flat, slice(None), c.pick(INT_EXTREMES))
    return flat[:0]


def json_path(c: Choices, node) -> tuple:
    """A path into a JSON document: a random walk from the root that may stop at any level (so every
    top-level field is as likely as the long instruction table)."""
    path: tuple = ()
    while isinstance(node, (dict, list)) and node and (not path or c.integer(0, 2)):
        key = c.pick(sorted(node) if isinstance(node, dict) else range(len(node)))
        path, node = (*path, key), node[key]
    return path


def damage_json(c: Choices, meta):
    """One edit of the metadata: drop a key or element, or replace a value by one of another type or an extreme."""
    path = json_path(c, meta)
    how = c.pick(("extreme",) * 3 + ("int",) * 4 + ("drop",) * 2 + ("deep", "long"))
    new = {
        "extreme": lambda: copy.deepcopy(c.pick(JSON_EXTREMES)),
        "int": lambda: c.pick(INT_EXTREMES),
        "deep": lambda: DEEP,
        "long": lambda: c.pick(([0] * 100_000, "a" * 1_000_000, [[0, 0, 0] for _ in range(10_000)])),
        "drop": lambda: None,
    }[how]()
    if not path:
        return {} if how == "drop" else new
    parent = meta
    for key in path[:-1]:
        parent = parent[key]
    if how == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return meta


def damage_members(c: Choices, members: dict[str, np.ndarray]) -> dict[str, bytes]:
    """One to three edits of members or metadata, then every member as .npy bytes, now and then with a lying header."""
    members = dict(members)
    meta = json.loads(members["meta"].tobytes())
    for _ in range(c.integer(1, 3)):
        target = c.pick(("meta",) * 8 + ("member",) * 11 + ("drop",))
        if target == "meta":
            meta = damage_json(c, meta)
        elif target == "drop":
            members.pop(c.pick(sorted(members)))
        else:
            name = c.pick(sorted(members))
            members[name] = damage_array(c, members[name])
        if not members:
            break
    if "meta" in members and members["meta"].dtype == np.uint8 and members["meta"].ndim == 1:
        members["meta"] = encode_meta(meta)
    out = {name: npy_bytes(array) for name, array in members.items()}
    if out and c.integer(0, 7) == 0:
        name = c.pick(sorted(out))
        out[name] = npy_bytes(members[name].reshape(-1), (c.pick((2**20, 2**40, 2**50, 2**62)),))
    return out


def flip_bytes(c: Choices, data: bytes) -> bytes:
    """`data` with one to eight bytes replaced."""
    out = bytearray(data)
    for _ in range(c.integer(1, 8)):
        out[c.integer(0, len(out) - 1)] = c.integer(0, 255)
    return bytes(out)


# ---------------------------------------------------------------------- text mutators


def random_line(c: Choices) -> str:
    """A line of grammar words and extremes: mostly statements that almost parse."""
    head = c.pick((["t", c.pick(TEXT_WORDS[:12]), c.pick(TEXT_WORDS[:12])], ["barrier"], ["var"], ["grid"], []))
    return " ".join(head + [c.pick(TEXT_WORDS) for _ in range(c.integer(0, 5))])


def damage_text(c: Choices, source: str) -> str:
    """One to four line edits (of the lines that are not comments): drop, repeat or swap lines, replace a word,
    insert a line, or cut the text short; mostly after the launch, so that most edits reach the events."""
    lines = [line for line in source.splitlines() if not line.startswith("#")]
    launch = next((i for i, line in enumerate(lines) if line.startswith("grid")), 0)
    for _ in range(c.integer(1, 4)):
        how = c.pick(("drop", "repeat", "swap", "word", "word", "word", "insert", "insert", "cut"))
        at = c.integer(min(launch + 1, len(lines) - 1) if c.integer(0, 3) else 0, max(len(lines) - 1, 0))
        if how == "insert" or not lines:
            lines.insert(at, random_line(c))
        elif how == "drop":
            del lines[at]
        elif how == "repeat":
            lines[at:at] = [lines[at]] * c.pick((1, 2, 40))
        elif how == "swap":
            other = c.integer(0, len(lines) - 1)
            lines[at], lines[other] = lines[other], lines[at]
        elif how == "word":
            words = lines[at].split(" ")
            words[c.integer(0, len(words) - 1)] = c.pick(TEXT_WORDS)
            lines[at] = " ".join(words)
        else:
            kept = "\n".join(lines)
            return kept[: c.integer(len("\n".join(lines[: launch + 1])) if c.integer(0, 3) else 0, len(kept))]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- properties


def analyze_args(c: Choices, path: Path) -> list[str]:
    return ["analyze", str(path), "--detector", c.pick(DETECTORS)]


@FUZZ
@given(data=st.data())
def test_damaged_binary_trace_is_handled(seeds, workdir, data):
    c = Choices(data)
    path = workdir / "damaged.trace"
    write_npz(path, damage_members(c, c.pick(seeds)))
    assert_handled(analyze_args(c, path))


@FUZZ
@given(data=st.data())
def test_byte_flipped_binary_trace_is_handled(seeds, workdir, data):
    c = Choices(data)
    clean = io.BytesIO()
    write_npz(clean, {name: npy_bytes(a) for name, a in c.pick(seeds).items()})
    path = workdir / "flipped.trace"
    path.write_bytes(flip_bytes(c, clean.getvalue()))
    assert_handled(analyze_args(c, path))


@FUZZ
@given(data=st.data())
def test_damaged_text_trace_is_handled(workdir, data):
    c = Choices(data)
    path = workdir / "damaged.txt"
    path.write_text(damage_text(c, c.pick(TEXT_TRACES).read_text()), encoding="utf-8")
    assert_handled(analyze_args(c, path))
