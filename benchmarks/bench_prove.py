"""`check` against `check --prove` on the race-free corpus kernels that verify proves.

Candidates: every file under tests/kernels/ whose `@expect` is `clean` (or a
GPUVerify `//pass` file) with an `@launch` (or a GPUVerify header), and every
file of tests/kernels/verify/ whose `@verify_launch` fixes the grid and block
(run with automatic arguments). Each is checked twice through the command
line, in one process: `gpurace check ... --stats --format json`, then the same
with `--prove`; a kernel enters the table when `--prove` proved it
(every object race-free, barriers uniform). Per kernel the table gives the
schedules each command ran, the simulation time of `check` (every schedule),
the time of `check --prove` (verify plus its simulation) and their ratio;
the totals follow, and the whole commands' wall time (compilation
included) for both. Unproved candidates are counted, not timed.

With `--racy`, the soundness sweep instead: every corpus kernel whose
`@expect` has a data race is checked with `--prove`, and a race the
simulation reports on an object verify proved race-free (a contradiction in
the proof section) is listed; there must be none.

    .venv/bin/python benchmarks/bench_prove.py [--racy] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from corpus import read_header  # noqa: E402

from gpurace.cli import cli  # noqa: E402
from gpurace.frontend.gpuverify import read_launch_header  # noqa: E402


def launch_options(path: Path) -> list[str] | None:
    """The options of a race-free candidate's launch, or None when the file is not one."""
    header = read_header(path)
    gv = read_launch_header(path)
    if path.parent.name == "verify" and not header.launches:
        words = shlex.split(header.extra.get("verify_launch", [""])[0])
        return words if "--grid" in words and "--block" in words else None
    clean = header.expect == ["clean"] or (not header.expect and gv is not None and gv.expect == "pass")
    if not clean or not (header.launches or gv is not None):
        return None
    words = shlex.split(header.launches[0]) if header.launches else []
    return None if "--search" in words else words


def racy_options(path: Path) -> list[str] | None:
    """The options of a racy corpus kernel's launch (no input search), or None when the file is not one."""
    header = read_header(path)
    if not any(e.startswith("data-race") for e in header.expect):
        return None
    if not header.launches and read_launch_header(path) is None:
        return None
    words = shlex.split(header.launches[0]) if header.launches else []
    return None if "--search" in words else words


def soundness(files: list[Path]) -> None:
    """`--racy`: check --prove every racy kernel; list contradictions, and what verify said overall."""
    outcomes = {"proved": 0, "alarms or unknown": 0, "could not run": 0}
    contradictions = []
    for path in files:
        words = racy_options(path)
        if words is None:
            continue
        report, _ = run(path, words, "--prove")
        if report is None:
            outcomes["could not run"] += 1
            continue
        outcomes["proved" if report["proof"]["proved"] else "alarms or unknown"] += 1
        contradictions += [(path.relative_to(ROOT), c) for c in report["proof"]["contradictions"]]
    print(f"racy kernels: {sum(outcomes.values())} ({', '.join(f'{k} {v}' for k, v in outcomes.items())})")
    print(f"contradictions (soundness bugs): {len(contradictions)}")
    for path, c in contradictions:
        print(f"  {path}: {c}")


def run(path: Path, words: list[str], *extra: str) -> tuple[dict | None, float]:
    """The JSON report of one `check` (None when it could not run) and the command's wall time."""
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["check", str(path), *words, "--stats", "--format", "json", *extra])
    seconds = time.perf_counter() - started
    return (json.loads(result.stdout) if result.exit_code in (0, 1) else None), seconds


def schedules(report: dict) -> int:
    return report["launch"].get("schedules", {}).get("count", 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="Only files whose path contains this text.")
    parser.add_argument("--racy", action="store_true", help="The soundness sweep over the racy corpus instead.")
    opts = parser.parse_args()
    files = [p for p in sorted((ROOT / "tests" / "kernels").rglob("*.cu")) if opts.only in str(p)]
    if opts.racy:
        soundness(files)
        return
    candidates = [(p, w) for p in files if (w := launch_options(p)) is not None]
    if not candidates:
        print("no race-free candidates")
        return
    run(*candidates[0])  # the first compile in a process pays for loading the compiler
    rows, unproved, failed = [], [], []
    walls = {"check": 0.0, "prove": 0.0}
    for path, words in candidates:
        plain, wall_plain = run(path, words)
        proved, wall_prove = run(path, words, "--prove")
        if plain is None or proved is None:
            failed.append(path)
            continue
        if not proved["proof"]["proved"]:
            unproved.append(path)
            continue
        walls["check"] += wall_plain
        walls["prove"] += wall_prove
        check_s = plain["stats"]["seconds"]
        prove_s = proved["stats"]["verify_seconds"] + proved["stats"]["seconds"]
        rows.append((str(path.relative_to(ROOT / "tests" / "kernels")), schedules(plain), schedules(proved), check_s, prove_s))
    print(f"{'kernel':52} {'sched':>5} {'prove':>5} {'check s':>8} {'prove s':>8} {'ratio':>6}")
    for name, n_plain, n_proved, check_s, prove_s in rows:
        print(f"{name:52} {n_plain:5} {n_proved:5} {check_s:8.3f} {prove_s:8.3f} {prove_s / check_s:6.2f}")
    several = [r for r in rows if r[1] > 1]
    for label, group in (("all proved", rows), ("proved, several schedules by default", several)):
        if group:
            total_check = sum(r[3] for r in group)
            total_prove = sum(r[4] for r in group)
            ratios = [r[4] / r[3] for r in group]
            print(
                f"{label}: {len(group)} kernels, check {total_check:.2f} s, check --prove {total_prove:.2f} s "
                f"(ratio of totals {total_prove / total_check:.2f}, median ratio {statistics.median(ratios):.2f})"
            )
    print(f"whole commands (compilation included): check {walls['check']:.2f} s, check --prove {walls['prove']:.2f} s")
    print(f"candidates {len(candidates)}: proved {len(rows)}, not proved {len(unproved)}, could not run {len(failed)}")
    for path in failed:
        print(f"  could not run: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
