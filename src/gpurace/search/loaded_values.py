"""Which pointer parameters' and variables' contents can steer a kernel: what the input search fills with
patterns.

A buffer's contents matter to races only where a value loaded from it feeds
an address (`y[i + offsets[i]]`) or a predicate (`if (flags[i]) ...`): then
other contents make other threads meet. Searching the contents of every
buffer would spend the search's budget on buffers that are only written, or
whose values only flow into results, so `steering_contents` finds the ones
that matter, over the kernel's PTX, flow-insensitively (a register is
whatever any of its definitions makes it):

- a register *points into* parameter p if it is loaded from p's parameter
  slot or computed from such a register (`cvta`, `add`, `mad`, ...); it
  points into a module variable (a `__constant__` table the host may fill
  with `cudaMemcpyToSymbol`) if it is computed from the variable's address
  (`mov.u64 %rd1, table`), and an access `[table+8]` goes through it;
- a register *holds contents of* p if it is loaded through a register that
  points into p, or computed from such a register;
- p *steers* if a register holding its contents is the base of an address, a
  guard predicate, or if a pointer into p is passed to a device function that
  was not inlined (what the callee does with it is not looked at).
"""

from __future__ import annotations

from collections import defaultdict

from gpurace.frontend.ptx.ir import Addr, Function, Instruction, PredPair, Reg, Sym, Vec

_NO_DESTINATION = frozenset({"st", "red", "bar", "barrier", "bra", "brx", "ret", "exit", "membar", "fence", "call", "trap", "prefetch"})


def steering_contents(fn: Function, variables: frozenset[str] = frozenset()) -> set[int | str]:
    """Indices of `fn`'s parameters, and names among the module `variables`, whose contents can change
    addresses or control flow."""
    slots = {p.name: i for i, p in enumerate(fn.params)}
    points: dict[str, set[int | str]] = defaultdict(set)
    holds: dict[str, set[int | str]] = defaultdict(set)
    steers: set[int | str] = set()
    changed = True
    while changed:
        changed = False
        for ins in fn.body:
            dests, sources = _split(ins)
            address = next((op for op in ins.operands if isinstance(op, Addr)), None)
            base = address.base.name if address is not None and isinstance(address.base, Reg) else None
            named = address.base.name if address is not None and isinstance(address.base, Sym) else None
            if base is not None:
                steers |= holds[base]
            if ins.guard is not None:
                steers |= holds[ins.guard.reg.name]
            if ins.opcode == "st" and ins.space == "param":  # an argument of a call: the callee is not followed
                steers |= _union(points, sources)
            if ins.opcode == "ld" and ins.space == "param":
                new_points, new_holds = ({slots[named]} if named in slots else set()), set()
            elif ins.opcode in ("ld", "ldu", "atom") and (base is not None or named in variables):
                new_points, new_holds = set(), ({named} if base is None else points[base] | holds[base])
            else:
                new_points, new_holds = _union(points, sources), _union(holds, sources)
                new_points |= {op.name for op in ins.operands[1:] if isinstance(op, Sym) and op.name in variables}
            for d in dests:
                if not (new_points <= points[d] and new_holds <= holds[d]):
                    points[d] |= new_points
                    holds[d] |= new_holds
                    changed = True
    return steers


def _union(sets: dict[str, set[int]], regs: list[str]) -> set[int]:
    return set().union(*(sets[r] for r in regs))


def _split(ins: Instruction) -> tuple[list[str], list[str]]:
    """(destination registers, source registers) of `ins`; registers inside addresses are not sources."""
    if ins.opcode in _NO_DESTINATION or not ins.operands:
        return [], [r for op in ins.operands for r in _regs(op)]
    return _regs(ins.operands[0]), [r for op in ins.operands[1:] for r in _regs(op)]


def _regs(op) -> list[str]:
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Vec):
        return [r for e in op.elems for r in _regs(e)]
    if isinstance(op, PredPair):
        return [op.first.name, op.second.name]
    return []
