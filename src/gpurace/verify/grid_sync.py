"""Cooperative groups' grid-wide barrier (`this_grid().sync()`), found in a function's PTX.

`grid.sync()` (GPUVerify's `synchronize(grid)`) compiles to cooperative
groups' `details::sync_grids`, inlined or called: a block barrier, the
block's first thread adding to the grid workspace with a release atomic and
spinning on it with acquire loads until every block has arrived, and a
second block barrier. Verify can prove nothing from that code (a spin loop
on values loaded from memory), but what it does is known: on a cooperative
launch, which `grid.sync()` requires, everything before it in any thread of
the grid happens before everything after it. So the code is recognised here,
and `explore` treats the first barrier as a barrier of the whole grid, the
workspace accesses between the two as none of the kernel's, and the second
barrier as reached by every thread that reached the first.

A region is recognised by its source lines (the frames of
`cooperative_groups/details/sync.h`, which no user writes) and by its shape:
two block barriers there, a `.gpu` atomic between them, every memory access
between them from that header, unguarded barriers, and control flow that
enters only at the first barrier and leaves only after the second. Anything
else stays the code it is (and gives the `possible` alarms it gives).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpurace.frontend.ptx.ir import Function, Instruction, Sym

HEADER = "cooperative_groups/details/sync.h"
"""The header whose `sync_grids` implements the grid barrier."""

BARRIER_CALLS = frozenset({"__barrier_sync", "_Z14__barrier_syncj"})
"""`__barrier_sync(0)` left a call (without inlining, as under -G or GPUVerify-style compiles)."""

MEMORY = frozenset({"ld", "ldu", "st", "atom", "red"})


@dataclass
class GridSyncs:
    """The grid barriers of one function, as instruction identities (`id(ins)`).

    `openings` are the first block barriers of each region, `closings` the
    second ones (mapped to their opening), `internal` the memory accesses
    between them (the grid workspace's).
    """

    openings: set[int] = field(default_factory=set)
    closings: dict[int, int] = field(default_factory=dict)
    internal: set[int] = field(default_factory=set)


def find_grid_syncs(fn: Function) -> GridSyncs:
    """Every `sync_grids` region of `fn` that has the expected shape (see the module's docstring)."""
    out = GridSyncs()
    barriers = [i for i, ins in enumerate(fn.body) if _in_header(ins) and _is_block_barrier(ins)]
    k = 0
    while k + 1 < len(barriers):
        first, second = barriers[k], barriers[k + 1]
        if not _is_region(fn, first, second):
            k += 1
            continue
        out.openings.add(id(fn.body[first]))
        out.closings[id(fn.body[second])] = id(fn.body[first])
        out.internal.update(id(ins) for ins in fn.body[first + 1 : second] if ins.opcode in MEMORY)
        k += 2
    return out


def _in_header(ins: Instruction) -> bool:
    return ins.loc is not None and any(frame.file.replace("\\", "/").endswith(HEADER) for frame in ins.loc.chain())


def _is_block_barrier(ins: Instruction) -> bool:
    if ins.guard is not None:
        return False
    if ins.opcode in ("bar", "barrier"):
        simple = not ins.has("warp") and not ins.has("red") and not ins.has("arrive")
        return simple and len(ins.operands) == 1 and getattr(ins.operands[0], "value", None) == 0
    if ins.opcode == "call":
        return any(isinstance(o, Sym) and o.name in BARRIER_CALLS for o in ins.operands)
    return False


def _is_region(fn: Function, first: int, second: int) -> bool:
    """Instructions `first`..`second` are one `sync_grids`: a `.gpu` atomic inside, only the header's memory
    accesses, and no branch into the region from outside nor out of it but past `second`."""
    inside = fn.body[first + 1 : second]
    if not any(ins.opcode == "atom" and ins.scope == "gpu" for ins in inside):
        return False
    if any(ins.opcode in MEMORY and ins.space not in ("param", "local") and not _in_header(ins) for ins in inside):
        return False
    if any(ins.opcode in ("ret", "exit", "trap", "brx", "call") and not _is_block_barrier(ins) for ins in inside):
        return False
    for i, ins in enumerate(fn.body):
        if ins.opcode != "bra":
            continue
        target = next((fn.labels.get(o.name) for o in ins.operands if isinstance(o, Sym)), None)
        if target is None:
            if first < i < second:
                return False
            continue
        from_inside, to_inside = first < i < second, first < target <= second
        if from_inside != to_inside and not (from_inside and target == second + 1):
            return False
    return True
