"""What telling same-value write-write races apart costs the race detectors.

    python benchmarks/bench_same_value.py

Each kernel is simulated once with a recording sink; then each detector
consumes the recorded event stream, alternately as it is and with the stored
values withheld (`written_values.stored_words` answering None, so no store's
bytes are converted, kept or compared), five times each, and the best times
are compared. Timing the detectors alone over the same events keeps the
simulation, and most of the noise of a shared machine, out of the ratio.
The kernels: a shared-memory tree reduction and a global-memory saxpy without
races, and a flag every thread raises (same-value races on every store).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from harness import compile_all

from gpurace.detect import hb, interval, tsan
from gpurace.detect.base import DetectorContext
from gpurace.detect.gwcp import GwcpDetector
from gpurace.detect.hb import HappensBeforeDetector
from gpurace.detect.interval import IntervalDetector
from gpurace.detect.tsan import TsanDetector
from gpurace.frontend.ptx.parser import parse_ptx
from gpurace.sim.launch import simulate

KERNELS = {
    "reduce-shared": (
        r"""
        __global__ void reduce(const int* in, int* out) {
          __shared__ int s[256];
          int t = threadIdx.x;
          s[t] = in[blockIdx.x * 256 + t];
          __syncthreads();
          for (int k = 128; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
          if (t == 0) out[blockIdx.x] = s[0];
        }
        """,
        dict(grid=(256,), block=(256,), args=["buf:65536:iota", "buf:256"]),
    ),
    "saxpy-global": (
        r"""
        __global__ void saxpy(const float* x, float* y, float a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) { float v = y[i]; for (int k = 0; k < 8; ++k) { v = a * x[i] + v * 0.5f; y[i] = v; } }
        }
        """,
        dict(grid=(1024,), block=(256,), args=["f32:262144:ones", "f32:262144", "2.0", "262144"]),
    ),
    "flag-shared": (
        r"""
        __global__ void flag(const int* in, int* out) {
          __shared__ int found;
          if (threadIdx.x == 0) found = 0;
          __syncthreads();
          for (int k = 0; k < 8; ++k) { if (in[blockIdx.x * blockDim.x + threadIdx.x] > k) found = 1; __syncthreads(); }
          if (threadIdx.x == 0) out[blockIdx.x] = found;
        }
        """,
        dict(grid=(256,), block=(256,), args=["buf:65536:iota", "buf:256"]),
    ),
}

DETECTORS = {"interval": IntervalDetector, "hb": HappensBeforeDetector, "gwcp": GwcpDetector, "tsan": TsanDetector}


class Recorder:
    """Keeps the event stream of one launch, and what a detector's context needs."""

    def __init__(self) -> None:
        self.events: list = []
        self.context: DetectorContext | None = None

    def sinks(self, program, geometry, memory) -> list:
        self.context = DetectorContext(program, geometry, memory)
        return [self]

    def on_event(self, event) -> None:
        self.events.append(event)


def detect_seconds(kind: type, rec: Recorder, values: bool) -> tuple[float, list]:
    modules = (hb, interval, tsan)
    saved = [m.stored_words for m in modules]
    if not values:
        for m in modules:
            m.stored_words = lambda ev: None
    try:
        start = time.perf_counter()
        det = kind(rec.context)
        for ev in rec.events:
            det.on_event(ev)
        findings = det.finish()
        return time.perf_counter() - start, findings
    finally:
        for m, f in zip(modules, saved):
            m.stored_words = f


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ptxs = compile_all({name: source for name, (source, _) in KERNELS.items()}, Path(tmp))
        print(f"{'kernel':<14} {'detector':<9} {'values off':>10} {'values on':>10} {'ratio':>6} {'findings':>9} {'warnings':>9}")
        for name, (_, launch) in KERNELS.items():
            rec = Recorder()
            simulate(parse_ptx(ptxs[name].read_text(), str(ptxs[name])), sink_factory=rec.sinks, **launch)
            for detector, kind in DETECTORS.items():
                off, on = [], []
                for _ in range(5):
                    off.append(detect_seconds(kind, rec, False)[0])
                    seconds, findings = detect_seconds(kind, rec, True)
                    on.append(seconds)
                warnings = sum(f.severity == "warning" for f in findings)
                print(
                    f"{name:<14} {detector:<9} {min(off):>10.3f} {min(on):>10.3f} {min(on) / min(off):>6.3f} "
                    f"{len(findings):>9} {warnings:>9}"
                )


if __name__ == "__main__":
    main()
