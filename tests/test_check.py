"""`gpurace check` as a Python API and a command: detector choice, models, outputs and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurace.check import check
from gpurace.cli import cli
from gpurace.errors import UserError

RACY = r"""
__global__ void k(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = s[(threadIdx.x + 1) % 64];   // line 5: no barrier before reading a neighbour's slot
}
"""

FENCED = r"""
__global__ void k(int* data, int* flag) {
  if (blockIdx.x == 0 && threadIdx.x == 0) { data[0] = 1; __threadfence(); atomicExch(flag, 1); }
}
"""


@pytest.fixture
def racy(tmp_path):
    p = tmp_path / "racy.cu"
    p.write_text(RACY)
    return p


def test_api_report_for_a_barrier_race(racy):
    report = check(racy, grid=1, block=64, args=["buf:64"])
    assert not report.clean and report.exit_code() == 1
    assert report.launch["detector"] == "interval"
    assert "schedules" not in report.launch  # no atomics, fences or strong accesses: one schedule
    (f,) = report.findings
    assert (f.kind, f.space, f.severity) == ("data-race", "shared", "error")
    assert sorted(s.loc.line for s in f.sites) == [4, 5]
    assert f.address.allocation == "s"


def test_api_with_numpy_arrays_and_the_clean_property(tmp_path):
    import numpy as np

    p = tmp_path / "ok.cu"
    p.write_text("__global__ void k(int* out) { out[threadIdx.x] = threadIdx.x; }\n")
    out = np.zeros(32, np.int32)
    report = check(p, grid=1, block=32, args=[out])
    assert report.clean
    assert (out == np.arange(32)).all()


def test_auto_takes_gwcp_and_three_schedules_when_the_kernel_uses_fences(tmp_path):
    p = tmp_path / "f.cu"
    p.write_text(FENCED)
    report = check(p, grid=2, block=32, args=["buf:1", "buf:1"])
    assert report.launch["detector"] == "gwcp"
    assert [r["policy"] for r in report.stats["schedules"]] == ["min-pc", "reverse", "random"]
    with pytest.raises(UserError, match="--detector interval"):
        check(p, grid=2, block=32, args=["buf:1", "buf:1"], detector="interval")


REDUCTIONS = r"""
__global__ void k(const unsigned* in, unsigned* bins, float* total, unsigned* ticket, int* seen) {
  __shared__ unsigned local[8];
  if (threadIdx.x < 8) local[threadIdx.x] = 0;
  __syncthreads();
  unsigned v = in[blockIdx.x * blockDim.x + threadIdx.x];
  atomicAdd(&local[v % 8], 1u);
  atomicMax(&bins[8], v);
  REDUCE
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
"""


@pytest.mark.parametrize(
    "reduce, schedules",
    [
        ("", {1}),  # integer reductions whose results are never read: every order leaves the same memory
        ("atomicAdd(total, 1.0f);", {3, 4}),  # a float sum rounds differently in another order
        ("atomicInc(ticket, 7u);", {3, 4}),  # wraps: the order decides the value
        ("seen[blockIdx.x * 64 + threadIdx.x] = atomicAdd(ticket, 1u);", {3, 4}),  # a ticket (4: and the flip of a contest)
    ],
)
def test_one_schedule_for_kernels_whose_only_atomics_are_order_free_reductions(tmp_path, reduce, schedules):
    p = tmp_path / "reductions.cu"
    p.write_text(REDUCTIONS.replace("REDUCE", reduce))
    import numpy as np

    bins = np.zeros(9, np.uint32)
    data = (np.arange(128, dtype=np.uint32) * 13) % 29
    report = check(p, grid=2, block=64, args=[data, bins, "buf:1", "buf:1", "buf:128"])
    assert report.clean
    assert len(report.stats.get("schedules", [None])) in schedules
    assert bins[:8].tolist() == np.bincount(data % 8, minlength=8).tolist() and bins[8] == data.max()


def test_both_detectors_agree_on_a_barrier_race(racy):
    a = check(racy, grid=1, block=64, args=["buf:64"], detector="interval").findings
    b = check(racy, grid=1, block=64, args=["buf:64"], detector="hb").findings
    assert [(f.kind, f.space, sorted(s.loc.line for s in f.sites)) for f in a] == [
        (f.kind, f.space, sorted(s.loc.line for s in f.sites)) for f in b
    ]


def test_unknown_model_is_a_user_error(racy):
    with pytest.raises(UserError, match="unknown memory model"):
        check(racy, grid=1, block=64, args=["buf:64"], model="sc")


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_cli_formats_and_output_file(racy, tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    result = CliRunner().invoke(
        cli, ["check", str(racy), "--grid", "1", "--block", "64", "--arg", "buf:64", "--format", fmt, "--output", str(out)]
    )
    assert result.exit_code == 1, result.output
    text = out.read_text()
    if fmt == "json":
        assert json.loads(text)["findings"][0]["kind"] == "data-race"
    elif fmt == "sarif":
        data = json.loads(text)
        assert data["version"] == "2.1.0" and data["runs"][0]["results"][0]["ruleId"] == "data-race"
    else:
        assert "racy.cu:5" in text or "racy.cu:4" in text
        assert "error" in text


def test_cli_rejects_bad_choices_with_status_2(racy):
    for extra in (["--detector", "magic"], ["--model", "sc"], ["--format", "xml"]):
        result = CliRunner().invoke(cli, ["check", str(racy), "--grid", "1", "--block", "64", "--arg", "buf:64", *extra])
        assert result.exit_code == 2
        assert "Traceback" not in result.output


EXITED_BEFORE_BARRIER = r"""
__global__ void k(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x >= 32) return;
  __syncthreads();                      // line 6: half the block has left
  out[threadIdx.x] = s[threadIdx.x + 32];
}
"""


@pytest.mark.parametrize("detector", ["interval", "hb"])
def test_a_barrier_skipped_by_exited_threads_is_one_divergence_finding(tmp_path, detector):
    p = tmp_path / "exited.cu"
    p.write_text(EXITED_BEFORE_BARRIER)
    report = check(p, grid=1, block=64, args=["buf:64"], detector=detector)
    assert [f.kind for f in report.findings] == ["barrier-divergence"]
    assert report.findings[0].sites[0].loc.line == 6


@pytest.mark.parametrize("detector", ["auto", "hb"])
def test_a_flag_read_through_a_release_sequence_without_a_fence_names_the_missing_fence(detector):
    kernel = Path(__file__).parent / "kernels" / "last_block_sum.cu"
    report = check(kernel, grid=4, block=32, args=["buf:4:iota", "buf:4", "buf:1"], detector=detector)
    (finding,) = report.findings
    assert finding.kind == "data-race" and finding.space == "global"
    assert [s.loc.line for s in finding.sites] == [18, 26]
    assert finding.cause.startswith("missing fence after the flag read at ") and ":20: " in finding.cause


TEMPLATES = """
template <typename T, unsigned int N, bool Flag>
__global__ void reduce(T *x) { if (Flag) x[threadIdx.x % N] += 1; }
template __global__ void reduce<int, 256u, true>(int *);
template __global__ void reduce<float, 128u, false>(float *);
"""


@pytest.mark.parametrize(
    "typed, chosen",
    [
        ("reduce<int,256,true>", "reduce<int, 256u, true>"),
        ("reduce<float, 128u, false>", "reduce<float, 128u, false>"),
        ("_Z6reduceIfLj128ELb0EEvPT_", "reduce<float, 128u, false>"),
    ],
)
def test_a_template_kernel_is_chosen_as_a_user_types_it(tmp_path, typed, chosen):
    source = tmp_path / "templates.cu"
    source.write_text(TEMPLATES)
    assert check(source, kernel=typed, grid=1, block=32, args=["buf:256"]).kernel == chosen


def test_a_name_shared_by_several_instantiations_is_an_error_that_lists_them(tmp_path):
    source = tmp_path / "templates.cu"
    source.write_text(TEMPLATES)
    with pytest.raises(UserError, match=r"names several kernels .*\(reduce<int, 256u, true>, reduce<float, 128u, false>\)"):
        check(source, kernel="reduce", grid=1, block=32, args=["buf:256"])
    with pytest.raises(UserError, match="no kernel named 'reduce<int,255,true>'"):
        check(source, kernel="reduce<int,255,true>", grid=1, block=32, args=["buf:256"])


def test_a_template_never_instantiated_is_refused_saying_why(tmp_path):
    source = tmp_path / "template.cu"
    source.write_text("template <class T> __global__ void k(T* y) { y[threadIdx.x] = y[threadIdx.x + 1]; }\n")
    result = CliRunner().invoke(cli, ["check", str(source), "--grid", "1", "--block", "32"])
    assert result.exit_code == 2
    assert "defines no kernel (a template kernel exists only where it is instantiated" in result.output
