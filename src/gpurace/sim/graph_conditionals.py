"""Device-side `cudaGraphSetConditional(handle, value)`: the condition of a conditional node of a CUDA graph.

nvcc compiles the call to a call of the extern function `cudaGraphSetConditional(.b64 handle, .b32 value)`,
which the CUDA runtime provides. Under `gpurace exec` a conditional handle is the address of the 4 bytes of
global memory that hold the node's condition (`runtime.graph_memory`), so setting it is a 4-byte store of
`value` there, which the detectors see as any store: two threads that set it unordered race (NVIDIA calls
racing calls undefined behaviour), and so do kernels of nodes the graph leaves unordered. A handle that is no
such address is an out-of-bounds write, as through a bad pointer.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.memory import Space

SET_CONDITIONAL = "cudaGraphSetConditional"
CONDITION_BYTES = 4


def set_conditional_handler(dec, args: list[str]):
    """The handler of a call to `cudaGraphSetConditional(handle, value)`, at `dec`'s instruction."""
    eng = dec.eng
    caller = dec.program.functions[dec.fn]
    handle_slot, value_slot = (caller.params[a] for a in args[:2])
    mem, block_of = eng.mem, eng.geo.block_of
    nxt = dec.pc + 1
    dec._strength = (False, None, None)  # a plain (weak) store

    def set_conditional(idx):
        handles = dec.state.param_buffer(handle_slot)[idx, :8].copy().view(np.uint64)[:, 0]
        values = dec.state.param_buffer(value_slot)[idx, :4].copy().view(np.uint32)[:, 0]
        acc = mem.resolve(Space.GLOBAL, handles, idx, block_of[idx], CONDITION_BYTES, write=True)
        ok = dec.check_access(acc, idx, SET_CONDITIONAL, CONDITION_BYTES)
        dec.store(idx, acc, ok, CONDITION_BYTES, CONDITION_BYTES, values)
        return nxt

    return set_conditional
