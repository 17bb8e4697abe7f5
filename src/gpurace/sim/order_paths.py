"""Whether a kernel's control flow and addresses can depend on the order in which its warps run.

The default check explores several schedules because another order can let a
thread read another value, and so take another path or touch another address.
`order_independent_paths` answers, from the PTX alone, whether that can happen
beyond spinning on a lock: it follows every register that a value from memory
can reach (data flow, flow-insensitive, to a fixed point) and answers False
when such a register decides a branch, guards an instruction or forms an
address. Registers read from memory by a compare-and-swap or exchange (a lock
taken or released) get a weaker mark, *spin*: they may decide branches (how
long a thread spins on the lock), and then every register written where that
branch can lead whose value can carry over from one pass to the next (written
at more than one pc, as a loop counter or a flag set on one path, or
depending on itself) is marked spin too; spin registers may not form
addresses. A register written once from unmarked values holds the same value
whenever the thread gets there, however long it spun before. So, when it answers True, each thread touches the same
addresses along the same path in every schedule in which its spins succeed,
in more or fewer spin rounds; which thread wins a lock first changes only the
values it reads and stores (`check._check_schedules` uses this).

Conservative by construction: a kernel that calls functions, or uses an
instruction whose result depends on other lanes or on time (votes, shuffles,
`%clock`, ...), is answered False.
"""

from __future__ import annotations

from gpurace.frontend.ptx.ir import Addr, Instruction, Reg, SpecialReg
from gpurace.sim.program import Program, on_cycles
from gpurace.sim.register_slots import mentions, successors

SPIN, MEMORY = 1, 2
"""Marks of a register: a value a lock operation read (and what depends on it), a value read from memory."""

_LANE_OR_TIME = frozenset({"vote", "shfl", "match", "redux", "activemask", "elect", "mbarrier", "tex", "tld4", "suld", "txq", "suq"})
"""Opcodes whose result depends on other lanes, on memory or on time: marked as memory."""

_TIME_REGISTERS = frozenset({"clock", "clock64", "globaltimer", "globaltimer_lo", "globaltimer_hi", "smid", "nsmid", "warpid", "nwarpid"})
"""Special registers whose value can differ between schedules."""

_NO_DESTINATION = frozenset({"st", "red", "bra", "bar", "barrier", "membar", "fence", "ret", "exit", "trap", "call"})


def order_independent_paths(program: Program) -> bool:
    """Whether no value from memory other than a lock operation's decides a branch, a guard or an address, and no
    lock operation's value (or a register written after a branch on one) forms an address (module docstring)."""
    if len(program.functions) > 1 or any(ins.opcode == "brx" for ins in program.instructions):
        return False
    code = program.instructions  # one function: its own pcs are the program's, and so are its labels
    labels = {name: pc for (_, name), pc in program.labels.items()}
    carried = _carried(code)
    marks: dict[str, int] = {}
    reach: dict[int, set[int]] = {}  # per branch on a spin value, the pcs it can lead to
    changed = True
    while changed:
        changed = False
        for pc, ins in enumerate(code):
            mark = max([_seed(ins), *(marks.get(r, 0) for r in _sources(ins))])
            for r in _destinations(ins):
                if marks.get(r, 0) < mark:
                    marks[r] = mark
                    changed = True
            decided = _guard_mark(ins, marks)
            if decided == SPIN:
                if pc not in reach:
                    reach[pc] = _reachable(code, labels, pc)
                for later in reach[pc]:
                    for r in _destinations(code[later]):
                        if r in carried and marks.get(r, 0) < SPIN:
                            marks[r] = SPIN
                            changed = True
    for ins in code:
        if _guard_mark(ins, marks) == MEMORY:
            return False
        if any(marks.get(r, 0) for r in _address_registers(ins)):
            return False
        if ins.opcode in ("bar", "barrier") and any(marks.get(r, 0) for r in _sources(ins)):
            return False
    return True


def _carried(code: list[Instruction]) -> set[str]:
    """Registers whose value can carry over from one pass of a loop to the next: written at more than one pc, or
    depending on themselves through the registers their writes read."""
    writes: dict[str, int] = {}
    reads: dict[str, set[str]] = {}
    for ins in code:
        for r in _destinations(ins):
            writes[r] = writes.get(r, 0) + 1
            reads.setdefault(r, set()).update(_sources(ins))
    return {r for r, n in writes.items() if n > 1} | on_cycles(reads)


def _seed(ins: Instruction) -> int:
    """The mark an instruction's result gets from where it reads: memory, a lock operation, or neither."""
    if ins.opcode in _LANE_OR_TIME or _reduces_across_threads(ins):
        return MEMORY
    if any(isinstance(op, SpecialReg) and op.name in _TIME_REGISTERS for op in ins.operands):
        return MEMORY
    if ins.opcode == "atom":
        return SPIN if any(m in ("cas", "exch") for m in ins.modifiers) else MEMORY
    if any(isinstance(op, Addr) for op in ins.operands) and _destinations(ins):
        return 0 if ins.space in ("param", "const") else MEMORY
    return 0


def _reduces_across_threads(ins: Instruction) -> bool:
    """`bar.red`/`barrier.red`: a barrier whose result counts or combines the predicates of the whole block."""
    return ins.opcode in ("bar", "barrier") and "red" in ins.modifiers and bool(ins.operands)


def _guard_mark(ins: Instruction, marks: dict[str, int]) -> int:
    return marks.get(ins.guard.reg.name, 0) if ins.guard is not None else 0


def _destinations(ins: Instruction) -> list[str]:
    if _reduces_across_threads(ins):
        return mentions(ins.operands[0])
    if ins.opcode in _NO_DESTINATION or not ins.operands:
        return []
    return mentions(ins.operands[0])


def _sources(ins: Instruction) -> list[str]:
    first = 0 if ins.opcode in _NO_DESTINATION else 1
    names = [r for op in ins.operands[first:] for r in mentions(op)]
    if first and ins.operands and isinstance(ins.operands[0], Addr):
        names += mentions(ins.operands[0])
    return names + ([ins.guard.reg.name] if ins.guard is not None else [])


def _address_registers(ins: Instruction) -> list[str]:
    return [op.base.name for op in ins.operands if isinstance(op, Addr) and isinstance(op.base, Reg)]


def _reachable(code: list[Instruction], labels: dict[str, int], start: int) -> set[int]:
    """The pcs control can reach from `start` (a branch), its targets and the fall-through, back edges included."""
    seen: set[int] = set()
    todo = successors(code, labels, start)
    while todo:
        pc = todo.pop()
        if pc in seen:
            continue
        seen.add(pc)
        todo.extend(successors(code, labels, pc))
    return seen
