"""Fuzzing the launch inputs: `--grid`/`--block`, `--arg` specs, `.npy` files, `--shared-bytes`, `--seed`,
`--max-steps` and GPUVerify launch headers. Whatever they hold, `gpurace` ends with 0, 1 or 2, never a crash.

Every command runs a small kernel (`kernels/params.cu`: one parameter of each
kind a spec can give, or a GPUVerify kernel for the headers) with
`--max-threads 4096`, `--max-memory 256M` and `--max-steps 2000`, so that an
input the checks let through runs in a fraction of a second, and inputs past
those limits show that they are refused before the work starts. Strategies
come in two flavours: random text, which mostly exercises the parsers, and
grammar-based values (well-formed specs with extreme numbers, real `.npy`
files of every dtype and shape), which get past the parsers to the checks
behind them.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
from fuzz.fuzzing import FUZZ, assert_handled
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

HERE = Path(__file__).resolve().parent
PARAMS = str(HERE / "kernels" / "params.cu")
HISTOGRAM = str(HERE.parent / "kernels" / "sim" / "histogram.cu")
GPUVERIFY_KERNEL = HERE.parent / "kernels" / "gpuverify" / "requires_holds.cu"
BOUNDS = ["--max-threads", "4096", "--max-memory", "256M", "--max-steps", "2000"]
HISTOGRAM_ARGS = ["--arg", "buf:3000:iota", "--arg", "buf:64", "--arg", "3000"]
PARAMS_ARGS = [
    "f32:64:iota", "buf:64", "buf:64", "u32:64", "64", "2.5", "-1", "7", "1", "12", "bytes:1.5f,2i",
]  # fmt: skip
"""A valid launch of `params`: the fuzz tests replace some of these."""

SPEC_TYPES = ["buf", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64"]
EXTREME_INTS = [0, 1, -1, 255, 256, 2**31 - 1, 2**31, -(2**31), 2**32, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**30, 10**400]
EXTREME_FLOATS = ["nan", "inf", "-inf", "-0.0", "1e-45", "3.4e38", "3.5e38", "1.7e308", "1e309", "-1e999", "0x1p3", "1_0.5"]

# --------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------

numbers = st.one_of(
    st.sampled_from(EXTREME_INTS),
    st.integers(),
    st.integers(min_value=-5, max_value=5000),
).map(str) | st.sampled_from(EXTREME_INTS).map(hex) | st.sampled_from(EXTREME_FLOATS) | st.floats().map(repr)
"""Number-like text: small, huge and negative integers (decimal and hex), and floats with their specials."""

junk = st.text(max_size=24)
"""Any text at all, Unicode included."""

small_dims = st.lists(st.integers(min_value=1, max_value=70), min_size=1, max_size=3).map(lambda ds: ",".join(map(str, ds)))
dims_text = st.one_of(
    small_dims,
    st.lists(st.integers(min_value=-2, max_value=2**33).map(str) | st.sampled_from(["0", "99999999999999999999", "x", ""]),
             min_size=0, max_size=5).flatmap(
        lambda parts: st.sampled_from([",", "x", ", "]).map(lambda sep: sep.join(parts))
    ).flatmap(lambda body: st.sampled_from(["{}", "[{}]", "({})", " {} "]).map(lambda wrap: wrap.format(body))),
    st.text(alphabet="0123456789,x[]() -+.eE٣", max_size=16),
    junk,
)  # fmt: skip
"""`--grid`/`--block` text: small launches that run, the grammar's dimensions (any size, any count), near
misses and random text."""

initialisers = st.sampled_from(["", ":zeros", ":ones", ":iota", ":rand", ":file:", ":file:/dev/zero", ":file:/", ":sorted"]) | junk.map(
    lambda t: ":" + t
)
buffer_specs = st.builds(
    lambda kind, count, init: f"{kind}:{count}{init}",
    st.sampled_from([*SPEC_TYPES, "bytes", "vec", ""]),
    numbers | st.integers(min_value=0, max_value=300).map(str),
    initialisers,
)
bytes_items = st.builds(lambda value, suffix: f"{value}{suffix}", numbers, st.sampled_from(list("bBhHiIlLfdxz") + [""]))
bytes_specs = st.lists(bytes_items, max_size=6).map(lambda items: "bytes:" + ",".join(items))
arg_specs = st.one_of(buffer_specs, bytes_specs, numbers, st.sampled_from(["auto", "null", "0", "true", ""]), junk)
"""Any `--arg` value: well-formed buffers and struct bytes with extreme counts and values, scalars, and text."""

npy_dtypes = st.one_of(
    hnp.scalar_dtypes(),
    hnp.byte_string_dtypes(),
    hnp.unicode_string_dtypes(),
    hnp.array_dtypes(),
    hnp.nested_dtypes(),
    st.just(np.dtype(object)),
)
npy_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)


@st.composite
def npy_files(draw) -> bytes:
    """The bytes of a `.npy` file: a real array of any dtype and shape (0-d, empty, records, strings, objects),
    possibly with its header or data cut short or overwritten."""
    dtype = draw(npy_dtypes)
    shape = draw(npy_shapes)
    if dtype.hasobject:
        array = np.empty(shape, dtype=object)
        array.fill(draw(st.sampled_from([None, 1, "text", (1, 2)])))
    else:
        array = draw(hnp.arrays(dtype, shape))
    if draw(st.booleans()):
        array = np.asfortranarray(array)
    version = draw(st.sampled_from([(1, 0), (2, 0), (3, 0)]))
    with tempfile.TemporaryFile() as f, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Stored array in format 3.0"
        try:
            np.lib.format.write_array(f, array, version=version, allow_pickle=True)
        except UnicodeEncodeError:  # field names beyond latin-1 need format 3.0
            np.lib.format.write_array(f, array, version=(3, 0), allow_pickle=True)
        f.seek(0)
        data = f.read()
    damage = draw(st.sampled_from(["none", "none", "cut", "overwrite"]))
    if damage == "cut":
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    elif damage == "overwrite":
        at = draw(st.integers(min_value=0, max_value=max(len(data) - 1, 0)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at + 8 :]
    return data


gpuverify_options = st.one_of(
    st.builds(
        lambda name, value: f"--{name}={value}",
        st.sampled_from(["blockDim", "gridDim", "local_size", "num_groups", "global_size"]),
        small_dims.map(lambda d: f"[{d}]") | dims_text,
    ),
    st.builds(
        lambda name, value: f"-D{name}{value}",
        st.sampled_from(["N", "", "1", "X Y", "_", "N\\"]),
        st.sampled_from(["", "=", "=1", "=)", "=\x00", "=\\", '="']) | junk.map(lambda t: "=" + t),
    ),
    st.sampled_from(["--no-inline", "--warp-sync=32", "-D", "--", "pass", "xfail:BOOGIE_ERROR", "--blockDim", "--gridDim="]),
    junk,
)
gpuverify_headers = st.tuples(
    st.sampled_from(["--blockDim=64 --gridDim=2", "--blockDim=[8,8] --gridDim=[1,2]", "--local_size=32 --global_size=64", ""]),
    st.lists(gpuverify_options, max_size=4),
).map(lambda parts: " ".join([parts[0], *parts[1]]))
"""The options line of a GPUVerify header: dimensions in every shape, `-D` macros with odd values, other options."""

# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


@FUZZ
@given(dims_text, dims_text)
def test_grid_and_block(grid, block):
    handled(["run", HISTOGRAM, "--grid", grid, "--block", block, *HISTOGRAM_ARGS, *BOUNDS])


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(PARAMS_ARGS) - 1), arg_specs), min_size=1, max_size=4))
def test_arg_specs(replacements):
    args = list(PARAMS_ARGS)
    for index, spec in replacements:
        args[index] = spec
    handled(["run", PARAMS, "--kernel", "params", "--grid", "2", "--block", "32", *_args(args), *BOUNDS])


PTX_PARAMS_ARGS = ["buf:32", "3", "4", "1.5"]
"""A valid launch of the `extern "C"` kernel `ptx_params(int*, short, long long, float)`, whose types only PTX gives."""


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(PTX_PARAMS_ARGS)), arg_specs), min_size=1, max_size=3))
def test_arg_specs_of_an_extern_c_kernel(replacements):
    args = list(PTX_PARAMS_ARGS)
    for index, spec in replacements:
        args[index : index + 1] = [spec]  # past the end: one argument too many
    handled(["run", PARAMS, "--kernel", "ptx_params", "--grid", "1", "--block", "32", *_args(args), *BOUNDS])


@FUZZ
@given(npy_files(), st.sampled_from(["buf", "buf", *SPEC_TYPES]), st.integers(min_value=0, max_value=300) | st.sampled_from([10**12]), st.integers(0, 3))
def test_npy_files(data, kind, count, index):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.npy"
        path.write_bytes(data)
        args = list(PARAMS_ARGS)
        args[index] = f"{kind}:{count}:file:{path}"
        handled(["run", PARAMS, "--kernel", "params", "--grid", "1", "--block", "32", *_args(args), *BOUNDS])


@FUZZ
@given(st.integers(min_value=-1, max_value=2**40).map(str) | numbers | junk, st.integers(min_value=1, max_value=4096))
def test_shared_bytes(shared, blocks):
    dynamic = str(HERE.parent / "kernels" / "dynamic_shared.cu")
    args = ["--arg", "buf:256", "--arg", "buf:256", "--arg", "256"]
    handled(["run", dynamic, "--grid", str(blocks), "--block", "1", "--shared-bytes", shared, *args, *BOUNDS])


@FUZZ
@given(st.integers(min_value=-1, max_value=2**70).map(str) | numbers | junk, st.integers(min_value=-1, max_value=2**70).map(str) | numbers | junk, st.sampled_from(["min-pc", "reverse", "random"]))
def test_seed_and_max_steps(seed, steps, policy):
    command = ["run", PARAMS, "--kernel", "params", "--grid", "1", "--block", "32", *_args(PARAMS_ARGS), "--policy", policy]
    handled([*command, "--max-threads", "4096", "--seed", seed, "--max-steps", steps])


@FUZZ
@given(st.sampled_from(["", "//pass\n", "//xfail:BOOGIE_ERROR\n"]), gpuverify_headers, st.sampled_from(["run", "check"]))
def test_gpuverify_headers(label, options, command):
    body = "\n".join(line for line in GPUVERIFY_KERNEL.read_text().splitlines() if not line.startswith("//"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cu"
        path.write_text(f"{label}//{options}\n{body}\n")
        handled([command, str(path), "--arg", "auto", "--arg", "128", *BOUNDS])


def handled(args: list[str]) -> None:
    """`assert_handled`, counting exit statuses (`--hypothesis-show-statistics` shows how deep the inputs got)."""
    result = assert_handled(args)
    event(f"exit {result.exit_code}")


def _args(specs: list[str]) -> list[str]:
    return [word for spec in specs for word in ("--arg", spec)]
