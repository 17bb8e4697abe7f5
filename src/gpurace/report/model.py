"""The report of one checked launch, and the vocabulary every renderer shares.

A `Report` is what `gpurace check` hands to the renderers: the kernel, the
launch configuration, the findings and a few statistics. The renderers (text,
JSON, SARIF) must agree on how a finding kind is named and described, how a
thread or a memory location is spelled, and how severities map to levels, so
those helpers live here rather than in any one renderer.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurace.detect.findings import ERROR, PERFORMANCE, WARNING, Address, Finding, Site


@dataclass
class Report:
    """One checked launch: the kernel, how it was launched, what was found.

    `launch` holds the grid and block (lists of three), `shared_bytes`, the
    argument specs as given, the memory model and the detector,
    `global_vars` (the `__device__` variables given, by name) and
    `auto_scalars` (name and value of each scalar that `auto` chose, and a
    `note` when it is zero bytes for a reason worth saying) when there are
    any; `stats` the simulation counters (threads, steps,
    thread_instructions, events), the time taken (`seconds`, see `TIMINGS`)
    and `buffers` (name, bytes_used and pages of each automatic buffer) when
    there are any, `dynamic_shared` (name, bytes per block and the first run's
    first_run_bytes of automatic dynamic shared memory) when its size was
    automatic, and `barriers` (the pcs of the barriers executed and
    needed) when redundant barriers were checked.
    Both are plain JSON-compatible dicts so a report can be recorded and
    reloaded without knowing which counters a given version produced.

    `proof` is the proof section of `check --prove` (`verify.launch_proof`),
    also a plain dict: verify's verdict per memory object for every input of
    the launch's shape, each alarm's status after the simulation, the
    schedules run and why, and any finding that contradicts a proof; None
    without `--prove`.
    """

    kernel: str
    mangled: str
    source: str | None
    launch: dict
    findings: list[Finding]
    stats: dict
    proof: dict | None = None

    @property
    def clean(self) -> bool:
        """True when the launch produced no finding at all."""
        return not self.findings

    def exit_code(self) -> int:
        """The CLI's status for this report: 1 when there are findings other than performance notes, else 0.

        A performance note (a redundant barrier) is a hint, not a bug: a
        sanitizer step in CI must not fail on it.
        """
        return 1 if any(f.severity != PERFORMANCE for f in self.findings) else 0


@dataclass(frozen=True)
class KindInfo:
    """How a finding kind is named in a headline and described in a SARIF rule.

    `located` is the headline when the finding names a memory space, with
    `{space}` replaced by it ("data race on {space} memory"); `title` is used
    otherwise. `level` is the kind's default SARIF level; a finding's own
    severity overrides it (volatile races are warnings).
    """

    title: str
    located: str
    description: str
    level: str = "error"


KINDS: dict[str, KindInfo] = {
    "data-race": KindInfo(
        "data race",
        "data race on {space} memory",
        "Two threads access the same bytes, at least one of them writes, and nothing orders the two accesses: "
        "no barrier between them, no release/acquire synchronisation, or atomics, fences or locks whose scope "
        "does not cover both threads. Under exec, also two operations (kernels, copies, memsets, the host's own "
        "accesses to managed or page-locked memory) that the program's streams, events and synchronising calls "
        "leave unordered.",
    ),
    "out-of-bounds": KindInfo(
        "out-of-bounds access",
        "out-of-bounds access to {space} memory",
        "An access falls outside the allocation its address points into, or outside every allocation of its "
        "memory space.",
    ),
    "misaligned-access": KindInfo(
        "misaligned access",
        "misaligned access to {space} memory",
        "An access whose address is not a multiple of its size; the hardware stops the kernel with a "
        "misaligned address error.",
    ),
    "write-to-read-only": KindInfo(
        "write to read-only memory",
        "write to read-only {space} memory",
        "A store or atomic to a memory space the kernel may only read, such as constant or parameter memory.",
    ),
    "uninitialized-read": KindInfo(
        "uninitialized read",
        "read of uninitialized {space} memory",
        "A kernel reads bytes that were never written: shared memory no thread of the block wrote earlier in the "
        "launch, or (under exec) device memory from cudaMalloc that no copy, memset or kernel wrote.",
    ),
    "barrier-divergence": KindInfo(
        "barrier divergence",
        "barrier divergence",
        "Threads of one block reach different barrier statements, or wait at a barrier that other threads of "
        "their block exited without reaching; the behaviour is undefined and usually a hang.",
    ),
    "deadlock": KindInfo(
        "deadlock",
        "deadlock",
        "Every thread that has not exited waits (at a barrier, a warp synchronisation or a lock) and none of "
        "them can proceed.",
    ),
    "livelock": KindInfo(
        "livelock",
        "livelock",
        "Threads keep running without making progress: they spin on memory that no remaining thread will "
        "change, or the run exceeded its step budget.",
    ),
    "invalid-warp-sync": KindInfo(
        "invalid warp synchronisation",
        "invalid warp synchronisation",
        "A warp-synchronous operation (__syncwarp, a shuffle, a vote or bar.warp.sync) whose mask leaves out "
        "the executing lane or names lanes that have already exited.",
    ),
    "invalid-mbarrier-use": KindInfo(
        "invalid mbarrier use",
        "invalid use of an mbarrier in {space} memory",
        "An mbarrier used before mbarrier.init or after mbarrier.inval, more arrivals in one phase than its "
        "expected count, an arrive.noComplete that completes its phase, or an ordinary load or store of the bytes "
        "of a live mbarrier object: undefined behaviour in PTX.",
    ),
    "invalid-wgmma-use": KindInfo(
        "invalid wgmma use",
        "invalid use of wgmma",
        "An access to an accumulator register of a wgmma.mma_async before the wgmma.wait_group that covers it, "
        "or a wgmma.mma_async without a wgmma.fence after its registers were written: undefined behaviour in PTX.",
    ),
    "timeout": KindInfo(
        "timeout",
        "timeout",
        "The command's wall-clock budget (--timeout) ran out while threads were still running; the run was "
        "stopped where they were.",
    ),
    "stack-overflow": KindInfo(
        "stack overflow",
        "stack overflow",
        "A call would nest deeper than the stack allows (--max-call-depth nested calls, or the local memory a "
        "thread has for its frames): usually a recursion without a base case.",
    ),
    "assertion-failure": KindInfo(
        "assertion failure",
        "assertion failure",
        "A device-side assert() (or a __assert annotation) failed; on a GPU the kernel stops with cudaErrorAssert.",
    ),
    "trap": KindInfo(
        "trap",
        "trap",
        "A thread executed `trap` (asm(\"trap;\"), or __trap()); on a GPU the kernel stops with an unspecified "
        "launch failure.",
    ),
    "invalid-call": KindInfo(
        "invalid call",
        "call through an invalid function pointer",
        "A call through a function pointer whose value is not the address of a device function (null, a data "
        "pointer, or an address computed wrongly); on a GPU the kernel stops with an illegal instruction error.",
    ),
    "invalid-launch": KindInfo(
        "invalid launch",
        "invalid launch",
        "The host program launched a kernel with a configuration a GPU refuses (a block of more than 1024 "
        "threads, more shared memory than a block can have); the launch returned cudaErrorInvalidConfiguration.",
    ),
    "use-after-free": KindInfo(
        "use after free",
        "use of freed {space} memory",
        "A copy, memset or free of device memory that was already freed, or host code touching managed or "
        "page-locked memory after it was freed.",
    ),
    "invalid-host-access": KindInfo(
        "invalid host access",
        "host access to {space} device memory",
        "Host code reads or writes memory from cudaMalloc, which only the device can reach: on a GPU the "
        "program crashes there with a segmentation fault, and under gpurace it does too.",
    ),
    "invalid-free": KindInfo(
        "invalid free",
        "invalid free",
        "cudaFree or cudaFreeHost of a pointer that is not the start of a live allocation of that kind.",
    ),
    "invalid-device-pointer": KindInfo(
        "invalid device pointer",
        "invalid device pointer",
        "A copy or memset names a device address that lies in no allocation.",
    ),
    "invalid-copy-direction": KindInfo(
        "invalid copy direction",
        "invalid copy direction",
        "A cudaMemcpy whose direction does not match where its source and destination are.",
    ),
    "leak": KindInfo(
        "memory leak",
        "memory leak",
        "With --leak-check: device memory allocated and never freed before the program ended.",
    ),
    "redundant-barrier": KindInfo(
        "redundant barrier",
        "redundant barrier",
        "A __syncthreads() that orders no conflicting accesses of different threads on the inputs run: removing "
        "it introduces no data race there, and saves every thread of the block a wait.",
        level="note",
    ),
}

TIMINGS = frozenset({"seconds", "verify_seconds"})
"""The `stats` keys that measure time (`verify_seconds`: the proof of `check --prove`). They differ between two runs of the same check, so the renderers leave them
out unless asked (`stats=True`, the `--stats` option): the same input and seed give byte-identical reports."""


def reported_stats(value, timings: bool):
    """`value` (a report's `stats`, or part of it) without the `TIMINGS` keys at any depth, unless `timings`."""
    if timings:
        return value
    if isinstance(value, dict):
        return {k: reported_stats(v, False) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, (list, tuple)):
        return [reported_stats(v, False) for v in value]
    return value


SEVERITY_RANK = {ERROR: 0, WARNING: 1, PERFORMANCE: 2}

# SARIF knows error, warning and note; performance findings are notes.
SARIF_LEVELS = {ERROR: "error", WARNING: "warning", PERFORMANCE: "note"}


def kind_info(kind: str) -> KindInfo:
    """The KindInfo of `kind`; a kind this version does not know is named after itself."""
    known = KINDS.get(kind)
    if known is not None:
        return known
    words = kind.replace("-", " ")
    return KindInfo(words, words, f"A {words} finding.")


def headline(finding: Finding) -> str:
    """"data race on shared memory (s[+4])": the kind, the memory space and the allocation and offset."""
    info = kind_info(finding.kind)
    text = info.located.format(space=finding.space) if finding.space else info.title
    if finding.address is not None:
        text += f" ({format_address(finding.address)})"
    return text


def format_address(address: Address) -> str:
    """`s[+4]`: allocation name and byte offset, signed so negative out-of-bounds offsets read naturally."""
    return f"{address.allocation}[{address.offset:+d}]"


def format_dims(dims) -> str:
    """`256x1x1`, the way launch dimensions are written in CUDA documentation."""
    return "x".join(str(d) for d in dims)


def format_input(launch: dict) -> str:
    """`grid 2x1x1 block 64x1x1 args auto 0`: a launch input found by a search (`Finding.input`), in the words
    of the `--grid`, `--block`, `--arg` and `--global` options that replay it (`globals table=auto:rand`)."""
    text = f"grid {format_dims(launch['grid'])} block {format_dims(launch['block'])}"
    if launch["args"]:
        text += f" args {' '.join(launch['args'])}"
    if launch.get("global_vars"):
        text += " globals " + " ".join(f"{name}={spec}" for name, spec in launch["global_vars"].items())
    return text


def format_schedule(schedule: dict) -> str:
    """`schedule 3 (seed 1234567)`, or `schedule 0 (min-pc)`: the schedule that exposed a finding
    (`Finding.schedule`)."""
    detail = f"seed {schedule['seed']}" if schedule["seed"] is not None else schedule["policy"]
    return f"schedule {schedule['index']} ({detail})"


def format_launch(launch: dict) -> str:
    """`launch 3 of reduce (grid 2x1x1, block 256x1x1) at prog.cu:41`: the launch of a program that first showed
    a finding (`Finding.launch`)."""
    text = f"launch {launch['index']} of {launch['kernel']} (grid {format_dims(launch['grid'])}, block {format_dims(launch['block'])})"
    return f"{text} at {launch['host']}" if launch.get("host") else text


def describe_site(site: Site) -> str:
    """`write by thread (3,0,0) of block (0,0,0), warp 0 lane 3`, plus the scope of a scoped operation;
    `cudaMemcpy by the host program` for a call of the host code (`gpurace exec`)."""
    if site.thread is None:
        return f"{site.op} by the host program"
    text = (
        f"{site.op} by thread {_coords(site.thread)} of block {_coords(site.block)}, "
        f"warp {site.warp} lane {site.lane}"
    )
    if site.scope:
        text += f", scope {site.scope}"
    return text


def _coords(xyz) -> str:
    return "(" + ",".join(str(v) for v in xyz) + ")"
