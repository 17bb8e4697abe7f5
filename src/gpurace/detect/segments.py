"""Sort/group building blocks for finding overlapping byte ranges without pairwise comparison.

Race detectors must compare byte ranges of different sizes (a 4-byte store
against a 1-byte load inside it) without an O(N^2) scan. Cutting the address
line at every range boundary gives *elementary segments*: every range covers a
contiguous run of them, and two ranges overlap iff they share a segment. In
the usual case all accesses to a location have the same size, so each range is
one segment and the split costs one sort. Grouping the covering ranges of each
segment by instruction then keeps the pairs to enumerate proportional to the
number of distinct instructions per segment, not to the number of threads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, offset) for `counts[i]` consecutive items per owner i: a vectorised nested loop."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    begins = np.cumsum(counts) - counts
    offset = np.arange(total, dtype=np.int64) - begins[owner]
    return owner, offset


@dataclass(frozen=True)
class Segments:
    """Each (range, segment) incidence: `rec` indexes the input ranges, `seg` numbers segments.

    `first` marks the first segment of each range (a pair of overlapping ranges
    is counted once, at the segment where the later-starting one begins: one
    of the two is `first` there and nowhere else before). `start` is the
    address where each segment begins (a byte both ranges touch).
    """

    rec: np.ndarray
    seg: np.ndarray
    first: np.ndarray
    start: np.ndarray


PACK_FROM = 4096
"""Below this many items `lexsort` leaves the keys to `np.lexsort`: packing them costs more than it saves."""


def lexsort(keys) -> np.ndarray:
    """`np.lexsort(keys)` (the last key sorts first; items with equal keys keep their order) of integer keys.

    When the keys' value ranges fit in 64 bits together, as the detectors' usually do (addresses within a few
    hundred megabytes, a few million threads, a few hundred instructions, sizes up to 32), they are packed into
    one uint64 per item and sorted once, stably: `np.lexsort` makes a stable pass per key, each reading the
    keys through the order of the pass before, which costs three to five times as much. Other keys go to
    `np.lexsort`.
    """
    keys = [np.asarray(k) for k in keys]
    if len(keys[0]) < PACK_FROM or any(k.dtype.kind not in "iu" for k in keys):
        return np.lexsort(keys)
    lows = [int(k.min()) for k in keys]
    widths = [(int(k.max()) - low).bit_length() for k, low in zip(keys, lows)]
    if sum(widths) > 64:
        return np.lexsort(keys)
    packed = np.zeros(len(keys[0]), dtype=np.uint64)
    part = np.empty_like(packed)
    for k, low, width in reversed(list(zip(keys, lows, widths))):
        if width:
            # k - low in 64 bits: a signed difference wraps to its true value, which is below 2**64
            wide = np.int64 if k.dtype.kind == "i" else np.uint64
            np.subtract(k, wide(low), out=part, dtype=wide, casting="unsafe")
            packed <<= np.uint64(width)
            packed |= part
    return np.argsort(packed, kind="stable")


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending. Sort-based: NumPy 2's hash-based `np.unique` is about a hundred
    times slower on large arrays of many distinct integers, which is exactly what addresses are."""
    s = np.sort(values)
    if len(s) == 0:
        return s
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


DENSE_SLACK = 8
"""`dense_slots` numbers the addresses' neighbourhood densely when it has at most this many slots per address
(plus `DENSE_FLOOR`): per-slot tables of that size are cheaper than a sort of the addresses."""
DENSE_FLOOR = 1 << 20
_TAG_SHIFT, _OWNER_SHIFT, _OWNER_MASK, _OFFSET_MASK = 62, 32, (1 << 30) - 1, (1 << 32) - 1
"""`sim.memory.layout`'s canonical addresses: a tag (global 0, shared, local) in the top two bits; shared and
local carry their block or thread in bits 32..61 and the offset in the low 32 bits."""


def dense_slots(addr: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(slot, slots): a number below `slots` per address, equal for equal addresses, with the differences of
    addresses that share a tag and an owner (block or thread) kept within each 32-byte aligned block (so that
    `slot >> s` groups as `addr >> s` for s <= 5); or None when that takes more than DENSE_SLACK slots per
    address (plus DENSE_FLOOR), where a sort is the cheaper grouping.

    Each tag's addresses are numbered by (owner, offset) within the owners and offsets that occur: the shared
    memory of thousands of blocks lies 2**32 bytes apart, but each block uses the same few kilobytes."""
    most = DENSE_SLACK * len(addr) + DENSE_FLOOR
    lowest, highest = int(addr.min()) >> _TAG_SHIFT, int(addr.max()) >> _TAG_SHIFT
    if lowest == highest:  # one tag (the usual case): no pass to split them
        return _tag_slots(addr, lowest, 0, most)
    tag = addr >> np.uint64(_TAG_SHIFT)
    slot = np.empty(len(addr), dtype=np.int64)
    base = 0
    for t in range(lowest, highest + 1):
        at = np.flatnonzero(tag == t)
        if len(at) == 0:
            continue
        numbered = _tag_slots(addr[at], t, base, most)
        if numbered is None:
            return None
        slot[at], base = numbered
    return slot, base


def _tag_slots(addr: np.ndarray, tag: int, base: int, most: int) -> tuple[np.ndarray, int] | None:
    """`dense_slots` of addresses of one tag, numbered from `base`."""
    if tag == 0:  # global: the address is the offset
        low = int(addr.min()) & ~31
        span = (int(addr.max()) - low + 32) & ~31
        if base + span > most:
            return None
        slot = addr.astype(np.int64)
        slot += base - low
        return slot, base + span
    owner = addr >> np.uint64(_OWNER_SHIFT)
    owner &= np.uint64(_OWNER_MASK)
    owner = owner.view(np.int64)
    offset = (addr & np.uint64(_OFFSET_MASK)).view(np.int64)
    first = (int(addr.min()) >> _OWNER_SHIFT) & _OWNER_MASK  # the tag is the same: the owner orders the address
    owners = ((int(addr.max()) >> _OWNER_SHIFT) & _OWNER_MASK) - first + 1
    low = int(offset.min()) & ~31
    span = (int(offset.max()) - low + 32) & ~31
    if base + owners * span > most:
        return None
    slot = owner
    slot -= first
    slot *= span
    slot += offset
    slot += base - low
    return slot, base + owners * span


def shared_by_threads(
    thread: np.ndarray, addr: np.ndarray, size: np.ndarray, write: np.ndarray | None = None
) -> np.ndarray:
    """Which naturally aligned byte ranges may overlap a range of another thread (and, given `write`, one of
    them a write: only such a pair can conflict, and a tiled kernel's intervals of shared-memory reads have none).

    A cheap filter: it never drops a range that another thread overlaps, and may keep some that none does.

    Aligned ranges of at most 16 bytes never cross a 16-byte boundary, and two of them overlap only
    inside one aligned block of the larger size. Grouping each range with the others of its aligned
    block of its 16-byte chunk's largest size therefore puts every overlapping pair in one group; a group
    touched by a single thread holds no conflict and can be skipped. The groups are formed in per-slot
    tables when the addresses are dense enough (`dense_slots`), else by sorting.
    """
    if len(addr) == 0:
        return np.zeros(0, dtype=np.bool_)
    dense = dense_slots(addr)
    if dense is None:
        return _shared_by_sorting(thread, addr, size, write)
    slot, slots = dense
    if (size == size[0]).all():
        key = slot >> (int(size[0]).bit_length() - 1)
    else:
        chunk = slot >> 4
        largest = np.zeros((slots >> 4) + 1, dtype=np.int64)
        np.maximum.at(largest, chunk, size.astype(np.int64))
        # the group's first byte, in units of the smallest size (a power of two, as all sizes)
        key = (slot & -largest[chunk]) >> (int(size.min()).bit_length() - 1)
    # a slot table of one of its threads (any): a range of another thread marks its group as several
    owner = np.empty(slots + 1, dtype=thread.dtype)
    owner[key] = thread
    several = np.zeros(slots + 1, dtype=np.bool_)
    several[key[owner[key] != thread]] = True
    if write is not None:
        written = np.zeros(slots + 1, dtype=np.bool_)
        written[key[write]] = True
        several &= written
    return several[key]


def _shared_by_sorting(thread: np.ndarray, addr: np.ndarray, size: np.ndarray, write: np.ndarray | None) -> np.ndarray:
    """`shared_by_threads` by sorting the addresses (any addresses)."""
    if (size == size[0]).all():
        # one size for all (the usual case): ranges overlap exactly when they are the same aligned block
        key = addr >> np.uint64(int(size[0]).bit_length() - 1)
    else:
        chunk = addr >> np.uint64(4)
        order = np.argsort(chunk, kind="stable")
        begin, end = run_bounds(chunk[order])
        largest = np.empty(len(addr), dtype=np.uint64)
        largest[order] = np.repeat(np.maximum.reduceat(size[order], begin), end - begin)
        key = addr & ~(largest - np.uint64(1))  # the group's first byte
    order = np.argsort(key, kind="stable")
    begin, end = run_bounds(key[order])
    t = thread[order]
    several = np.minimum.reduceat(t, begin) != np.maximum.reduceat(t, begin)
    if write is not None:
        several &= np.logical_or.reduceat(write[order], begin)
    out = np.empty(len(addr), dtype=np.bool_)
    out[order] = np.repeat(several, end - begin)
    return out


def split_segments(group: np.ndarray, start: np.ndarray, end: np.ndarray) -> Segments:
    """Cut the ranges [start, end) into elementary segments; ranges of different `group`s never share one."""
    n = len(start)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Segments(empty, empty, np.zeros(0, dtype=np.bool_), np.zeros(0, dtype=np.uint64))
    points = sorted_unique(np.concatenate([start, end]))
    span = np.int64(len(points) + 1)
    group = np.asarray(group, dtype=np.int64)
    key_start = group * span + np.searchsorted(points, start)
    key_end = group * span + np.searchsorted(points, end)
    bounds = sorted_unique(np.concatenate([key_start, key_end]))
    first_seg = np.searchsorted(bounds, key_start)
    counts = np.searchsorted(bounds, key_end) - first_seg
    rec, offset = expand(counts)
    seg = first_seg[rec] + offset
    return Segments(rec, seg, offset == 0, points[bounds[seg] % span])


def run_ids(*sorted_columns: np.ndarray) -> np.ndarray:
    """Run id of each row of rows sorted by `sorted_columns` (equal ids for equal column tuples)."""
    n = len(sorted_columns[0])
    change = np.zeros(n, dtype=np.bool_)
    for col in sorted_columns:
        change[1:] |= col[1:] != col[:-1]
    return np.cumsum(change)


def run_bounds(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(begin, end) of each run of equal values in a sorted key array."""
    n = len(sorted_keys)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    change = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    begin = np.concatenate([[0], change]).astype(np.int64)
    end = np.concatenate([change, [n]]).astype(np.int64)
    return begin, end


def pairs_in_runs(sorted_keys: np.ndarray, *, include_self: bool) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j), i <= j (i < j without `include_self`), of positions in the same run of equal keys."""
    begin, end = run_bounds(sorted_keys)
    run_end = np.repeat(end, end - begin)
    lo = np.arange(len(sorted_keys), dtype=np.int64) + (0 if include_self else 1)
    i, offset = expand(run_end - lo)
    return i, lo[i] + offset
