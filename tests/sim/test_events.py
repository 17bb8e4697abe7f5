"""The simulator's event stream: one batch per executed memory instruction, in execution order, with
threads, canonical addresses, sizes, kinds, spaces, strength, scope and semantics; barriers, warp syncs,
fences and exits as events of their own."""

from __future__ import annotations

import numpy as np
import pytest

from gpurace.sim.events import AccessBatch, AccessKind, ExitEvent, FenceEvent, SyncEvent
from gpurace.sim.launch import simulate
from gpurace.sim.memory import Space

SOURCE = r"""
__global__ void k(int* out, volatile int* flag) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;                 // line 4: shared store, all 64 threads
  __syncthreads();                              // line 5
  int v = s[63 - threadIdx.x];                  // line 6: shared load
  __syncwarp();                                 // line 7
  if (threadIdx.x == 0) {
    atomicAdd_block(out, v);                    // line 9: atomic, cta scope
    __threadfence();                            // line 10
    *flag = 1;                                  // line 11: volatile store
  }
  out[1 + threadIdx.x] = v;                     // line 13: global store
}
"""


class Recorder:
    def __init__(self):
        self.events = []

    def on_event(self, event):
        self.events.append(event)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("events") / "k.cu"
    path.write_text(SOURCE)
    rec = Recorder()
    out = np.zeros(65, np.int32)
    flag = np.zeros(1, np.int32)
    result = simulate(str(path), grid=1, block=64, args=[out, flag], sinks=[rec])
    return result, rec.events, out


def line(result, pc):
    return result.program.instructions[pc].loc.line


def accesses(events):
    return [e for e in events if isinstance(e, AccessBatch)]


def test_sequence_numbers_follow_execution_order(run):
    _, events, _ = run
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_one_batch_per_memory_instruction_with_all_its_threads(run):
    result, events, _ = run
    stores = [e for e in accesses(events) if line(result, e.pc) == 4]
    assert len(stores) == 1
    st = stores[0]
    assert st.kind == AccessKind.WRITE and st.size == 4 and not st.strong
    assert np.array_equal(st.threads, np.arange(64))
    assert set(st.space.tolist()) == {Space.SHARED}
    assert np.array_equal(np.diff(st.addrs.astype(np.int64)), np.full(63, 4))


def test_barrier_then_load_then_warp_syncs(run):
    result, events, _ = run
    kinds = [(type(e).__name__, getattr(e, "kind", None)) for e in events]
    bar = next(i for i, e in enumerate(events) if isinstance(e, SyncEvent) and e.kind == "barrier")
    load = next(i for i, e in enumerate(events) if isinstance(e, AccessBatch) and line(result, e.pc) == 6)
    assert bar < load, kinds
    assert np.array_equal(np.sort(events[bar].threads), np.arange(64))
    assert set(events[bar].groups.tolist()) == {0}
    warp = [e for e in events if isinstance(e, SyncEvent) and e.kind == "warp"]
    assert sorted(np.concatenate([w.threads for w in warp]).tolist()) == list(range(64))
    assert {int(g) >> 32 for w in warp for g in w.groups} == {0, 1}  # two warps, each with its own mask group


def test_atomic_fence_and_volatile_store_carry_scope_and_semantics(run):
    result, events, out = run
    atom = next(e for e in accesses(events) if line(result, e.pc) == 9)
    assert atom.kind == AccessKind.ATOMIC and atom.atomic_op == "add" and atom.strong
    assert atom.scope == "cta" and atom.sem == "relaxed"
    assert atom.threads.tolist() == [0] and set(atom.space.tolist()) == {Space.GLOBAL}
    fence = next(e for e in events if isinstance(e, FenceEvent))
    assert fence.scope == "gpu" and fence.threads.tolist() == [0]
    vol = next(e for e in accesses(events) if line(result, e.pc) == 11)
    assert vol.kind == AccessKind.WRITE and vol.strong and vol.sem == "volatile" and vol.scope == "sys"
    assert events.index(atom) < events.index(fence) < events.index(vol)
    assert out[0] == 63  # thread 0 read s[63]


def test_every_thread_exits_once(run):
    _, events, _ = run
    exits = np.concatenate([e.threads for e in events if isinstance(e, ExitEvent)])
    assert sorted(exits.tolist()) == list(range(64))
