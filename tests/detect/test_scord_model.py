"""`--model scord`: ScoRD's rules (its paper's Tables III-IV), on the kernels of tests/kernels/scord/.

Each kernel's header gives the verdict under every model (`@expect`,
`@expect_ptx`, `@expect_scord`; `tests/test_expectations.py` checks those
with the default check). Here: every detector that honours `--model` reaches
the same scord verdict, and each finding names the ScoRD rule it breaks.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpus import read_header
from gpurace.cli import cli

KERNELS = Path(__file__).resolve().parent.parent / "kernels" / "scord"
FILES = sorted(KERNELS.glob("*.cu"))


def check(path: Path, *options: str) -> dict:
    launch = shlex.split(read_header(path).launches[0])
    result = CliRunner().invoke(cli, ["check", str(path), *launch, "--model", "scord", "--format", "json", *options])
    report = json.loads(result.stdout)
    assert result.exit_code == (1 if report["findings"] else 0), result.output
    return report


def summary(report: dict) -> set[tuple]:
    return {
        (f["kind"], f["space"], *sorted(a["line"] for a in f["accesses"]), f["severity"]) for f in report["findings"]
    }


def expected(path: Path) -> set[tuple]:
    out = set()
    for text in read_header(path).extra["expect_scord"]:
        if text != "clean":
            kind, space, a, b, severity = text.split()
            out.add((kind, space, *sorted((int(a), int(b))), severity))
    return out


def test_the_corpus_has_racy_and_race_free_kernels_of_each_category() -> None:
    for category in ("fence", "atomic", "lock", "intrawarp"):
        verdicts = {not expected(p) for p in FILES if p.stem.startswith(category)}
        assert verdicts == {True, False}, category


@pytest.mark.parametrize("detector", ("hb", "gwcp", "lockset"))
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_detector_applies_the_model(path: Path, detector: str) -> None:
    assert summary(check(path, "--detector", detector)) == expected(path)


def causes(name: str, *options: str) -> list[str]:
    return [f["cause"] for f in check(KERNELS / name, *options)["findings"]]


def test_volatile_data_without_a_fence_misses_one() -> None:
    for name in ("atomic_vs_volatile.cu", "lock_outside.cu", "fence_read_after_release.cu", "lock_no_fence_before_release.cu"):
        (cause,) = causes(name)
        assert cause.startswith("missing fence: under ScoRD's rules volatile accesses are data"), name


def test_a_fence_orders_plain_data_for_no_one() -> None:
    (cause,) = causes("fence_plain_data.cu")
    assert cause.startswith("not a strong access: under ScoRD's rules fences, flags and locks order only volatile")


def test_a_lock_is_held_only_after_the_fence_that_follows_its_cas() -> None:
    (cause,) = causes("lock_no_fence_after_cas.cu")
    assert cause.startswith("missing fence after the atomicCAS at tests/kernels/scord/lock_no_fence_after_cas.cu:18")


def test_a_block_scope_fence_publishes_nothing_to_another_block() -> None:
    (cause,) = causes("fence_block_publish.cu")
    assert cause.startswith("insufficient scope of the release `membar.cta` at tests/kernels/scord/fence_block_publish.cu:18")


def test_lanes_of_one_warp_need_syncwarp() -> None:
    (cause,) = causes("intrawarp_volatile.cu")
    assert cause.startswith("the two accesses are in the same warp")


def test_a_common_lock_does_not_excuse_a_missing_release_fence_in_lockset() -> None:
    (finding,) = check(KERNELS / "lock_no_fence_before_release.cu", "--detector", "lockset")["findings"]
    assert finding["cause"].startswith("missing fence:")
