"""Checking Triton kernels (`@triton.jit`) from Python, on NumPy arrays, without a GPU.

    import numpy as np, gpurace.triton
    x, y, out = np.ones(1000, np.float32), np.arange(1000, dtype=np.float32), np.zeros(1000, np.float32)
    report = gpurace.triton.check(add_kernel, (4,), x, y, out, 1000, BLOCK=256)
    assert report.clean and np.array_equal(out, x + y)

The kernel is compiled by Triton for `sm_80` (`cc=`), with the arguments'
types and the constexpr values given, and launched as Triton launches it:
one block per program (`tl.program_id` is the block index), `num_warps`
warps of 32 threads each per program. Its PTX runs through the same checks
as `gpurace check`; arrays (or PyTorch tensors on the CPU, whose memory is
shared: `python_values.host_array`) stand for the tensors and are updated in
place with what schedule 0 left. Findings name lines of the kernel's `.py` file.
Triton is an optional dependency: `pip install 'gpurace[triton]'`.
"""

from __future__ import annotations

import math

from gpurace.check import check as check_launch
from gpurace.frontend.triton_kernels import (
    DEFAULT_CC, apply_heuristics, bind, compile_kernel, launch_args, program_grid, run_pre_hook, unwrap,
)  # fmt: skip
from gpurace.python_values import describe_value, host_array, host_arrays
from gpurace.report.benign import STAT as SAME_VALUE_DROPPED
from gpurace.report.model import Report

__all__ = ["check"]

DEFAULT_WARPS, DEFAULT_STAGES = 4, 3
"""Triton's warps and pipeline stages for a kernel launched without them (and not autotuned)."""


def check(fn, grid, *args, num_warps: int | None = None, num_stages: int | None = None, config: int = 0,
          cc: int = DEFAULT_CC, options: dict | None = None, **meta) -> Report:  # fmt: skip
    """Check one launch `fn[grid](*args, num_warps=num_warps, **meta)` for races and synchronisation bugs.

    `grid` is an int, 1 to 3 ints, or a function of the arguments by name (Triton's `lambda META: ...`);
    `args` and `meta` are the kernel's arguments (NumPy arrays or CPU tensors for tensors, updated in place,
    and numbers)
    and constexpr values, by position or by name. An autotuned kernel runs with its configuration number
    `config` (its meta-parameters, warps and stages, unless given here); heuristics compute theirs.
    `num_warps` and `num_stages` default to Triton's 4 and 3. `cc` is the compute capability Triton
    compiles for; `options` are those of `gpurace.check.check` (`detector`, `model`, `schedules`, `seed`,
    `max_steps`, `limits`, ...). The configuration's `pre_hook` runs before the launch, as Triton's
    autotuner runs it. Returns the `Report` that `gpurace check` prints; `report.clean` when
    nothing was found.
    """
    kernel_fn = unwrap(fn, config)
    args = host_arrays(args)
    meta = {name: host_array(value, f"argument {name}") for name, value in meta.items()}
    meta = apply_heuristics(kernel_fn, args, {**kernel_fn.config_kwargs, **meta})
    meta.update(launch_options_as_params(kernel_fn, args, meta, num_warps=num_warps, num_stages=num_stages))
    num_warps = num_warps or kernel_fn.num_warps or DEFAULT_WARPS
    num_stages = num_stages or kernel_fn.num_stages or DEFAULT_STAGES
    run_pre_hook(kernel_fn, args, meta)
    bound = bind(kernel_fn.jit, args, meta)
    programs = program_grid(grid, bound)
    kernel = compile_kernel(kernel_fn.jit, bound, num_warps=num_warps, num_stages=num_stages, cc=cc)
    args = launch_args(kernel, math.prod(programs))
    report = check_launch(
        kernel.module, grid=programs, block=num_warps * 32, args=args, kernel=kernel.name,
        shared_bytes=kernel.shared_bytes, **(options or {}),
    )  # fmt: skip
    report.launch["args"] = [describe_value(bound[name]) for name in kernel.arg_names]
    report.launch["num_warps"] = num_warps
    if kernel_fn.configs:
        report.launch["autotune_config"] = config
    return drop_generated_same_value(report)


def launch_options_as_params(kernel_fn, args: tuple, meta: dict, **options) -> dict:
    """The launch options given (here or by the autotuning configuration) that are also parameters of the
    kernel, by name: Triton binds a keyword such as `num_stages=2` both to the compiler and to a kernel
    parameter of that name (its fused-softmax tutorial pipelines its own loop with `num_stages`)."""
    given = {name: value if value is not None else getattr(kernel_fn, name) for name, value in options.items()}
    named = kernel_fn.jit.arg_names[len(args) :]
    return {name: value for name, value in given.items() if value is not None and name in named and name not in meta}


def drop_generated_same_value(report: Report) -> Report:
    """`report` without its same-value races on shared memory (in place), counted in `stats["same_value_dropped"]`.

    A Triton kernel cannot address shared memory: every access there is Triton's code generator's (a
    reduction's partial results, a layout conversion), and it stores a replicated value from every lane
    that holds it, by design. Those stores race, with the same value, on every launch, at lines of
    Triton's own library (`tl.sum` in `triton/language/standard.py`); they are not the user's to fix.
    Shared-memory races of different values are kept (they would be a bug of Triton's), and so is
    every race in global memory, which the kernel's own loads and stores make.
    """
    kept = [f for f in report.findings if not (f.same_value and f.space == "shared")]
    report.stats[SAME_VALUE_DROPPED] = len(report.findings) - len(kept)
    report.findings = kept
    return report
