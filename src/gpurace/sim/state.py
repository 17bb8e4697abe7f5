"""Per-thread architectural state and operand access.

Registers are NumPy arrays over all threads of the launch, one array per
register slot, holding raw bits (unsigned ints of the register's width, bool
for predicates). Instructions interpret the bits by their type. Reading an
operand for a group of threads gathers `reg[idx]`; writing scatters back.
Immediates become zero-stride broadcast arrays, so they cost nothing.
"""

from __future__ import annotations

import struct

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import (
    Addr,
    Imm,
    Instruction,
    Negated,
    ParamList,
    PredPair,
    Reg,
    Sink,
    SpecialReg,
    Sym,
    Vec,
    type_size,
)
from gpurace.sim.broadcast import same_for_all
from gpurace.sim.clusters import special_registers as cluster_registers
from gpurace.sim.cooperative import envreg_values
from gpurace.sim.geometry import Geometry
from gpurace.sim.program import Program

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SIGNED_TYPES = frozenset({"s8", "s16", "s32", "s64"})
FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64"})
SPAN_MIN = 256
"""Groups of fewer threads gather and scatter (`ThreadState.use_group`): for them the slice saves nothing."""


def raw_dtype(ptx_type: str) -> np.dtype:
    """The dtype holding a value of `ptx_type` as raw bits; 128-bit values have none, so they are not supported."""
    if ptx_type == "pred":
        return np.dtype(np.bool_)
    size = type_size(ptx_type)
    if size not in UINT:
        raise UserError(f"values of type .{ptx_type} are not supported by the simulator")
    return np.dtype(UINT[size])


def imm_bits(imm: Imm, ptx_type: str) -> int | bool:
    """The raw bit pattern of an immediate used as an operand of `ptx_type`."""
    if ptx_type == "pred":
        return bool(imm.value)
    size = type_size(ptx_type)
    mask = (1 << (8 * size)) - 1
    if ptx_type in FLOAT_TYPES:
        if imm.kind == "f32" and imm.bits is not None and ptx_type == "f32":
            return imm.bits
        if imm.kind == "f64" and imm.bits is not None and ptx_type == "f64":
            return imm.bits
        value = float(imm.value)
        if ptx_type == "f32":
            return struct.unpack("<I", struct.pack("<f", value))[0]
        if ptx_type == "f64":
            return struct.unpack("<Q", struct.pack("<d", value))[0]
        if ptx_type == "f16":
            return int(np.array(value, dtype=np.float16).view(np.uint16))
        if ptx_type == "bf16":
            return struct.unpack("<I", struct.pack("<f", value))[0] >> 16
    if imm.kind != "int":
        # A float immediate used as bits (e.g. mov.b32 %r1, 0f3F800000).
        if imm.bits is not None:
            return imm.bits & mask
        return struct.unpack("<I", struct.pack("<f", float(imm.value)))[0] & mask
    return int(imm.value) & mask


def _lane_masks() -> dict[str, np.ndarray]:
    eq = np.uint32(1) << np.arange(32, dtype=np.uint32)
    lt = eq - np.uint32(1)
    le = lt | eq
    return {"lanemask_eq": eq, "lanemask_lt": lt, "lanemask_le": le, "lanemask_gt": ~le, "lanemask_ge": ~lt}


LANE_MASKS = _lane_masks()
"""`%lanemask_*` of each lane id, which the special registers index by lane."""


class ThreadState:
    """Registers, the carry flag, local frame bases and per-thread `.param` storage of every thread."""

    def __init__(self, program: Program, geometry: Geometry, grid_workspace: int = 0):
        n = geometry.nthreads
        self.n = n
        self.program = program
        self.geometry = geometry
        self.regs: list[np.ndarray] = [np.zeros(n, dtype=dt) for dt in program.reg_types]
        # Which register slots were written since the engine last looked (its livelock check compares only those).
        self.dirty = np.zeros(len(program.reg_types), dtype=np.bool_)
        self.carry = np.zeros(n, dtype=np.bool_)
        self.frame_base = np.zeros(n, dtype=np.int64)  # local-memory frame of the current function
        self.params: list[np.ndarray | None] = [None] * len(program.param_sizes)
        self.clock = 0  # scheduler steps so far; what %clock and %globaltimer read
        # The engine's current group when it is one run of consecutive threads (`use_group`), and that run.
        self.span_group: np.ndarray | None = None
        self.span = slice(0, 0)
        self._special = self._special_registers(geometry)
        if grid_workspace:  # a cooperative launch: %envreg1/%envreg2 give its grid workspace (`sim.cooperative`)
            for name, value in envreg_values(grid_workspace).items():
                self._special[(name, None)] = same_for_all(n, value, np.uint32)

    def use_group(self, group: np.ndarray) -> None:
        """The engine's next steps run `group` (ascending). When it is one run of consecutive threads (a
        converged launch whose last threads left at a bounds test, as most grids larger than their data do),
        readers and writers given this very array copy a slice of a register instead of gathering and
        scattering through the indices: contiguous copies, several times cheaper per thread."""
        n = len(group)
        if n >= SPAN_MIN and int(group[-1]) - int(group[0]) + 1 == n:
            self.span_group, self.span = group, slice(int(group[0]), int(group[-1]) + 1)
        else:
            self.span_group = None

    def rows(self, idx: np.ndarray) -> np.ndarray | slice:
        """How to index per-thread arrays for threads `idx`: the slice of the consecutive group when `idx` is it
        (`use_group`: contiguous copies instead of gathers and scatters), else `idx` itself."""
        return self.span if idx is self.span_group else idx

    def param_buffer(self, slot: int) -> np.ndarray:
        """Per-thread bytes of a `.param` slot (call arguments and returns), allocated on first use."""
        buf = self.params[slot]
        if buf is None:
            buf = self.params[slot] = np.zeros((self.n, max(self.program.param_sizes[slot], 16)), dtype=np.uint8)
        return buf

    # ------------------------------------------------------------------ specials

    def _special_registers(self, geo: Geometry) -> dict[tuple[str, str | None], np.ndarray]:
        """Every special register's value per thread; those equal for every thread are broadcast views of
        one value, so that they cost no memory per thread."""
        n = geo.nthreads
        sp: dict[tuple[str, str | None], np.ndarray] = {}
        for i, c in enumerate("xyz"):
            sp[("tid", c)] = geo.tid[i]
            sp[("ctaid", c)] = geo.ctaid[i]
            sp[("ntid", c)] = same_for_all(n, geo.block[i], np.uint32)
            sp[("nctaid", c)] = same_for_all(n, geo.grid[i], np.uint32)
        sp[("laneid", None)] = geo.lane
        sp[("warpid", None)] = (geo.tid_linear // 32).astype(np.uint32)
        sp[("nwarpid", None)] = same_for_all(n, geo.warps_per_block, np.uint32)
        sp[("smid", None)] = same_for_all(n, 0, np.uint32)
        sp[("nsmid", None)] = same_for_all(n, 1, np.uint32)
        sp[("gridid", None)] = same_for_all(n, 0, np.uint64)
        sp.update(cluster_registers(geo, n))
        return sp

    def special(self, op: SpecialReg, idx: np.ndarray | slice) -> np.ndarray:
        """`op`'s value for threads `idx` (indices, or a slice of consecutive threads)."""
        key = (op.name, op.component)
        if key in self._special:
            return self._special[key][idx]
        if op.name in LANE_MASKS:
            return LANE_MASKS[op.name][self._special[("laneid", None)][idx]]
        if isinstance(idx, slice):
            idx = np.arange(idx.start, idx.stop)
        clock = self.clock
        if op.name in ("clock", "clock_hi"):
            return np.full(len(idx), clock & 0xFFFFFFFF, dtype=np.uint32)
        if op.name in ("clock64", "globaltimer"):
            return np.full(len(idx), clock * (1000 if op.name == "globaltimer" else 1), dtype=np.uint64)
        if op.name in ("globaltimer_lo", "globaltimer_hi"):
            t = clock * 1000
            return np.full(len(idx), (t >> 32 if op.name.endswith("hi") else t) & 0xFFFFFFFF, dtype=np.uint32)
        if op.name.startswith("envreg") or op.name in ("dynamic_smem_size", "total_smem_size", "aggr_smem_size"):
            return np.zeros(len(idx), dtype=np.uint32)
        name = f"%{op.name}" + (f".{op.component}" if op.component else "")
        raise UserError(f"special register {name} is not supported by the simulator")

    # ------------------------------------------------------------------ operands

    def slot(self, fn: str, reg: Reg) -> int:
        try:
            return self.program.functions[fn].regs[reg.name]
        except KeyError:
            raise UserError(f"register {reg.name} is used in {fn} but never declared") from None


def check_immediate(imm: Imm, ptx_type: str, ins: Instruction) -> None:
    """An integer immediate must fit its operand's type, as signed or unsigned (-1 is a valid .u32 all-ones mask).

    Wider values (a 33-bit warp mask) would otherwise be truncated silently into some other operand.
    """
    if imm.kind != "int" or ptx_type == "pred" or ptx_type in FLOAT_TYPES:
        return
    bits = 8 * type_size(ptx_type)
    if not -(1 << (bits - 1)) <= imm.value < 1 << bits:
        raise UserError(f"the immediate {imm.value} of `{ins.text}` does not fit .{ptx_type} (PTX line {ins.ptx_line})")


def describe_operand(op) -> str:
    """An operand as messages name it: its kind, and its name or value where it has one."""
    if isinstance(op, Reg):
        return f"register {op.name}"
    if isinstance(op, Sym):
        return f"symbol {op.name}"
    if isinstance(op, Imm):
        return f"the immediate {op.value}"
    if isinstance(op, SpecialReg):
        return f"the special register %{op.name}" + (f".{op.component}" if op.component else "")
    if isinstance(op, Negated):
        return f"the negated register {op.reg.name}"
    kinds = {
        Addr: "an address", Vec: "a vector", PredPair: "a predicate pair", ParamList: "a parameter list", Sink: "the sink _",
    }  # fmt: skip
    return kinds.get(type(op), type(op).__name__)


def convert_width(value: np.ndarray, dtype: np.dtype, signed: bool) -> np.ndarray:
    """Truncate or extend raw bits to another width; sign-extend when `signed`."""
    if value.dtype == dtype:
        return value
    if dtype == np.bool_:
        return value != 0
    if value.dtype == np.bool_:
        return value.astype(dtype)
    if signed and value.dtype.itemsize < dtype.itemsize:
        sdt = np.dtype(f"i{value.dtype.itemsize}")
        return value.view(sdt).astype(np.dtype(f"i{dtype.itemsize}")).view(dtype)
    return value.astype(dtype)


def operand_reader(state: ThreadState, fn: str, ins: Instruction, op, ptx_type: str):
    """A function idx -> raw array reading `op` as `ptx_type` (pre-resolved once per instruction)."""
    dt = raw_dtype(ptx_type)
    signed = ptx_type in SIGNED_TYPES
    if isinstance(op, Reg):
        arr_slot = state.slot(fn, op)
        regs = state.regs

        def read_reg(idx):
            arr = regs[arr_slot]
            # a group of consecutive threads (the whole launch, say): a copy beats a gather
            if idx is state.span_group:
                return convert_width(arr[state.span].copy(), dt, signed)
            return convert_width(arr.copy() if len(idx) == len(arr) else arr[idx], dt, signed)

        return read_reg
    if isinstance(op, Negated):
        if ptx_type != "pred":
            raise UserError(
                f"`{ins.text}` negates {op.reg.name}, but only a .pred operand can be negated (PTX line {ins.ptx_line})"
            )
        arr_slot = state.slot(fn, op.reg)
        regs = state.regs
        return lambda idx: ~regs[arr_slot][idx].astype(np.bool_)
    if isinstance(op, Imm):
        check_immediate(op, ptx_type, ins)
        scalar = np.array(imm_bits(op, ptx_type), dtype=dt)
        return lambda idx: np.broadcast_to(scalar, (len(idx),))
    if isinstance(op, SpecialReg):
        state.special(op, np.zeros(0, dtype=np.int64))  # unsupported specials fail at decode time

        def read_special(idx):
            # the consecutive group's slice is a view of the launch's table: the operand must be a copy
            rows = state.rows(idx)
            values = state.special(op, rows)
            return convert_width(values.copy() if isinstance(rows, slice) else values, dt, signed)

        return read_special
    raise UserError(f"`{ins.text}` cannot read {describe_operand(op)} as a .{ptx_type} value (PTX line {ins.ptx_line})")


def operand_writer(state: ThreadState, fn: str, ins: Instruction, op, ptx_type: str):
    """A function (idx, raw array) -> None writing a destination register (None for the `_` sink)."""
    if not isinstance(op, Reg):
        if isinstance(op, Sink):
            return lambda idx, value: None
        raise UserError(
            f"`{ins.text}` cannot write to {describe_operand(op)}: a destination is a register (PTX line {ins.ptx_line})"
        )
    arr_slot = state.slot(fn, op)
    regs = state.regs
    dirty = state.dirty
    dt = regs[arr_slot].dtype
    signed = ptx_type in SIGNED_TYPES

    def write(idx, value):
        dirty[arr_slot] = True
        arr = regs[arr_slot]
        if idx is state.span_group:
            arr[state.span] = convert_width(value, dt, signed)
        elif len(idx) == len(arr):
            np.copyto(arr, convert_width(value, dt, signed))
        else:
            arr[idx] = convert_width(value, dt, signed)

    return write
