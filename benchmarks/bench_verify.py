"""`gpurace verify` over the whole kernel corpus: time per kernel, and what it proves.

For every file under tests/kernels/ with an `@launch`, the launch's kernel
is verified with that launch's grid and block (and `-D`/`-G`/`--arch`), confirmation
off (it runs the simulator: measured separately by the check benchmarks).
Kernels are grouped by their `@expect`: clean (race-free for that launch),
racy (a data race expected) and other findings. The table gives, per group,
how many kernels were proved race-free (every object, barriers uniform), had
alarms, stayed unknown or were refused as input (a legacy texture
reference, say), and the median and worst verification time. A
racy kernel proved race-free would be a soundness bug: the last line counts
them (the test suite checks the same, and must keep it 0). With
`--benign-same-value` stores of the same value do not race, and the racy
kernels whose races are all such stores (`@expect_cause both threads wrote
the same value`) form a group of their own, "same-value", which may be proved.

    .venv/bin/python benchmarks/bench_verify.py [--query-budget MILLIONS] [--benign-same-value]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from corpus import read_header  # noqa: E402

from gpurace.detect.findings import SAME_VALUE  # noqa: E402
from gpurace.errors import UserError  # noqa: E402
from gpurace.frontend.gpuverify import read_launch_header  # noqa: E402
from gpurace.frontend.load import load_module  # noqa: E402
from gpurace.sim.geometry import parse_dims  # noqa: E402
from gpurace.verify import DEFAULT_QUERY_BUDGET, verify_module  # noqa: E402


def _option(words: list[str], flag: str) -> str | None:
    return words[words.index(flag) + 1] if flag in words else None


def verify_file(path: Path, budget: int, benign_same_value: bool):
    """(group, outcome, seconds) for the first launch of one corpus file; None when it has none.

    A file verify refuses as input (a legacy texture reference, a launch
    CUDA would refuse) is outcome "refused".
    """
    header = read_header(path)
    gv = read_launch_header(path)
    if not header.launches and gv is None:
        return None
    words = shlex.split(header.launches[0]) if header.launches else []
    grid = parse_dims(_option(words, "--grid"), "grid") if "--grid" in words else (gv.grid if gv else None)
    block = parse_dims(_option(words, "--block"), "block") if "--block" in words else (gv.block if gv else None)
    defines = [words[i + 1] for i, w in enumerate(words) if w == "-D"] + list(gv.defines if gv else ())
    expect = header.expect
    group = "racy" if any(e.startswith("data-race") for e in expect) else "clean" if expect == ["clean"] or (not expect and gv and gv.expect == "pass") else "other"
    if group == "racy" and benign_same_value and SAME_VALUE in header.extra.get("expect_cause", []):
        group = "same-value"
    arch = {"arch": _option(words, "--arch")} if "--arch" in words else {}
    started = time.perf_counter()
    try:
        module = load_module(path, defines=defines, device_debug="-G" in words, **arch)
        started = time.perf_counter()
        verdicts, _ = verify_module(
            module, kernel=_option(words, "--kernel"), grid=grid, block=block, query_budget=budget, confirm=False,
            benign_same_value=benign_same_value,
        )
    except UserError:
        return group, "refused", time.perf_counter() - started
    seconds = time.perf_counter() - started
    (v,) = verdicts
    if any(o.alarms for o in v.objects) or v.divergence:
        outcome = "alarm"
    elif v.unknown or v.barriers == "unknown" or any(o.verdict == "unknown" for o in v.objects):
        outcome = "unknown"
    else:
        outcome = "proved"
    return group, outcome, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query-budget", type=int, default=DEFAULT_QUERY_BUDGET, help="as `gpurace verify --query-budget`")
    parser.add_argument("--benign-same-value", action="store_true", help="verify as `gpurace verify --benign-same-value` does")
    opts = parser.parse_args()
    rows: dict[str, list[tuple[str, float]]] = {"clean": [], "racy": [], "other": []}
    if opts.benign_same_value:
        rows["same-value"] = []
    unsound = []
    files = sorted((ROOT / "tests" / "kernels").rglob("*.cu"))
    for path in files:
        result = verify_file(path, opts.query_budget, opts.benign_same_value)
        if result is None:
            continue
        group, outcome, seconds = result
        rows[group].append((outcome, seconds))
        if group == "racy" and outcome == "proved":
            unsound.append(path.relative_to(ROOT))
    print(f"{'group':8} {'kernels':>7} {'proved':>7} {'alarm':>6} {'unknown':>8} {'refused':>8} {'median s':>9} {'worst s':>8}")
    every = []
    for group, items in rows.items():
        times = [s for _, s in items]
        every += times
        times = times or [0.0]  # a group with no kernels
        count = {k: sum(1 for o, _ in items if o == k) for k in ("proved", "alarm", "unknown", "refused")}
        print(
            f"{group:8} {len(items):7} {count['proved']:7} {count['alarm']:6} {count['unknown']:8} {count['refused']:8} "
            f"{statistics.median(times):9.2f} {max(times):8.2f}"
        )
    print(f"{'all':8} {len(every):7} {'':7} {'':6} {'':8} {'':8} {statistics.median(every):9.2f} {max(every):8.2f}")
    clean = rows["clean"]
    print(f"clean kernels proved race-free: {sum(1 for o, _ in clean if o == 'proved')}/{len(clean)}")
    print(f"racy kernels called race-free (soundness bugs): {len(unsound)} {[str(p) for p in unsound]}")


if __name__ == "__main__":
    main()
