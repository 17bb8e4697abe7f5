"""Throughput of the simulated memory on 1M lanes: loads, stores and atomics per second.

Run: `python benchmarks/bench_memory.py [--lanes N]`. Prints one line per
pattern: coalesced (lane i touches element i), random (a random permutation),
and atomics that all hit one address (the worst case for serialisation).
Each figure includes address resolution (bounds, alignment, canonical
addresses), which the engine pays once per memory instruction.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpurace.sim.memory import Memory, Space

BLOCK = 256


def rate(fn, lanes: int, repeat: int = 5) -> float:
    """Best-of-`repeat` lanes per second of `fn()`."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return lanes / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", type=int, default=1 << 20)
    args = parser.parse_args()
    n = args.lanes
    mem = Memory(n // BLOCK, BLOCK)
    buf = mem.allocate_global("buf", 8 * n, symbol=False)
    t = np.arange(n, dtype=np.int64)
    blocks = t // BLOCK
    rng = np.random.default_rng(0)
    patterns = {
        "coalesced": (buf.base + 4 * t).astype(np.uint64),
        "random": (buf.base + 4 * rng.permutation(n)).astype(np.uint64),
        "same-address": np.full(n, buf.base, dtype=np.uint64),
    }
    u32 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    ones_f32 = np.full(n, 1.0, np.float32).view(np.uint32)

    def load(addrs):
        return lambda: mem.load(mem.resolve(Space.GLOBAL, addrs, t, blocks, 4), 4)

    def store(addrs):
        return lambda: mem.store(mem.resolve(Space.GLOBAL, addrs, t, blocks, 4, write=True), 4, u32)

    def atomic(addrs, op, ptx_type, a, b=None):
        return lambda: mem.atomic(mem.resolve(Space.GLOBAL, addrs, t, blocks, 4, write=True), op, ptx_type, a, b)

    print(f"{n} lanes; lanes per second (resolve + operation), best of 5")
    rows = [
        ("ld.global.u32", "coalesced", load(patterns["coalesced"])),
        ("ld.global.u32", "random", load(patterns["random"])),
        ("st.global.u32", "coalesced", store(patterns["coalesced"])),
        ("st.global.u32", "random", store(patterns["random"])),
        ("st.global.u32", "same-address", store(patterns["same-address"])),
        ("ld.global.v4.u32", "coalesced", lambda: mem.load(
            mem.resolve(Space.GLOBAL, (buf.base + 16 * (t // 2)).astype(np.uint64), t, blocks, 16), 4, 4)),
        ("atom.add.u32", "coalesced", atomic(patterns["coalesced"], "add", "u32", u32)),
        ("atom.add.u32", "random", atomic(patterns["random"], "add", "u32", u32)),
        ("atom.add.u32", "same-address", atomic(patterns["same-address"], "add", "u32", u32)),
        ("atom.add.f32", "same-address", atomic(patterns["same-address"], "add", "f32", ones_f32)),
        ("atom.max.s32", "same-address", atomic(patterns["same-address"], "max", "s32", u32)),
        ("atom.exch.b32", "same-address", atomic(patterns["same-address"], "exch", "b32", u32)),
        ("atom.cas.b32 (lock)", "same-address", atomic(patterns["same-address"], "cas", "b32", np.zeros(n), np.ones(n))),
        ("atom.inc.u32", "same-address", atomic(patterns["same-address"], "inc", "u32", np.full(n, 1000))),
    ]
    for name, pattern, fn in rows:
        print(f"{name:22s} {pattern:13s} {rate(fn, n) / 1e6:9.1f} M/s")


if __name__ == "__main__":
    main()
