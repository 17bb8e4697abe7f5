"""A kernel and the device functions it calls, flattened for execution.

The engine addresses instructions by one global `pc` across all functions, so
`call` and `ret` are jumps and per-thread PCs are a single integer array.
Everything the engine needs about names is resolved here once per launch:
labels to pcs, each function's registers to storage slots (registers are
function-local in PTX, so `%r1` in two functions are two slots), the local
memory frame of each function, per-thread `.param` slots used by call
sequences, and which functions are recursive (their registers must be saved
across calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import Function, Instruction, Module, ParamList, Sym, Variable, type_size

_DTYPE_BY_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

# Functions the CUDA runtime provides and that we implement natively, and the
# checks behind `__assert` and `__requires` in gpurace's GPUVerify cuda.h.
BUILTIN_FUNCTIONS = frozenset({"vprintf", "__assertfail", "malloc", "free", "__gpurace_assert", "__gpurace_requires"})
# That cuda.h also declares one function per GPUVerify predicate that only a
# verifier can evaluate (`__gpurace_verifier_only_read` for `__read`).
VERIFIER_ONLY_PREFIX = "__gpurace_verifier_only_"


def is_builtin_function(name: str) -> bool:
    """True for a function the simulator implements itself, whose body is not in the PTX."""
    return name in BUILTIN_FUNCTIONS or name.startswith(VERIFIER_ONLY_PREFIX)


def reg_dtype(ptx_type: str) -> np.dtype:
    """Storage dtype of a register of this PTX type: raw unsigned bits, bool for predicates."""
    if ptx_type == "pred":
        return np.dtype(np.bool_)
    size = type_size(ptx_type)
    if size not in _DTYPE_BY_SIZE:
        raise UserError(f"registers of type .{ptx_type} are not supported by the simulator")
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

    @property
    def entry(self) -> FunctionInfo:
        return self.functions[self.kernel.name]

    def where(self, pc: int) -> str:
        """`file:line` (or the PTX line) of an instruction, for messages."""
        return self.instructions[pc].where()



def _align(x: int, a: int) -> int:
    return -(-x // a) * a


def _callees(fn: Function) -> list[str]:
    """Direct callees; an indirect call (through a register) fails only if it is executed."""
    out = []
    for ins in fn.body:
        if ins.opcode == "call":
            ops = [op for op in ins.operands if not isinstance(op, ParamList)]
            if ops and isinstance(ops[0], Sym):
                out.append(ops[0].name)
    return out


def _recursive_functions(module: Module, reachable: list[str]) -> set[str]:
    """Functions that lie on a cycle of the call graph."""
    graph = {name: [c for c in _callees(module.functions[name]) if c in module.functions] for name in reachable}
    recursive: set[str] = set()
    for start in reachable:
        stack, seen = list(graph[start]), set()
        while stack:
            f = stack.pop()
            if f == start:
                recursive.add(start)
                break
            if f not in seen:
                seen.add(f)
                stack.extend(graph.get(f, []))
    return recursive


def build_program(module: Module, kernel_name: str) -> Program:
    """Flatten `kernel_name` and every function it (transitively) calls."""
    kernel = module.functions[kernel_name]
    order: list[str] = []
    pending = [kernel_name]
    while pending:
        name = pending.pop(0)
        if name in order:
            continue
        fn = module.functions.get(name)
        if fn is None or fn.is_declaration:
            if is_builtin_function(name):
                continue
            raise UserError(f"kernel {kernel_name} calls {name}, whose body is not in the PTX (separate compilation is not supported)")
        order.append(name)
        pending.extend(c for c in _callees(fn) if c not in order)
    recursive = _recursive_functions(module, order)

    instructions: list[Instruction] = []
    owner: list[str] = []
    functions: dict[str, FunctionInfo] = {}
    labels: dict[tuple[str, str], int] = {}
    reg_types: list[np.dtype] = []
    reg_names: list[str] = []
    param_sizes: list[int] = []
    shared: dict[str, Variable] = {}

    for name in order:
        fn = module.functions[name]
        info = FunctionInfo(fn=fn, entry=len(instructions), end=len(instructions) + len(fn.body))
        info.recursive = name in recursive
        for decl in fn.regs:
            dt = reg_dtype(decl.type)
            for r in decl.names():
                if r not in info.regs:
                    info.regs[r] = len(reg_types)
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
                    raise UserError(f"function {name} passes {p.name} in .{p.space}; only .param parameters are supported")
                info.params.setdefault(p.name, len(param_sizes))
                param_sizes.append(p.size)
        for label, i in fn.labels.items():
            labels[(name, label)] = info.entry + i
        instructions.extend(fn.body)
        owner.extend([name] * len(fn.body))
        functions[name] = info

    for var in module.variables:
        if var.space == "shared":
            shared.setdefault(var.name, var)

    kernel_params: dict[str, int] = {}
    offset = 0
    for p in kernel.params:
        a = p.align or type_size(p.ptx_type)
        offset = _align(offset, a)
        kernel_params[p.name] = offset
        offset += p.size

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
    )


def call_parts(ins: Instruction) -> tuple[list[str], str, list[str]]:
    """Split a `call` into (return param names, callee, argument param names)."""
    ops = list(ins.operands)
    rets: list[str] = []
    if ops and isinstance(ops[0], ParamList):
        rets = [o.name for o in ops[0].items if isinstance(o, Sym)]
        ops = ops[1:]
    if not ops or not isinstance(ops[0], Sym):
        raise UserError(f"indirect calls are not supported: {ins.text} (PTX line {ins.ptx_line})")
    callee = ops[0].name
    args: list[str] = []
    if len(ops) > 1 and isinstance(ops[1], ParamList):
        args = [o.name for o in ops[1].items if isinstance(o, Sym)]
    return rets, callee, args
