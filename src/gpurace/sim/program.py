"""A kernel and the device functions it calls, flattened for execution.

The engine addresses instructions by one global `pc` across all functions, so
`call` and `ret` are jumps and per-thread PCs are a single integer array.
Everything the engine needs about names is resolved here once per launch:
labels to pcs, each function's registers to storage slots (registers are
function-local in PTX, so `%r1` in two functions are two slots), the local
memory frame of each function, per-thread `.param` slots used by call
sequences, which functions are recursive (their registers must be saved
across calls), and the address of every function, so that a call through a
function pointer (a register holding one of them) finds its callee.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.kernels import param_layout
from gpurace.frontend.ptx.ir import (
    Addr, AddressOf, Function, Instruction, Module, ParamList, Reg, RegDecl, Sym, Variable, Vec, type_size,
)
from gpurace.limits import MAX_REGISTERS_PER_KERNEL
from gpurace.sim.device_runtime import runtime_call
from gpurace.sim.memory.layout import function_addresses
from gpurace.sim.register_slots import share_slots

_DTYPE_BY_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
MAX_KERNEL_PARAM_BYTES = 32764
"""The most bytes of parameters a CUDA kernel takes (CUDA 12.1 and later; 4,096 before)."""

# Functions the CUDA runtime provides and that we implement natively, and the
# checks behind `__assert`, `__requires` and `__assume` in gpurace's GPUVerify cuda.h.
BUILTIN_FUNCTIONS = frozenset(
    {
        "vprintf",
        "__assertfail",
        "malloc",
        "free",
        "cudaGraphSetConditional",
        "__gpurace_assert",
        "__gpurace_requires",
        "__gpurace_assume",
    }
)
# That cuda.h also declares one function per GPUVerify predicate that only a
# verifier can evaluate (`__gpurace_verifier_only_read` for `__read`).
VERIFIER_ONLY_PREFIX = "__gpurace_verifier_only_"


def is_builtin_function(name: str) -> bool:
    """True for a function the simulator implements itself, whose body is not in the PTX."""
    return name in BUILTIN_FUNCTIONS or name.startswith(VERIFIER_ONLY_PREFIX) or runtime_call(name) is not None


def reg_dtype(decl: RegDecl, function: str) -> np.dtype:
    """Storage dtype of the registers of `decl`: raw unsigned bits, bool for predicates."""
    if decl.type == "pred":
        return np.dtype(np.bool_)
    size = type_size(decl.type)
    if size not in _DTYPE_BY_SIZE:
        raise UserError(
            f"register {decl.name} of {function} (PTX line {decl.ptx_line}) has type .{decl.type}, "
            "which the simulator does not support"
        )
    return np.dtype(_DTYPE_BY_SIZE[size])


@dataclass
class FunctionInfo:
    """Per-function facts the engine needs."""

    fn: Function
    entry: int  # global pc of the first instruction
    end: int  # one past the last instruction
    regs: dict[str, int] = field(default_factory=dict)  # register name -> slot
    frame: dict[str, int] = field(default_factory=dict)  # .local variable -> offset in this function's frame
    frame_size: int = 0
    params: dict[str, int] = field(default_factory=dict)  # .param symbol (own params, returns, call-site params) -> param slot
    recursive: bool = False


@dataclass
class Program:
    """The flattened kernel: instructions, functions, register and param slots."""

    module: Module
    kernel: Function
    instructions: list[Instruction]
    owner: list[str]  # function name of each pc
    functions: dict[str, FunctionInfo]
    labels: dict[tuple[str, str], int]  # (function, label) -> global pc
    reg_types: list[np.dtype]  # slot -> dtype
    reg_names: list[str]  # slot -> "function:%r1" for messages
    param_sizes: list[int]  # per-thread param slot -> size in bytes
    kernel_params: dict[str, int]  # kernel .param symbol -> offset in the param buffer
    kernel_param_size: int
    shared_vars: list[Variable]
    implicit_ends: frozenset[int] = frozenset()  # pcs of the `ret`s added where a body can run past its end
    function_addresses: dict[str, int] = field(default_factory=dict)  # every function of the module -> its address
    function_at: dict[int, str] = field(default_factory=dict)  # address -> function an indirect call can enter

    @property
    def entry(self) -> FunctionInfo:
        return self.functions[self.kernel.name]

    def where(self, pc: int) -> str:
        """`file:line` (or the PTX line) of an instruction, for messages."""
        return self.instructions[pc].where()



def thread_state_bytes(program: Program) -> int:
    """Bytes of simulator state one thread needs: its registers and its `.param` slots.

    The launch multiplies it by the thread count and checks the product
    against the memory budget before the registers are allocated.
    """
    registers = sum(dt.itemsize for dt in program.reg_types)
    params = sum(max(size, 16) for size in program.param_sizes)  # as `ThreadState.param_buffer` allocates them
    return registers + params


def _check_register_count(module: Module, names: list[str], kernel_name: str) -> None:
    """Refuse a program with more registers than MAX_REGISTERS_PER_KERNEL, before any is given a slot.

    The parser bounds each declaration; this bounds their sum over the
    kernel and its callees, whose per-register bookkeeping is paid whatever
    the launch size.
    """
    total = sum(1 if decl.count is None else decl.count for name in names for decl in module.functions[name].regs)
    if total > MAX_REGISTERS_PER_KERNEL:
        raise UserError(
            f"kernel {kernel_name} and the functions it calls declare {total:,} registers, more than gpurace "
            f"supports ({MAX_REGISTERS_PER_KERNEL:,})"
        )


_TERMINATORS = frozenset({"ret", "exit", "bra", "trap", "brkpt"})


def _runs_past_end(fn: Function) -> bool:
    """Whether control can run past the last instruction of `fn`.

    It can when the body does not end with an unguarded ret/exit/bra/trap, or
    when a branch targets a label after the last instruction (debug builds
    put labels there that nothing branches to).
    """
    if not fn.body:
        return True
    last = fn.body[-1]
    if last.guard is not None or last.opcode not in _TERMINATORS:
        return True
    at_end = {name for name, i in fn.labels.items() if i == len(fn.body)}
    return any(isinstance(op, Sym) and op.name in at_end for ins in fn.body if ins.opcode == "bra" for op in ins.operands)


def _implicit_end(fn: Function) -> Instruction:
    """The `ret` that stands for the closing `}` of a body control can run past (what it means is the engine's choice)."""
    loc = fn.body[-1].loc if fn.body else fn.loc
    return Instruction("ret", (), (), loc=loc, ptx_line=fn.end_line or fn.ptx_line, text="}")


def _align(x: int, a: int) -> int:
    return -(-x // a) * a


def _call_sites(fn: Function) -> list[tuple[str, Instruction]]:
    """(callee, call instruction) of each direct call; what an indirect call may enter is `_address_taken`."""
    out = []
    for ins in fn.body:
        if ins.opcode == "call":
            ops = [op for op in ins.operands if not isinstance(op, ParamList)]
            if ops and isinstance(ops[0], Sym):
                out.append((ops[0].name, ins))
    return out


def _calls_indirectly(fn: Function) -> bool:
    return any(ins.opcode == "call" and not isinstance(_callee_operand(ins), Sym) for ins in fn.body)


def _callee_operand(ins: Instruction):
    ops = [op for op in ins.operands if not isinstance(op, ParamList)]
    return ops[0] if ops else None


def _address_taken(module: Module, fn: Function) -> set[str]:
    """Functions of the module whose address `fn` takes (`mov.u64 %rd, f;`): a pointer to them may be called."""
    out = {name for names in fn.target_lists.values() for name in names if name in module.functions}  # `.calltargets`
    for ins in fn.body:
        if ins.opcode != "call":
            out.update(op.name for op in ins.operands if isinstance(op, Sym) and op.name in module.functions)
    return out


def _symbols_named(fn: Function) -> set[str]:
    """The symbols `fn`'s instructions name, as values (`mov.u64 %rd, smem;`) or as addresses (`[smem+8]`)."""
    out: set[str] = set()
    pending = [op for ins in fn.body for op in ins.operands]
    while pending:
        op = pending.pop()
        if isinstance(op, Sym):
            out.add(op.name)
        elif isinstance(op, Addr) and isinstance(op.base, Sym):
            out.add(op.base.name)
        elif isinstance(op, (Vec, ParamList)):
            pending.extend(op.elems if isinstance(op, Vec) else op.items)
    return out


def _initializer_functions(module: Module) -> set[str]:
    """Functions whose address a device variable holds from the start (virtual function tables)."""
    return {
        v.symbol
        for var in module.variables
        for v in var.init or ()
        if isinstance(v, AddressOf) and v.symbol in module.functions
    }


def _callable(module: Module, name: str) -> bool:
    """A function with a body in the PTX that is not a kernel: what a function pointer may enter."""
    fn = module.functions[name]
    return not fn.is_declaration and not fn.is_entry


def _reachable_functions(module: Module, kernel_name: str) -> list[str]:
    """The kernel and every function it calls, directly or not, in breadth-first order; builtins are left out.

    A function whose address is taken (by a reachable function, or in a
    device variable's initial value) may be called through a pointer, so it is
    reachable as well once any reachable function calls through a register.
    """
    order: list[str] = [kernel_name]
    pointed = {name for name in _initializer_functions(module) if _callable(module, name)}
    indirect = False
    for name in order:  # grows while it is walked
        pointed.update(f for f in _address_taken(module, module.functions[name]) if _callable(module, f))
        indirect = indirect or _calls_indirectly(module.functions[name])
        if indirect:
            order.extend(sorted(f for f in pointed if f not in order))
        for callee, site in _call_sites(module.functions[name]):
            fn = module.functions.get(callee)
            if callee in order or (is_builtin_function(callee) and (fn is None or fn.is_declaration)):
                continue
            if fn is None:
                raise UserError(f"{site.where()}: `{site.text}` calls {callee}, which is not a function of the PTX")
            if fn.is_declaration:
                raise UserError(
                    f"{site.where()}: `{site.text}` calls {demangle_signature(callee).name}, whose body is not in the "
                    "PTX: it is declared but defined in no file given, and a program calling it does not link without "
                    "its definition (nvcc: unresolved extern function). Give the file that defines it too "
                    "(`gpurace check FILE OTHER.cu ...` links them; a program "
                    "under `gpurace exec` links its files' device code when built with --nvcc-flag=-rdc=true, as nvcc "
                    "needs it to)"
                )
            order.append(callee)
    return order


def _recursive_functions(module: Module, reachable: list[str], pointed: list[str]) -> set[str]:
    """Functions that lie on a cycle of the call graph; an indirect call may enter any function in `pointed`."""
    graph = {name: [c for c, _ in _call_sites(module.functions[name]) if c in module.functions] for name in reachable}
    for name in reachable:
        if _calls_indirectly(module.functions[name]):
            graph[name].extend(pointed)
    return on_cycles(graph)


def on_cycles(graph: dict) -> set:
    """The nodes of `graph` (node -> the nodes it leads to) from which a path leads back to themselves."""
    found = set()
    for start in graph:
        stack, seen = list(graph[start]), set()
        while stack:
            node = stack.pop()
            if node == start:
                found.add(start)
                break
            if node not in seen:
                seen.add(node)
                stack.extend(graph.get(node, ()))
    return found


def build_program(module: Module, kernel_name: str) -> Program:
    """Flatten `kernel_name` and every function it (transitively) calls; made once per module and kernel
    (`Module.programs`: nothing changes a Program once it is made)."""
    program = module.programs.get(kernel_name)
    if program is None:
        program = module.programs[kernel_name] = _flatten(module, kernel_name)
    return program


def _flatten(module: Module, kernel_name: str) -> Program:
    kernel = module.functions[kernel_name]
    order = _reachable_functions(module, kernel_name)
    _check_register_count(module, order, kernel_name)
    addresses = function_addresses(module.functions)
    pointed = [name for name in order if _callable(module, name)]
    recursive = _recursive_functions(module, order, pointed)

    instructions: list[Instruction] = []
    owner: list[str] = []
    functions: dict[str, FunctionInfo] = {}
    labels: dict[tuple[str, str], int] = {}
    reg_types: list[np.dtype] = []
    reg_names: list[str] = []
    param_sizes: list[int] = []
    shared: dict[str, Variable] = {}
    implicit_ends: set[int] = set()

    for name in order:
        fn = module.functions[name]
        body = list(fn.body)
        if _runs_past_end(fn):
            implicit_ends.add(len(instructions) + len(body))
            body.append(_implicit_end(fn))
        info = FunctionInfo(fn=fn, entry=len(instructions), end=len(instructions) + len(body))
        info.recursive = name in recursive
        declared: dict[str, np.dtype] = {}
        for decl in fn.regs:
            dt = reg_dtype(decl, name)
            for r in decl.names():
                declared.setdefault(r, dt)
        names, types = list(declared), list(declared.values())
        sharing = None if info.recursive else share_slots(body, fn.labels, names, types)
        local = list(range(len(names))) if sharing is None else sharing
        base = len(reg_types)
        for r, dt, slot in zip(names, types, local):
            info.regs[r] = base + slot
            if base + slot == len(reg_types):
                reg_types.append(dt)
                reg_names.append(f"{name}:{r}")
        offset = 0
        for var in fn.variables:
            if var.space == "local":
                a = var.align or var.elem_size
                offset = _align(offset, a)
                info.frame[var.name] = offset
                offset += max(var.size, 1)
            elif var.space == "shared":
                shared.setdefault(var.name, var)
            elif var.space == "param":
                info.params.setdefault(var.name, len(param_sizes))
                param_sizes.append(var.size)
            elif var.space in ("global", "const"):
                raise UserError(f"function-scope .{var.space} variable {var.name} is not supported (PTX line {var.ptx_line})")
        info.frame_size = _align(offset, 16)
        if not fn.is_entry:
            for p in list(fn.params) + list(fn.returns):
                if p.space != "param":
                    raise UserError(
                        f"function {name} (PTX line {fn.ptx_line}) passes {p.name} in .{p.space}; "
                        "only .param parameters are supported"
                    )
                info.params.setdefault(p.name, len(param_sizes))
                param_sizes.append(p.size)
        for label, i in fn.labels.items():
            labels[(name, label)] = info.entry + i
        instructions.extend(body)
        owner.extend([name] * len(body))
        functions[name] = info

    # Module-scope shared variables (what nvcc emits for a kernel's `__shared__` variables with relocatable device
    # code) belong to a block only when the program names them: the others are other kernels' own.
    named = set().union(*(_symbols_named(module.functions[name]) for name in order))
    for var in module.variables:
        if var.space == "shared" and var.name in named:
            shared.setdefault(var.name, var)
        elif var.space == "local":  # deprecated in PTX: per-thread storage outside any function
            raise UserError(f"module-scope .local variable {var.name} is not supported (PTX line {var.ptx_line})")

    layout = param_layout(kernel)
    kernel_params = {p.name: at for p, (at, _size) in zip(kernel.params, layout)}
    offset = sum(layout[-1]) if layout else 0
    if offset > MAX_KERNEL_PARAM_BYTES:
        raise UserError(
            f"the parameters of kernel {kernel_name} (PTX line {kernel.ptx_line}) take {offset:,} bytes, "
            f"more than the {MAX_KERNEL_PARAM_BYTES:,} a kernel may have"
        )

    return Program(
        module=module,
        kernel=kernel,
        instructions=instructions,
        owner=owner,
        functions=functions,
        labels=labels,
        reg_types=reg_types,
        reg_names=reg_names,
        param_sizes=param_sizes,
        kernel_params=kernel_params,
        kernel_param_size=offset,
        shared_vars=list(shared.values()),
        implicit_ends=frozenset(implicit_ends),
        function_addresses=addresses,
        function_at={addresses[name]: name for name in pointed},
    )


def call_parts(ins: Instruction) -> tuple[list[str], str | Reg, list[str]]:
    """Split a `call` into (return param names, callee, argument param names).

    The form is `call (rets), callee, (args)` with both lists optional. The
    callee is a function's name, or for an indirect call the register that
    holds its address, followed by a `.callprototype` or `.calltargets` label.
    """
    ops = list(ins.operands)
    rets: list[str] = []
    if ops and isinstance(ops[0], ParamList):
        rets = _param_names(ins, ops.pop(0))
    if not ops or not isinstance(ops[0], (Sym, Reg)):
        raise UserError(f"`{ins.text}` names no function or register to call (PTX line {ins.ptx_line})")
    target = ops.pop(0)
    callee = target.name if isinstance(target, Sym) else target
    args: list[str] = []
    if ops and isinstance(ops[0], ParamList):
        args = _param_names(ins, ops.pop(0))
    if isinstance(target, Reg) and len(ops) == 1 and isinstance(ops[0], Sym):
        ops.pop()  # the prototype or target list: the callee's own signature is checked when it is called
    if ops:
        raise UserError(f"unexpected operands after the arguments of `{ins.text}` (PTX line {ins.ptx_line})")
    return rets, callee, args


def _param_names(ins: Instruction, params: ParamList) -> list[str]:
    """The names in a call's parameter list: each must be a `.param` symbol (no registers or immediates)."""
    if not all(isinstance(item, Sym) for item in params.items):
        raise UserError(f"`{ins.text}` passes something other than .param names (PTX line {ins.ptx_line})")
    return [item.name for item in params.items]
