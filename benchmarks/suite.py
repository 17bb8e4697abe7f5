"""Run a labelled kernel-only suite (GPUVerify-style headers) and compare its labels with gpurace's verdicts.

    python benchmarks/suite.py DIR [--jobs 2] [--timeout 60] [--search] [--show N]

Every `*.cu` file under DIR whose first lines hold a GPUVerify launch header
(`//pass` or `//xfail:...`, then `//--blockDim=... --gridDim=...`) is checked
with `gpurace check FILE --format json` and no other launch options, exactly as
a user would run it. A `pass` label expects no finding; an `xfail` label
expects some finding or a refusal (GPUVerify's xfail also covers kernels it
could not prove, so a clean gpurace run there is not necessarily wrong). The
table counts agreement per label and lists the disagreements and the files
gpurace refused (exit 2) with the first line of the reason.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gpurace.frontend.gpuverify import read_launch_header

GPURACE = Path(sys.executable).parent / "gpurace"


def check(path: Path, timeout: float, search: bool) -> tuple[str, str, float]:
    """(verdict, detail, seconds): verdict is clean, findings, refused or timeout."""
    cmd = [str(GPURACE), "check", str(path), "--format", "json"] + (["--search"] if search else [])
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", "", timeout
    seconds = time.perf_counter() - start
    if proc.returncode == 2:
        reason = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return "refused", reason, seconds
    if proc.returncode not in (0, 1):
        return "crashed", (proc.stderr.strip().splitlines() or ["?"])[-1], seconds
    kinds = sorted({f["kind"] for f in json.loads(proc.stdout)["findings"]})
    return ("findings" if kinds else "clean"), ",".join(kinds), seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--search", action="store_true", help="run each file with --search")
    ap.add_argument("--show", type=int, default=40, help="disagreements and refusals to list")
    opts = ap.parse_args()

    files = []
    for path in sorted(opts.directory.rglob("*.cu")):
        header = read_launch_header(path)
        if header is not None and header.expect is not None:
            files.append((path, header.expect.lower().split(":")[0]))
    with ThreadPoolExecutor(opts.jobs) as pool:
        results = list(pool.map(lambda f: check(f[0], opts.timeout, opts.search), files))

    table: Counter = Counter()
    notes = []
    for (path, label), (verdict, detail, _) in zip(files, results):
        table[label, verdict] += 1
        disagrees = (label == "pass" and verdict != "clean") or (label == "xfail" and verdict == "clean")
        if disagrees or verdict in ("refused", "crashed", "timeout"):
            notes.append(f"{label:<6} {verdict:<9} {path.relative_to(opts.directory)}  {detail[:150]}")
    verdicts = ("clean", "findings", "refused", "timeout", "crashed")
    print(f"{len(files)} labelled files, {sum(r[2] for r in results):.1f} s in all")
    print(f"{'label':<8}" + "".join(f"{v:>10}" for v in verdicts))
    for label in sorted({lab for _, lab in files}):
        print(f"{label:<8}" + "".join(f"{table[label, v]:>10}" for v in verdicts))
    print()
    for line in notes[: opts.show]:
        print(line)
    if len(notes) > opts.show:
        print(f"... and {len(notes) - opts.show} more")


if __name__ == "__main__":
    main()
