"""Throughput of the `hb` and `gwcp` detectors against RAPID's HB and WCP engines, on the same lock-heavy GPU executions.

    python benchmarks/bench_rapid.py [--rapid DIR] [--cache DIR] [--jvm-heap 8g] [--rapid-timeout 1200] [--only NAME]

For each kernel in `benchmarks/kernels/` the launch below is simulated once
and recorded as a binary trace (`check(..., sinks=[TraceRecorder()])`), then
converted to RAPID's STD format (`rapid_trace.py`, whose docstring gives the
mapping); both files are cached in `--cache` (default: a directory under the
system's temporary directory) and rebuilt when a kernel or launch changes.
Then, each in its own process so that peak memory is its own:

- gpurace `hb` and `gwcp`: the trace is read, then the detector pass
  (`on_event` for every event, then `finish`) is timed alone, as `analyze`
  runs it; `wall` adds reading the trace and starting Python;
- RAPID `HB` (DJIT+ vector clocks) and `WCP`: the time RAPID prints ("Time
  for analysis" / "Time for full analysis"), which includes its parsing of the
  STD file (two passes for HB, three for WCP) but not JVM startup; `wall` is
  the whole `java` process.

Events per second use each tool's own event count: gpurace's per-thread
events (an access batch of 32 lanes is 32 events; fences, barriers and exits
one per thread) and RAPID's lines. Races: gpurace's findings (deduplicated by
kind, memory space and pair of source lines); RAPID's racy events / racy
locations (pcs). Peak memory is the process's maximum resident set.

Target (issue): `gwcp` at least RAPID WCP's events per second, `hb` at least
RAPID HB's. Without `--rapid` (or `RAPID_HOME`) only gpurace's rows are
printed; benchmarks/README.md says how to build RAPID.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness import measure

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"


@dataclass(frozen=True)
class Workload:
    """One traced launch: the kernel file under benchmarks/kernels/ and its launch."""

    name: str
    grid: int
    block: int
    args: tuple[str, ...]

    def key(self) -> str:
        source = (KERNELS / f"{self.name}.cu").read_text()
        return hashlib.sha256(json.dumps([source, self.grid, self.block, self.args]).encode()).hexdigest()[:16]


def _histogram(grid: int, block: int, items: int, buckets: int) -> Workload:
    n = grid * block
    return Workload("lock_histogram", grid, block, (f"buf:{n * items}:iota", f"buf:{buckets}", f"buf:{buckets}", f"buf:{n * items + n}", str(items), str(buckets)))


def _shared_histogram(grid: int, block: int, items: int) -> Workload:
    n = grid * block
    return Workload("shared_lock_histogram", grid, block, (f"buf:{n * items}:iota", f"buf:{n * items}", str(items)))


# 1,024 threads: RAPID's vector clocks have one entry per thread for every thread, lock and variable.
WORKLOADS = [_histogram(4, 256, 128, 257), _shared_histogram(4, 256, 128)]

RECORD = r"""
import json, sys
sys.path.insert(0, sys.argv[3])
from gpurace.check import check
from gpurace.trace import binary
from gpurace.trace.record import TraceRecorder
from rapid_trace import lane_events, write_std
source, out, _, launch = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
recorder = TraceRecorder()
report = check(source, detector="hb", schedules=1, sinks=[recorder], **launch)
trace = recorder.trace(kernel=report.kernel, mangled=report.mangled, source=report.source)
binary.write(trace, out + ".trace")
conversion = write_std(trace, out + ".std")
print(json.dumps(dict(events=lane_events(trace), summary=conversion.summary(), lines=conversion.lines)))
"""

DETECT = r"""
import json, resource, sys, time
from gpurace.check import choose_detector
from gpurace.detect.findings import FindingSet
from gpurace.trace.replay import context_of, read_trace
path, detector = sys.argv[1], sys.argv[2]
trace = read_trace(path)
ctx = context_of(trace, "cuda")
det = choose_detector(detector, ctx.program)(ctx)
start = time.perf_counter()
for event in trace.events:
    det.on_event(event)
findings = FindingSet()
findings.extend(det.finish())
seconds = time.perf_counter() - start
races = sum(f.kind == "data-race" for f in findings.sorted())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(dict(seconds=seconds, races=races, peak=peak)))
"""

RAPID_TIME = re.compile(r"Time for (?:full )?analysis = (\d+) milliseconds")
RAPID_EVENTS = re.compile(r"Number of 'racy' events found = (\d+)")
RAPID_LINES = re.compile(r"Number of 'racy' lines found = (\d+)")


def prepare(workload: Workload, cache: Path) -> tuple[Path, Path, dict]:
    """The cached binary trace, STD file and conversion summary of a workload, recorded first if missing."""
    stem = cache / f"{workload.name}-{workload.key()}"
    meta = stem.with_suffix(".json")
    if not meta.exists():
        print(f"recording {workload.name} (grid {workload.grid}, block {workload.block}) into {cache} ...", file=sys.stderr, flush=True)
        launch = dict(grid=workload.grid, block=workload.block, args=list(workload.args))
        proc = subprocess.run(
            [sys.executable, "-c", RECORD, str(KERNELS / f"{workload.name}.cu"), str(stem), str(HERE), json.dumps(launch)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            fail(f"recording {workload.name} failed:\n{proc.stderr}")
        meta.write_text(proc.stdout.strip().splitlines()[-1])
    return Path(f"{stem}.trace"), Path(f"{stem}.std"), json.loads(meta.read_text())


def time_gpurace(trace: Path, detector: str) -> dict:
    start = time.perf_counter()
    m = measure(DETECT, trace, detector, {})
    return dict(m, wall=time.perf_counter() - start, races=str(m["races"]))


def time_rapid(rapid: Path, engine: str, std: Path, heap: str, timeout: float) -> dict:
    """Run one RAPID engine (`HB` or `WCP`) on an STD file; its own time, the wall time and the peak memory of the JVM.

    The JVM is stopped after `timeout` seconds; its row then says so."""
    classpath = os.pathsep.join([str(rapid / "rapid.jar"), str(rapid / "lib" / "*"), str(rapid / "lib" / "jgrapht" / "*")])
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(["java", f"-Xmx{heap}", "-cp", classpath, engine, "-f", "std", "-p", str(std)], stdout=out, stderr=subprocess.STDOUT)
        timed_out = False
        while (waited := os.wait4(proc.pid, os.WNOHANG))[0] == 0:
            if time.perf_counter() - start > timeout:
                proc.kill()
                timed_out = True
                waited = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        _, status, usage = waited
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    took = RAPID_TIME.search(text)
    if timed_out or proc.returncode != 0 or took is None or "OutOfMemoryError" in text:
        if timed_out:
            outcome = f"unfinished: stopped after {timeout:.0f} s"
        else:
            outcome = "failed: " + ("out of memory" if "OutOfMemoryError" in text else f"exit status {proc.returncode}")
        return dict(seconds=None, wall=wall, peak=usage.ru_maxrss * 1024, races=outcome)
    races = f"{RAPID_EVENTS.search(text).group(1)} events / {RAPID_LINES.search(text).group(1)} pcs"
    return dict(seconds=int(took.group(1)) / 1000, wall=wall, peak=usage.ru_maxrss * 1024, races=races)


def fail(message: str) -> None:
    """Stop with `message` on stderr and exit status 2 (the input could not be handled)."""
    print(f"bench_rapid: {message}", file=sys.stderr)
    sys.exit(2)


def rapid_home(arg: str | None) -> Path | None:
    """The RAPID directory from `--rapid` or `RAPID_HOME`, checked; None when neither is given."""
    home = arg or os.environ.get("RAPID_HOME")
    if not home:
        return None
    path = Path(home)
    if not (path / "rapid.jar").is_file():
        fail(f"--rapid {home}: no rapid.jar there (build RAPID with `ant jar`, see benchmarks/README.md)")
    if shutil.which("java") is None:
        fail("--rapid: `java` is not on PATH (install a JDK, see benchmarks/README.md)")
    return path


def row(trace: str, events: int, tool: str, m: dict) -> str:
    seconds = "-" if m["seconds"] is None else f"{m['seconds']:.2f}"
    rate = "-" if not m["seconds"] else f"{events / m['seconds'] / 1e6:.3f}"
    return f"{trace:<22} {events:>9} {tool:<13} {seconds:>8} {m['wall']:>7.2f} {rate:>8} {m['peak'] / 2**20:>8.0f}  {m['races']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rapid", help="RAPID checkout with rapid.jar built (default: $RAPID_HOME)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "gpurace-bench-rapid"), help="where traces are kept between runs")
    parser.add_argument("--jvm-heap", default="8g", help="RAPID's maximum Java heap (-Xmx), default 8g")
    parser.add_argument("--rapid-timeout", type=float, default=1200, help="seconds after which a RAPID run is stopped, default 1200")
    parser.add_argument("--only", choices=[w.name for w in WORKLOADS], help="run one workload")
    opts = parser.parse_args()
    rapid = rapid_home(opts.rapid)
    cache = Path(opts.cache)
    cache.mkdir(parents=True, exist_ok=True)

    print(f"{'trace':<22} {'events':>9} {'tool/engine':<13} {'seconds':>8} {'wall':>7} {'M ev/s':>8} {'peak MB':>8}  races reported", flush=True)
    notes = []
    for workload in WORKLOADS:
        if opts.only and workload.name != opts.only:
            continue
        trace, std, meta = prepare(workload, cache)
        notes.append(f"{workload.name}: grid {workload.grid} block {workload.block}; {meta['summary']}")
        for detector in ("hb", "gwcp"):
            print(row(workload.name, meta["events"], f"gpurace {detector}", time_gpurace(trace, detector)), flush=True)
        if rapid is not None:
            for engine in ("HB", "WCP"):
                print(row(workload.name, meta["lines"], f"RAPID {engine}", time_rapid(rapid, engine, std, opts.jvm_heap, opts.rapid_timeout)), flush=True)
    print("seconds: gpurace's detector pass alone; RAPID's own reported time (parsing its text trace included, JVM startup not). wall: the whole process.")
    print("\n".join(notes))
    if rapid is None:
        print("RAPID rows left out: build RAPID outside this repository and pass --rapid DIR or set RAPID_HOME (see benchmarks/README.md).")


if __name__ == "__main__":
    main()
