"""`gpurace verify`: static verification of a kernel for all inputs and threads (see README, "How verification works")."""

from __future__ import annotations

import time

from gpurace.errors import UserError
from gpurace.frontend.kernels import describe_kernel
from gpurace.frontend.ptx.ir import Module
from gpurace.sim.geometry import check_dims
from gpurace.sim.launch import NO_KERNEL_HINT, select_kernel
from gpurace.verify.confirm import confirm_alarms
from gpurace.verify.launch_scope import launch_scope
from gpurace.verify.queries import DEFAULT_QUERY_BUDGET, RLIMIT_UNIT
from gpurace.verify.verdicts import KernelVerdict, verify_kernel


def verify_module(
    module: Module, *, kernel: str | None, grid, block, query_budget: int = DEFAULT_QUERY_BUDGET,
    query_timeout: float | None = None, confirm: bool = True, benign_same_value: bool = False, from_header: bool = False,
    within_block: bool = False, deadline: float | None = None,
) -> tuple[list[KernelVerdict], dict[str, list[str]]]:
    """Verdicts for the named kernel (or every kernel of the module), and the notes on each one's launch scope.

    Each solver question may take `query_budget` million z3 resource units (deterministic: the same verdicts
    on any machine); `query_timeout`, seconds, is a wall-clock limit on top, off by default.

    With `confirm`, possible alarms are run in the simulator (`confirm.confirm_alarms`); with
    `benign_same_value`, stores that write the same value do not race (see `verdicts`); `within_block`: only
    threads of one block race (Faial's default scope), which the notes say. `deadline` (`time.monotonic()`,
    the command's `--timeout`): questions still open when it is spent are unknown, and no witness is run after it.
    A launch CUDA refuses is refused, unless its dimensions come `from_header` (a GPUVerify header): GPUVerify
    verifies any dimensions, and its suites use blocks of 2048 threads, so the kernel is verified for the
    stated dimensions with a note that no GPU runs that launch (and no witness is run in the simulator).
    """
    invalid = _refused_launch(grid, block, from_header)
    confirm = confirm and invalid is None
    if not module.kernels:
        raise UserError(f"{module.source_path}: defines no kernel to verify ({NO_KERNEL_HINT})")
    chosen = [module.functions[select_kernel(module, kernel)]] if kernel is not None else module.kernels
    verdicts, notes = [], {}
    for fn in chosen:
        info = describe_kernel(module, fn)
        dims, scope = launch_scope(module, fn, grid, block)
        verdict = verify_kernel(
            module, fn, info, dims, query_budget * RLIMIT_UNIT, wall_ms=None if query_timeout is None else int(query_timeout * 1000),
            benign_same_value=benign_same_value, within_block=within_block, deadline=deadline,
        )
        if confirm and (deadline is None or time.monotonic() < deadline):
            confirm_alarms(module, module.source_path or "", verdict, info, fn.name, benign_same_value=benign_same_value)
        verdicts.append(verdict)
        notes[info.name] = [*([invalid] if invalid else []), *scope, *([WITHIN_BLOCK] if within_block else []), *verdict.assumed]
    return verdicts, notes


WITHIN_BLOCK = (
    "races between threads of one block only (--within-block, Faial's default): threads of different blocks are "
    "not compared, so race-free says nothing of them"
)


HEADER_DIM_LIMIT = 1 << 31
"""A header's dimension must stay below this even beyond the hardware: the special registers are 32-bit values."""


def _refused_launch(grid, block, from_header: bool) -> str | None:
    """The note for dimensions CUDA refuses but a GPUVerify header states; a UserError for any others."""
    try:
        check_dims(grid or (1, 1, 1), block or (1, 1, 1))
    except UserError as e:
        if not from_header or max((*(grid or ()), *(block or ()))) >= HEADER_DIM_LIMIT:
            raise
        reason = str(e).split(": ", 1)[1]
        return (
            f"launch invalid on a GPU ({reason}): verified for the dimensions the GPUVerify header states, "
            "as GPUVerify does; no GPU runs this launch"
        )
    return None
