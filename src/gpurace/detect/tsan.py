"""ThreadSanitizer's shadow-cell algorithm on GPU events (the `tsan` detector).

The AMD GPU ThreadSanitizer prototype runs ThreadSanitizer's state machine
(Algorithms 1-2 of that work: `HandleMemoryAccess`, `UpdateOneShadowState`)
on device accesses. Happens-before here is exactly `hb`'s (barrier phases,
lane clocks, knowledge objects, scoped release/acquire patterns, the memory
models' rules in `rules.classify`); only the shadow memory differs. Instead of
`hb`'s per-byte last write and two last reads, every aligned 8-byte word has N
cells (`--shadow-cells`, 2, 4 or 8; `shadow_cells.ShadowCells`), each holding
one access with the bytes of the word it touched. Accesses wider than 8 bytes
are split into one access per word.

An access (vectorised over the lanes of its batch):

1. is compared with every non-empty cell of its word: byte ranges that
   intersect, different threads, a pair `classify` calls conflicting, and not
   ordered by happens-before: a race. Lanes of one batch are unordered with
   each other, and are checked against each other as in `hb`;
2. is stored, lanes hitting one word in batch order (rank 0 of every word,
   then rank 1, ...): into a cell of the same thread whose bytes it covers
   and whose access it subsumes (a write replaces a read, never the reverse:
   ThreadSanitizer keeps the stronger access), else an empty cell, else a cell
   whose access happens before it, else a randomly chosen cell (eviction;
   `numpy.random.default_rng(context.seed)`, so a run is reproducible). Of
   more than N lanes of one batch on the same bytes, only the last N are
   stored: the earlier ones would only displace each other.

What it finds: the races `hb` finds, as long as the earlier access of the pair
is still in a cell; races on different bytes of one word are told apart by
offset and size (no false sharing). It also finds some that `hb` forgets: a
write ordered after the two latest reads of a byte but not after an older one
(`hb` keeps two reads per byte; the cells keep N accesses), or a second write
racing with a write that `hb` saw overwritten. What it misses: a race whose earlier
access was forgotten, either evicted at random or replaced because it
happens before a newer access that filled the word (a write that two readers
ordered after it displaced, then a read by a third, unordered thread), which
needs more than N different recent accesses to the word, so fewer cells miss
more. Memory: N cells of 24 bytes per 8-byte word touched (N = 4: 12 bytes
per byte), against `hb`'s 3 entries of 26 bytes per byte.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.hb import F_WRITE, SCOPE_SHIFT, HappensBeforeDetector, Release, _unpack_flags
from gpurace.detect.shadow import grown_size
from gpurace.detect.shadow_cells import WORD, WORD_SHIFT, ShadowCells
from gpurace.detect.written_values import span, stored_words
from gpurace.errors import UserError
from gpurace.sim.events import SCOPE_RANK, AccessBatch, AccessKind
from gpurace.sim.memory.layout import Space

SHADOW_CELLS = (2, 4, 8)
"""The cell counts ThreadSanitizer offers per 8-byte word."""

DEFAULT_SHADOW_CELLS = 4


def validate_shadow_cells(cells: int) -> int:
    if cells not in SHADOW_CELLS:
        raise UserError(f"--shadow-cells must be 2, 4 or 8, got {cells}")
    return cells


class TsanDetector(HappensBeforeDetector):
    """The `tsan` detector (see the module docstring)."""

    name = "tsan"
    WORD_UNITS = False  # its cells index global memory by byte (8-byte words of `shadow_cells`)

    def __init__(self, ctx: DetectorContext):
        super().__init__(ctx)
        self.ncells = validate_shadow_cells(ctx.shadow_cells)
        self.rng = np.random.default_rng(ctx.seed)
        self.cells: dict[int, ShadowCells] = {}
        # Threads holding a knowledge object (hb's `know[t] is not None`), so that happens-before checks
        # consult the sparse objects only for those threads, without a Python loop over every pair.
        self.has_know = np.zeros(self.geo.nthreads, dtype=np.bool_)

    # ------------------------------------------------------------------ knowledge bookkeeping

    def _absorb(self, g: int, rel: Release) -> None:
        super()._absorb(g, rel)
        self.has_know[g] = True

    def _join_knowledge(self, ms: np.ndarray) -> None:
        super()._join_knowledge(ms)
        if self.has_know[ms].any():
            self.has_know[ms] = True

    def _ordered(self, t: np.ndarray, u: np.ndarray, c: np.ndarray, ph: np.ndarray, know: list | None = None) -> np.ndarray:
        """`hb`'s happens-before test (the same three levels); the sparse objects are looked at only for
        threads that hold one. Choosing a cell to replace asks it for every cell of a full word, most of
        them pairs no knowledge object can order, so the loop must not visit those."""
        if know is not None:
            return super()._ordered(t, u, c, ph, know)
        geo = self.geo
        same_block = geo.block_of[t] == geo.block_of[u]
        ordered = same_block & (self.phase[t] > ph) & (self.phase[u] > ph)
        if self.wknown is not None:
            same_warp = geo.warp_of[t] == geo.warp_of[u]
            ordered |= same_warp & (self.wknown[t, geo.lane[u].astype(np.int64)] >= c)
        for i in np.flatnonzero(~ordered & self.has_know[t]):
            k = self.know[int(t[i])]
            if k.knows(int(u[i]), int(c[i]), int(geo.block_of[u[i]]), int(ph[i]), int(self.phase[u[i]])):
                ordered[i] = True
        return ordered

    # ------------------------------------------------------------------ accesses

    def _forget_shared(self, index: np.ndarray) -> None:
        cells = self.cells.get(Space.SHARED)
        if cells is not None:
            cells.clear(np.unique(index >> WORD_SHIFT))

    def _shadow_cells(self, space: int, words: int) -> ShadowCells:
        cells = self.cells.get(space)
        if cells is None:
            cells = self.cells[space] = ShadowCells(max(words, 128), self.ncells)
        elif words > cells.words:
            cells.grow(grown_size(cells.words, words))
        return cells

    def _check_space(
        self, ev: AccessBatch, space: int, lanes: np.ndarray, first: np.ndarray, wide: np.ndarray, write: bool, scope: int, flags_word: int
    ) -> None:
        piece = min(ev.size, WORD)
        per_lane = ev.size // piece
        if per_lane == 1:
            start, owner = first, np.arange(len(lanes))
        else:  # a 16-byte access: one access per word
            start = (first[:, None] + WORD * np.arange(per_lane, dtype=np.int64)[None, :]).reshape(-1)
            owner = np.repeat(np.arange(len(lanes)), per_lane)
        t = ev.threads[lanes][owner]
        word = start >> WORD_SHIFT
        off = start & (WORD - 1)
        cells = self._shadow_cells(space, int(word.max()) + 1)
        words = stored_words(ev)
        values = None if words is None else words[lanes[owner]]
        self._against_cells(ev, space, cells, word, off, piece, t, write, flags_word, values)
        device_atomics = ev.kind == AccessKind.ATOMIC and scope >= SCOPE_RANK["gpu"]  # exempt among themselves
        if write and not device_atomics:
            self._within_batch(ev, space, start, t, flags_word, values)
        self._store(ev, cells, start, word, off, piece, t, flags_word, values)

    def _against_cells(self, ev, space, cells: ShadowCells, word, off, piece: int, t, write: bool, flags_word: int, values) -> None:
        """Step 1: every lane against every non-empty cell of its word."""
        ct = cells.t[word]
        coff = cells.off[word].astype(np.int64)
        hit = (ct >= 0) & (ct != t[:, None])
        hit &= (coff < off[:, None] + piece) & (off[:, None] < coff + cells.size[word])
        if not write:
            hit &= (cells.fl[word] & F_WRITE) != 0
        if not hit.any():
            return
        k, j = np.nonzero(hit)
        w = word[k]
        byte = (w << WORD_SHIFT) + np.maximum(off[k], coff[k, j])
        same_value = None
        if values is not None:

            def same_value(i: np.ndarray, _addr: np.ndarray) -> np.ndarray:
                """The two stores wrote the same bytes where they overlap (the cell's store's bytes, if known)."""
                ki, ji, wi = k[i], j[i], w[i]
                mine, theirs = off[ki], coff[ki, ji]
                lo = np.maximum(mine, theirs)
                hi = np.minimum(mine + piece, theirs + cells.size[wi, ji])
                equal = span(values[ki], mine, lo, hi) == span(cells.v[wi, ji], theirs, lo, hi)
                return cells.vk[wi, ji] & equal

        self._check_pairs(
            ev, space, byte, t[k], ct[k, j].astype(np.int64), cells.c[w, j], cells.ph[w, j], cells.pc[w, j],
            _unpack_flags(cells.fl[w, j]), np.full(len(k), flags_word, dtype=np.int16), k, same_value=same_value,
        )

    def _within_batch(self, ev, space, start, t, flags_word: int, values) -> None:
        """Step 1 within the batch: lanes of one instruction are unordered with each other.

        Every lane of a batch accesses the same number of naturally aligned bytes, so two lanes
        overlap exactly when they start at the same byte."""
        if len(start) < 2 or bool((start[1:] > start[:-1]).all()):
            return
        order = np.argsort(start, kind="stable")
        dup = np.flatnonzero(start[order][1:] == start[order][:-1])
        a, b = order[dup], order[dup + 1]
        diff = t[a] != t[b]
        if not diff.any():
            return
        a, b = a[diff], b[diff]
        flags = np.full(len(a), flags_word, dtype=np.int16)
        self._check_pairs(
            ev, space, start[b], t[b], t[a], self.clock[t[a]], self.phase[t[a]], np.full(len(a), ev.pc, np.int32),
            _unpack_flags(flags), flags, b, same_batch=True,
            same_value=None if values is None else lambda i, _: values[a[i]] == values[b[i]],
        )

    def _store(self, ev, cells: ShadowCells, start, word, off, piece: int, t, flags_word: int, values) -> None:
        """Step 2: store every lane's access, lanes of one word in batch order."""
        keep = self._last_per_bytes(start)
        if keep is not None:
            word, off, t = word[keep], off[keep], t[keep]
            values = None if values is None else values[keep]
        rank = _rank_within(word)
        top = int(rank.max()) if len(rank) else -1
        if top == 0:  # every lane on a word of its own: one step
            self._store_rank(ev, cells, word, off, piece, t, flags_word, values)
            return
        for r in range(top + 1):
            sel = np.flatnonzero(rank == r)
            self._store_rank(ev, cells, word[sel], off[sel], piece, t[sel], flags_word, None if values is None else values[sel])

    def _last_per_bytes(self, start: np.ndarray) -> np.ndarray | None:
        """Indices (in batch order) of the last N lanes on each starting byte; None when no byte has more."""
        if len(start) <= self.ncells or bool((start[1:] > start[:-1]).all()):
            return None
        order = np.argsort(start, kind="stable")
        s = start[order]
        new_run = np.append(True, s[1:] != s[:-1])
        run_end = np.append(np.flatnonzero(new_run)[1:], len(s)) - 1
        from_end = run_end[np.cumsum(new_run) - 1] - np.arange(len(s))
        if bool((from_end < self.ncells).all()):
            return None
        return np.sort(order[from_end < self.ncells])

    def _store_rank(self, ev, cells: ShadowCells, word, off, piece: int, t, flags_word: int, values) -> None:
        """Store accesses to distinct words: subsumed own cell, else empty, else happens-before, else random."""
        ct = cells.t[word]
        coff = cells.off[word].astype(np.int64)
        covered = (off[:, None] <= coff) & (coff + cells.size[word] <= off[:, None] + piece)
        own = (ct == t[:, None]) & covered & _subsumed_by(cells.fl[word], flags_word)
        slot = np.where(own.any(axis=1), own.argmax(axis=1), -1)
        empty = ct < 0
        free = (slot < 0) & empty.any(axis=1)
        slot[free] = empty[free].argmax(axis=1)
        full = np.flatnonzero(slot < 0)
        if len(full):
            n = self.ncells
            u = ct[full].astype(np.int64)
            tt = np.repeat(t[full], n)
            w = word[full]
            before = (u == t[full, None]).reshape(-1)
            other = np.flatnonzero(~before)
            before[other] = self._ordered(tt[other], u.reshape(-1)[other], cells.c[w].reshape(-1)[other], cells.ph[w].reshape(-1)[other])
            before = before.reshape(-1, n)
            known = before.any(axis=1)
            slot[full[known]] = before[known].argmax(axis=1)
            evict = full[~known]
            slot[evict] = self.rng.integers(n, size=len(evict))
        cells.put(word, slot, t, self.clock[t], self.phase[t], ev.pc, flags_word, off, piece, values)


def _subsumed_by(old_flags: np.ndarray, new_flags: int) -> np.ndarray:
    """Whether an access with `new_flags` races with everything an access with `old_flags` (same thread,
    bytes covered, not later) races with: it writes if the old one did, and it is a weak access or as
    strong as the old one (same atomic, volatile and scope bits)."""
    writes = bool(new_flags & F_WRITE) | ((old_flags & F_WRITE) == 0)
    if new_flags >> SCOPE_SHIFT == 0:  # weak: races with every conflicting unordered access
        return writes
    return writes & ((old_flags | F_WRITE) == (new_flags | F_WRITE))


def _rank_within(word: np.ndarray) -> np.ndarray:
    """The position of each lane among the lanes of the batch on the same word, in batch order."""
    if len(word) < 2 or bool((word[1:] > word[:-1]).all()):
        return np.zeros(len(word), dtype=np.int64)
    order = np.argsort(word, kind="stable")
    w = word[order]
    new_run = np.append(True, w[1:] != w[:-1])
    run_start = np.flatnonzero(new_run)
    rank = np.empty(len(word), dtype=np.int64)
    rank[order] = np.arange(len(w)) - run_start[np.cumsum(new_run) - 1]
    return rank
