"""Register slots shared by registers whose values are never needed at the same time.

Every register of a thread is an array over the launch's threads (`ThreadState.regs`), so the state of a
launch is registers × threads. nvcc's PTX names a fresh virtual register for almost every value (hundreds per
kernel, from a few dozen live at once): a 4M-thread launch of such a kernel held gigabytes of registers that
were each written once and read a few instructions later. Here two registers of one type share a slot when
no point of the function needs both values: a liveness analysis over the function's control flow graph,
then a greedy colouring in declaration order (deterministic, so the same PTX always gets the same slots).

Liveness is per thread: each thread runs one path of the graph, whatever the others do, and a write to a
register array touches only the threads that run it. The analysis is conservative where it must be:
* a register is *killed* (its old value dead) only by an unguarded instruction of `_KILLING` whose first
  operand is that one register, which every handler of those opcodes writes for every thread it runs;
* any other mention, a write included, counts as a read: the register is live up to that point, so nothing
  else can be in its slot there, and its old value is kept;
* a register read before any write (its initial zero) is live from the entry.
A function left as it was (one slot per register): one that is recursive (calls save its registers by slot),
or that holds an indirect branch (`brx.idx`) or a `wgmma` (whose accumulators are written at a later wait).
"""

from __future__ import annotations

from gpurace.frontend.ptx.ir import Addr, Guard, Instruction, Negated, ParamList, PredPair, Reg, Sym, Vec

_KILLING = frozenset(
    {
        "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max", "and", "or",
        "xor", "not", "cnot", "shl", "shr", "cvt", "cvta", "mov", "selp", "set", "setp", "fma", "rcp", "sqrt", "rsqrt",
        "sin", "cos", "lg2", "ex2", "tanh", "popc", "clz", "brev", "bfe", "bfi", "bfind", "prmt", "copysign", "testp",
        "slct", "ld", "ldu",
    }
)
"""Opcodes whose first operand, when it is one register, is written for every thread that runs them."""

_ENDS = frozenset({"ret", "exit", "trap", "brkpt"})
_UNSHARED = ("brx", "wgmma")


def mentions(op) -> list[str]:
    """Names of the registers an operand names, at any depth."""
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Negated):
        return [op.reg.name]
    if isinstance(op, PredPair):
        return [op.first.name, op.second.name]
    if isinstance(op, Guard):
        return [op.reg.name]
    if isinstance(op, Addr):
        return [op.base.name] if isinstance(op.base, Reg) else []
    if isinstance(op, Vec):
        return [name for e in op.elems for name in mentions(e)]
    if isinstance(op, ParamList):
        return [name for e in op.items for name in mentions(e)]
    return []


def successors(body: list[Instruction], labels: dict[str, int], i: int) -> list[int]:
    ins = body[i]
    after = [i + 1] if i + 1 < len(body) else []
    if ins.guard is None and ins.opcode in _ENDS:
        return []
    if ins.opcode == "bra":
        targets = [labels[op.name] for op in ins.operands if isinstance(op, Sym) and op.name in labels]
        return [t for t in targets if t < len(body)] + (after if ins.guard is not None else [])
    return after


def share_slots(body: list[Instruction], labels: dict[str, int], names: list[str], types: list) -> list[int] | None:
    """A slot number (0, 1, ... within the function) for each register `names[k]` of dtype `types[k]`, or None
    where the function keeps one slot per register (module docstring)."""
    if any(ins.opcode in _UNSHARED for ins in body):
        return None
    bit = {name: k for k, name in enumerate(names)}

    def bits(regs) -> int:
        out = 0
        for name in regs:
            k = bit.get(name)
            if k is not None:
                out |= 1 << k
        return out

    kills, uses = [], []
    for ins in body:
        first = ins.operands[0] if ins.operands else None
        killing = ins.guard is None and ins.opcode in _KILLING and isinstance(first, Reg)
        read = [name for op in (ins.operands[1:] if killing else ins.operands) for name in mentions(op)]
        if ins.guard is not None:
            read += mentions(ins.guard)
        kills.append(bits([first.name]) if killing else 0)
        uses.append(bits(read))
    succ = [successors(body, labels, i) for i in range(len(body))]
    live_in = [0] * len(body)
    changed = True
    while changed:
        changed = False
        for i in range(len(body) - 1, -1, -1):
            out = 0
            for s in succ[i]:
                out |= live_in[s]
            new = uses[i] | (out & ~kills[i])
            if new != live_in[i]:
                live_in[i], changed = new, True
    clash = [0] * len(names)
    for i in range(len(body)):
        out = 0
        for s in succ[i]:
            out |= live_in[s]
        together = live_in[i] | out | kills[i]
        rest = together
        while rest:
            low = rest & -rest
            clash[low.bit_length() - 1] |= together
            rest ^= low
    slots: list[int] = []
    slot_type: list = []
    holders: list[int] = []  # per slot: the registers given it, as bits
    for k, dt in enumerate(types):
        for s, held in enumerate(holders):
            if slot_type[s] == dt and not clash[k] & held:
                holders[s] |= 1 << k
                slots.append(s)
                break
        else:
            slots.append(len(holders))
            holders.append(1 << k)
            slot_type.append(dt)
    return slots
