"""A kernel's control-flow graph, its dominators and its natural loops.

The verifier executes a kernel symbolically once per basic block, so it needs
the blocks in an order where every block comes after its forward predecessors
(reverse postorder), and every loop as a region with one header whose
back-edges it can recognise. A CFG that is not reducible (a loop entered at two
places) or that branches through a register has no such structure; `build_cfg`
says so and the kernel's verdict is then "unknown" rather than a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpurace.frontend.ptx.ir import Function, Instruction, Sym


class UnsupportedControl(Exception):
    """The kernel's control flow has no structure the verifier can reason about (the message says why)."""


TERMINATORS = frozenset({"ret", "exit", "trap"})


@dataclass
class Block:
    """Instructions `start`..`end` (exclusive) of the function body; `succs` are block indices.

    `branch` is the final `bra` (or `ret`/`exit`) when it is guarded: its
    guard decides `succs[0]`, the target (for `ret`, the exit block), against
    `succs[1]`, the fall-through.
    """

    index: int
    start: int
    end: int
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)
    branch: Instruction | None = None


@dataclass
class Loop:
    """A natural loop: its header block, the blocks it contains and its back-edge sources."""

    header: int
    blocks: frozenset[int]
    latches: tuple[int, ...]


@dataclass
class Cfg:
    blocks: list[Block]
    order: list[int]
    loops: dict[int, Loop]


def _target(ins: Instruction, fn: Function) -> int:
    op = ins.operands[0] if ins.operands else None
    if not isinstance(op, Sym) or op.name not in fn.labels:
        raise UnsupportedControl(f"{ins.where()}: indirect branch `{ins.text.strip()}`")
    return fn.labels[op.name]


def _leaders(fn: Function) -> list[int]:
    body = fn.body
    leaders = {0, *fn.labels.values()}
    for i, ins in enumerate(body):
        if ins.opcode in ("bra", "brx") or ins.opcode in TERMINATORS:
            leaders.add(i + 1)
        if ins.opcode == "brx":
            raise UnsupportedControl(f"{ins.where()}: indirect branch `{ins.text.strip()}`")
    return sorted(x for x in leaders if x < len(body))


def build_cfg(fn: Function) -> Cfg:
    """Basic blocks, reverse postorder and natural loops of `fn`; raises UnsupportedControl when irreducible."""
    starts = _leaders(fn)
    ends = starts[1:] + [len(fn.body)]
    blocks = [Block(i, s, e) for i, (s, e) in enumerate(zip(starts, ends))]
    blocks.append(Block(len(blocks), len(fn.body), len(fn.body)))  # past the last instruction: an implicit `ret`
    at = {b.start: b.index for b in blocks}
    for b in blocks[:-1]:
        last = fn.body[b.end - 1]
        fall = at[b.end]
        if last.opcode == "bra":
            target = at[_target(last, fn)]
            if last.guard is None:
                b.succs = [target]
            else:
                b.branch = last
                b.succs = [target, fall]
        elif last.opcode in TERMINATORS:
            if last.guard is not None:  # `@%p ret`: taken, the thread leaves (the exit block); else falls through
                b.branch = last
                b.succs = [blocks[-1].index, fall]
        else:
            b.succs = [fall]
        for s in b.succs:
            blocks[s].preds.append(b.index)
    order = _reverse_postorder(blocks)
    reachable = set(order)
    for b in blocks:
        b.preds = [p for p in b.preds if p in reachable]
    doms = _dominators(blocks, order)
    return Cfg(blocks, order, _loops(blocks, order, doms))


def _reverse_postorder(blocks: list[Block]) -> list[int]:
    seen: set[int] = set()
    post: list[int] = []
    stack: list[tuple[int, int]] = [(0, 0)]
    seen.add(0)
    while stack:
        node, i = stack[-1]
        succs = blocks[node].succs
        if i < len(succs):
            stack[-1] = (node, i + 1)
            s = succs[i]
            if s not in seen:
                seen.add(s)
                stack.append((s, 0))
        else:
            stack.pop()
            post.append(node)
    return post[::-1]


def _dominators(blocks: list[Block], order: list[int]) -> dict[int, set[int]]:
    doms: dict[int, set[int]] = {n: set(order) for n in order}
    doms[order[0]] = {order[0]}
    changed = True
    while changed:
        changed = False
        for n in order[1:]:
            preds = [p for p in blocks[n].preds if p in doms]
            new = set.intersection(*(doms[p] for p in preds)) if preds else set()
            new = new | {n}
            if new != doms[n]:
                doms[n], changed = new, True
    return doms


def _loops(blocks: list[Block], order: list[int], doms: dict[int, set[int]]) -> dict[int, Loop]:
    position = {n: i for i, n in enumerate(order)}
    latches: dict[int, list[int]] = {}
    for n in order:
        for s in blocks[n].succs:
            if position[s] <= position[n]:
                if s not in doms[n]:
                    raise UnsupportedControl(
                        f"irreducible control flow (a loop entered other than at its head, block {s})"
                    )
                latches.setdefault(s, []).append(n)
    loops: dict[int, Loop] = {}
    for header, srcs in latches.items():
        body = {header}
        work = [s for s in srcs if s != header]
        body.update(work)
        while work:
            n = work.pop()
            for p in blocks[n].preds:
                if p not in body:
                    body.add(p)
                    work.append(p)
        loops[header] = Loop(header, frozenset(body), tuple(srcs))
    return loops


def live_in(cfg: Cfg, fn: Function, reads, writes) -> dict[int, set[str]]:
    """Registers live on entry to each block: read on some path before being written.

    `reads(ins)` and `writes(ins)` name the registers an instruction reads
    and (unconditionally) writes; a loop head needs a symbol only for the
    registers live there, since the others are written before any read.
    """
    use: dict[int, set[str]] = {}
    kill: dict[int, set[str]] = {}
    for b in cfg.blocks:
        u: set[str] = set()
        k: set[str] = set()
        for ins in fn.body[b.start : b.end]:
            u |= set(reads(ins)) - k
            k |= set(writes(ins))
        use[b.index], kill[b.index] = u, k
    live = {b.index: set(use[b.index]) for b in cfg.blocks}
    changed = True
    while changed:
        changed = False
        for n in reversed(cfg.order):
            out = set().union(*(live[s] for s in cfg.blocks[n].succs)) if cfg.blocks[n].succs else set()
            new = use[n] | (out - kill[n])
            if new != live[n]:
                live[n], changed = new, True
    return live
