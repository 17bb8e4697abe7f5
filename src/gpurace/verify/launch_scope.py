"""Which launches a verdict covers: the dimensions given, or every launch the hardware allows.

Dimensions given on the command line (or by a GPUVerify header) are fixed.
Left open, grid and block sizes are symbols bounded by the hardware's limits,
with each dimension's thread count (grid times block) below 2^31, and a
dimension the kernel never reads (`%tid.y`, `%ntid.y`, `%ctaid.y`,
`%nctaid.y`) is fixed at 1: a kernel written for one-dimensional launches
would otherwise be called racy because a two-dimensional launch runs each of
its threads twice. The report states both.
"""

from __future__ import annotations

from gpurace.frontend.kernels import reachable_functions
from gpurace.frontend.ptx.ir import Function, Module, SpecialReg
from gpurace.verify.explore import DIMS

Launch = dict[str, "int | None"]


def launch_scope(module: Module, fn: Function, grid, block) -> tuple[Launch, list[str]]:
    """(dimension values, None where symbolic; the notes the report prints about the scope)."""
    dims: Launch = {}
    notes: list[str] = []
    read = _dimensions_read(module, fn)
    for name, given in (("nctaid", grid), ("ntid", block)):
        for i, d in enumerate(DIMS):
            dims[f"{name}.{d}"] = given[i] if given is not None else (None if d in read else 1)
    open_dims = [d for d in DIMS if d in read and (grid is None or block is None)]
    if grid is None or block is None:
        fixed = [d for d in DIMS if d not in read]
        if open_dims:
            notes.append(
                f"launch dimensions {', '.join(open_dims)} symbolic: any grid and block the hardware allows, "
                "with grid times block below 2^31 threads in each"
            )
        if fixed:
            notes.append(f"dimension{'s' if len(fixed) > 1 else ''} {', '.join(fixed)} taken as 1: the kernel does not read {'them' if len(fixed) > 1 else 'it'}")
    return dims, notes


def _dimensions_read(module: Module, kernel: Function) -> set[str]:
    """The dimensions the kernel, or a function it calls, reads an index or size of (`%laneid`: all)."""
    out: set[str] = set()
    for ins in (ins for fn in reachable_functions(module, kernel) for ins in fn.body):
        for op in ins.operands:
            if isinstance(op, SpecialReg) and op.component in DIMS:
                out.add(op.component)
            if isinstance(op, SpecialReg) and op.name == "laneid":
                out.update(DIMS)
    return out
