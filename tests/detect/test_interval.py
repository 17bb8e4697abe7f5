"""The barrier-interval detector on hand-built event streams."""

from __future__ import annotations

import shlex

import numpy as np
import pytest
from corpus import corpus_files, read_header

from gpurace.detect.base import DetectorContext
from gpurace.detect.findings import ERROR, WARNING
from gpurace.detect.interval import IntervalDetector
from gpurace.frontend.ptx.ir import Imm, Instruction, SourceLoc
from gpurace.sim.events import AccessBatch, AccessKind, ExitEvent, SyncEvent
from gpurace.sim.geometry import Geometry
from gpurace.sim.launch import simulate
from gpurace.sim.memory import Memory
from gpurace.sim.memory.layout import CANON_OWNER_SHIFT, CANON_SHARED_TAG
from gpurace.trace.replay import TraceProgram


def fake_program(instructions: list[Instruction]) -> TraceProgram:
    """What detectors use of a Program (the stand-in traces use): instructions with source lines, all in kernel k."""
    return TraceProgram(instructions, ["k"] * len(instructions))


def ins(text: str, line: int, operands=()) -> Instruction:
    opcode, *mods = text.split(".")
    return Instruction(opcode, tuple(mods), tuple(operands), loc=SourceLoc("k.cu", line), text=text)


class Stream:
    """A launch's event stream written by hand: accesses by pc, barriers, exits."""

    def __init__(self, grid=1, block=64, model="cuda", lines=None):
        self.geo = Geometry.create((grid, 1, 1), (block, 1, 1))
        self.mem = Memory(self.geo.nblocks, self.geo.block_size)
        self.buf = self.mem.allocate_global("buf", 4096)
        self.mem.define_shared([("s", 1024, 4)])
        self.instructions: list[Instruction] = []
        self.seq = 0
        self.det: IntervalDetector | None = None
        self.model = model

    def pc(self, text: str, line: int) -> int:
        self.instructions.append(ins(text, line))
        return len(self.instructions) - 1

    def detector(self) -> IntervalDetector:
        if self.det is None:
            ctx = DetectorContext(fake_program(self.instructions), self.geo, self.mem, self.model)
            self.det = IntervalDetector(ctx)
        return self.det

    def shared(self, block: int, offset) -> np.ndarray:
        return np.uint64(CANON_SHARED_TAG | (int(block) << CANON_OWNER_SHIFT)) | np.asarray(offset, dtype=np.uint64)

    def glob(self, offset) -> np.ndarray:
        return np.uint64(self.buf.base) + np.asarray(offset, dtype=np.uint64)

    def access(self, pc, threads, addrs, *, size=4):
        ins_ = self.instructions[pc]
        kind = {"ld": AccessKind.READ, "st": AccessKind.WRITE}.get(ins_.opcode, AccessKind.ATOMIC)
        sem = ins_.semantics
        strong = kind == AccessKind.ATOMIC or sem is not None
        scope = ins_.scope or ("sys" if sem in ("volatile", "relaxed") else "gpu" if strong else None)
        atomic_op = next((m for m in ins_.modifiers if m in ("add", "exch", "cas")), None)
        threads = np.atleast_1d(np.asarray(threads, dtype=np.int64))
        addrs = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), threads.shape).copy()
        space = (addrs >> np.uint64(62)).astype(np.int8)
        self.seq += 1
        batch = AccessBatch(self.seq, pc, kind, threads, addrs, size, space, strong, scope,
                            "relaxed" if kind == AccessKind.ATOMIC and sem is None else sem, atomic_op)  # fmt: skip
        self.detector().on_event(batch)

    def barrier(self, blocks=None):
        blocks = range(self.geo.nblocks) if blocks is None else blocks
        threads = np.flatnonzero(np.isin(self.geo.block_of, list(blocks)))
        self.seq += 1
        pcs = np.zeros(len(threads), dtype=np.int64)
        self.detector().on_event(SyncEvent(self.seq, "barrier", threads, self.geo.block_of[threads], pcs))

    def exit(self, threads=None):
        threads = np.arange(self.geo.nthreads) if threads is None else np.asarray(threads)
        self.seq += 1
        self.detector().on_event(ExitEvent(self.seq, 0, threads))

    def findings(self):
        return self.detector().finish()


def lines(f):
    return [s.loc.line for s in f.sites]


# ---------------------------------------------------------------- one block, one interval


def test_write_write_in_one_interval():
    s = Stream()
    w = s.pc("st.shared.u32", 10)
    s.access(w, [0, 40], s.shared(0, 0))
    (f,) = s.findings()
    assert (f.kind, f.space, f.severity) == ("data-race", "shared", ERROR)
    assert f.cause == "no synchronisation between the two accesses"
    assert lines(f) == [10, 10] and {x.thread[0] for x in f.sites} == {0, 40}
    assert (f.address.allocation, f.address.offset) == ("s", 0)
    assert f.count == 1


def test_read_write_in_one_interval_earlier_access_first():
    s = Stream()
    r = s.pc("ld.shared.u32", 11)
    w = s.pc("st.shared.u32", 12)
    s.access(w, 5, s.shared(0, 8))
    s.access(r, 37, s.shared(0, 8))
    (f,) = s.findings()
    assert lines(f) == [12, 11]
    assert [x.op for x in f.sites] == ["write", "read"]
    assert [x.thread[0] for x in f.sites] == [5, 37]
    assert f.address.offset == 8


def test_barrier_orders_the_block():
    s = Stream()
    w = s.pc("st.shared.u32", 10)
    r = s.pc("ld.shared.u32", 12)
    s.access(w, np.arange(64), s.shared(0, np.arange(64) * 4))
    s.barrier()
    s.access(r, np.arange(64), s.shared(0, (63 - np.arange(64)) * 4))
    s.exit()
    assert s.findings() == []


def test_reads_never_conflict():
    s = Stream()
    r = s.pc("ld.shared.u32", 10)
    s.access(r, np.arange(64), s.shared(0, 0))
    assert s.findings() == []


def test_own_accesses_are_ordered_by_program_order():
    s = Stream()
    r = s.pc("ld.shared.u32", 10)
    w = s.pc("st.shared.u32", 11)
    t = np.arange(64)
    s.access(r, t, s.shared(0, t * 4))
    s.access(w, t, s.shared(0, t * 4))
    assert s.findings() == []


def test_lanes_of_one_warp_get_the_intra_warp_cause():
    s = Stream()
    r = s.pc("ld.shared.u32", 10)
    w = s.pc("st.shared.u32", 11)
    t = np.arange(32)
    s.access(r, t, s.shared(0, (t + 1) * 4))
    s.access(w, t, s.shared(0, t * 4))
    (f,) = s.findings()
    assert "same warp" in f.cause and "__syncwarp" in f.cause
    assert {x.warp for x in f.sites} == {0}
    assert f.count == 31


def test_a_pair_across_warps_is_preferred_as_the_example():
    s = Stream()
    w = s.pc("st.shared.u32", 10)
    s.access(w, [0, 1, 2, 40], s.shared(0, 0))
    (f,) = s.findings()
    assert f.cause == "no synchronisation between the two accesses"
    assert len({x.warp for x in f.sites}) == 2


def test_counts_are_exact_pairs_of_distinct_accesses():
    s = Stream()
    r = s.pc("ld.shared.u32", 10)
    w = s.pc("st.shared.u32", 11)
    t = np.arange(4)
    s.access(r, t, s.shared(0, 0))
    s.access(w, t, s.shared(0, 0))
    by_lines = {tuple(sorted(lines(f))): f.count for f in s.findings()}
    # read/write by different threads: 4 * 4 - 4; write/write: 4 choose 2
    assert by_lines == {(10, 11): 12, (11, 11): 6}


def test_a_repeated_instruction_counts_once_per_thread_and_address():
    s = Stream()
    w = s.pc("st.shared.u32", 10)
    for _ in range(3):
        s.access(w, [0, 33], s.shared(0, 0))
    (f,) = s.findings()
    assert f.count == 1


def test_repeated_atomics_against_a_repeated_read_count_each_thread_once():
    s = Stream()
    a = s.pc("atom.shared.add.u32", 30)
    r = s.pc("ld.shared.u32", 31)
    g = s.pc("ld.global.u32", 32)
    for _ in range(3):
        s.access(g, np.arange(64), s.glob(4 * np.arange(64)))
        s.access(a, np.arange(8), s.shared(0, 0))
        s.access(r, 40, s.shared(0, 0))
    (f,) = s.findings()
    assert lines(f) == [30, 31] and f.space == "shared" and f.count == 8


def test_a_repeated_global_store_counts_once_per_thread_across_blocks():
    s = Stream(grid=2)
    w = s.pc("st.global.u32", 20)
    for _ in range(3):
        s.access(w, [0, 64], s.glob(0))
    s.exit()
    (f,) = s.findings()
    assert lines(f) == [20, 20] and f.space == "global" and f.count == 1


@pytest.mark.parametrize("offset,racy", [(-1, False), (0, True), (1, True), (3, True), (4, False)])
def test_byte_precise_overlap(offset, racy):
    s = Stream()
    w = s.pc("st.shared.u32", 10)
    r = s.pc("ld.shared.u8", 11)
    s.access(w, 0, s.shared(0, 8))
    s.access(r, 40, s.shared(0, 8 + offset), size=1)
    found = s.findings()
    assert bool(found) is racy
    if racy:
        assert found[0].address.offset == 8 + offset and found[0].count == 1


def test_wide_and_narrow_accesses_count_each_pair_once():
    s = Stream()
    w = s.pc("st.shared.v2.u32", 10)
    r = s.pc("ld.shared.u8", 11)
    s.access(w, [0, 1], s.shared(0, [0, 8]), size=8)
    # thread 40 reads byte 3 and byte 6 of the first vector, thread 41 a byte of the second
    s.access(r, [40, 40, 41], s.shared(0, [3, 6, 9]), size=1)
    (f,) = s.findings()
    assert f.count == 3


# ---------------------------------------------------------------- several blocks


def test_shared_memory_of_different_blocks_never_conflicts():
    s = Stream(grid=2)
    w = s.pc("st.shared.u32", 10)
    s.access(w, [0, 64], [s.shared(0, 0), s.shared(1, 0)])
    s.exit()
    assert s.findings() == []


def test_global_writes_from_two_blocks_race_even_across_barriers():
    s = Stream(grid=2)
    w = s.pc("st.global.u32", 20)
    r = s.pc("ld.global.u32", 21)
    s.access(w, 3, s.glob(16))
    s.barrier()
    s.access(r, 64 + 5, s.glob(16))
    s.exit()
    (f,) = s.findings()
    assert (f.space, lines(f)) == ("global", [20, 21])
    assert [x.block[0] for x in f.sites] == [0, 1]
    assert (f.address.allocation, f.address.offset) == ("buf", 16)


def test_global_accesses_of_one_block_are_ordered_by_its_barriers():
    s = Stream(grid=2)
    w = s.pc("st.global.u32", 20)
    r = s.pc("ld.global.u32", 21)
    t = np.arange(128)
    s.access(w, t, s.glob(t * 4))
    s.barrier()
    # every thread reads its block neighbour's element
    s.access(r, t, s.glob((t ^ 1) * 4))
    s.exit()
    assert s.findings() == []


def test_distinct_global_elements_are_clean():
    s = Stream(grid=4)
    w = s.pc("st.global.u32", 20)
    t = np.arange(256)
    s.access(w, t, s.glob(t * 4))
    s.barrier()
    s.access(w, t, s.glob(t * 4))
    s.exit()
    assert s.findings() == []


def test_a_write_among_reads_of_every_block_races_only_with_the_reads():
    s = Stream(grid=4)
    r = s.pc("ld.global.u32", 50)
    w = s.pc("st.global.u32", 51)
    t = np.arange(256)
    s.access(r, t, s.glob(4 * (t % 8)))  # every block reads words 0..7, one block's reads closing after another's
    s.exit(t[:64])
    s.access(w, [200], s.glob(12))  # block 3 writes word 3
    s.exit(t[64:])
    (f,) = s.findings()
    assert lines(f) == [50, 51] and f.space == "global" and f.address.offset == 12


def test_blocks_finishing_at_different_times_are_compared():
    s = Stream(grid=3)
    w = s.pc("st.global.u32", 20)
    s.access(w, 0, s.glob(0))
    s.exit(np.arange(64))  # block 0 is done: its interval goes to the summary
    s.access(w, 64, s.glob(100))
    s.barrier([1])
    s.barrier([1])
    s.access(w, 128, s.glob(0))  # block 2 hits block 0's element
    s.exit()
    (f,) = s.findings()
    assert sorted(x.block[0] for x in f.sites) == [0, 2]
    assert f.address.offset == 0


def test_global_byte_overlap_across_blocks():
    s = Stream(grid=2)
    w = s.pc("st.global.u64", 20)
    r = s.pc("ld.global.u8", 21)
    s.access(w, 0, s.glob(8), size=8)
    s.exit(np.arange(64))
    s.access(r, [64, 65], s.glob([15, 16]), size=1)
    s.exit()
    (f,) = s.findings()
    assert f.address.offset == 15
    assert [x.thread[0] for x in f.sites] == [0, 0] and [x.block[0] for x in f.sites] == [0, 1]


def test_cross_block_counts_are_a_lower_bound():
    s = Stream(grid=2)
    w = s.pc("st.global.u32", 20)
    s.access(w, np.arange(128), s.glob(0))
    s.exit()
    (f,) = s.findings()
    # 64 * 64 pairs across blocks (plus 2 * 64 choose 2 inside them, reported under the same key)
    assert 2 * (64 * 63 // 2) <= f.count <= 64 * 64 + 2 * (64 * 63 // 2)


# ---------------------------------------------------------------- atomics and scopes


def test_atomics_against_atomics_are_clean():
    s = Stream(grid=2)
    a = s.pc("atom.global.add.u32", 30)
    b = s.pc("atom.shared.cta.add.u32", 31)
    t = np.arange(128)
    s.access(a, t, s.glob(0))
    s.access(b, t, [s.shared(blk, 0) for blk in s.geo.block_of[t]])
    s.barrier()
    s.access(a, t, s.glob(0))
    s.exit()
    assert s.findings() == []


def test_block_scoped_atomics_from_two_blocks_have_insufficient_scope():
    s = Stream(grid=2)
    a = s.pc("atom.global.cta.add.u32", 30)
    t = np.arange(128)
    s.access(a, t, s.glob(0))
    s.exit()
    (f,) = s.findings()
    assert f.severity == ERROR and f.space == "global"
    assert f.cause.startswith("insufficient scope: atom.cta (e.g. atomicAdd_block) at k.cu:30 ")
    other = f.sites[1].block
    assert f.cause.endswith(f"comes from block ({other[0]},{other[1]},{other[2]})")
    assert {x.block[0] for x in f.sites} == {0, 1}


def test_block_scoped_atomics_within_a_block_are_clean():
    s = Stream(grid=2)
    a = s.pc("atom.global.cta.add.u32", 30)
    s.access(a, np.arange(64), s.glob(0))
    s.access(a, np.arange(64, 128), s.glob(64))
    s.exit()
    assert s.findings() == []


def test_atomic_against_plain_names_the_plain_access():
    s = Stream()
    a = s.pc("atom.shared.add.u32", 30)
    r = s.pc("ld.shared.u32", 31)
    s.access(a, np.arange(8), s.shared(0, 0))
    s.access(r, 40, s.shared(0, 0))
    (f,) = s.findings()
    assert f.cause == "an atomic access races with a plain access at k.cu:31"
    assert [x.op for x in f.sites] == ["atomic add", "read"]
    assert f.count == 8


def test_volatile_is_a_warning_under_cuda_and_exempt_under_ptx():
    for model, expect in (("cuda", WARNING), ("ptx", None)):
        s = Stream(model=model)
        v = s.pc("st.volatile.shared.u32", 40)
        s.access(v, [0, 1], s.shared(0, 0))
        found = s.findings()
        if expect is None:
            assert found == []
        else:
            (f,) = found
            assert f.severity == expect and f.cause.startswith("volatile is not atomic")
            assert [x.op for x in f.sites] == ["volatile write", "volatile write"] and f.space == "shared"


def test_volatile_pairs_under_scord_need_a_fence_or_a_warp_sync():
    s = Stream(model="scord")
    v = s.pc("st.volatile.shared.u32", 40)
    w = s.pc("st.volatile.shared.u32", 41)
    s.access(v, [0, 32], s.shared(0, 0))
    s.access(w, [1, 2], s.shared(0, 4))
    causes = {tuple(lines(f)): (f.severity, f.cause.split(":")[0]) for f in s.findings()}
    assert causes == {(40, 40): (ERROR, "missing fence"), (41, 41): (ERROR, "the two accesses are in the same warp")}


# ---------------------------------------------------------------- applicability


@pytest.mark.parametrize(
    "instruction,ok",
    [
        (ins("bar.sync", 1, (Imm(0),)), True),
        (ins("barrier.sync.aligned", 1, (Imm(0),)), True),
        (ins("bar.red.popc.u32", 1, (Imm(0), Imm(0), Imm(0))), True),
        (ins("atom.global.add.u32", 1), True),
        (ins("atom.global.cta.add.u32", 1), True),
        (ins("ld.global.u32", 1), True),
        (ins("bar.sync", 1, (Imm(1), Imm(64))), False),
        (ins("bar.arrive", 1, (Imm(1), Imm(64))), False),
        (ins("bar.warp.sync", 1, (Imm(-1),)), False),
        (ins("membar.gl", 1), False),
        (ins("fence.acq_rel.gpu", 1), False),
        (ins("ld.volatile.shared.u32", 1), True),
        (ins("st.relaxed.gpu.global.u32", 1), True),
        (ins("ld.acquire.gpu.global.u32", 1), False),
        (ins("atom.acq_rel.gpu.global.cas.b32", 1), False),
    ],
)
def test_applies_only_to_barrier_only_programs(instruction, ok):
    program = fake_program([ins("ld.shared.u32", 1), instruction])
    assert IntervalDetector.applies(program) is ok


# ---------------------------------------------------------------- end to end on compiled kernels

REDUCE = """\
#define N 128
__global__ void reduce(const int* in, int* out)
{
    __shared__ int partial[N];
    unsigned tid = threadIdx.x;
    partial[tid] = in[blockIdx.x * N + tid];
    __syncthreads();
    for (unsigned s = N / 2; s > 0; s >>= 1) {
        if (tid < s) {
            int other = partial[tid + s];
            partial[tid] += other;
        }
        SYNC
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}
"""

HISTOGRAM = """\
__global__ void histogram(const unsigned char* data, unsigned int* bins, int n)
{
    __shared__ unsigned int local[16];
    if (threadIdx.x < 16)
        local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        INCREMENT;
    __syncthreads();
    if (threadIdx.x < 16)
        atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
"""

STORE = """\
__global__ void store(int* out)
{
    out[INDEX] = blockIdx.x;
}
"""


def _check(tmp_path, source: str, name: str, *, grid, block, args, model="cuda"):
    path = tmp_path / f"{name}.cu"
    path.write_text(source)
    def factory(program, geometry, memory):
        assert IntervalDetector.applies(program)
        return [IntervalDetector(DetectorContext(program, geometry, memory, model))]

    return _simulate(path, grid=grid, block=block, args=args, factory=factory)


def _simulate(path, *, factory, **launch):
    made: list[IntervalDetector] = []

    def sinks(program, geometry, memory):
        made.extend(factory(program, geometry, memory))
        return made

    result = simulate(path, sink_factory=sinks, **launch)
    return result, (made[0].finish() if made else None)


def _source_lines(source: str, *needles: str) -> list[int]:
    text = source.splitlines()
    return [next(i + 1 for i, line in enumerate(text) if needle in line) for needle in needles]


def test_tree_reduction_with_every_barrier_is_clean(tmp_path):
    src = REDUCE.replace("SYNC", "__syncthreads();")
    data = np.arange(256, dtype=np.int32)
    result, found = _check(tmp_path, src, "reduce_ok", grid=2, block=128, args=[data, np.zeros(2, np.int32)])
    assert found == []
    assert result.args[1].tolist() == [int(data[:128].sum()), int(data[128:].sum())]


def test_tree_reduction_without_the_loop_barrier_races(tmp_path):
    src = REDUCE.replace("SYNC", "")
    data = np.arange(256, dtype=np.int32)
    _, found = _check(tmp_path, src, "reduce_racy", grid=2, block=128, args=[data, np.zeros(2, np.int32)])
    read_line, write_line = _source_lines(src, "int other = partial", "partial[tid] += other")
    pairs = {tuple(sorted(s.loc.line for s in f.sites)): f for f in found}
    f = pairs[(read_line, write_line)]
    assert (f.kind, f.space, f.severity) == ("data-race", "shared", "error")
    assert f.address.allocation.endswith("partial")
    assert all(f.space == "shared" for f in found)


@pytest.mark.parametrize("atomic", [True, False])
def test_shared_histogram(tmp_path, atomic):
    increment = "atomicAdd(&local[data[i] % 16], 1u)" if atomic else "local[data[i] % 16]++"
    src = HISTOGRAM.replace("INCREMENT", increment)
    data = (np.arange(1000) * 7 % 251).astype(np.uint8)
    bins = np.zeros(16, dtype=np.uint32)
    result, found = _check(tmp_path, src, "hist", grid=2, block=128, args=[data, bins, 1000])
    if atomic:
        assert found == []
        assert result.args[1].tolist() == np.bincount(data % 16, minlength=16).tolist()
    else:
        assert found, "plain ++ on shared bins must race"
        (line,) = _source_lines(src, "local[data[i] % 16]++")
        f = next(f for f in found if [s.loc.line for s in f.sites] == [line, line])
        assert f.space == "shared" and f.kind == "data-race"
        assert {s.op for s in f.sites} <= {"read", "write"} and "write" in {s.op for s in f.sites}


@pytest.mark.parametrize("index,racy", [("threadIdx.x", True), ("blockIdx.x * blockDim.x + threadIdx.x", False)])
def test_global_stores_from_two_blocks(tmp_path, index, racy):
    src = STORE.replace("INDEX", index)
    _, found = _check(tmp_path, src, "store", grid=2, block=32, args=[np.zeros(64, np.int32)])
    if not racy:
        assert found == []
        return
    (f,) = found
    (line,) = _source_lines(src, "out[")
    assert (f.space, [s.loc.line for s in f.sites]) == ("global", [line, line])
    assert {s.block[0] for s in f.sites} == {0, 1}
    assert f.address.offset % 4 == 0 and f.address.offset < 128


CLEAN_CORPUS = [
    pytest.param(path, launch, id=path.stem)
    for path in corpus_files()
    for header in [read_header(path)]
    if header.expect == ["clean"]
    for launch in header.launches
]


def _launch_options(launch: str) -> dict:
    """`--grid 2 --block 256 --arg buf:512:iota ...` as keyword arguments of `simulate`."""
    words = shlex.split(launch)
    options: dict = {"args": []}
    for flag, value in zip(words[::2], words[1::2]):
        if flag == "--arg":
            options["args"].append(value)
        else:
            options[flag[2:].replace("-", "_")] = int(value) if flag == "--shared-bytes" else value
    options["grid"] = tuple(int(v) for v in options["grid"].split(","))
    options["block"] = tuple(int(v) for v in options["block"].split(","))
    return options


@pytest.mark.parametrize("path,launch", CLEAN_CORPUS)
def test_clean_corpus_kernels_have_no_races(path, launch):
    def factory(program, geometry, memory):
        if not IntervalDetector.applies(program):
            return []
        return [IntervalDetector(DetectorContext(program, geometry, memory))]

    _, found = _simulate(path, factory=factory, **_launch_options(launch))
    if found is None:
        pytest.skip("synchronises beyond barriers: not for the interval detector")
    assert found == []


def test_summary_tiers_answer_as_one_merged_summary():
    """Rows remembered interval by interval (tiers of runs merged as a binary counter) give the same rows near any
    ranges as one summary of plain rows merged all at once: same keys once each, counts summed, extremes kept,
    the bytes of stores where they are known."""
    from gpurace.detect.interval_summary import Summary, merge_rows

    rng = np.random.default_rng(7)
    summary, batches = Summary(), []
    for i in range(60):
        k = int(rng.integers(1, 60))
        if i % 3:  # scattered rows
            start = np.sort(rng.integers(0, 400, k).astype(np.uint64) * np.uint64(4))
            size = rng.choice(np.array([4, 8], dtype=np.uint64), k)
            tmin = rng.integers(0, 1000, k).astype(np.int64)
            n = rng.integers(1, 5, k).astype(np.int64)
            seq = rng.integers(0, 10**6, k).astype(np.int64)
        else:  # coalesced rows: one warp's instruction on consecutive elements, which runs compress
            first = int(rng.integers(0, 380))
            start = (np.arange(first, first + k) * 4).astype(np.uint64)
            size = np.full(k, 4, dtype=np.uint64)
            tmin = int(rng.integers(0, 1000)) + np.arange(k) * int(rng.integers(0, 3))
            n = np.ones(k, dtype=np.int64)
            seq = np.full(k, int(rng.integers(0, 10**6)), dtype=np.int64)
        pc = rng.integers(0, 3, k).astype(np.int64)
        val = rng.integers(0, 2, k).astype(np.uint64)
        rows = (start, size, pc, n, tmin, tmin + rng.integers(0, 9, k), seq, val, rng.random(k) < 0.8)
        rows = merge_rows(rows)  # one row per key, sorted, as `_check_other_blocks` makes them
        summary.add(rows)
        batches.append(rows)
    sizes = [t.rows for t in summary.tiers]
    assert len(sizes) < 10 and all(a >= 2 * b for a, b in zip(sizes, sizes[1:]))
    merged = merge_rows(*batches)
    assert summary.rows >= len(merged[0])  # tiers not yet merged may share keys
    assert sum(len(t.runs["start"]) for t in summary.tiers) < summary.rows  # the coalesced rows are runs
    for lo, hi in ((0, 1), (100, 180), (0, 2000), (1590, 1700)):
        start = np.arange(lo, hi, 4, dtype=np.uint64)
        got = summary.near(start, start + np.uint64(4))

        def overlapping(rows):  # rows that touch [lo, hi): what can pair with the queries
            keep = (rows[0] < np.uint64(hi)) & (rows[0] + rows[1] > np.uint64(lo))
            rows = [c[keep] for c in rows]
            rows[7] = np.where(rows[8], rows[7], np.uint64(0))  # bytes count only where known
            return rows

        got, want = overlapping(got), overlapping(merged)
        assert len(want[0]) > 0 or lo == 1590
        for g, w in zip(got, want):
            assert np.array_equal(g, w)


def test_runs_give_back_the_rows_they_encode():
    """A tier of runs decodes to exactly its rows (bytes only where known), also after selecting runs and
    merging tiers whose runs share keys; coalesced rows take one run per warp instruction."""
    from gpurace.detect.interval_summary import RunTier, merge_rows, merge_tiers

    k = np.arange(64)
    coalesced = (
        (0x1000 + 4 * k).astype(np.uint64), np.full(64, 4, np.uint64), np.full(64, 7, np.int64), np.ones(64, np.int64),
        k.astype(np.int64), k.astype(np.int64), np.where(k < 32, 5, 9).astype(np.int64), (k * 3).astype(np.uint64),
        np.ones(64, np.bool_),
    )  # fmt: skip
    tier = RunTier.encode(coalesced)
    assert len(tier.runs["start"]) == 2  # two warps, two first events
    for got, want in zip(tier.decode(np.arange(2)), coalesced):
        assert np.array_equal(got, want)
    second = tier.select(np.array([1]))
    assert np.array_equal(second.decode(np.array([0]))[7], coalesced[7][32:])
    again = merge_tiers(tier, RunTier.encode(tuple(c[10:20] for c in coalesced)))  # the same keys again
    rows = merge_rows(again.decode(np.arange(len(again.runs["start"]))))
    assert np.array_equal(rows[3], np.where((k >= 10) & (k < 20), 2, 1))  # counts summed
    assert rows[8].all() and np.array_equal(rows[7], coalesced[7])  # the same bytes stored twice stay known


@pytest.mark.parametrize("ascending", [True, False])
def test_runs_are_ordered_by_instruction_size_and_start(ascending):
    """Rows of several instructions and sizes, interleaved by address as a close gives them (or, for the general
    sort, in descending address order), encode to runs ordered by (pc, size, start) that decode to the rows in that
    order; two instructions' numbers that do not fit 16 bits take the general sort too."""
    from gpurace.detect.interval_summary import SMALL_KEYS, RunTier

    rng = np.random.default_rng(7)
    for far_pc in (300, SMALL_KEYS):
        start = np.repeat(np.arange(0x1000, 0x1000 + 8 * 400, 8, dtype=np.uint64), 3)
        size = np.tile(np.array([8, 4, 8], np.uint64), 400)
        pc = np.tile(np.array([3, 3, far_pc], np.int64), 400)
        n = rng.integers(1, 3, len(start))
        tmin = rng.integers(0, 1000, len(start))
        rows = (start, size, pc, n, tmin, tmin + 1, n * 10, rng.integers(0, 4, len(start)).astype(np.uint64), n == 1)
        if not ascending:
            rows = tuple(c[::-1] for c in rows)
        tier = RunTier.encode(rows)
        order = np.lexsort((rows[0], rows[1], rows[2]))
        decoded = tier.decode(np.arange(len(tier.runs["start"])))
        for got, want, column in zip(decoded, rows, range(9)):
            want = want[order]
            if column == 7:  # bytes are kept only where known
                got, want = got[rows[8][order]], want[rows[8][order]]
            assert np.array_equal(got, want)


# ---------------------------------------------------------------- instructions whose ranges meet no conflict


def checked_pcs(s: Stream, monkeypatch) -> list[int]:
    """Record the pcs of every access the detector's closes check."""
    seen: list[int] = []
    det = s.detector()
    close_records = det._close_records

    def spy(records, repeats, ranges):
        seen.extend(int(p) for p in records[3])
        close_records(records, repeats, ranges)

    monkeypatch.setattr(det, "_close_records", spy)
    return seen


def test_the_last_close_leaves_out_an_input_nobody_writes(monkeypatch):
    s = Stream(grid=4)
    r = s.pc("ld.global.u32", 30)
    w = s.pc("st.global.u32", 31)
    seen = checked_pcs(s, monkeypatch)
    t = np.arange(256)
    for k in range(4):  # every thread reads words 0..3 of the input, then writes its own element after it
        s.access(r, t, s.glob(4 * k))
    s.access(w, t, s.glob(64 + 4 * t))
    s.exit()
    assert s.findings() == [] and seen == []


def test_writes_of_one_instruction_in_overlapping_batches_are_still_checked(monkeypatch):
    s = Stream(grid=4)
    w = s.pc("st.global.u32", 40)
    seen = checked_pcs(s, monkeypatch)
    s.access(w, np.arange(128), s.glob(4 * np.arange(128)))
    s.access(w, np.arange(128, 256), s.glob(4 * np.arange(128)))  # blocks 2 and 3 write what blocks 0 and 1 wrote
    s.exit()
    (f,) = s.findings()
    assert lines(f) == [40, 40] and f.count == 128 and set(seen) == {w}


def test_a_batch_whose_lanes_share_an_address_is_still_checked():
    s = Stream(grid=1)
    w = s.pc("st.global.u32", 41)
    s.access(w, np.arange(64), s.glob(4 * (np.arange(64) % 8)))
    s.exit()
    (f,) = s.findings()
    assert lines(f) == [41, 41]


def test_a_shared_tile_read_before_the_last_close_is_left_out(monkeypatch):
    s = Stream(grid=2)
    w = s.pc("st.shared.u32", 50)
    own = s.pc("ld.shared.u32", 51)
    r = s.pc("ld.shared.u32", 52)
    seen = checked_pcs(s, monkeypatch)
    t = np.arange(64)
    for b in range(2):  # each block stores its tile and reads back its own element, then reads all of the tile
        s.access(w, t + 64 * b, s.shared(b, 4 * t))
        s.access(own, t + 64 * b, s.shared(b, 4 * t))
    s.barrier()
    assert set(seen) == {w, own}  # the read meets the store: both are checked
    for b in range(2):
        for k in range(4):
            s.access(r, t + 64 * b, s.shared(b, 4 * k))
    s.barrier()  # not the last close (both blocks run on), yet no store of this interval can meet the reads
    assert set(seen) == {w, own}
    s.exit()
    assert s.findings() == []


def test_a_shared_read_that_meets_a_write_of_its_interval_is_still_checked(monkeypatch):
    s = Stream(grid=2)
    w = s.pc("st.shared.u32", 53)
    r = s.pc("ld.shared.u32", 54)
    seen = checked_pcs(s, monkeypatch)
    t = np.arange(64)
    for b in range(2):  # no barrier between the store and the neighbour's read
        s.access(w, t + 64 * b, s.shared(b, 4 * t))
        s.access(r, t + 64 * b, s.shared(b, 4 * ((t + 1) % 64)))
    s.barrier()
    assert set(seen) == {w, r}
    s.exit()
    (f,) = s.findings()
    assert f.kind == "data-race" and f.space == "shared" and sorted(lines(f)) == [53, 54]


def test_intervals_of_reads_do_not_look_up_remembered_reads(monkeypatch):
    s = Stream(grid=4)
    r = s.pc("ld.global.u32", 60)
    w = s.pc("st.global.u32", 61)
    det = s.detector()
    looked: list[int] = []
    near = det._summary.near
    monkeypatch.setattr(det._summary, "near", lambda start, end: looked.append(len(start)) or near(start, end))
    t = np.arange(256)
    for b in range(3):  # blocks 0..2 read words 0..7 and finish one after the other
        s.access(r, t[64 * b : 64 * b + 64], s.glob(4 * (t[:64] % 8)))
        s.exit(t[64 * b : 64 * b + 64])
    assert looked == []  # nothing remembered writes: reads meet only reads
    s.access(w, [200], s.glob(12))  # block 3 writes word 3
    s.exit(t[192:])
    assert looked  # a write looks the reads up
    (f,) = s.findings()
    assert lines(f) == [60, 61] and f.space == "global" and f.address.offset == 12


def test_a_look_up_expands_only_the_rows_of_a_run_near_the_ranges():
    """The summary answers a few ranges against one long run (every block's coalesced reads) with the rows that
    overlap them, each once, as a plain merged summary would."""
    from gpurace.detect.interval_summary import RunTier, Summary, merge_rows

    k = 100_000
    start = np.arange(k, dtype=np.uint64) * np.uint64(8)
    t = np.arange(k, dtype=np.int64)
    rows = (start, np.full(k, 8, dtype=np.uint64), np.zeros(k, dtype=np.int64), np.ones(k, dtype=np.int64), t, t,
            np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.uint64), np.zeros(k, dtype=np.bool_))  # fmt: skip
    summary = Summary()
    summary.add(rows)
    assert len(summary.tiers[0].runs["start"]) == 1
    # two ranges inside row 5, one across rows 9 and 10, one past the end
    q_start = np.array([40, 44, 79, 8 * k], dtype=np.uint64)
    q_end = np.array([42, 46, 81, 8 * k + 8], dtype=np.uint64)
    got = summary.near(q_start, q_end)
    assert list(got[0]) == [40, 72, 80] and list(got[4]) == [5, 9, 10] and list(got[3]) == [1, 1, 1]
    want = merge_rows(tuple(c[[5, 9, 10]] for c in rows))
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert len(RunTier.encode_empty().rows_overlapping(q_start, q_end)[0]) == 0
