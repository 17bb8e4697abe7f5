"""Hand-built findings over a small CUDA file, shared by the renderer tests.

The source file is real (the `source_file` fixture writes it to tmp_path) so
the text renderer can show snippets; the sites point at known lines and
columns of it.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.findings import ERROR, PERFORMANCE, WARNING, Address, Finding, Site
from gpurace.frontend.ptx.ir import SourceLoc
from gpurace.report.model import Report

SOURCE = """\
__device__ __forceinline__ void accumulate(int *s, int i) {
    s[i] += s[i + 1];
}

__global__ void reduce(int *out, volatile int *flag) {
    __shared__ int s[256];
    int tid = threadIdx.x;
    s[tid] = tid;
    accumulate(s, tid);
    out[tid] = s[tid];
\tflag[0] = tid;
    __syncthreads();
}
"""

MANGLED = "_Z6reducePiPVi"
LAUNCH = {
    "grid": [1, 1, 1],
    "block": [256, 1, 1],
    "shared_bytes": 0,
    "args": ["i32:256", "i32:1"],
    "model": "cuda",
    "detector": "hb",
}


def site(path, line, column, *, thread=(0, 0, 0), op="read", instruction="ld.shared.u32 %r1, [%r2];", inlined_at=None, function=None, scope=None, pc=0):
    """A Site at `path:line:column`; `inlined_at` is a SourceLoc chain for inlined code."""
    x = thread[0]
    return Site(
        pc=pc,
        thread=thread,
        block=(0, 0, 0),
        warp=x // 32,
        lane=x % 32,
        op=op,
        scope=scope,
        loc=SourceLoc(str(path), line, column, inlined_at, function) if path is not None else None,
        instruction=instruction,
        function=MANGLED,
    )


def race(path, *, first_thread=(1, 0, 0), second_thread=(0, 0, 0)) -> Finding:
    """The write of line 8 against the inlined read of line 2 (called from line 9), on s[1]."""
    write = site(path, 8, 5, thread=first_thread, op="write", instruction="st.shared.u32 [%r4], %r1;", pc=6)
    read = site(
        path,
        2,
        13,
        thread=second_thread,
        op="read",
        instruction="ld.shared.u32 %r5, [%r4+4];",
        inlined_at=SourceLoc(str(path), 9, 5),
        function="accumulate(int*, int)",
        pc=7,
    )
    return Finding(
        "data-race",
        ERROR,
        "no synchronisation between the two accesses",
        (write, read),
        space="shared",
        address=Address("s", 4, 0x4000_0000_0000_0004),
        count=3,
    )


def out_of_bounds(path) -> Finding:
    """The store of line 10 past the end of `out`."""
    store = site(path, 10, 5, thread=(255, 0, 0), op="write", instruction="st.global.u32 [%rd4], %r9;", pc=12)
    return Finding(
        "out-of-bounds",
        ERROR,
        "out-of-bounds 4-byte global access: 0 bytes past the end of `out` (1024 bytes)",
        (store,),
        space="global",
        address=Address("out", 1024, 0x10_0000_0400),
        details={"address": np.int64(0x10_0000_0400)},
    )


def volatile_race(path) -> Finding:
    """Two volatile stores of line 11 (a tab-indented line)."""
    a = site(path, 11, 2, thread=(2, 0, 0), op="write", instruction="st.volatile.global.u32 [%rd5], %r1;", scope="sys", pc=14)
    b = site(path, 11, 2, thread=(40, 0, 0), op="write", instruction="st.volatile.global.u32 [%rd5], %r1;", scope="sys", pc=14)
    return Finding("data-race", WARNING, "volatile is not atomic", (a, b), space="global", address=Address("flag", 0, 0x10_0000_1000))


def redundant_barrier(path) -> Finding:
    bar = site(path, 12, 5, thread=(0, 0, 0), op="barrier", instruction="bar.sync 0;", pc=16)
    return Finding("redundant-barrier", PERFORMANCE, "the barrier orders no conflicting accesses", (bar,))


def deadlock_without_lines() -> Finding:
    """A finding whose instructions carry no line information."""
    a = site(None, 0, 0, thread=(0, 0, 0), op="barrier", instruction="bar.sync 0;", pc=3)
    b = site(None, 0, 0, thread=(64, 0, 0), op="exit", instruction="ret;", pc=9)
    return Finding("deadlock", ERROR, "threads wait at barrier 0 forever", (a, b))


def make_report(path, findings) -> Report:
    return Report(
        kernel="reduce",
        mangled=MANGLED,
        source=str(path) if path is not None else None,
        launch=dict(LAUNCH),
        findings=list(findings),
        stats={"threads": 256, "steps": np.int64(40), "thread_instructions": 5120, "events": 33, "seconds": 0.01},
    )
