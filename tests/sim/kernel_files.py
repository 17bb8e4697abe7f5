"""The kernel files of `tests/kernels/sim/`: their `@launch`/`@expect` headers, compiled once per session.

`run(name)` performs a file's `@launch` (the launch `gpurace run` would do
with the same options), optionally with some buffers replaced by the test's own
arrays, and checks the findings against the file's `@expect` line: `clean`, or
a finding kind followed by the source lines of its sites.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.sim.launch import RunResult, simulate

KERNELS = Path(__file__).resolve().parents[1] / "kernels" / "sim"


@dataclass
class Header:
    """One file's launch (as `gpurace run` options) and its `@expect` lines."""

    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: list[str]
    shared_bytes: int = 0
    kernel: str | None = None
    expect: list[str] = field(default_factory=list)


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(","))


@cache
def header(name: str) -> Header:
    """The `@launch` and `@expect` lines of a kernel file (the leading `//` block)."""
    launch, expect = None, []
    for line in (KERNELS / name).read_text().splitlines():
        if not line.startswith("//"):
            break
        body = line[2:].strip()
        if body.startswith("@launch "):
            launch = shlex.split(body[len("@launch ") :])
        elif body.startswith("@expect "):
            expect.append(body[len("@expect ") :].strip())
    assert launch is not None, f"{name} has no @launch line"
    opts: dict[str, str] = {}
    args: list[str] = []
    it = iter(launch)
    for word in it:
        value = next(it)
        if word == "--arg":
            args.append(value)
        else:
            opts[word] = value
    return Header(
        grid=_dims(opts["--grid"]),
        block=_dims(opts["--block"]),
        args=args,
        shared_bytes=int(opts.get("--shared-bytes", 0)),
        kernel=opts.get("--kernel"),
        expect=expect,
    )


@cache
def module(name: str) -> Module:
    """Compile and parse once per session; a Module is never modified by a run."""
    return load_module(KERNELS / name)


def run(name: str, overrides: dict[int, np.ndarray] | None = None, **kwargs) -> RunResult:
    """Run a kernel file's `@launch`, with buffers `overrides` (by argument index) given as arrays."""
    h = header(name)
    args: list = list(h.args)
    for i, array in (overrides or {}).items():
        count = int(h.args[i].split(":")[1])
        assert array.size == count, f"override for argument {i} of {name} must hold {count} elements"
        args[i] = array
    res = simulate(
        module(name), grid=h.grid, block=h.block, args=args, shared_bytes=h.shared_bytes, kernel=h.kernel, **kwargs
    )
    check_expectation(name, res)
    return res


# Findings that only the detectors of `check` produce; `simulate` alone reports none of them.
DETECTOR_KINDS = frozenset({"data-race", "uninitialized-read"})


def check_expectation(name: str, res: RunResult) -> None:
    """The simulator's findings must match `@expect` (syntax of tests/test_expectations.py).

    `clean` or a detector verdict (a data race): the simulator itself reports
    nothing. Otherwise exactly one finding of that kind whose sites are at
    those source lines.
    """
    listing = "\n".join(f"{f.kind} {[s.loc.line if s.loc else None for s in f.sites]}: {f.cause}" for f in res.findings)
    for expect in header(name).expect:
        kind, *rest = expect.split()
        if kind == "clean" or kind in DETECTOR_KINDS:
            assert res.findings == [], listing
            continue
        lines = sorted(int(w) for w in rest if w.isdigit())
        assert [f.kind for f in res.findings] == [kind], listing
        assert sorted(s.loc.line for s in res.findings[0].sites if s.loc is not None) == lines, listing
