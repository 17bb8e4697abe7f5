"""Sets of bytes of a 64-bit address space, and the flag words the checks read and write them by.

`PageBits` (a flag byte per byte, for the pages that hold one) and `Ranges`
(sorted, disjoint [start, end) ranges) hold what a check must remember
about memory: the bytes the program wrote (`detect.initcheck`), the bytes a
launch read and wrote (`detect.footprint`). Flags are read and written as
machine words, one per access of up to 8 bytes, as the simulator's own
stores do: every performed access is naturally aligned, so its flag bytes
are one aligned word of the flag array.
"""

from __future__ import annotations

import numpy as np

from gpurace.sim.memory.layout import PAGE_SIZE

PAGE_SHIFT = PAGE_SIZE.bit_length() - 1
_PAGE_SHIFT = np.uint64(PAGE_SHIFT)
_PAGE_MASK = np.uint64(PAGE_SIZE - 1)
_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_PAGES_AT_A_TIME = 1024
"""Pages compared at once when two sets are intersected (a few MiB of temporary flags)."""


# --------------------------------------------------------------------------
# Flags: one uint8 per byte (1 = written), read and written a word per access
# --------------------------------------------------------------------------


def word_layout(size: int) -> tuple[type, int]:
    """(word type, words per access) of the flag words covering one access of `size` bytes."""
    width = min(8, size & -size)
    return _WORDS[width], size // width


def full_word(word: type, flag: int | np.ndarray = 1) -> np.integer | np.ndarray:
    """The flag word of an access whose bytes are all flagged `flag` (1: written; an array: one per access)."""
    ones = word(int.from_bytes(b"\x01" * np.dtype(word).itemsize, "little"))
    return word(flag) * ones if np.isscalar(flag) else np.asarray(flag).astype(word) * ones


def _word_indices(index: np.ndarray, size: int) -> np.ndarray:
    """Indices, into the flags viewed as words, of the accesses starting at flag `index`: (lanes,) when one word
    covers an access, else (lanes, words)."""
    word, count = word_layout(size)
    first = index // np.dtype(word).itemsize
    return first if count == 1 else first[:, None] + np.arange(count, dtype=first.dtype)


def read_flags(flags: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    """(lanes, words) flag words of the accesses of `size` bytes starting at flag `index` (int64)."""
    word, count = word_layout(size)
    return flags.view(word)[_word_indices(index, size)].reshape(len(index), count)


def set_flags(flags: np.ndarray, index: np.ndarray, size: int, flag: int | np.ndarray = 1) -> None:
    word, count = word_layout(size)
    value = full_word(word, flag)
    if count > 1 and np.ndim(value):
        value = value[:, None]
    flags.view(word)[_word_indices(index, size)] = value


def flag_bytes(words: np.ndarray, size: int) -> np.ndarray:
    """(lanes, size) bools: the flag of each byte of the accesses whose flag `words` are given (little-endian)."""
    return words.view(np.uint8).reshape(len(words), size).astype(np.bool_)


# --------------------------------------------------------------------------
# Sets of bytes
# --------------------------------------------------------------------------


def _consecutive(starts: np.ndarray, size: int) -> bool:
    """Whether the accesses of `size` bytes at `starts` follow one another, ascending, with no gap."""
    if int(starts[-1]) - int(starts[0]) != (len(starts) - 1) * size:
        return False
    return len(starts) == 1 or bool((np.diff(starts) == np.uint64(size)).all())


DENSE_SPAN = 4
"""Distinct values spanning at most this many times their count are found by marking a table of the span (a batch's
pages, whose threads ran different iterations of a loop), in place of a sort."""


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values (unsigned), sorted; linear time when they already are (a batch's addresses usually are)
    or lie close together (its pages)."""
    if len(values) > 1 and not (values[1:] >= values[:-1]).all():
        lo = values.min()
        span = int(values.max() - lo) + 1
        if span > DENSE_SPAN * len(values):
            return np.unique(values)
        seen = np.zeros(span, dtype=np.bool_)
        seen[(values - lo).astype(np.intp)] = True
        return np.flatnonzero(seen).astype(values.dtype) + lo
    return values[np.concatenate([[True], values[1:] != values[:-1]])]


class PageBits:
    """Written bytes of a 64-bit address space: a flag byte per byte, kept only for the pages that hold one.

    Pages are PAGE_SIZE bytes, rows of one array (`bits`), found through the
    sorted page numbers (`pages`, with their rows in `rows`), so setting and
    reading the flags of a batch of accesses is a few NumPy operations
    whichever pages they fall in. A naturally aligned access never straddles
    a page. It costs PAGE_SIZE bytes per page that holds a written byte; while
    pages are being added, rows are made in a buffer with room for more
    (`_store`, whose first rows are `bits`), so that a set that grows a few
    pages at a time (a launch's footprint, flushed batch after batch) is not
    copied whole at each step; `trim` gives the room back.
    """

    def __init__(self) -> None:
        self.pages = np.zeros(0, dtype=np.uint64)
        self.rows = np.zeros(0, dtype=np.int64)
        self.bits = self._store = np.zeros((0, PAGE_SIZE), dtype=np.uint8)

    @property
    def nbytes(self) -> int:
        return self.bits.nbytes

    def add(self, starts: np.ndarray, size: int, flag: int | np.ndarray = 1) -> None:
        """Set the flags of every byte of the accesses of `size` bytes at `starts` (uint64) to `flag` (1 to 255,
        or one such per access: any value but 0 means the byte is in the set; a caller may use it to say which
        access put it there; of accesses to the same byte, the last one's flag stays)."""
        if not len(starts):
            return
        # a coalesced access (one batch's lanes at consecutive addresses, the usual case) sets one slice of flags
        dense = np.ndim(flag) == 0 and _consecutive(starts, size)
        run = self._run_of_rows(starts) if len(self.pages) else None
        if run is None:
            if dense:
                self._make(np.arange(starts[0] >> _PAGE_SHIFT, (starts[-1] >> _PAGE_SHIFT) + np.uint64(1), dtype=np.uint64))
            else:
                self._make(_distinct(starts >> _PAGE_SHIFT))
            run = self._run_of_rows(starts)
        if dense and run is not None:
            row, address = run
            at = row * PAGE_SIZE + int(starts[0] - address)
            self.bits.reshape(-1)[at : at + len(starts) * size] = flag
            return
        set_flags(self.bits.reshape(-1), self._index(starts, run), size, flag)

    def flag_at(self, address: int) -> int:
        """The flag of the byte at `address` (0 when it is not in the set)."""
        page = np.uint64(address >> PAGE_SHIFT)
        at = int(np.searchsorted(self.pages, page))
        if at == len(self.pages) or self.pages[at] != page:
            return 0
        return int(self.bits[self.rows[at], address & (PAGE_SIZE - 1)])

    def read(self, starts: np.ndarray, size: int) -> np.ndarray:
        """(lanes, words) flag words of the accesses of `size` bytes at `starts` (uint64); 0 on pages not held."""
        word, count = word_layout(size)
        if not len(self.pages) or not len(starts):
            return np.zeros((len(starts), count), dtype=word)
        run = self._run_of_rows(starts)
        if run is not None:
            return read_flags(self.bits.reshape(-1), self._index(starts, run), size)
        pages = starts >> _PAGE_SHIFT
        at = np.minimum(np.searchsorted(self.pages, pages), len(self.pages) - 1)
        held = self.pages[at] == pages
        out = np.zeros((len(starts), count), dtype=word)
        out[held] = read_flags(self.bits.reshape(-1), self._index(starts[held], None), size)
        return out

    def update(self, other: PageBits) -> None:
        """Add every written byte of `other`."""
        if len(other.pages):
            rows = self._rows(other.pages)  # before `self.bits` is read: it may grow
            self.bits[rows] |= other.bits[other.rows]

    def take_runs(self, pages: np.ndarray, max_runs: int) -> tuple[np.ndarray, np.ndarray]:
        """The written bytes of those of `pages` (held, distinct) that hold at most `max_runs` runs of them, as
        [starts, ends) ranges; those pages are dropped."""
        at = np.searchsorted(self.pages, pages)
        row_of, first, last = _runs(self.bits[self.rows[at]])
        few = np.bincount(row_of, minlength=len(at)) <= max_runs
        taken = few[row_of]
        base = pages[row_of[taken]] << _PAGE_SHIFT
        keep = np.ones(len(self.pages), dtype=np.bool_)
        keep[at[few]] = False
        self._keep(keep)
        return base + first[taken], base + last[taken] + np.uint64(1)

    def first_common(self, other: PageBits) -> int | None:
        """The lowest byte flagged in both sets, or None; a few pages at a time, so it needs little memory."""
        common, mine, theirs = np.intersect1d(self.pages, other.pages, assume_unique=True, return_indices=True)
        for at in range(0, len(common), _PAGES_AT_A_TIME):
            part = slice(at, at + _PAGES_AT_A_TIME)
            both = (self.bits[self.rows[mine[part]]] != 0) & (other.bits[other.rows[theirs[part]]] != 0)
            first = _first_flag(both, common[part])
            if first is not None:
                return first
        return None

    def first_in(self, start: int, end: int) -> int | None:
        """The lowest flagged byte of [start, end), or None."""
        if start >= end:
            return None
        lo = int(np.searchsorted(self.pages, np.uint64(start >> PAGE_SHIFT)))
        hi = int(np.searchsorted(self.pages, np.uint64((end - 1) >> PAGE_SHIFT), side="right"))
        for at in range(lo, hi, _PAGES_AT_A_TIME):
            pages = self.pages[at : min(hi, at + _PAGES_AT_A_TIME)]
            flags = self.bits[self.rows[at : at + len(pages)]].copy()
            offsets = np.arange(PAGE_SIZE, dtype=np.int64)
            addresses = (pages.astype(np.int64) << PAGE_SHIFT)[:, None] + offsets
            flags[(addresses < start) | (addresses >= end)] = 0
            first = _first_flag(flags, pages)
            if first is not None:
                return first
        return None

    def trim(self) -> None:
        """Give back the rows made ahead of need (a set that will not grow for a while: a finished footprint)."""
        if len(self._store) > len(self.bits):
            self.bits = self._store = self.bits.copy()

    def discard_pages(self, lo: int, hi: int) -> None:
        """Forget the pages that lie wholly inside [lo, hi) (freed memory)."""
        first, last = np.uint64(-(-lo // PAGE_SIZE)), np.uint64(hi // PAGE_SIZE)
        self._keep((self.pages < first) | (self.pages >= last))

    def _keep(self, keep: np.ndarray) -> None:
        """Drop the pages where `keep` is False, giving their rows back."""
        if keep.all():
            return
        self.bits = self._store = self.bits[self.rows[keep]]
        self.pages = self.pages[keep]
        self.rows = np.arange(len(self.pages), dtype=np.int64)

    def _run_of_rows(self, starts: np.ndarray) -> tuple[int, np.uint64] | None:
        """When every page from the lowest to the highest of `starts` is held, in consecutive rows (the usual
        case: a batch's accesses are close together, and pages made together get consecutive rows): the row
        and the address of the lowest. None otherwise."""
        lo, hi = starts.min() >> _PAGE_SHIFT, starts.max() >> _PAGE_SHIFT
        i = int(np.searchsorted(self.pages, lo))
        j = i + int(hi - lo)
        if j >= len(self.pages) or self.pages[i] != lo or self.pages[j] != hi:
            return None
        rows = self.rows[i : j + 1]
        if rows[-1] - rows[0] != j - i or (j > i and not (rows[1:] - rows[:-1] == 1).all()):
            return None
        return int(rows[0]), lo << _PAGE_SHIFT

    def _index(self, starts: np.ndarray, run: tuple[int, np.uint64] | None) -> np.ndarray:
        """Index into the flattened `bits` of the byte at each of `starts`, all on held pages (in the `run` of
        rows `_run_of_rows` found, if it found one)."""
        if run is not None:
            row, address = run
            return (starts - address).astype(np.int64) + row * PAGE_SIZE
        pages = starts >> _PAGE_SHIFT
        lo = pages.min() if len(pages) else None
        if lo is not None and pages.max() - lo < len(pages):
            # the accesses' pages span fewer pages than there are accesses (a batch, whose pages are held but not
            # in consecutive rows): each page of the span is looked up once, not each access
            span = np.searchsorted(self.pages, np.arange(lo, pages.max() + np.uint64(1), dtype=np.uint64))
            rows = self.rows[np.minimum(span, len(self.pages) - 1)][(pages - lo).astype(np.int64)]
        else:
            rows = self.rows[np.searchsorted(self.pages, pages)]
        return rows * PAGE_SIZE + (starts & _PAGE_MASK).astype(np.int64)

    def _rows(self, pages: np.ndarray) -> np.ndarray:
        """The row of each of `pages` (distinct, sorted), making rows for pages not held yet."""
        self._make(pages)
        return self.rows[np.searchsorted(self.pages, pages)]

    def _make(self, pages: np.ndarray) -> None:
        """Make rows for those of `pages` (distinct, sorted) not held yet, in consecutive rows."""
        if not len(self.pages):  # a new set (one per launch): no merge
            self.pages, self.rows = pages.copy(), np.arange(len(pages), dtype=np.int64)
            self.bits = self._store = np.zeros((len(pages), PAGE_SIZE), dtype=np.uint8)
            return
        # a search per page asked about, not a sort of every page held (a batch whose pages are all held but not
        # in consecutive rows asks here at each add)
        at = np.minimum(np.searchsorted(self.pages, pages), len(self.pages) - 1)
        new = pages[self.pages[at] != pages]
        if len(new):
            count = len(self.pages)
            if count + len(new) > len(self._store):  # room for as many rows again: each row is copied O(1) times
                store = np.zeros((2 * (count + len(new)), PAGE_SIZE), dtype=np.uint8)
                store[:count] = self.bits
                self._store = store
            self.bits = self._store[: count + len(new)]
            held = np.concatenate([self.pages, new])
            order = np.argsort(held, kind="stable")
            self.pages = held[order]
            self.rows = np.concatenate([self.rows, np.arange(count, count + len(new), dtype=np.int64)])[order]


def _first_flag(flags: np.ndarray, pages: np.ndarray) -> int | None:
    """The address of the first set flag in `flags` (rows of PAGE_SIZE, one per page of `pages`), or None."""
    hit = flags.any(axis=1)
    if not hit.any():
        return None
    row = int(np.argmax(hit))
    return (int(pages[row]) << PAGE_SHIFT) + int(np.argmax(flags[row] != 0))


def _runs(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, first byte, last byte) of each run of set bytes in the rows of `flags` (uint8, rows of PAGE_SIZE)."""
    whole = (flags.view(np.uint64) == full_word(np.uint64)).all(axis=1)  # the usual case: one run
    part = np.flatnonzero(~whole)
    written = (flags[part] != 0).view(np.int8)
    # edges[:, i] is written[:, i] - written[:, i - 1] (0 outside the row): 1 where a run begins, -1 one past its end.
    edges = np.zeros((len(part), PAGE_SIZE + 1), dtype=np.int8)
    edges[:, :-1] = written
    edges[:, 1:] -= written
    rows, first = np.nonzero(edges == 1)
    _, stop = np.nonzero(edges == -1)
    whole_rows = np.flatnonzero(whole)
    return (
        np.concatenate([whole_rows, part[rows]]),
        np.concatenate([np.zeros(len(whole_rows), dtype=np.uint64), first.astype(np.uint64)]),
        np.concatenate([np.full(len(whole_rows), PAGE_SIZE - 1, dtype=np.uint64), stop.astype(np.uint64) - np.uint64(1)]),
    )


class Ranges:
    """A set of bytes as sorted, disjoint [start, end) ranges (few: one per allocation, split by partial writes)."""

    def __init__(self) -> None:
        self.starts = np.zeros(0, dtype=np.uint64)
        self.ends = np.zeros(0, dtype=np.uint64)

    def add(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self._combine(starts, ends, lambda mine, theirs: mine | theirs)

    def remove(self, starts: np.ndarray, ends: np.ndarray) -> None:
        self._combine(starts, ends, lambda mine, theirs: mine & ~theirs)

    def contains(self, addrs: np.ndarray) -> np.ndarray:
        """Whether each address of `addrs` (any shape, uint64) is in the set."""
        return _inside(self.starts, self.ends, addrs)

    def touched(self, starts: np.ndarray, size: int) -> np.ndarray | None:
        """Per access of `size` bytes at `starts` (uint64): whether any of its bytes is in the set; None when none
        is. The range starting last at or before an access's last byte is the one to test: an earlier range
        that reaches into the access would reach into that one too."""
        if not len(self.starts) or not len(starts):
            return None
        lo, hi = starts.min(), starts.max() + np.uint64(size - 1)
        at = np.searchsorted(self.starts, hi, side="right") - 1
        if at < 0 or self.ends[at] <= lo:  # the usual case: no range reaches into the batch's span
            return None
        if self.starts[at] <= lo and hi < self.ends[at]:  # the batch lies in one range
            return np.ones(len(starts), dtype=np.bool_)
        at = np.searchsorted(self.starts, starts + np.uint64(size - 1), side="right") - 1
        some = (at >= 0) & (starts < self.ends[np.maximum(at, 0)])
        return some if some.any() else None

    def _combine(self, starts: np.ndarray, ends: np.ndarray, keep) -> None:
        """The set becomes `keep(in self, in the given ranges)`, computed on the segments between all boundaries."""
        starts, ends = np.asarray(starts, dtype=np.uint64), np.asarray(ends, dtype=np.uint64)
        nonempty = starts < ends
        starts, ends = starts[nonempty], ends[nonempty]
        if not len(starts):
            return
        order = np.argsort(starts, kind="stable")
        given = Ranges()
        given.starts, given.ends = _merged(starts[order], ends[order])
        points = np.unique(np.concatenate([self.starts, self.ends, given.starts, given.ends]))
        lo, hi = points[:-1], points[1:]
        kept = keep(self.contains(lo), given.contains(lo))
        self.starts, self.ends = _merged(lo[kept], hi[kept])


def _inside(starts: np.ndarray, ends: np.ndarray, addrs: np.ndarray) -> np.ndarray:
    """Whether each of `addrs` lies in one of the sorted, disjoint ranges [starts, ends)."""
    if not len(starts):
        return np.zeros(addrs.shape, dtype=np.bool_)
    at = np.searchsorted(starts, addrs, side="right") - 1
    return (at >= 0) & (addrs < ends[np.maximum(at, 0)])


def _merged(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranges sorted by start, overlapping or touching ones joined."""
    if not len(starts):
        return starts, ends
    reach = np.maximum.accumulate(ends)
    begins = np.concatenate([[True], starts[1:] > reach[:-1]])
    group_ends = np.concatenate([np.flatnonzero(begins)[1:] - 1, [len(starts) - 1]])
    return starts[begins], reach[group_ends]


