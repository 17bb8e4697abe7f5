"""Which launches a verdict covers: the dimensions given, or every launch the hardware allows.

Dimensions given on the command line (or by a GPUVerify header) are fixed.
Left open, grid and block sizes are symbols bounded by the hardware's limits,
with each dimension's thread count (grid times block) below 2^31. A dimension
the kernel never reads (`%tid.y`, `%ntid.y`, `%ctaid.y`, `%nctaid.y`) is fixed
at 1: a kernel written for one-dimensional launches would otherwise be called
racy because a two-dimensional launch runs each of its threads twice. So is
the block along a dimension of which the kernel reads the grid's size only
(`gridDim.y`, as Faial's `parse-gv` example does), no index and no block
size: it does not use that dimension to tell threads apart. The grid keeps
such a dimension open, since blocks that cannot tell themselves apart race in
launches of many blocks, which is a common bug. The report states what
applied.
"""

from __future__ import annotations

from gpurace.frontend.kernels import reachable_functions
from gpurace.frontend.ptx.ir import Function, Module, SpecialReg
from gpurace.verify.explore import DIMS

Launch = dict[str, "int | None"]

_INDEXING_REGS = ("tid", "ntid", "ctaid")


def launch_scope(module: Module, fn: Function, grid, block) -> tuple[Launch, list[str]]:
    """(dimension values, None where symbolic; the notes the report prints about the scope)."""
    read, indexed = _dimensions_read(module, fn)
    opened = {"nctaid": read, "ntid": indexed}
    dims: Launch = {}
    for name, given in (("nctaid", grid), ("ntid", block)):
        for i, d in enumerate(DIMS):
            dims[f"{name}.{d}"] = given[i] if given is not None else (None if d in opened[name] else 1)
    grid_open = [d for d in DIMS if dims[f"nctaid.{d}"] is None]
    block_open = [d for d in DIMS if dims[f"ntid.{d}"] is None]
    notes: list[str] = []
    if grid_open or block_open:
        if grid_open == block_open:
            what = f"launch dimensions {_names(grid_open)} symbolic: any grid and block"
        else:
            parts = [f"{w} dimension{_plural(o)} {_names(o)}" for w, o in (("grid", grid_open), ("block", block_open)) if o]
            what = f"{' and '.join(parts)} symbolic: any"
        notes.append(f"{what} the hardware allows, with grid times block below 2^31 threads in each")
    unread = [d for d in DIMS if d not in read and (grid is None or block is None)]
    if unread:
        whose = "" if grid is None and block is None else ("grid " if block is not None else "block ")
        notes.append(f"{whose}dimension{_plural(unread)} {_names(unread)} taken as 1: the kernel does not read {_them(unread)}")
    sized = [d for d in DIMS if block is None and d in read and d not in indexed]
    if sized:
        notes.append(
            f"block dimension{_plural(sized)} {_names(sized)} taken as 1: the kernel reads the grid's size along "
            f"{_them(sized)}, no index and no block size"
        )
    return dims, notes


def _names(dims: list[str]) -> str:
    return ", ".join(dims)


def _plural(dims: list[str]) -> str:
    return "s" if len(dims) > 1 else ""


def _them(dims: list[str]) -> str:
    return "them" if len(dims) > 1 else "it"


def _dimensions_read(module: Module, kernel: Function) -> tuple[set[str], set[str]]:
    """The dimensions the kernel, or a function it calls, reads an index or size of (`%laneid`: all), and
    those of them it reads more of than the grid's size (`%tid`, `%ntid`, `%ctaid`)."""
    read: set[str] = set()
    indexed: set[str] = set()
    for ins in (ins for fn in reachable_functions(module, kernel) for ins in fn.body):
        for op in ins.operands:
            if isinstance(op, SpecialReg) and op.component in DIMS:
                read.add(op.component)
                if op.name in _INDEXING_REGS:
                    indexed.add(op.component)
            if isinstance(op, SpecialReg) and op.name == "laneid":
                read.update(DIMS)
                indexed.update(DIMS)
    return read, indexed
