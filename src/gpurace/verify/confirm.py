"""Confirming a possible alarm: run the witness's launch in the simulator and look for the same race.

A possible alarm rests on approximated values (loaded data, atomics' results,
loop-carried values); the solver's witness fixes the launch and the scalar
parameters but not memory contents. The launch is run by `check` with
automatic buffers (zero-filled, growing as the kernel touches them) and the
witness's scalars; if the check reports a data race between the alarm's two
source lines, the alarm is *confirmed*, and the report gives the `check`
command that reproduces it. A launch over CONFIRM_MAX_THREADS threads is not
run. Under `--benign-same-value` a race `check` labels same-value confirms
nothing, and the command carries the option.
"""

from __future__ import annotations

import shlex

import numpy as np

from gpurace.check import check
from gpurace.errors import UserError
from gpurace.frontend.kernels import KernelInfo, ParamInfo
from gpurace.frontend.ptx.debuginfo import display_path, user_frame
from gpurace.frontend.ptx.ir import Module
from gpurace.sim.args import scalar_dtype
from gpurace.verify.explore import DIMS
from gpurace.verify.verdicts import Alarm, KernelVerdict

CONFIRM_MAX_THREADS = 1 << 16


def confirm_alarms(
    module: Module, path: str, verdict: KernelVerdict, info: KernelInfo, mangled: str, *, benign_same_value: bool = False
) -> None:
    """Mark the verdict's possible race alarms confirmed where a simulated launch shows the race."""
    runs: dict[tuple, set[tuple[str, str]] | None] = {}
    for obj in verdict.objects:
        for alarm in obj.alarms:
            if alarm.status != "possible" or alarm.kind != "data-race":
                continue
            launch = _launch(verdict, alarm, info)
            if launch is None:
                continue
            key = (launch["grid"], launch["block"], tuple(map(str, launch["args"])))
            if key not in runs:
                runs[key] = _races(module, mangled, launch, benign_same_value)
            seen = runs[key]
            if seen is not None and tuple(sorted((alarm.first, alarm.second))) in seen:
                alarm.status = "confirmed"
                alarm.reproduce = _command(path, info, launch, benign_same_value)


def _launch(verdict: KernelVerdict, alarm: Alarm, info: KernelInfo) -> dict | None:
    dims = alarm.witness.dimensions
    grid = tuple(verdict.launch[f"nctaid.{d}"] or dims.get(f"nctaid.{d}", 1) for d in DIMS)
    block = tuple(verdict.launch[f"ntid.{d}"] or dims.get(f"ntid.{d}", 1) for d in DIMS)
    if int(np.prod(grid)) * int(np.prod(block)) > CONFIRM_MAX_THREADS:
        return None
    args = []
    for p in info.params:
        raw = alarm.witness.parameters.get(p.cpp_name or p.name)
        args.append("auto" if raw is None or p.is_pointer else _scalar(p, raw))
    if any(a is None for a in args):
        return None
    return {"grid": grid, "block": block, "args": args}


def _scalar(p: ParamInfo, raw: int):
    """A parameter's value from the bits the solver chose, in the type `check` gives it (None: no such type)."""
    dtype = scalar_dtype(p)
    if dtype is None or dtype.itemsize != p.size:
        return None
    value = np.array([raw & ((1 << (8 * p.size)) - 1)], dtype=f"u{p.size}").view(dtype)[0].item()
    return int(value) if isinstance(value, bool) else value


def _races(module: Module, mangled: str, launch: dict, benign_same_value: bool) -> set[tuple[str, str]] | None:
    """The pairs of source positions of the data races `check` reports for the launch (with `benign_same_value`,
    not those of stores of the same value); None when it cannot run."""
    try:
        report = check(module, kernel=mangled, grid=launch["grid"], block=launch["block"], args=list(launch["args"]))
    except UserError:
        return None
    return race_lines([f for f in report.findings if not (benign_same_value and f.same_value)])


def race_lines(findings) -> set[tuple[str, ...]]:
    """The source positions (`source_positions`) of the data races among `findings`."""
    return {where for f in findings if f.kind == "data-race" and (where := source_positions(f)) is not None}


def source_positions(finding) -> tuple[str, ...] | None:
    """The sorted `path:line` positions of a finding's sites, written as an alarm's `first` and `second` are;
    None when a site has no source position."""
    if not all(s.loc is not None for s in finding.sites):
        return None
    return tuple(sorted(f"{display_path(fr.file)}:{fr.line}" for fr in (user_frame(s.loc) for s in finding.sites)))


def _command(path: str, info: KernelInfo, launch: dict, benign_same_value: bool) -> str:
    words = ["gpurace", "check", display_path(path), "--kernel", info.name]
    words += ["--grid", ",".join(map(str, launch["grid"])), "--block", ",".join(map(str, launch["block"]))]
    for a in launch["args"]:
        words += ["--arg", str(a)]
    if benign_same_value:
        words.append("--benign-same-value")
    return shlex.join(words)
