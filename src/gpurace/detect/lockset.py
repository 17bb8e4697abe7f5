"""Scoped lockset race detection combined with scoped happens-before (after ScoRD).

Happens-before sees only the lock order of the run: a write made before a
critical section is ordered before a write made inside a later section of the
same lock, although another schedule takes the lock in the other order.
Lockset analysis does not depend on that order: two conflicting accesses of
which at least one was made holding a lock must share a *common lock*, or be
ordered by synchronisation other than locks. ScoRD combines the two: lockset
analysis where a lock is involved, and its fence rules (missing fence,
insufficient scope, non-strong access) otherwise, which are exactly what `hb`
implements under each `--model`. So two conflicting accesses (as
`rules.classify` decides) race when

1. at least one of them held a lock: they share no common lock, and they are
   not ordered by happens-before *without lock edges* (program order,
   barriers, warp syncs, release/acquire patterns on locations that are not
   inferred locks); or they share one but the full happens-before does not
   order them (a section unlocked with no fence before the unlocking write);
2. neither held a lock: they are not ordered by the full scoped
   happens-before of `hb`, lock edges included.

Locks, holds and locksets are inferred per thread as `locktable` describes
(ScoRD's lock table: compare-and-swap, fence, write back of the free value;
at most four per thread). A *common lock* is the same address held with
overlapping scopes: both holds device-wide, or both by threads of one block,
so a lock taken with `atomicCAS_block` or `__threadfence_block` protects
nothing across blocks. The acquiring compare-and-swap and the releasing write
do not count as holding their own lock: they are checked like other
synchronisation accesses.

Each thread carries two sparse knowledge objects on top of `hb`'s block and
warp levels: `know`, the full happens-before (as in `hb`), and `lfknow`, the
same relation without lock edges: a release on an inferred lock address
publishes nothing to it (a location becomes an inferred lock when a held lock
on it is released). Shadow entries keep the lockset id of their access
(`LocksetShadow`); a write that replaces a write of another thread with which
it shares a common lock, and which happens-before without lock edges does
not order before it, keeps the replaced write in a fourth slot, because a
later access of the same thread outside the lock still races with it (PreDataR
Fig. 10). That slot holds one such write per byte: older ones are forgotten.

What it finds: races that another order of the critical sections would
expose (PreDataR Figs. 3 and 10; `gwcp` misses the latter), races on data
protected by an insufficiently scoped lock, and everything `hb` finds in code
without locks. What it misses: locks it does not infer (an `atomicExch`
spin lock, more than four nested locks), races the bounded shadow forgets
(as `hb`), and races between two accesses that hold no lock but that only
another lock order would let run concurrently (PreDataR Fig. 4 style
predictions are `gwcp`'s). False positives where the lock's order is forced by
other means: a lock used to hand data over (a thread writes data outside its
critical section and sets a "ready" flag inside it; another reads the flag
and then the data inside its own section) is reported on the data, although
every schedule that reads the flag set orders the two; so is a flag raised
inside a critical section that another thread waits for before it locks.
Hence `lockset` is not part of the default check.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from gpurace.detect.base import DetectorContext
from gpurace.detect.findings import describe_address
from gpurace.detect.hb import HappensBeforeDetector, Release, _take, _unpack_flags, _units
from gpurace.detect.knowledge import Knowledge, join_all
from gpurace.detect.locktable import Locksets, LockTable
from gpurace.detect.rules import Cause, classify, fence_blind
from gpurace.detect.shadow import Shadow, grown_size
from gpurace.sim.events import SCOPE_RANK, AccessBatch, AccessKind, FenceEvent

WIDE = SCOPE_RANK["gpu"]


class LocksetShadow(Shadow):
    """`Shadow` with the lockset id of every entry (`ls`), and `lw`: per byte, one older write kept because
    the write that replaced it was protected from it only by a common lock (allocated when first needed)."""

    FIELDS = (*Shadow.FIELDS, "ls")

    def __init__(self, size: int):
        super().__init__(size)
        self.lw: dict[str, np.ndarray] | None = None

    @staticmethod
    def _slots(size: int) -> dict[str, np.ndarray]:
        slots = Shadow._slots(size)
        slots["ls"] = np.zeros(size, dtype=np.int32)
        return slots

    def grow(self, size: int) -> None:
        old = self.size
        super().grow(size)
        if self.lw is not None and self.size > old:
            fresh = self._slots(self.size)
            for k, v in self.lw.items():
                fresh[k][:old] = v
            self.lw = fresh

    def clear(self, index: np.ndarray) -> None:
        super().clear(index)
        if self.lw is not None:
            self._reset(self.lw, index[index < self.size])

    def _histories(self) -> list[dict[str, np.ndarray]]:
        return super()._histories() + ([self.lw] if self.lw is not None else [])

    def kept_writes(self) -> dict[str, np.ndarray]:
        if self.lw is None:
            self.lw = self._slots(self.size)
        return self.lw


@dataclass(slots=True)
class LocksetRelease(Release):
    """A release as `hb` publishes it, plus `lock_free`: what it publishes to happens-before without lock edges."""

    lock_free: Knowledge = field(default_factory=Knowledge)

    def including(self, other: Release) -> Release:
        return replace(self, knowledge=self.knowledge.join(other.knowledge), lock_free=self.lock_free.join(other.lock_free))


@dataclass(frozen=True)
class _LocksetRace:
    """Why the pair being reported races under rule 1: the two locksets and where the earlier access is."""

    earlier: int
    later: int
    pc: int


class LocksetDetector(HappensBeforeDetector):
    """The `lockset` detector (see the module docstring)."""

    name = "lockset"
    KNOWLEDGE_LISTS = ("know", "lfknow")

    def __init__(self, ctx: DetectorContext):
        super().__init__(ctx)
        n = ctx.geometry.nthreads
        self.lfknow: list[Knowledge | None] = [None] * n
        self.table: LockTable | None = None  # allocated at the first successful compare-and-swap
        self.locksets = Locksets()
        self.lsid = np.zeros(n, dtype=np.int32)
        self.lock_addrs: set[int] = set()
        self._current: LocksetShadow | None = None
        self._race: _LocksetRace | None = None

    # ------------------------------------------------------------------ lock inference

    def _access(self, ev: AccessBatch) -> None:
        released = self._releases(ev) if self.table is not None and ev.kind != AccessKind.READ else None
        super()._access(ev)
        if ev.atomic_op == "cas" and ev.compare is not None and ev.values is not None:
            self._acquires(ev, released)

    def _releases(self, ev: AccessBatch) -> np.ndarray | None:
        """Writes of a lock's free value by its holder release it (before the write is checked and published)."""
        if ev.stored is None or not (ev.kind == AccessKind.WRITE or ev.atomic_op in ("exch", "cas")):
            return None
        lanes = np.arange(len(ev.threads))
        if ev.atomic_op == "cas":
            lanes = np.flatnonzero(ev.values == ev.compare)
        threads = ev.threads[lanes]
        hit, held = self.table.release(threads, ev.addrs[lanes], np.asarray(ev.stored)[lanes].astype(np.int64))
        if len(hit) == 0:
            return None
        self.lock_addrs.update(int(a) for a in ev.addrs[lanes[hit[held]]])
        self._update_locksets(threads[hit])
        out = np.zeros(len(ev.threads), dtype=np.bool_)
        out[lanes[hit]] = True
        return out

    def _acquires(self, ev: AccessBatch, released: np.ndarray | None) -> None:
        """Successful compare-and-swaps open lock entries (after the access is checked: it holds nothing new)."""
        ok = (ev.values == ev.compare) & (ev.values != ev.stored)
        if released is not None:
            ok &= ~released
        if not ok.any():
            return
        if self.table is None:
            self.table = LockTable(self.geo.nthreads)
        wide = SCOPE_RANK.get(ev.scope or "gpu", WIDE) >= WIDE
        active = ev.sem in ("acquire", "acq_rel")
        changed = self.table.open(ev.threads[ok], ev.addrs[ok], np.asarray(ev.values)[ok].astype(np.int64), wide, active)
        self._update_locksets(changed)

    def _fence(self, ev: FenceEvent) -> None:
        super()._fence(ev)
        if self.table is not None:
            fence_wide = SCOPE_RANK.get(ev.scope, WIDE) >= WIDE
            self._update_locksets(self.table.activate(ev.threads, fence_wide))

    def _update_locksets(self, threads: np.ndarray) -> None:
        for g in threads.tolist():
            self.lsid[g] = self.locksets.intern(self.table.holds(g))

    # ------------------------------------------------------------------ the two kinds of knowledge

    def _has_knowledge(self, members: np.ndarray) -> bool:
        return any(self.know[int(t)] is not None or self.lfknow[int(t)] is not None for t in members)

    def _join_knowledge(self, ms: np.ndarray) -> None:
        """Barriers and warp syncs order their participants in both relations."""
        full = join_all({id(k): k for t in ms if (k := self.know[int(t)]) is not None}.values())
        free = join_all({id(k): k for t in ms if (k := self.lfknow[int(t)]) is not None}.values())
        for t in ms:
            self.know[int(t)] = full
            self.lfknow[int(t)] = free

    def _absorb(self, g: int, rel: Release) -> None:
        super()._absorb(g, rel)
        k = self.lfknow[g]
        if k is not rel.lock_free:
            self.lfknow[g] = rel.lock_free.join(k)

    def _make_release(self, g: int, clock: int, block: int, rank: int, pc: int, addr: int) -> Release:
        full = self._snapshot(self.know[g], g, clock)
        free = Knowledge() if addr in self.lock_addrs else self._snapshot(self.lfknow[g], g, clock)
        return LocksetRelease(full, g, block, rank, pc, free)

    # ------------------------------------------------------------------ shadow memory

    def _shadow(self, space: int, need: int) -> Shadow:
        sh = self.shadows.get(space)
        if sh is None:
            sh = self.shadows[space] = LocksetShadow(max(need, 1024))
        elif need > sh.size:
            sh.grow(grown_size(sh.size, need))
        return sh

    def _put(self, slot, idx, t, c, ph, pc, fl) -> None:
        sh = self._current
        if slot is sh.r1:
            # hb moves the replaced reader to r2 field by field (Shadow.FIELDS); its lockset goes with it
            moving = idx[slot["t"][idx] != t]
            sh.r2["ls"][moving] = slot["ls"][moving]
        HappensBeforeDetector._put(slot, idx, t, c, ph, pc, fl)
        slot["ls"][idx] = self.lsid[t]

    def _check_space(
        self, ev, space: int, lanes: np.ndarray, first: np.ndarray, wide: np.ndarray, write: bool, scope: int, flags_word: int
    ) -> None:
        byte, lane_of_byte, width = _units(first, wide, ev.size)
        sh = self._current = self._shadow(space, int(byte.max()) + 1)
        if self.table is None:
            super()._check_space(ev, space, lanes, first, wide, write, scope, flags_word)
            return
        t = ev.threads[lanes][lane_of_byte]
        if sh.lw is not None:
            lw = sh.lw
            u = lw["t"][byte]
            k = np.flatnonzero((u >= 0) & (u != t))
            if len(k):
                b = byte[k]
                self._check_pairs(
                    ev, space, b, t[k], u[k], lw["c"][b], lw["ph"][b], lw["pc"][b], _unpack_flags(lw["fl"][b]),
                    np.full(len(k), flags_word, dtype=np.int16), lanes[lane_of_byte[k]], ls_u=lw["ls"][b], width=_take(width, k),
                )
        if not write:
            super()._check_space(ev, space, lanes, first, wide, write, scope, flags_word)
            return
        ub = np.unique(byte)
        replaced = {k: v[ub] for k, v in sh.w.items()}
        super()._check_space(ev, space, lanes, first, wide, write, scope, flags_word)
        self._keep_protected(sh, ub, replaced)

    def _keep_protected(self, sh: LocksetShadow, ub: np.ndarray, old: dict[str, np.ndarray]) -> None:
        """Keep the replaced writes that the new write is protected from only by a common lock (module docstring)."""
        new_t, new_ls = sh.w["t"][ub], sh.w["ls"][ub]
        k = np.flatnonzero((old["t"] >= 0) & (old["t"] != new_t) & (old["ls"] != 0) & (new_ls != 0))
        if len(k) == 0:
            return
        ot, nt = old["t"][k], new_t[k]
        same_block = self.geo.block_of[ot] == self.geo.block_of[nt]
        k = k[self.locksets.common(old["ls"][k], new_ls[k], same_block)]
        if len(k) == 0:
            return
        k = k[~self._ordered(new_t[k], old["t"][k], old["c"][k], old["ph"][k], know=self.lfknow)]
        if len(k):
            lw = sh.kept_writes()
            for name, values in old.items():
                lw[name][ub[k]] = values[k]

    def _stored_locksets(self, space: int, byte: np.ndarray, u: np.ndarray, write: np.ndarray) -> np.ndarray:
        """The lockset ids of the history entries `hb` checks a batch against: the last write for a write,
        else whichever of the two readers is u."""
        sh = self.shadows[space]
        reader = np.where(sh.r1["t"][byte] == u, sh.r1["ls"][byte], sh.r2["ls"][byte])
        return np.where(write, sh.w["ls"][byte], reader)

    # ------------------------------------------------------------------ race check

    def _check_pairs(
        self, ev, space, byte, t, u, c, ph, pc_u, flags_u, cur_words, lanes, same_batch=False, same_value=None, width=None, ls_u=None
    ) -> None:
        if self.table is None:
            super()._check_pairs(ev, space, byte, t, u, c, ph, pc_u, flags_u, cur_words, lanes, same_batch, same_value, width)
            return
        geo = self.geo
        same_block = geo.block_of[t] == geo.block_of[u]
        same_warp = geo.warp_of[t] == geo.warp_of[u]
        flags_t = _unpack_flags(cur_words)
        cause = classify(flags_u, flags_t, same_block, same_warp, self.model, self._same_cluster(t, u))
        idx = np.flatnonzero(cause != Cause.NONE)
        if len(idx) == 0:
            return
        ls_t = self.lsid[t[idx]]
        if ls_u is not None:
            ls_u = ls_u[idx]
        elif same_batch:
            ls_u = self.lsid[u[idx]]
        else:
            ls_u = self._stored_locksets(space, byte[idx], u[idx], flags_u.write[idx])
        locked = (ls_u != 0) | (ls_t != 0)
        racy = ~self.locksets.common(ls_u, ls_t, same_block[idx])
        if not same_batch:
            # a pair that no lock or fence can order (a plain access under scord) is checked as `hb` checks it
            blind = fence_blind(flags_u, flags_t, self.model)[idx]
            locked &= ~blind
            plain = np.flatnonzero(~locked & ~blind)
            if len(plain):
                i = idx[plain]
                racy[plain] &= ~self._ordered(t[i], u[i], c[i], ph[i])
            free = np.flatnonzero(locked & racy)
            if len(free):
                i = idx[free]
                racy[free] &= ~self._ordered(t[i], u[i], c[i], ph[i], know=self.lfknow)
            # a common lock orders nothing that happens-before does not: a section released without a fence
            # before its unlocking write publishes nothing of what it did (ScoRD checks every pair both ways)
            common = np.flatnonzero(locked & ~racy)
            if len(common):
                i = idx[common]
                racy[common] = ~self._ordered(t[i], u[i], c[i], ph[i])
                locked[common] = False
            if blind.any():
                racy[blind] = ~self._fence_blind_ordered(cause, idx[blind], t, u, c, ph)
        keep = np.flatnonzero(racy)
        if len(keep) == 0:
            return
        idx, ls_u, ls_t, locked = idx[keep], ls_u[keep], ls_t[keep], locked[keep]
        # a race between locksets is the locks' doing, whatever fence the consumer of a flag left out
        unacquired = ~locked & self._unacquired(t[idx], u[idx], c[idx], ph[idx])
        pos, addr = self._racing_bytes(space, byte, width, idx)
        idx, ls_u, ls_t, locked, unacquired = idx[pos], ls_u[pos], ls_t[pos], locked[pos], unacquired[pos]
        same = self._same_values(ev, idx, addr, flags_u, flags_t, same_value)
        columns = (pc_u[idx], cause[idx], locked, same, unacquired)
        keys = np.stack([col.astype(np.int64) for col in columns], axis=1)
        uk, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
        for (pcu, cz, lk, sv, ua), f, n in zip(uk, first, counts):
            i = idx[f]
            self._race = _LocksetRace(int(ls_u[f]), int(ls_t[f]), int(pcu)) if lk else None
            self._report(
                ev, space, int(addr[f]), int(t[i]), int(u[i]), int(pcu), Cause(int(cz)), flags_u.take(np.array([i])), int(n),
                same=bool(sv), earlier=(int(c[i]), int(ph[i])), unacquired=bool(ua),
            )
        self._race = None

    def _cause_text(self, cause: Cause, t: int, u: int, pc_u: int, ev, earlier=None, unacquired: bool = False) -> str:
        race = self._race
        if race is None:
            return super()._cause_text(cause, t, u, pc_u, ev, earlier, unacquired)
        where = self.ctx.program.instructions[race.pc].where()
        text = f"no common lock: the access at {where} holds {self._describe(race.earlier, u)}, this one holds {self._describe(race.later, t)}"
        shared = {h.addr for h in self.locksets.sets[race.earlier]} & {h.addr for h in self.locksets.sets[race.later]}
        if shared:
            text += "; a block-scoped lock excludes only threads of its own block"
        return text

    def _describe(self, lsid: int, holder: int) -> str:
        """The locks of a lockset in words: "lock `m` (device scope)", "locks `m` (block scope of block (1,0,0)), ..."."""
        holds = sorted(self.locksets.sets[lsid], key=lambda h: h.addr)
        if not holds:
            return "none"
        block = "({})".format(",".join(map(str, self.geo.thread_coords(holder)[1])))
        names = []
        for h in holds:
            a = describe_address(self.mem, h.addr)
            name = a.allocation if a.offset == 0 else f"{a.allocation}[+{a.offset}]"
            names.append(f"`{name}` ({'device scope' if h.wide else f'block scope of block {block}'})")
        return ("lock " if len(names) == 1 else "locks ") + ", ".join(names)
