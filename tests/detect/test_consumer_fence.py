"""A race that only the consumer's fence after its flag read would order.

The PTX model makes a strong read acquire only when a fence follows it;
ScoRD's rules need no such fence. `--model cuda` keeps the finding but, when
both accesses are strong (atomic or volatile), as a warning with the cause
"missing fence after the flag read"; `ptx` keeps it an error. The kernels are
tests/kernels/scord/atomic_relay_*.cu (their headers give every model's
verdict, checked by tests/test_expectations.py with the default check); here
every detector must agree on severity and cause, and the cause must name the
fence that is missing, not an unrelated release of the same flag.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus import read_header
from gpurace.cli import cli
from gpurace.detect.findings import ERROR, WARNING, Finding, FindingSet, Site
from gpurace.report.model import Report
from gpurace.search.union import FindingUnion

ROOT = Path(__file__).resolve().parent.parent.parent
SCORD = ROOT / "tests" / "kernels" / "scord"
DETECTORS = ("hb", "gwcp", "lockset", "tsan")


def findings(path: Path, *options: str) -> list[tuple]:
    """(sorted source lines, severity, cause) of every finding of the file's `@launch`."""
    launch = shlex.split(read_header(path).launches[0])
    result = CliRunner().invoke(cli, ["check", str(path), *launch, "--format", "json", *options])
    report = json.loads(result.stdout)
    assert result.exit_code == (1 if report["findings"] else 0), result.output
    return sorted((tuple(sorted(a["line"] for a in f["accesses"])), f["severity"], f["cause"]) for f in report["findings"])


@pytest.mark.parametrize("detector", DETECTORS)
@pytest.mark.parametrize("model, severity", [("cuda", WARNING), ("ptx", ERROR)])
def test_the_missing_consumer_fence_is_named(detector: str, model: str, severity: str) -> None:
    found = findings(SCORD / "atomic_relay_unfenced_reads.cu", "--model", model, "--detector", detector)
    assert [(lines, sev) for lines, sev, _ in found] == [((32, 38), severity), ((34, 36), severity)]
    for _, _, cause in found:
        assert cause.startswith("missing fence after the flag read at tests/kernels/scord/atomic_relay_unfenced_reads.cu:28")


@pytest.mark.parametrize("detector", DETECTORS)
def test_the_flag_read_named_is_the_one_whose_release_carried_the_write(detector: str) -> None:
    found = findings(SCORD / "two_flags_unfenced.cu", "--detector", detector)
    assert [lines for lines, _, _ in found] == [(20, 29)]
    assert found[0][2].startswith("missing fence after the flag read at tests/kernels/scord/two_flags_unfenced.cu:25:")


@pytest.mark.parametrize("detector", DETECTORS)
def test_a_release_too_narrow_stays_an_error(detector: str) -> None:
    found = findings(SCORD / "atomic_relay_block_fence.cu", "--detector", detector)
    assert [(lines, sev) for lines, sev, _ in found] == [((26, 32), ERROR), ((28, 30), ERROR)]
    for _, _, cause in found:
        assert cause.startswith("insufficient scope of the release `membar.cta` at tests/kernels/scord/atomic_relay_block_fence.cu:35")


def test_plain_data_behind_an_unfenced_flag_read_stays_an_error() -> None:
    (found,) = findings(ROOT / "examples" / "message_passing.cu")
    assert found[:2] == ((19, 25), ERROR)
    assert found[2].startswith("missing fence after the flag read at examples/message_passing.cu:23")


def test_a_read_after_the_release_is_not_blamed_on_the_consumer() -> None:
    # the producer reads the value again after raising the flag: no fence of the consumer orders that
    found = findings(SCORD / "fence_read_after_release.cu")
    causes = {lines: cause for lines, _, cause in found}
    assert causes[(18, 25)].startswith("missing fence after the flag read")
    assert causes[(21, 25)].startswith("volatile is not atomic")


def _finding(severity: str) -> Finding:
    site = Site(pc=3, thread=(0, 0, 0), block=(0, 0, 0), warp=0, lane=0, op="atomic add", scope="gpu", loc=None,
                instruction="red.global.add.u32", function="k")  # fmt: skip
    other = replace(site, pc=7, block=(1, 0, 0), scope="cta", instruction="red.global.cta.add.u32")
    return Finding("data-race", severity, severity, (site, other), space="global")


@pytest.mark.parametrize("order", [(WARNING, ERROR), (ERROR, WARNING)])
def test_the_worst_instance_is_the_example(order: tuple[str, str]) -> None:
    found = FindingSet()
    for severity in order:
        found.add(_finding(severity), 2)
    (merged,) = found.sorted()
    assert (merged.severity, merged.cause, merged.count) == (ERROR, ERROR, 4)


def test_a_worse_instance_from_a_later_schedule_comes_with_that_schedule() -> None:
    union = FindingUnion()
    for index, severity in enumerate((WARNING, ERROR, WARNING)):
        report = Report(kernel="k", mangled="k", source="k.cu", launch={}, findings=[_finding(severity)], stats={})
        union.add(report, schedule={"index": index, "policy": "p", "seed": None})
    (merged,) = union.findings(None)
    assert (merged.severity, merged.schedule["index"], merged.count) == (ERROR, 1, 3)
