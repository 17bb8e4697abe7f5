"""Child grids (CUDA Dynamic Parallelism) under `gpurace exec`: run after their parent, and checked against it.

The launches a grid's threads make are recorded while it runs
(`sim.device_runtime`); when its run is over, each child grid runs as a
launch of its own on the same device memory (`launch.run_launch`, so it is
checked, filtered and counted like a host launch), its own children after it,
recursively. The grids of the stream they were launched into run in launch
order, and `cudaStreamTailLaunch` grids after all the others. Then the
ordering the CUDA Programming Guide gives ("CUDA Dynamic Parallelism",
memory coherence and streams) decides which of their accesses race:

* a child grid, and all its descendants, see what happened before the launch
  in the launching thread: its own accesses, and other threads' that a
  barrier, warp sync or release/acquire pattern orders before it (by the
  happens-before detector's clocks; under the barrier-interval detector, of
  kernels that synchronise by barriers alone, the block's accesses before a
  barrier the launching thread completed); they
  also see what came before an earlier launch into the same stream (that
  grid ended before this one began).
  Everything else the parent grid did is unordered with them: the parent's
  accesses after the launch, and other blocks' accesses (CUDA 12 has no
  device-side cudaDeviceSynchronize to wait for a child);
* two children of one grid are ordered when they were launched into the same
  stream (a block's implicit NULL stream, or a stream the grid created), and
  unordered otherwise: different blocks' NULL streams, different created
  streams, `cudaStreamFireAndForget`;
* a `cudaStreamTailLaunch` grid starts when its parent and all the parent's
  other work have ended: ordered after all of it (tail launches of one grid
  run in launch order).

Conflicting unordered accesses (one a write; not both atomics of device
scope) are `data-race` findings naming the two source lines. To the host, a
grid completes when all its descendants have: they are queued on the parent's
stream after it (`server.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from gpurace.detect.findings import ERROR, Finding, Site
from gpurace.detect.footprint import Footprint, LaunchFootprint
from gpurace.frontend.ptx.debuginfo import user_frame
from gpurace.runtime.protocol import CudaError
from gpurace.runtime.sites import HostFrame
from gpurace.runtime.streams import DEVICE_WIDE
from gpurace.sim.device_runtime import FIRE_AND_FORGET, NULL_STREAM, DeviceLaunch, DeviceLaunchLog, only_lanes
from gpurace.sim.printf import DeviceOutput


@dataclass
class Grid:
    """One grid of a launch tree: the launch findings name, what it touched, and the instruction behind a byte."""

    launch: dict
    footprint: Footprint
    site: Callable[[int, bool], Site | None]

    @property
    def what(self) -> str:
        return f"kernel {self.launch['kernel']} (launched at {self.launch['host']})"


def run_child_grids(device, module: int, parent: dict, log: DeviceLaunchLog, sinks, run, device_log) -> int:
    """Run the grids `log` recorded in the run of launch `parent` (as findings name it), check their ordering,
    and leave every grid of the tree below in `log.grids`; the worst `cudaError_t` of them (a fault in a child
    is the parent's too). `run` is `launch.run_launch` and `device_log` `launch.device_launch_log`, which this
    module, called from there, cannot import."""
    log.grids = []
    if not log.launches:
        return CudaError.SUCCESS
    output = next((s for s in sinks if isinstance(s, DeviceOutput)), None)
    ordered = [launch for launch in log.launches if not launch.tail] + [launch for launch in log.launches if launch.tail]
    subtrees: dict[int, list[Grid]] = {}
    status = CudaError.SUCCESS
    for launch in ordered:
        footprint = LaunchFootprint(budget=device.limits.max_memory // 8)
        child_log = device_log(device, module, log.depth + 1)
        child_output = DeviceOutput()
        site = HostFrame("kernel launch", parent["kernel"], user_frame(launch.loc) if launch.loc is not None else None)
        device.launches += 1
        child_status, record = run(device, module, launch.kernel, launch.grid, launch.block, launch.shared_bytes,
                                   launch.params, site, sinks=[footprint, child_output, *([child_log] if child_log else [])])  # fmt: skip
        if output is not None:
            output.parts.extend(child_output.parts)
        if status == CudaError.SUCCESS:
            status = child_status
        subtrees[id(launch)] = [Grid(record, footprint.footprint(), footprint.site), *(child_log.grids if child_log else [])]
    if log.ctx is not None:
        _check_against_parent(device, parent["kernel"], log, subtrees)
    _check_siblings(device, log.launches, subtrees)
    log.grids = [grid for launch in ordered for grid in subtrees[id(launch)]]
    return status


def _check_against_parent(device, parent: str, log: DeviceLaunchLog, subtrees: dict[int, list[Grid]]) -> None:
    """Races of each child's tree with what the parent grid (kernel `parent`) did that the child is not ordered
    after."""
    for index, launch in enumerate(log.launches):
        if launch.tail:
            continue
        key = launch.order_key()
        earlier = [launch] + ([] if key is None else [e for e in log.launches[:index] if e.order_key() == key])
        unordered = LaunchFootprint(budget=device.limits.max_memory // 8)
        unordered.bind(log.ctx)
        for logged, (batch, _counts, _stamps) in enumerate(log.accesses):
            rest = only_lanes(batch, ~log.before_launch(logged, earlier))
            if rest is not None:
                unordered.on_event(rest)
        parent_footprint = unordered.footprint()
        for grid in subtrees[id(launch)]:
            overlap = parent_footprint.overlap(grid.footprint)
            if overlap is None:
                continue
            cause = (
                f"the parent grid ({parent}) {_verb(overlap.first_writes)} these bytes and {grid.what} "
                f"{_verb(overlap.second_writes)} them, and nothing orders the two: a child grid sees only what happened "
                "before its launch in the launching thread (its own accesses, and others' that a barrier or a "
                "release and acquire ordered before it), and runs concurrently with the rest of the parent grid"
            )
            _report(device, unordered.site, grid, overlap, cause)


def _check_siblings(device, launches: list[DeviceLaunch], subtrees: dict[int, list[Grid]]) -> None:
    """Races between the trees of two children of one grid that no stream orders."""
    for i, first in enumerate(launches):
        for second in launches[i + 1 :]:
            if first.tail or second.tail or (first.order_key() is not None and first.order_key() == second.order_key()):
                continue
            for a in subtrees[id(first)]:
                for b in subtrees[id(second)]:
                    overlap = a.footprint.overlap(b.footprint)
                    if overlap is None:
                        continue
                    cause = (
                        f"{a.what} {_verb(overlap.first_writes)} these bytes and {b.what} {_verb(overlap.second_writes)} "
                        f"them, and nothing orders the two: they were launched into {_streams(first, second)}"
                    )
                    _report(device, a.site, b, overlap, cause)


def _report(device, first_site, second: Grid, overlap, cause: str) -> None:
    first = first_site(overlap.address, overlap.first_writes)
    other = second.site(overlap.address, overlap.second_writes)
    if first is None or other is None or (first.scope in DEVICE_WIDE and other.scope in DEVICE_WIDE):
        return
    where, space = device.describe_address(overlap.address)
    finding = Finding("data-race", ERROR, cause, (first, other), space=space, address=where)
    finding.launch = second.launch
    device.findings.add(finding)


def _streams(first: DeviceLaunch, second: DeviceLaunch) -> str:
    """Why two launches' streams do not order them, in words."""
    if FIRE_AND_FORGET in (first.stream, second.stream):
        return "cudaStreamFireAndForget, whose grids run concurrently with every other"
    if first.stream == second.stream == NULL_STREAM:
        return "the NULL streams of different blocks, which are independent"
    return "different streams (device streams are non-blocking: nothing orders them with each other or the NULL stream)"


def _verb(writes: bool) -> str:
    return "writes" if writes else "reads"
