"""The interval detector's summary of global accesses: what closed intervals leave for later ones to meet.

A row says that instruction `pc` accessed the range [start, start + size):
how many threads did (n), the lowest and highest of them (tmin, tmax), its
first event (seq), and the bytes its stores wrote (val, the least; uni: all
known and equal). Rows are tuples of columns in that order, one row per
(start, size, pc) once merged (`merge_rows`).

Rows are remembered in tiers, each holding distinct keys, the older tiers at
least twice the size of the newer ones (a binary counter): an interval's
rows are a new tier, merged into the one before while that one is not twice
as large, so remembering S rows costs O(S log S) however many intervals
close (a launch in waves closes one per wave), not O(S) per interval.

A tier is stored as affine runs (`RunTier`): the rows one instruction made on
consecutive ranges, with the same counts and first event, and threads that
step by a constant, are one run; only the bytes of stores that differ are
kept per row. Coalesced accesses, the bulk of what large launches touch, so
cost a few bytes per row rather than 65: a 16M-thread kernel that updates
every element five times leaves 112 million rows. `near` expands, of the runs
that overlap the ranges it is asked about, the rows that do, so callers see
rows exactly as one fully merged summary of plain rows holds them, at a cost
that follows the ranges asked about, not the runs they touch.
"""

from __future__ import annotations

import numpy as np

from gpurace.detect.segments import expand, lexsort, run_bounds, run_ids

Rows = tuple[np.ndarray, ...]


def empty_rows() -> Rows:
    u64, i64 = np.uint64, np.int64
    return tuple(np.zeros(0, dtype=t) for t in (u64, u64, i64, i64, i64, i64, i64, u64, np.bool_))


def merge_rows(*parts: Rows) -> Rows:
    """The rows of `parts` together, one row per (start, size, pc), sorted by that key."""
    start, size, pc, n, tmin, tmax, seq, val, uni = (np.concatenate(c) for c in zip(*parts))
    o = lexsort((pc, size, start))
    start, size, pc, n, tmin, tmax, seq, val, uni = (c[o] for c in (start, size, pc, n, tmin, tmax, seq, val, uni))
    begin, _ = run_bounds(run_ids(start, size, pc))
    vmin = np.minimum.reduceat(val, begin)
    return (
        start[begin], size[begin], pc[begin],
        np.add.reduceat(n, begin),
        np.minimum.reduceat(tmin, begin),
        np.maximum.reduceat(tmax, begin),
        np.minimum.reduceat(seq, begin),
        vmin,
        np.logical_and.reduceat(uni, begin) & (vmin == np.maximum.reduceat(val, begin)),
    )  # fmt: skip


class RunTier:
    """Rows with distinct keys as affine runs (module docstring), sorted by (pc, size, start).

    Run r stands for the rows k = 0 .. count-1 with start + k * size,
    threads t0 + k * tstep .. (that) + tspan, and size, pc, n, seq and uni
    as the run's; the bytes stored are `val0` when `voff` is -1, else
    `vals[voff + k]`. A row whose bytes are not all known (uni false) keeps
    no bytes: nothing compares them (`merge_rows` and the detector look at
    them only where uni holds).
    """

    def __init__(self, runs: dict[str, np.ndarray], vals: np.ndarray) -> None:
        self.runs = runs
        self.vals = vals

    @property
    def rows(self) -> int:
        return int(self.runs["count"].sum())

    @staticmethod
    def encode(rows: Rows) -> RunTier:
        """Rows with distinct keys as runs."""
        start, size, pc, n, tmin, tmax, seq, val, uni = rows
        if len(start) == 0:
            return RunTier.encode_empty()
        o = _instruction_order(start, size, pc)
        start, size, pc, n, tmin, tmax, seq, val, uni = (c[o] for c in (start, size, pc, n, tmin, tmax, seq, val, uni))
        val = np.where(uni, val, np.uint64(0))
        span = tmax - tmin
        step = np.diff(tmin)
        link = (
            (pc[1:] == pc[:-1]) & (size[1:] == size[:-1]) & (start[1:] == start[:-1] + size[:-1])
            & (n[1:] == n[:-1]) & (seq[1:] == seq[:-1]) & (uni[1:] == uni[:-1]) & (span[1:] == span[:-1])
        )  # fmt: skip
        # one step per run: a link that changes the step starts a new run (the first link of a run is
        # compared with the one before it too, which at worst splits a run in two)
        link[1:] &= step[1:] == step[:-1]
        begin = np.flatnonzero(np.append(True, ~link))
        count = np.diff(np.append(begin, len(start)))
        tstep = np.zeros(len(begin), dtype=np.int64)
        long = count > 1
        tstep[long] = step[begin[long]]
        vmin = np.minimum.reduceat(val, begin)
        varying = uni[begin] & (vmin != np.maximum.reduceat(val, begin))
        kept = np.repeat(varying, count)
        voff = np.full(len(begin), -1, dtype=np.int64)
        voff[varying] = np.cumsum(count[varying]) - count[varying]
        runs = {
            "start": start[begin],
            "size": size[begin].astype(np.uint32),
            "pc": pc[begin].astype(np.int32),
            "count": count.astype(np.int64),
            "n": n[begin],
            "t0": tmin[begin],
            "tstep": tstep,
            "tspan": span[begin],
            "seq": seq[begin],
            "uni": uni[begin],
            "val0": vmin,
            "voff": voff,
        }
        return RunTier(runs, val[kept])

    @staticmethod
    def encode_empty() -> RunTier:
        i64 = np.int64
        types = {"start": np.uint64, "size": np.uint32, "pc": np.int32, "count": i64, "n": i64, "t0": i64,
                 "tstep": i64, "tspan": i64, "seq": i64, "uni": np.bool_, "val0": np.uint64, "voff": i64}  # fmt: skip
        return RunTier({name: np.zeros(0, dtype=t) for name, t in types.items()}, np.zeros(0, dtype=np.uint64))

    def decode(self, which: np.ndarray, first: np.ndarray | None = None, count: np.ndarray | None = None) -> Rows:
        """The rows of runs `which` (indices), run by run: all of them, or `count` rows from row `first` of each."""
        r = {name: c[which] for name, c in self.runs.items()}
        if count is None:
            count = r["count"]
        run, k = expand(count)
        if first is not None:
            k += first[run]
        size = r["size"][run].astype(np.uint64)
        tmin = r["t0"][run] + k * r["tstep"][run]
        voff = r["voff"][run]
        stored = voff >= 0
        val = r["val0"][run]
        val[stored] = self.vals[voff[stored] + k[stored]]
        return (
            r["start"][run] + k.astype(np.uint64) * size, size, r["pc"][run].astype(np.int64), r["n"][run],
            tmin, tmin + r["tspan"][run], r["seq"][run], val, r["uni"][run],
        )  # fmt: skip

    def select(self, which: np.ndarray) -> RunTier:
        """The runs `which` (ascending indices) as a tier of their own."""
        runs = {name: c[which] for name, c in self.runs.items()}
        count, voff = runs["count"], runs["voff"]
        stored = voff >= 0
        sources = voff[stored]
        lengths = count[stored]
        at = np.repeat(sources - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
        runs["voff"] = np.where(stored, np.cumsum(np.where(stored, count, 0)) - np.where(stored, count, 0), -1)
        return RunTier(runs, self.vals[at])

    def rows_overlapping(self, start: np.ndarray, end: np.ndarray) -> Rows:
        """The rows that overlap any of [start, end) (`start` ascending): of a run, only those rows, so that a
        look-up costs the rows near the ranges, not whole runs (a reduction's 449 block results against the
        single run of the 230,000 inputs every block read)."""
        r_start = self.runs["start"]
        if len(start) == 0 or len(r_start) == 0:
            return empty_rows()
        # the ranges' union, as disjoint ascending pieces
        reach = np.maximum.accumulate(end)
        piece = np.flatnonzero(np.append(True, start[1:] >= reach[:-1]))
        p_start, p_end = start[piece], reach[np.append(piece[1:], len(start)) - 1]
        size = self.runs["size"].astype(np.uint64)
        count = self.runs["count"]
        r_end = r_start + count.astype(np.uint64) * size
        first_piece = np.searchsorted(p_end, r_start, side="right")
        run, offset = expand(np.maximum(np.searchsorted(p_start, r_end, side="left") - first_piece, 0))
        at = first_piece[run] + offset
        rs, sz = r_start[run], size[run]
        lo = ((np.maximum(p_start[at], rs) - rs) // sz).astype(np.int64)
        hi = np.minimum(((p_end[at] - rs + sz - np.uint64(1)) // sz).astype(np.int64), count[run])
        # two pieces can meet one row of a run: each row once
        again = np.flatnonzero(run[1:] == run[:-1]) + 1
        lo[again] = np.maximum(lo[again], hi[again - 1])
        return self.decode(run, lo, np.maximum(hi - lo, 0))

    def overlapping(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Indices of the runs whose ranges overlap any of [start, end) (`start` ascending)."""
        if len(start) == 0 or len(self.runs["start"]) == 0:
            return np.zeros(0, dtype=np.int64)
        reach = np.maximum.accumulate(end)  # the furthest end of the ranges starting at or before each
        r_start = self.runs["start"]
        r_end = r_start + self.runs["count"].astype(np.uint64) * self.runs["size"].astype(np.uint64)
        before = np.searchsorted(start, r_end, "left")  # ranges starting before the run ends
        hit = before > 0
        hit[hit] = reach[before[hit] - 1] > r_start[hit]
        return np.flatnonzero(hit)


SMALL_KEYS = 1 << 15
"""`_instruction_order` sorts (pc, size) numbers below this as 16-bit keys, which NumPy sorts stably by radix."""


def _instruction_order(start: np.ndarray, size: np.ndarray, pc: np.ndarray) -> np.ndarray:
    """`lexsort((start, size, pc))` of rows with distinct keys.

    The rows come in ascending `start` (the detector's items and `merge_rows` sort them by (start, size, pc)),
    so a stable sort of their few (pc, size) pairs alone leaves each pair's rows in ascending `start`: a radix
    sort of 16-bit numbers, where sorting the three keys took a comparison sort of 64-bit ones (a tenth of the
    CPU time of NVIDIA's simpleStreams sample, whose 16M-thread launches run in waves, each remembered).
    """
    if len(start) > 1 and (start[1:] >= start[:-1]).all():
        sizes = int(size.max()) + 1
        key = pc.astype(np.int64) * sizes + size.astype(np.int64)
        if int(key.max()) < SMALL_KEYS:
            return np.argsort(key.astype(np.int16), kind="stable")
    return lexsort((start, size, pc))


def concat_tiers(*tiers: RunTier) -> RunTier:
    """Runs of tiers with no key in common, as one tier sorted by (pc, size, start)."""
    offsets = np.cumsum([0] + [len(t.vals) for t in tiers[:-1]])
    runs = {}
    for name in tiers[0].runs:
        parts = [t.runs[name] for t in tiers]
        if name == "voff":
            parts = [np.where(p >= 0, p + off, -1) for p, off in zip(parts, offsets)]
        runs[name] = np.concatenate(parts)
    o = lexsort((runs["start"], runs["size"], runs["pc"]))
    return RunTier({name: c[o] for name, c in runs.items()}, np.concatenate([t.vals for t in tiers]))


def merge_tiers(older: RunTier, newer: RunTier) -> RunTier:
    """One tier of the rows of both: the runs of either that may share a key with a run of the other (same
    instruction and size, overlapping ranges) are expanded and merged row by row, the rest kept as they are."""
    if older.rows == 0 or newer.rows == 0:
        return newer if older.rows == 0 else older
    touch_old = np.zeros(len(older.runs["start"]), dtype=np.bool_)
    touch_new = np.zeros(len(newer.runs["start"]), dtype=np.bool_)
    groups_old = _groups(older)
    for key, new_idx in _groups(newer).items():
        old_idx = groups_old.get(key)
        if old_idx is None:
            continue
        touch_old[old_idx[_meets(older, old_idx, newer, new_idx)]] = True
        touch_new[new_idx[_meets(newer, new_idx, older, old_idx)]] = True
    if not touch_old.any() and not touch_new.any():
        return concat_tiers(older, newer)
    merged = RunTier.encode(merge_rows(older.decode(np.flatnonzero(touch_old)), newer.decode(np.flatnonzero(touch_new))))
    return concat_tiers(older.select(np.flatnonzero(~touch_old)), newer.select(np.flatnonzero(~touch_new)), merged)


def _groups(tier: RunTier) -> dict[tuple[int, int], np.ndarray]:
    """The run indices of each (pc, size), ascending (the tier is sorted by pc, size, start)."""
    pc, size = tier.runs["pc"], tier.runs["size"]
    begin, end = run_bounds(run_ids(pc, size))
    return {(int(pc[b]), int(size[b])): np.arange(b, e) for b, e in zip(begin, end)}


def _meets(tier: RunTier, idx: np.ndarray, other: RunTier, other_idx: np.ndarray) -> np.ndarray:
    """Which runs `idx` of `tier` overlap some run `other_idx` of `other` (both of one (pc, size), by start)."""
    o_start = other.runs["start"][other_idx]
    o_end = o_start + other.runs["count"][other_idx].astype(np.uint64) * other.runs["size"][other_idx].astype(np.uint64)
    sub = RunTier({name: c[idx] for name, c in tier.runs.items()}, tier.vals)
    hit = np.zeros(len(idx), dtype=np.bool_)
    hit[sub.overlapping(o_start, o_end)] = True
    return hit


class Summary:
    """Every global row of the closed intervals, in tiers of runs (module docstring)."""

    def __init__(self) -> None:
        self.tiers: list[RunTier] = []

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tiers)

    def add(self, new: Rows) -> None:
        """Add rows with distinct keys."""
        self.tiers.append(RunTier.encode(new))
        while len(self.tiers) > 1 and self.tiers[-2].rows < 2 * self.tiers[-1].rows:
            newer = self.tiers.pop()
            self.tiers[-1] = merge_tiers(self.tiers[-1], newer)

    def near(self, start: np.ndarray, end: np.ndarray) -> Rows:
        """Rows that overlap any of the ranges [start, end) (`start` ascending), merged by key and sorted."""
        found = [t.rows_overlapping(start, end) for t in self.tiers]
        found = [f for f in found if len(f[0])]
        if not found:
            return empty_rows()
        return merge_rows(*found)
