"""What `gpurace exec` costs over `gpurace check`, and how fast it gets through a program's many launches.

    python benchmarks/bench_exec.py [--repeat N] [--launches N] [--ints N]

(a) The same launch both ways: `examples/sum_app.cu` run by `exec -- 16384`
makes one launch of `block_sum` (grid 64, block 256), which is exactly the
launch of `check examples/sum_app.cu --grid 64 --block 256 --arg
buf:16384:iota --arg buf:1 --arg 16384`. Timed end to end (each command in a
process of its own: `exec` also builds the program with nvcc, `check` only
compiles the kernel to PTX) and for the launch alone: `exec`'s handling of
the launch request (its host line looked up, the launch checked on the
program's memory) against `gpurace.check.check` on a loaded module, both in
this process after a warm-up run, the two alternating so that a change in the machine's load strikes both
alike. The best of `--repeat` runs is shown, as wall time and as the CPU time of the thread that did the
work (which other processes on a busy machine do not inflate). `runtime own work` is the CPU time of the
launch request outside the `check` it makes (the launch's record, its arguments read from the program's
memory, the footprint and host checks, the program's initcheck), as a share of `check`'s own CPU time.

(b) `benchmarks/kernels/many_launches.cu`, `--launches` (300) small launches
of a race-free kernel, run through `gpurace.exec_program` with every launch
checked, with `--launch-count 10` and with `--launch-count 0` (every launch
only simulated). `total s` is the whole run, build included; `launch s` the
time spent in launch requests, and `launches/s` divides the launches by it;
`CPU s` and `per CPU s` are the same for the CPU time of those requests, and `own CPU` the runtime's own
share of it against the checks' own, where every launch is checked.

(c) `benchmarks/kernels/timing_loop.cu`, a tiled matrix product (16,384 threads) launched once and
`--launches` times on the same input, every launch checked: all launches after the first are replayed
(`runtime.repeats`), so the second row's `launch s` stays near the first's; `replayed` counts them.

(d) `benchmarks/kernels/streamed_copies.cu`, a program in the style of the CUDA samples' stream demos (a
`--ints`-int array copied back whole after each of 4 launches over it, then 4 times in quarters on 4 streams
with asynchronous copies: 20 launches, 20 copies of the whole array in all), every launch checked with
`--resident-threads` set to an eighth of the array so that the large launches run in waves. Each row is a
process of its own (its peak memory is its own), one with the launch geometry as it is (each per-thread array
computed when a detector first reads it: `sim.geometry`) and one with every coordinate array of each launch
built at its start, as before; both must print PASS. `CPU s` counts the program's process too.

Figures come from one machine and one run: compare rows, not machines.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gpurace.runtime.launch as runtime_launch
import gpurace.runtime.server as server
from gpurace.check import check
from gpurace.frontend.load import load_module
from gpurace.runtime import exec_program

ROOT = Path(__file__).resolve().parent.parent
GPURACE = str(Path(sys.executable).with_name("gpurace"))
SUM_APP = ROOT / "examples" / "sum_app.cu"
MANY = ROOT / "benchmarks" / "kernels" / "many_launches.cu"
TIMING_LOOP = ROOT / "benchmarks" / "kernels" / "timing_loop.cu"
STREAMED = ROOT / "benchmarks" / "kernels" / "streamed_copies.cu"
GEOMETRY_RUN = """
import resource, sys, time
from gpurace.limits import EXEC_TIMEOUT_S, Limits
from gpurace.runtime import exec_program
from gpurace.sim.geometry import Geometry

COORDINATES = ("tid", "ctaid", "block_of", "tid_linear", "warp_of", "lane")
if sys.argv[1] == "whole":
    create = Geometry.create

    def create_whole(*args, **kwargs):
        geometry = create(*args, **kwargs)
        for name in COORDINATES:
            getattr(geometry, name)
        return geometry

    Geometry.create = staticmethod(create_whole)
ints = int(sys.argv[2])
start = time.perf_counter()
result = exec_program(sys.argv[3], [str(ints)], capture_output=True, limits=Limits(timeout=EXEC_TIMEOUT_S, resident_threads=ints // 8))
seconds = time.perf_counter() - start
own, program = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = own.ru_utime + own.ru_stime + program.ru_utime + program.ru_stime
print(seconds, cpu, own.ru_maxrss * 1024, result.clean, result.stdout.split(": ")[-1].strip())
"""
N = 16384
CHECK_LAUNCH = ["--grid", str(N // 256), "--block", "256", "--arg", f"buf:{N}:iota", "--arg", "buf:1", "--arg", str(N)]


class LaunchTimer:
    """Sums the time the device server spends in launch requests (wall, and its thread's CPU time), by wrapping
    `DeviceServer._launch`, and the CPU time of the `check` each request makes (`check_cpu_seconds`): the
    difference is the runtime's own work, which the machine's load inflates no more than the check's."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.check_cpu_seconds = 0.0
        self.count = 0
        self._original = server.DeviceServer._launch
        self._original_check = runtime_launch.check

    def __enter__(self) -> LaunchTimer:
        original, original_check = self._original, self._original_check

        def timed_check(*args, **kwargs):
            cpu_start = time.thread_time()
            try:
                return original_check(*args, **kwargs)
            finally:
                self.check_cpu_seconds += time.thread_time() - cpu_start

        def timed(device_server, reader):
            start, cpu_start = time.perf_counter(), time.thread_time()
            try:
                return original(device_server, reader)
            finally:
                self.seconds += time.perf_counter() - start
                self.cpu_seconds += time.thread_time() - cpu_start
                self.count += 1

        server.DeviceServer._launch = timed
        runtime_launch.check = timed_check
        return self

    def __exit__(self, *exc) -> None:
        server.DeviceServer._launch = self._original
        runtime_launch.check = self._original_check


def wall(command: list[str], cwd: Path) -> float:
    """Seconds `gpurace COMMAND` takes, as a process of its own; it must exit 0 or 1 (findings)."""
    start = time.perf_counter()
    proc = subprocess.run([GPURACE, *command], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"gpurace {' '.join(command)} failed ({proc.returncode}):\n{proc.stderr}")
    return seconds


def exec_launch_seconds() -> tuple[float, float, float, int]:
    """Seconds (wall, CPU, CPU outside its check) of `exec`'s one launch request of sum_app, and the findings of
    the run."""
    with LaunchTimer() as timer:
        result = exec_program(SUM_APP, [str(N)], capture_output=True)
    assert timer.count == 1 and result.status == 0, (result.errors, result.stderr)
    return timer.seconds, timer.cpu_seconds, timer.cpu_seconds - timer.check_cpu_seconds, len(result.findings)


def check_launch_seconds(module) -> tuple[float, float, int]:
    """Seconds (wall, CPU) of `check` on the same launch, and its findings."""
    start, cpu_start = time.perf_counter(), time.thread_time()
    report = check(module, grid=N // 256, block=256, args=[f"buf:{N}:iota", "buf:1", str(N)])
    return time.perf_counter() - start, time.thread_time() - cpu_start, len(report.findings)


def overhead(repeat: int) -> None:
    exec_cmd = ["exec", str(SUM_APP), "--", str(N)]
    check_cmd = ["check", str(SUM_APP), *CHECK_LAUNCH]
    ends = {name: min(wall(cmd, ROOT) for _ in range(repeat)) for name, cmd in (("exec", exec_cmd), ("check", check_cmd))}
    module = load_module(SUM_APP)
    exec_launch_seconds(), check_launch_seconds(module)  # warm-up: imports, caches
    exec_runs, check_runs = [], []
    for _ in range(repeat):
        exec_runs.append(exec_launch_seconds())
        check_runs.append(check_launch_seconds(module))
    assert {f for *_, f in exec_runs} == {f for *_, f in check_runs}, "exec and check found different things"
    launch = {"exec": min(r[0] for r in exec_runs), "check": min(s for s, _, _ in check_runs)}
    launch_cpu = {"exec": min(r[1] for r in exec_runs), "check": min(c for _, c, _ in check_runs)}
    own = statistics.median(r[2] for r in exec_runs)
    print(f"(a) one launch of block_sum (grid {N // 256}, block 256), best of {repeat}")
    print(f"{'':<22} {'exec s':>8} {'check s':>8} {'exec/check':>11}")
    for name, figures in (("end to end", ends), ("the launch alone", launch), ("the launch alone, CPU", launch_cpu)):
        print(f"{name:<22} {figures['exec']:>8.3f} {figures['check']:>8.3f} {figures['exec'] / figures['check']:>11.3f}")
    print(f"{'launch spread (exec)':<22} {statistics.pstdev(r[0] for r in exec_runs):>8.3f} s standard deviation")
    print(
        f"{'runtime own work, CPU':<22} {own:>8.3f} s per launch (median): "
        f"{own / launch_cpu['check']:.1%} of check's CPU time on the launch"
    )
    print()


def own_share(timer: LaunchTimer) -> str:
    """The runtime's own CPU time in launch requests as a share of the checks they made ('-' with no check)."""
    if timer.check_cpu_seconds == 0:
        return "-"
    return f"{(timer.cpu_seconds - timer.check_cpu_seconds) / timer.check_cpu_seconds:.1%}"


def many_launches(launches: int) -> None:
    print(f"(b) {MANY.name}: {launches} launches of step (grid 2, block 128)")
    print(f"{'checked':<22} {'total s':>8} {'launch s':>9} {'launches/s':>11} {'CPU s':>8} {'per CPU s':>10} {'own CPU':>8}")
    for label, count in (("all", None), ("--launch-count 10", 10), ("--launch-count 0", 0)):
        start = time.perf_counter()
        with LaunchTimer() as timer:
            result = exec_program(MANY, [str(launches)], capture_output=True, launch_count=count)
        total = time.perf_counter() - start
        assert result.clean and result.launches == launches, (result.errors, result.stderr)
        print(
            f"{label:<22} {total:>8.2f} {timer.seconds:>9.2f} {launches / timer.seconds:>11.1f} {timer.cpu_seconds:>8.2f} "
            f"{launches / timer.cpu_seconds:>10.1f} {own_share(timer) if count is None else '-':>8}"
        )


def timing_loop(launches: int) -> None:
    print(f"(c) {TIMING_LOOP.name}: matmul (grid 8x8, block 16x16) launched on the same input, every launch checked")
    print(f"{'launches':<22} {'total s':>8} {'launch s':>9} {'replayed':>9}")
    for count in (1, launches):
        start = time.perf_counter()
        with LaunchTimer() as timer:
            result = exec_program(TIMING_LOOP, [str(count)], capture_output=True)
        total = time.perf_counter() - start
        assert result.clean and result.stdout == f"{count} launches, 0 wrong\n", (result.errors, result.stdout)
        print(f"{count:<22} {total:>8.2f} {timer.seconds:>9.2f} {result.replayed:>9}")


def geometry_run(variant: str, ints: int) -> tuple[float, float, int]:
    """(wall s, CPU s, peak bytes) of streamed_copies under exec in a process of its own, its launch geometry
    `whole` (every array built at the start) or `lazy`; it must be clean and print PASS."""
    proc = subprocess.run([sys.executable, "-c", GEOMETRY_RUN, variant, str(ints), str(STREAMED)], capture_output=True, text=True)
    fields = proc.stdout.split()
    if proc.returncode or fields[-2:] != ["True", "PASS"]:
        sys.exit(f"streamed_copies ({variant} geometry) failed:\n{proc.stdout}{proc.stderr}")
    return float(fields[0]), float(fields[1]), int(fields[2])


def streamed_copies(ints: int) -> None:
    print(f"(d) {STREAMED.name}: {ints:,} ints, 20 launches and 20 copies of {ints * 4 / 2**20:.0f} MB, waves of {ints // 8:,} threads")
    print(f"{'launch geometry':<22} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    runs = {variant: geometry_run(variant, ints) for variant in ("whole", "lazy")}
    for label, variant in (("built whole (before)", "whole"), ("built on first use", "lazy")):
        wall_s, cpu_s, peak = runs[variant]
        print(f"{label:<22} {wall_s:>8.2f} {cpu_s:>8.2f} {peak / 2**20:>8.0f}")
    (w0, c0, p0), (w1, c1, p1) = runs["whole"], runs["lazy"]
    print(f"{'before / after':<22} {w0 / w1:>8.2f} {c0 / c1:>8.2f} {p0 / p1:>8.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure of (a); the best is shown")
    ap.add_argument("--launches", type=int, default=300, help="launches of the program of (b)")
    ap.add_argument("--ints", type=int, default=1 << 22, help="ints of the array of (d) (a multiple of 2048)")
    opts = ap.parse_args()
    overhead(opts.repeat)
    many_launches(opts.launches)
    print()
    timing_loop(opts.launches // 3)
    print()
    streamed_copies(opts.ints)


if __name__ == "__main__":
    main()
