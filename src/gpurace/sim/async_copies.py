"""Asynchronous copies (`cp.async`, sm_80+): the copies in flight, their commit groups, and the races with them.

PTX gives `cp.async` no completion point of its own: the copy from global to
shared memory happens at some time between the instruction and the
`cp.async.wait_group N` / `cp.async.wait_all` that waits for its group (or the
completion of the mbarrier phase a `cp.async.mbarrier.arrive` tied it to, `sim.mbarriers`), and PTX orders it
with nothing else. Simulating it as a synchronous copy would hide the bug people
make with it: reading the tile before the wait. So the simulator keeps each
copy *pending* from issue to wait:

- at issue, the source is read (a read event at the `cp.async` line, as for
  any load) and the bytes are kept with the issuing thread and its current,
  uncommitted group (`.ca`/`.cg` are cache hints; a source size or an
  ignore-src predicate zero-fills what is not copied);
- `cp.async.commit_group` closes the thread's current group, empty or not;
  `cp.async.wait_group N` completes every copy of the thread's committed
  groups but the newest N (copies not yet committed stay pending);
  `cp.async.wait_all` is `commit_group` then `wait_group 0`, as the ISA defines it;
- completion writes the bytes to shared memory with a write event of the
  issuing thread *at the `cp.async` line*, emitted at the wait: the detectors
  then judge the copy against every other thread's accesses from the wait on
  (a neighbour reading the tile without a barrier after the wait is an
  ordinary race); that write is a generic-proxy one of the issuing thread, so an async-proxy read of the
  bytes (a `wgmma.mma_async` operand, a bulk copy's source) needs a `fence.proxy.async` of that thread
  after the wait (`sim.proxy_fences`);
- while a copy is pending, any access by any thread (the issuing one
  included, and another `cp.async`) to its destination bytes, and any write
  to its source bytes, races with the copy. The detectors cannot see that
  race (the copy's write has not happened yet), so it is reported here, as a
  data race between the `cp.async` line and the access line;
- `cp.async.mbarrier.arrive` ties the thread's pending copies to the current phase of an mbarrier: their
  writes go to memory and to the detectors at once, as the issuing thread's (the arrival that `sim.mbarriers`
  then gives the detectors orders them before the phase's waiters), but they stay in flight for the checks
  here until the phase completes; a `wait_group` that would wait for a tied copy is refused;
- a thread that exits with copies pending completes them as it exits,
  without a finding: the ISA guarantees the writes are visible only through
  the waits, so the completion is placed last in the thread's program order,
  and any other thread that reads the destination without having waited is
  left unordered with it by the detectors (or caught here while pending).

Bulk copies (`cp.async.bulk`, `cp.async.bulk.tensor`, sm_90; decoded in `sim.bulk_copies`) use the same table, one
row per 16 bytes (their unit of size and alignment), with a `mode` that says how they complete:

- `BULK_MBARRIER` (global to shared, `.mbarrier::complete_tx::bytes`): the copy's bytes count against the tx-count
  of its mbarrier's current phase (`sim.mbarriers`). The copy completes as late as the ISA allows, when the phase
  could otherwise complete: its writes then go to memory and to the detectors as the issuing thread's, followed
  by a release of that thread on the phase's location (the complete-tx that lets the phase's waiters see them);
- `BULK_GROUP` (shared to global, `.bulk_group`): `cp.async.bulk.commit_group` and `cp.async.bulk.wait_group N`
  work as `cp.async`'s groups but count apart from them; `wait_group.read N` only ends the reading of the
  sources (they may be written again), the plain `wait_group N` also writes the destinations.

A bulk reduction (`cp.reduce.async.bulk`, `sim.bulk_reductions`) is a bulk copy whose instruction is in
`reductions`: at completion its rows reduce into their destination, element by element, as atomics, instead of
storing, and while they are in flight an atomic access to their destination (another reduction's included) is
not a race with them (the detectors judge the atomics' scopes once the reduction lands).

Pending copies live in NumPy arrays, one row per copy of one thread; the
check on every shared or global access costs one boolean while nothing is
pending and a search in the sorted words of the copies in flight when something is.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.findings import ERROR, Finding, describe_address, make_site
from gpurace.errors import UserError
from gpurace.sim.events import AccessBatch, AccessKind
from gpurace.sim.memory import Space

MAX_COPY = 16
"""The largest `cp.async` copy size, in bytes (PTX allows 4, 8 and 16)."""

CP_ASYNC, BULK_MBARRIER, BULK_GROUP, WGMMA = 0, 1, 2, 3
"""How a pending copy completes (module docstring). `WGMMA` rows are the shared-memory operands a
`wgmma.mma_async` reads until the `wgmma.wait_group` that covers it (`sim.wgmma_ops`): sources with no
destination, whose completion writes nothing."""

_UNTIL_WAIT = "at any time until the cp.async.wait_group/wait_all that completes it"
READ_DESTINATION = f"read of a cp.async destination before its wait: the asynchronous copy may write these bytes {_UNTIL_WAIT}"
WRITE_DESTINATION = (
    f"write of a cp.async destination before its wait: the asynchronous copy may write these bytes {_UNTIL_WAIT}"
)
WRITE_SOURCE = f"write of a cp.async source before its wait: the asynchronous copy may read these bytes {_UNTIL_WAIT}"
_UNTIL_PHASE = "at any time until the mbarrier phase that its cp.async.mbarrier.arrive waits for completes"
BEFORE_PHASE = {
    READ_DESTINATION: f"read of a cp.async destination before its mbarrier phase completes: the asynchronous copy may write these bytes {_UNTIL_PHASE}",
    WRITE_DESTINATION: f"write of a cp.async destination before its mbarrier phase completes: the asynchronous copy may write these bytes {_UNTIL_PHASE}",
    WRITE_SOURCE: f"write of a cp.async source before its mbarrier phase completes: the asynchronous copy may read these bytes {_UNTIL_PHASE}",
}
"""The causes of the races with a pending copy, as reports print them."""
_UNTIL_BULK_PHASE = "at any time until the mbarrier phase that its complete_tx counts towards completes"
_UNTIL_BULK_WAIT = "at any time until the cp.async.bulk.wait_group that waits for its bulk group"
BULK = {
    BULK_MBARRIER: {
        READ_DESTINATION: f"read of a cp.async.bulk destination before its mbarrier phase completes: the asynchronous copy may write these bytes {_UNTIL_BULK_PHASE}",
        WRITE_DESTINATION: f"write of a cp.async.bulk destination before its mbarrier phase completes: the asynchronous copy may write these bytes {_UNTIL_BULK_PHASE}",
        WRITE_SOURCE: f"write of a cp.async.bulk source before its mbarrier phase completes: the asynchronous copy may read these bytes {_UNTIL_BULK_PHASE}",
    },
    BULK_GROUP: {
        READ_DESTINATION: f"read of a cp.async.bulk destination before its wait: the asynchronous copy may write these bytes {_UNTIL_BULK_WAIT}",
        WRITE_DESTINATION: f"write of a cp.async.bulk destination before its wait: the asynchronous copy may write these bytes {_UNTIL_BULK_WAIT}",
        WRITE_SOURCE: f"write of a cp.async.bulk source before its wait: the asynchronous copy may read these bytes {_UNTIL_BULK_WAIT} (.read or not)",
    },
}
"""The causes of the races with a pending bulk copy, by mode."""
WGMMA_SOURCE = (
    "write of a wgmma.mma_async shared-memory operand before the wgmma.wait_group that covers it: the warpgroup "
    "may read these bytes at any time until then"
)
_SPACE_NAMES = {int(Space.SHARED): "shared", int(Space.SHARED_CLUSTER): "shared", int(Space.GLOBAL): "global"}


class PendingCopies:
    """The copies in flight, one row each, in issue order (parallel arrays)."""

    def __init__(self) -> None:
        self.thread = np.zeros(0, dtype=np.int64)
        self.group = np.zeros(0, dtype=np.int64)  # the issuing thread's group number (its count of commits at issue)
        self.pc = np.zeros(0, dtype=np.int64)
        self.size = np.zeros(0, dtype=np.int64)
        self.src_size = np.zeros(0, dtype=np.int64)  # bytes read from the source: 0 when it copies zeros
        self.dst = np.zeros(0, dtype=np.uint64)  # shared-space address, to write at completion
        self.dst_canon = np.zeros(0, dtype=np.uint64)
        self.src_canon = np.zeros(0, dtype=np.uint64)
        self.data = np.zeros((0, MAX_COPY), dtype=np.uint8)
        self.barrier = np.zeros(0, dtype=np.uint64)  # the mbarrier a cp.async.mbarrier.arrive tied it to, or 0
        self.mode = np.zeros(0, dtype=np.int8)  # CP_ASYNC, BULK_MBARRIER or BULK_GROUP
        self.dst_space = np.zeros(0, dtype=np.int8)  # the space `dst` is an address of
        self.src_space = np.zeros(0, dtype=np.int8)  # the space of the source (for reports)

    def __len__(self) -> int:
        return len(self.thread)

    _COLUMNS = ("thread", "group", "pc", "size", "src_size", "dst", "dst_canon", "src_canon", "data", "barrier", "mode",
                "dst_space", "src_space")  # fmt: skip

    def append(self, **columns: np.ndarray) -> None:
        for name in self._COLUMNS:
            setattr(self, name, np.concatenate((getattr(self, name), columns[name])))

    def take(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The columns of `rows` (a boolean mask), which leave the table."""
        out = {name: getattr(self, name)[rows] for name in self._COLUMNS}
        for name in self._COLUMNS:
            setattr(self, name, getattr(self, name)[~rows])
        return out


class WordIndex:
    """Every word of one column of ranges (destinations or sources), sorted, with the row it belongs to.

    A word is 4 bytes, or less when some range is smaller or not so aligned (the 1- and 2-byte elements of a TMA
    store): the largest power of two, at most 4, that divides every start and size. A copy's addresses are
    aligned to its size (a misaligned one is never issued), so its bytes are whole words, and an access overlaps
    it exactly when it touches one of them.
    """

    def __init__(self, starts: np.ndarray, sizes: np.ndarray) -> None:
        spread = int(np.bitwise_or.reduce(np.concatenate((starts, sizes.astype(np.uint64)))) | 4) if len(starts) else 4
        self.unit = spread & -spread  # the lowest set bit: 1, 2 or 4
        self.shift = np.uint64(self.unit.bit_length() - 1)
        offsets = np.arange(MAX_COPY // self.unit, dtype=np.uint64)
        inside = offsets[None, :] < (sizes[:, None] // self.unit).astype(np.uint64)
        rows = np.broadcast_to(np.arange(len(starts))[:, None], inside.shape)[inside]
        words = ((starts[:, None] >> self.shift) + offsets[None, :])[inside]
        order = np.argsort(words, kind="stable")
        self.words = words[order]
        self.rows = rows[order]

    def hits(self, first: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(lane, row) for every word of the accesses [first, first + size) that lies in a range of the index."""
        if len(self.words) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        span = (size + self.unit - 1) // self.unit + 1  # the most words `size` bytes can touch, whatever their alignment
        low = first >> self.shift
        high = (first + np.uint64(size - 1)) >> self.shift
        probe = low[:, None] + np.arange(span, dtype=np.uint64)[None, :]
        touched = probe <= high[:, None]
        pos = np.minimum(np.searchsorted(self.words, probe), len(self.words) - 1)
        hit = (self.words[pos] == probe) & touched
        return np.nonzero(hit)[0], self.rows[pos[hit]]


class AsyncCopies:
    """The pending `cp.async` copies of one launch, their groups, and the checks against them (module docstring)."""

    def __init__(self, eng) -> None:
        self.eng = eng
        n = eng.geo.nthreads
        self.committed = np.zeros(n, dtype=np.int64)  # groups each thread has committed
        self.bulk_committed = np.zeros(n, dtype=np.int64)  # bulk groups each thread has committed
        self.wgmma_committed = np.zeros(n, dtype=np.int64)  # wgmma groups each thread has committed
        self.copies = PendingCopies()
        self.pending = False  # any copy in flight: the one test every access pays
        self._member = np.zeros(n, dtype=np.bool_)  # scratch: the threads of one instruction
        self._index: tuple[WordIndex, WordIndex] | None = None
        self.reductions: dict = {}  # pc -> the `bulk_reductions.Reduction` of the cp.reduce.async.bulk there

    # ------------------------------------------------------------------ issue, commit, wait

    def issue(self, pc: int, threads, dst, dst_canon, src_canon, src_bytes, data: np.ndarray) -> None:
        """Threads `threads` start copies of `data` (one row each) to shared-space addresses `dst` (canonical
        `dst_canon`), read from the `src_bytes` bytes (0 or the copy size) at canonical `src_canon`."""
        n, size = data.shape
        rows = np.zeros((n, MAX_COPY), dtype=np.uint8)
        rows[:, :size] = data
        self.copies.append(
            thread=threads.astype(np.int64),
            group=self.committed[threads],
            pc=np.full(n, pc, dtype=np.int64),
            size=np.full(n, size, dtype=np.int64),
            src_size=src_bytes.astype(np.int64),
            dst=dst.astype(np.uint64),
            dst_canon=dst_canon.astype(np.uint64),
            src_canon=src_canon.astype(np.uint64),
            data=rows,
            barrier=np.zeros(n, dtype=np.uint64),
            mode=np.full(n, CP_ASYNC, dtype=np.int8),
            dst_space=np.full(n, int(Space.SHARED), dtype=np.int8),
            src_space=np.full(n, int(Space.GLOBAL), dtype=np.int8),
        )
        self._changed()

    def issue_bulk(self, pc: int, mode: int, threads, dst, dst_space: Space, dst_canon, src_canon, src_space: Space,
                   data: np.ndarray, barrier=None, size: int = MAX_COPY, src_size: int = MAX_COPY) -> None:  # fmt: skip
        """Bulk copies in flight, one row per piece of `size` bytes (16, or a TMA store's element of 4 or 8;
        `threads`, `dst`, `dst_canon`, `src_canon` and `data` per row): `BULK_MBARRIER` ones towards the mbarrier
        objects `barrier` (canonical addresses), `BULK_GROUP` ones in the issuing thread's current bulk group.
        `src_size` 0: the source is not checked for writes (a TMA load's elements lie apart)."""
        n = len(threads)
        threads = threads.astype(np.int64)
        self.copies.append(
            thread=threads,
            group=self.bulk_committed[threads] if mode == BULK_GROUP else np.zeros(n, dtype=np.int64),
            pc=np.full(n, pc, dtype=np.int64),
            size=np.full(n, size, dtype=np.int64),
            src_size=np.full(n, src_size, dtype=np.int64),
            dst=dst.astype(np.uint64),
            dst_canon=dst_canon.astype(np.uint64),
            src_canon=src_canon.astype(np.uint64),
            data=data,
            barrier=np.zeros(n, dtype=np.uint64) if barrier is None else barrier.astype(np.uint64),
            mode=np.full(n, mode, dtype=np.int8),
            dst_space=np.full(n, int(dst_space), dtype=np.int8),
            src_space=np.full(n, int(src_space), dtype=np.int8),
        )
        self._changed()

    def bulk_commit(self, threads: np.ndarray) -> None:
        """`cp.async.bulk.commit_group`: each thread's uncommitted bulk copies become its newest bulk group."""
        self.bulk_committed[threads] += 1

    def bulk_wait(self, threads: np.ndarray, newest: int, read_only: bool) -> None:
        """`cp.async.bulk.wait_group{.read} newest`: the copies of each thread's committed bulk groups but the newest
        ones stop reading their sources (`.read`), or complete."""
        if not self.pending:
            return
        copies = self.copies
        due = self._of(threads) & (copies.mode == BULK_GROUP) & (copies.group < self.bulk_committed[copies.thread] - newest)
        if read_only:
            if due.any():
                copies.src_size[due] = 0
                self._index = None
            return
        self._complete(due)

    def issue_operands(self, pc: int, threads, canon: np.ndarray) -> None:
        """The 16-byte shared-memory pieces at canonical `canon` that a `wgmma.mma_async` of `threads` (one per
        piece) reads until its wait (mode `WGMMA`)."""
        n = len(threads)
        threads = threads.astype(np.int64)
        zeros = np.zeros(n, dtype=np.uint64)
        self.copies.append(
            thread=threads, group=self.wgmma_committed[threads], pc=np.full(n, pc, dtype=np.int64),
            size=np.zeros(n, dtype=np.int64), src_size=np.full(n, MAX_COPY, dtype=np.int64), dst=zeros,
            dst_canon=zeros, src_canon=canon.astype(np.uint64), data=np.zeros((n, MAX_COPY), dtype=np.uint8),
            barrier=zeros, mode=np.full(n, WGMMA, dtype=np.int8), dst_space=np.full(n, int(Space.SHARED), dtype=np.int8),
            src_space=np.full(n, int(Space.SHARED), dtype=np.int8),
        )  # fmt: skip
        self._changed()

    def wgmma_wait(self, threads: np.ndarray, newest: int) -> None:
        """`wgmma.wait_group newest`: the operands of each thread's committed wgmma groups but the newest ones
        are no longer read."""
        if self.pending:
            copies = self.copies
            self._complete(self._of(threads) & (copies.mode == WGMMA) & (copies.group < self.wgmma_committed[copies.thread] - newest))

    def commit(self, threads: np.ndarray) -> None:
        """`cp.async.commit_group`: each thread's uncommitted copies (maybe none) become its newest group."""
        self.committed[threads] += 1

    def wait(self, threads: np.ndarray, newest: int) -> None:
        """`cp.async.wait_group newest`: complete the copies of each thread's committed groups but the newest ones."""
        if not self.pending:
            return
        copies = self.copies
        due = self._of(threads) & (copies.mode == CP_ASYNC) & (copies.group < self.committed[copies.thread] - newest)
        tied = due & (copies.barrier != 0)
        if tied.any():
            where = self.eng.program.instructions[int(copies.pc[np.argmax(tied)])].where()
            raise UserError(
                f"a cp.async.wait_group or wait_all waits for the cp.async at {where}, which a "
                "cp.async.mbarrier.arrive tied to an mbarrier: the simulator does not support both on one copy"
            )
        self._complete(due)

    def wait_all(self, threads: np.ndarray) -> None:
        """`cp.async.wait_all`: `commit_group` then `wait_group 0`."""
        self.commit(threads)
        self.wait(threads, 0)

    def exit(self, threads: np.ndarray) -> None:
        """Threads `threads` exit: their pending copies not tied to an mbarrier complete now (module docstring)."""
        self._complete(self._of(threads) & (self.copies.barrier == 0))

    def tie(self, threads: np.ndarray, barriers: np.ndarray) -> None:
        """`cp.async.mbarrier.arrive`: each thread's pending copies not yet tied to an mbarrier are tied to its
        object in `barriers` (canonical addresses); their writes happen now for memory and the detectors."""
        if not self.pending:
            return
        copies = self.copies
        rows = self._of(threads) & (copies.barrier == 0) & (copies.mode == CP_ASYNC)
        if not rows.any():
            return
        lookup = np.zeros(self.eng.geo.nthreads, dtype=np.uint64)
        lookup[threads] = barriers
        copies.barrier[rows] = lookup[copies.thread[rows]]
        self._write({name: getattr(copies, name)[rows] for name in copies._COLUMNS})

    def release(self, barriers: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The phases the copies tied to the mbarriers at `barriers` wait for complete: they are no longer in
        flight; the bulk copies among them write now, together. Returns (pc, issuing thread, mbarrier) of each
        distinct one of those bulk copies."""
        empty = np.zeros(0, dtype=np.int64)
        if not self.pending:
            return empty, empty, empty.astype(np.uint64)
        rows = np.isin(self.copies.barrier, np.array(barriers, dtype=np.uint64))
        done = self.copies.take(rows)
        self._changed()
        bulk = done["mode"] == BULK_MBARRIER
        if not bulk.any():
            return empty, empty, empty.astype(np.uint64)
        self._write({name: col[bulk] for name, col in done.items()})
        key = np.unique(np.stack([done["pc"][bulk], done["thread"][bulk], done["barrier"][bulk].astype(np.int64)], axis=1), axis=0)
        return key[:, 0], key[:, 1], key[:, 2].astype(np.uint64)

    def inflight_bytes(self, barrier: int) -> int:
        """The bytes of the bulk copies in flight whose complete_tx counts towards the mbarrier at `barrier`."""
        copies = self.copies
        return int(copies.size[(copies.mode == BULK_MBARRIER) & (copies.barrier == np.uint64(barrier))].sum())

    def _of(self, threads: np.ndarray) -> np.ndarray:
        """The rows of the copies issued by `threads`."""
        member = self._member
        member[threads] = True
        rows = member[self.copies.thread]
        member[threads] = False
        return rows

    def _complete(self, rows: np.ndarray) -> None:
        """Complete the copies of `rows` (a mask): they leave the table and are written (`_write`); the operands of
        a wgmma only leave it."""
        if not rows.any():
            return
        done = self.copies.take(rows)
        self._changed()
        copies = done["mode"] != WGMMA
        if copies.any():
            self._write({name: col[copies] for name, col in done.items()})

    def _write(self, done: dict[str, np.ndarray]) -> None:
        """Write the copies of `done` (columns) to shared memory, with a write event each at its `cp.async`.

        One event per instruction and per round of it: a thread that issued the same `cp.async` twice (a loop
        before one wait) has two rows there, and an event names each thread once. Rounds go in issue order.
        """
        eng = self.eng
        thread, pc = done["thread"], done["pc"]
        order = np.lexsort((np.arange(len(thread)), thread, pc))
        same = (pc[order][1:] == pc[order][:-1]) & (thread[order][1:] == thread[order][:-1])
        # the round of each row: how many earlier rows of the same thread and instruction there are
        start = np.flatnonzero(np.concatenate(([True], ~same)))
        counts = np.diff(np.append(start, len(order)))
        round_ = np.empty(len(order), dtype=np.int64)
        round_[order] = np.arange(len(order)) - np.repeat(start, counts)
        npcs = len(eng.program.instructions)
        key = round_ * npcs + pc
        block_of = eng.geo.block_of
        for k in np.unique(key):
            p = k % npcs
            sel = np.flatnonzero(key == k)
            sel = sel[np.argsort(thread[sel], kind="stable")]
            threads = thread[sel]
            size = int(done["size"][sel[0]])
            space = Space(int(done["dst_space"][sel[0]]))
            reduction = self.reductions.get(int(p))
            if reduction is not None:
                reduction.land(eng, int(p), threads, space, done["dst"][sel], done["data"][sel, :size])
                continue
            acc = eng.mem.resolve(space, done["dst"][sel], threads, block_of[threads], size, write=True)
            # the detectors see the write before it takes effect, as for a store (`AccessBatch`)
            batch = AccessBatch(eng.next_seq(), int(p), AccessKind.WRITE, threads, acc.canonical, size, acc.space, False, None, None)
            eng.emit(batch)
            eng.mem.store(acc, 1, done["data"][sel, :size])
            if eng.proxy_fences.active and done["mode"][sel[0]] == CP_ASYNC:  # a generic-proxy write
                eng.proxy_fences.wrote(int(p), threads, acc.canonical, size)
            if eng.watching:
                eng.parking.wrote(threads, acc, size)
        eng.progress = True

    def _changed(self) -> None:
        self.pending = len(self.copies) > 0
        self._index = None

    # ------------------------------------------------------------------ races with pending copies

    def check(self, pc: int, kind: AccessKind, threads: np.ndarray, canon: np.ndarray, size: int) -> None:
        """Report the accesses of instruction `pc` (`threads` at canonical `canon`, `size` bytes each) that
        touch the destination of a pending copy, or write its source."""
        if self._index is None:
            c = self.copies
            self._index = (WordIndex(c.dst_canon, c.size), WordIndex(c.src_canon, c.src_size))
        dst, src = self._index
        lanes, rows = dst.hits(canon, size)
        if kind == AccessKind.ATOMIC and self.reductions:  # atomics and bulk reductions do not race (module docstring)
            other = ~np.isin(self.copies.pc[rows], np.fromiter(self.reductions, dtype=np.int64))
            lanes, rows = lanes[other], rows[other]
        cause = READ_DESTINATION if kind == AccessKind.READ else WRITE_DESTINATION
        self._report(pc, kind, threads, canon, lanes, rows, cause, True)
        if kind != AccessKind.READ:
            lanes, rows = src.hits(canon, size)
            self._report(pc, kind, threads, canon, lanes, rows, WRITE_SOURCE, False)

    def _report(self, pc, kind, threads, canon, lanes, rows, cause: str, at_destination: bool) -> None:
        """One finding per `cp.async` instruction whose pending copies the access lanes hit; the count is the
        number of (copy, access) pairs, the example the first."""
        if len(lanes) == 0:
            return
        eng = self.eng
        copies = self.copies
        pairs = np.unique(np.stack([copies.pc[rows], lanes, rows], axis=1), axis=0)
        copy_pcs, first, counts = np.unique(pairs[:, 0], return_index=True, return_counts=True)
        access_op = {AccessKind.READ: "read", AccessKind.WRITE: "write"}.get(kind, "atomic")
        for copy_pc, f, count in zip(copy_pcs, first, counts):
            _, lane, row = (int(v) for v in pairs[f])
            mode = int(copies.mode[row])
            name = "cp.async" if mode == CP_ASYNC else "wgmma.mma_async" if mode == WGMMA else "cp.async.bulk"
            if int(copy_pc) in self.reductions:
                name = "cp.reduce.async.bulk"
            copy_op = f"{name} write" if at_destination else f"{name} read"
            space = _SPACE_NAMES[int(copies.dst_space[row] if at_destination else copies.src_space[row])]
            start = copies.dst_canon[row] if at_destination else copies.src_canon[row]
            byte = max(int(canon[lane]), int(start))  # the first byte the access shares with the copy
            sites = (
                make_site(eng.program, eng.geo, int(copy_pc), int(copies.thread[row]), copy_op),
                make_site(eng.program, eng.geo, pc, int(threads[lane]), access_op),
            )
            if mode == WGMMA:
                why = WGMMA_SOURCE
            else:
                why = BULK[mode][cause] if mode != CP_ASYNC else BEFORE_PHASE[cause] if copies.barrier[row] else cause
            finding = Finding("data-race", ERROR, why, sites, space=space, address=describe_address(eng.mem, byte))
            eng.findings.add(finding, int(count))
