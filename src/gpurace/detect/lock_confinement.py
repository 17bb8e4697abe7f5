"""Whether every access of a run sat inside a critical section of one lock: then no other lock order races.

`gwcp` keeps two critical sections of a lock that conflict in the order the
run took them, so the default check runs further schedules (`reverse`,
`flip`, `random`) to see the other orders. They cannot show a race when, in
the run, every memory access other than the lock operations themselves
(compare-and-swap and exchange on the lock word) was made inside a held
critical section, each word such accesses touched was only ever touched under
one lock, every section was released with the release pattern (fence or
release semantics before the store of the free value: a section released
otherwise orders nothing after it, which matters when another order puts it
first), the sections of each lock overlap in scope (all gpu-wide, or all of
one block), no thread held two locks at once, no access was to shared memory
(whose first reads `initcheck` judges by order), and every lock was contended
(some compare-and-swap on it failed, so losers' paths ran too): in any order
of the sections, every conflicting pair is ordered by the lock's release and
acquire. Whether another order can take another path is the PTX's question
(`sim.order_paths`); `check._check_schedules` asks both.

`LockConfinement` is fed by `GwcpDetector` as it infers locks; a run that breaks
a condition stops costing anything more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpurace.sim.events import AccessBatch
from gpurace.sim.memory.layout import Space


@dataclass
class LockConfinement:
    """What one run showed about its accesses and locks (module docstring); `broken` once a condition failed."""

    broken: bool = False
    lock_ops: set[int] = field(default_factory=set)  # addresses of compare-and-swap and exchange operations
    contended: set[int] = field(default_factory=set)  # addresses where a compare-and-swap failed
    word_lock: dict[int, int] = field(default_factory=dict)  # 4-byte word accessed inside sections -> its lock
    scopes: dict[int, tuple[int, bool]] = field(default_factory=dict)  # lock -> (block of every section or -1, any narrow)

    def access(self, ev: AccessBatch, inside: np.ndarray) -> None:
        """An access batch, with which of its lanes were inside a held section before it."""
        if (ev.space == int(Space.SHARED)).any():
            self.broken = True
        elif ev.atomic_op in ("cas", "exch"):
            self.lock_ops.update(ev.addrs.tolist())
            if ev.atomic_op == "cas" and ev.values is not None and ev.compare is not None:
                self.contended.update(ev.addrs[ev.values != ev.compare].tolist())
        elif not inside.all():
            self.broken = True

    def section_words(self, words, lock: int) -> None:
        """4-byte words a section of `lock` accessed."""
        if self.broken:
            return
        word_lock = self.word_lock
        for w in words:
            if word_lock.setdefault(w, lock) != lock:
                self.broken = True
                return

    def released(self, lock: int, block: int, wide: bool) -> None:
        seen = self.scopes.get(lock)
        if seen is None:
            self.scopes[lock] = (block, not wide)
        elif seen[0] != block or (not wide and not seen[1]):  # most releases change nothing: no new tuple
            self.scopes[lock] = (seen[0] if seen[0] == block else -1, seen[1] or not wide)

    def confined(self, locks) -> bool:
        """Whether the run met every condition, with `locks` the lock words the detector confirmed."""
        if self.broken or not self.scopes or not self.lock_ops <= set(locks) or not set(locks) <= self.contended:
            return False
        if any(narrow and block < 0 for block, narrow in self.scopes.values()):
            return False
        return not any(a >> 2 in self.word_lock for a in self.lock_ops)
