"""The modifiers each non-ALU instruction may carry, as far as the simulator executes them.

The ALU builders consume the modifiers they understand and reject the rest
(`sim.alu.modifiers`); the handlers of memory, synchronisation and control
instructions in `sim.execute` read only the modifiers that change what they
do. Without this table a modifier they do not read (a typo, an unsupported
cache policy that takes an extra operand, `.mmio`, a cluster scope) would be
ignored, and the kernel simulated as something it is not. So a modifier
outside its instruction's set stops the instruction at decode time with a
message naming it, as an unsupported ALU modifier does.
"""

from __future__ import annotations

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import TYPES, Instruction

_SPACES = frozenset({"global", "shared", "shared::cta", "local", "const", "param"})
_LD_ST_SPACES = _SPACES | {"shared::cluster"}
_SCOPES = frozenset({"cta", "cluster", "gpu", "sys"})
_VECTORS = frozenset({"v2", "v4", "v8"})
_EVICTION = frozenset(
    {
        "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate",
        "L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::64B", "L2::128B", "L2::256B",
    }
)  # fmt: skip
_ATOMIC = frozenset({"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas", "noftz"})
_MEMORY_ORDER = frozenset({"relaxed", "acquire", "release", "acq_rel"})

MODIFIERS: dict[str, frozenset[str]] = {
    "ld": _LD_ST_SPACES | _SCOPES | _VECTORS | _EVICTION | TYPES
    | {"weak", "relaxed", "acquire", "volatile", "ca", "cg", "cs", "lu", "cv", "nc"},
    "ldu": frozenset({"global"}) | _VECTORS | TYPES,
    "st": _LD_ST_SPACES | _SCOPES | _VECTORS | _EVICTION | TYPES
    | {"weak", "relaxed", "release", "volatile", "wb", "cg", "cs", "wt"},
    "atom": frozenset({"global", "shared", "shared::cta", "shared::cluster"}) | _SCOPES | _MEMORY_ORDER | _ATOMIC | _VECTORS | TYPES,
    "red": frozenset({"global", "shared", "shared::cta", "shared::cluster"}) | _SCOPES | _MEMORY_ORDER | _ATOMIC | _VECTORS | TYPES,
    "mov": TYPES,
    "cvta": _SPACES | {"to", "u32", "u64"},
    "isspacep": _SPACES,
    "bar": frozenset({"sync", "arrive", "red", "popc", "and", "or", "aligned", "cta", "warp", "u32", "pred"}),
    "barrier": frozenset({"sync", "arrive", "red", "popc", "and", "or", "aligned", "cta", "u32", "pred"})
    | {"cluster", "wait", "release", "relaxed", "acquire"},  # barrier.cluster (`sim.clusters`)
    "mapa": frozenset({"shared::cluster", "u32", "u64"}),
    "getctarank": frozenset({"shared::cluster", "u32", "u64"}),
    "membar": frozenset({"cta", "gl", "sys"}),
    "fence": frozenset({"sc", "acq_rel", "cta", "cluster", "gpu", "sys"}),
    "bra": frozenset({"uni"}),
    "call": frozenset({"uni"}),
    "ret": frozenset({"uni"}),
    "exit": frozenset(),
    "trap": frozenset(),
    "brkpt": frozenset(),
    "nanosleep": frozenset({"u32"}),
    "shfl": frozenset({"sync", "up", "down", "bfly", "idx", "b32"}),
    "vote": frozenset({"sync", "all", "any", "uni", "ballot", "pred", "b32"}),
    "match": frozenset({"sync", "any", "all", "b32", "b64"}),
    "elect": frozenset({"sync"}),
    "setmaxnreg": frozenset({"inc", "dec", "sync", "aligned", "u32"}),
    "redux": frozenset({"sync", "add", "min", "max", "and", "or", "xor", "u32", "s32", "b32"}),
    "activemask": frozenset({"b32"}),
    "tex": frozenset({"1d", "2d", "3d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms", "v4", "level", "grad"}) | TYPES,
    "tld4": frozenset({"r", "g", "b", "a", "2d", "a2d", "cube", "acube", "v4"}) | TYPES,
    "suld": frozenset({"b", "1d", "2d", "3d", "a1d", "a2d", "trap", "clamp", "zero"}) | _VECTORS | TYPES,
    "sust": frozenset({"b", "p", "1d", "2d", "3d", "a1d", "a2d", "trap", "clamp", "zero"}) | _VECTORS | TYPES,
    "txq": frozenset({"width", "height", "depth", "b32"}),
    "suq": frozenset({"width", "height", "depth", "b32"}),
    "cp": frozenset(
        {"async", "ca", "cg", "shared", "shared::cta", "global", "commit_group", "wait_group", "wait_all", "L2::cache_hint"}
        | {"mbarrier", "arrive", "noinc", "b64"}  # cp.async.mbarrier.arrive (`sim.mbarrier_ops`)
    )
    | {m for m in _EVICTION if m.startswith("L2::")},
}


def _is_proxy_fence(ins: Instruction) -> bool:
    """`fence.proxy.*` and `fence.mbarrier_init.*` order proxies, not threads: `sim.execute` handles
    `fence.proxy.async` (`sim.proxy_fences`) and treats the others as no-ops, whatever their modifiers."""
    return ins.opcode == "fence" and any(m.startswith("proxy") or m == "mbarrier_init" for m in ins.modifiers)


def check_modifiers(ins: Instruction) -> None:
    """A UserError naming the modifiers of `ins` that the simulator would otherwise ignore."""
    allowed = MODIFIERS.get(ins.opcode)
    if allowed is None or _is_proxy_fence(ins) or (ins.opcode == "cp" and "bulk" in ins.modifiers):  # `sim.bulk_copies`
        return
    unknown = [m for m in ins.modifiers if m not in allowed]
    if unknown:
        listed = ", ".join("." + m for m in unknown)
        raise UserError(f"the simulator does not support `{ins.text}`: modifier(s) {listed} not supported for {ins.opcode}")
