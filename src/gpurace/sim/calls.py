"""`call` and `ret` for non-inlined device functions, recursion included.

A call copies the caller's argument `.param` slots into the callee's formal
parameters, pushes (return pc, call site, frame base) on each thread's call
stack, gives the callee a fresh local-memory frame above the caller's, and
jumps. Registers are function-local, so a non-recursive callee simply has its
own register slots; a recursive one also has its registers and parameters
saved on call and restored on return, since the nested activation reuses them.
`ret` copies the callee's return parameters into the call site's return slots.

A call through a register (a function pointer, a virtual call) reads each
thread's target address, splits the threads by the function it names and
makes the direct call for each group: threads of one warp may enter
different functions, and each returns to the call site.
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature
from gpurace.frontend.ptx.ir import Reg
from gpurace.sim.memory.layout import MAX_LOCAL_BYTES_PER_THREAD
from gpurace.sim.program import call_parts
from gpurace.words import plural


class CallStack:
    """Per-thread return pcs, call sites, frame bases and saved values, grown on demand."""

    def __init__(self, n: int):
        self.n = n
        self.depth = np.zeros(n, dtype=np.int32)
        self.ret = np.zeros((0, n), dtype=np.int64)
        self.site = np.zeros((0, n), dtype=np.int64)
        self.frame = np.zeros((0, n), dtype=np.int64)
        self.saved: dict[tuple[str, int], np.ndarray] = {}

    def reserve(self, need: int) -> None:
        """Make room for `need` nested calls."""
        cap = self.ret.shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap, 4)

        def grown(a):
            b = np.zeros((new,) + a.shape[1:], dtype=a.dtype)
            b[:cap] = a
            return b

        self.ret, self.site, self.frame = grown(self.ret), grown(self.site), grown(self.frame)
        for k, v in self.saved.items():
            self.saved[k] = grown(v)

    def save(self, key: tuple[str, int], idx: np.ndarray, d: np.ndarray, values: np.ndarray) -> None:
        arr = self.saved.get(key)
        if arr is None or arr.shape[0] < self.ret.shape[0]:
            shape = (self.ret.shape[0], self.n) + values.shape[1:]
            new = np.zeros(shape, dtype=values.dtype)
            if arr is not None:
                new[: arr.shape[0]] = arr
            arr = self.saved[key] = new
        arr[d, idx] = values

    def push(self, idx: np.ndarray, ret_pc: int, site: int, frame: np.ndarray) -> np.ndarray:
        d = self.depth[idx]
        self.reserve(int(d.max()) + 1)
        self.ret[d, idx] = ret_pc
        self.site[d, idx] = site
        self.frame[d, idx] = frame
        self.depth[idx] = d + 1
        return d


def call_handler(dec, callee: str, rets: list[str], args: list[str]):
    eng = dec.eng
    state = eng.state
    program = eng.program
    caller = program.functions[dec.fn]
    info = program.functions[callee]
    fn = info.fn
    if len(args) != len(fn.params):
        raise UserError(f"call to {callee} passes {plural(len(args), 'argument')}, it takes {len(fn.params)}")
    copies = [(caller.params[a], info.params[p.name], p.size) for a, p in zip(args, fn.params)]
    own_params = [info.params[p.name] for p in list(fn.params) + list(fn.returns)]
    own_regs = sorted(set(info.regs.values()))
    stack: CallStack = eng.calls
    pc = dec.pc
    entry = info.entry
    frame_size = caller.frame_size
    callee_frame = info.frame_size

    def call(idx):
        # Too many nested calls, or frames past the local memory a GPU gives a thread: its stack overflows.
        too_deep = (stack.depth[idx] >= eng.limits.max_call_depth) | (
            state.frame_base[idx] + frame_size + callee_frame > MAX_LOCAL_BYTES_PER_THREAD
        )
        if too_deep.any():
            eng.stack_overflow(pc, idx[too_deep], callee)
            return None
        if info.recursive:
            d = stack.depth[idx]
            stack.reserve(int(d.max()) + 1)
            for slot in own_regs:
                stack.save(("reg", slot), idx, d, state.regs[slot][idx])
            for slot in own_params:
                stack.save(("param", slot), idx, d, state.param_buffer(slot)[idx])
        for src, dst, size in copies:
            state.param_buffer(dst)[idx, :size] = state.param_buffer(src)[idx, :size]
        stack.push(idx, pc + 1, pc, state.frame_base[idx])
        state.frame_base[idx] += frame_size
        if callee_frame:
            eng.mem.ensure_local(int(state.frame_base[idx].max()) + callee_frame)
        return entry

    return call


def indirect_call_handler(dec, target: Reg, rets: list[str], args: list[str]):
    """`call (rets), %rd, (args), prototype;`: each thread calls the function whose address its `%rd` holds.

    An address that is no function's (a data pointer, a null or garbage
    pointer) is a bug of the kernel: an `invalid-call` finding, and the run
    ends, as the launch does on a GPU. A function declared but not defined,
    or one whose parameters the call does not match, stops the run with a
    message naming the line and a thread: gpurace cannot run it.
    """
    eng = dec.eng
    program = eng.program
    read = dec.reader(target, "u64")
    pcs = eng.pc
    where, text = dec.ins.where(), dec.ins.text
    names = {address: name for name, address in program.function_addresses.items()}
    calls: dict[str, object] = {}

    def callee_call(name: str, g: int):
        if name not in calls:
            try:
                dec.check_signature(name, rets, args)
            except UserError as e:
                raise UserError(f"{where}: {eng.geo.thread_label(g)} calls {_name(name)} through a pointer: {e}") from None
            calls[name] = call_handler(dec, name, rets, args)
        return calls[name]

    def call(idx):
        addresses = read(idx)
        for address in np.unique(addresses):
            members = idx[addresses == address]
            name = program.function_at.get(int(address))
            if name is None and int(address) not in names:
                eng.report("invalid-call", f"a call through a function pointer to address {int(address):#x}, which is "
                           "not the address of a device function", [eng.site(dec.pc, int(members[0]), "call")],
                           count=len(members), address=int(address))  # fmt: skip
                eng.stopped = "invalid call"
                return None
            if name is None:
                raise UserError(f"{where}: `{text}` {_not_callable(names[int(address)])} "
                                f"(in {eng.geo.thread_label(int(members[0]))})")  # fmt: skip
            nxt = callee_call(name, int(members[0]))(members)
            if nxt is not None:
                pcs[members] = nxt
        return None

    return call


def _not_callable(name: str) -> str:
    return (
        f"calls {_name(name)} through a pointer, whose body is not in the PTX "
        "(a kernel, or a function declared but not defined)"
    )


def _name(mangled: str) -> str:
    return demangle_signature(mangled).name


def ret_handler(dec):
    eng = dec.eng
    state = eng.state
    program = eng.program
    info = program.functions[dec.fn]
    fn = info.fn
    own_params = [info.params[p.name] for p in list(fn.params) + list(fn.returns)]
    own_regs = sorted(set(info.regs.values()))
    returns = [(info.params[p.name], p.size) for p in fn.returns]
    stack: CallStack = eng.calls
    pcs = eng.pc

    def ret(idx):
        d = stack.depth[idx] - 1
        sites = stack.site[d, idx]
        for site in np.unique(sites):
            members = idx[sites == site]
            ret_names, _callee, _args = call_parts(program.instructions[int(site)])
            caller = program.functions[program.owner[int(site)]]
            for (src, size), name in zip(returns, ret_names):
                dst = caller.params[name]
                state.param_buffer(dst)[members, :size] = state.param_buffer(src)[members, :size]
        if info.recursive:
            for slot in own_regs:
                state.regs[slot][idx] = stack.saved[("reg", slot)][d, idx]
                state.dirty[slot] = True
            for slot in own_params:
                state.param_buffer(slot)[idx] = stack.saved[("param", slot)][d, idx]
        state.frame_base[idx] = stack.frame[d, idx]
        pcs[idx] = stack.ret[d, idx]
        stack.depth[idx] = d
        return None

    return ret
