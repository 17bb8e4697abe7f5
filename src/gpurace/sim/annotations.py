"""GPUVerify annotations at run time: `__assert` checks, `__requires` and `__assume`, verifier-only predicates.

gpurace's cuda.h for GPUVerify kernels (gpurace/frontend/include/cuda.h)
turns `__assert(e)` into `__gpurace_assert(e ? 1 : 0, "__assert(e)")`,
`__requires(e)` into `__gpurace_requires(...)` and `__assume(e)` into
`__gpurace_assume(...)` the same way, and each
predicate that only a verifier can evaluate (`__read(p)`, `__other_int(x)`,
...) into a call of `__gpurace_verifier_only_read` and so on. The compiler
keeps them as calls of `.extern` functions at the source line of the
annotation, so the simulator implements them here, with the annotation's own
text (a string constant in global memory) for the messages.
"""

from __future__ import annotations

import numpy as np

from gpurace.errors import PreconditionViolated, UserError
from gpurace.sim.program import VERIFIER_ONLY_PREFIX

_MAX_TEXT = 512  # bytes of an annotation's text read for a message
_NOT_CALLED = frozenset({"__same_group"})  # predicates written without parentheses


def assert_handler(dec, args: list[str], verdict: str = "{} failed"):
    """`__assert(e)`: each thread for which e is false is an assertion failure at this line; all threads go on.

    `verdict` words the cause, with `{}` standing for the annotation's text.
    """
    holds, text = _arguments(dec, args)
    eng = dec.eng
    pc = dec.pc
    nxt = pc + 1

    def check_assert(idx):
        held = holds(idx)
        failed = idx[held == 0]
        if eng.assert_distance is not None:
            eng.assert_distance.passed(idx[held != 0])
        if len(failed):
            g = int(failed[0])
            cause = verdict.format(annotation_text(eng, text(g), g))
            eng.report("assertion-failure", cause, [eng.site(pc, g, "assert")], count=len(failed))
        return nxt

    return check_assert


def requires_handler(dec, args: list[str]):
    """`__requires(e)`: in the kernel, a thread for which e is false means the launch is outside the kernel's
    domain. In a function the kernel calls, e is the callee's precondition, which its caller must establish
    (GPUVerify checks it at every call): a thread for which it is false is an assertion failure."""
    loc = dec.ins.loc
    if dec.fn != dec.program.kernel.name or (loc is not None and loc.inlined_at is not None):
        return assert_handler(dec, args, "{} does not hold when the function is called: its caller breaks the precondition")
    return assume_handler(dec, args)


def assume_handler(dec, args: list[str]):
    """`__assume(e)` (and a kernel's `__requires(e)`): the user states that e holds wherever a thread gets there,
    so a thread for which it is false means this run is outside the domain the user checks: the run stops
    (`gpurace verify` assumes e at that point, in the kernel and in the functions it calls alike)."""
    holds, text = _arguments(dec, args)
    eng = dec.eng
    where = dec.ins.where()
    nxt = dec.pc + 1

    def check_domain(idx):
        failed = idx[holds(idx) == 0]
        if len(failed):
            g = int(failed[0])
            thread, block = eng.geo.thread_coords(g)
            raise PreconditionViolated(
                f"the launch violates {annotation_text(eng, text(g), g)} at {where} "
                f"(thread {_coords(thread)} of block {_coords(block)}); "
                "pass arguments that satisfy it, or use --search"
            )
        return nxt

    return check_domain


def verifier_only_handler(dec, callee: str):
    """A predicate about access sets or a second thread: it compiles, but executing it stops the run."""
    name = "__" + callee[len(VERIFIER_ONLY_PREFIX) :]
    shown = name if name in _NOT_CALLED else f"{name}()"
    message = (
        f"{dec.ins.where()}: not supported: GPUVerify predicate {shown} can only be checked statically, "
        "by a verifier; gpurace runs the kernel and cannot evaluate it"
    )

    def fail(idx):
        raise UserError(message)

    return fail


def annotation_text(eng, address: int, g: int) -> str:
    """The NUL-terminated string at generic `address`, as thread `g` sees it (at most `_MAX_TEXT` bytes)."""
    return eng.thread_string(g, address, _MAX_TEXT).decode("utf-8", errors="replace") or "the annotation"


def _arguments(dec, args: list[str]):
    """Readers for the (int holds, const char *text) arguments of `__gpurace_assert`/`__gpurace_requires`."""
    if len(args) != 2:
        raise UserError(f"{dec.ins.text}: expected two arguments (condition, text), got {len(args)}")
    caller = dec.program.functions[dec.fn]
    holds_slot, text_slot = caller.params[args[0]], caller.params[args[1]]
    state = dec.state

    def holds(idx):
        return state.param_buffer(holds_slot)[idx, :4].copy().view(np.uint32)[:, 0]

    def text(g: int) -> int:
        return int(state.param_buffer(text_slot)[g, :8].copy().view(np.uint64)[0])

    return holds, text


def _coords(c) -> str:
    return "(" + ",".join(str(v) for v in c) + ")"
