"""Thread-private memory as pseudo-registers: what `explore` remembers of the bytes a thread stored locally.

Under `-G` (and wherever a variable's address is taken) nvcc keeps locals in
the function's local depot (`st.u64 [%SP+8], %rd1` ... `ld.u64 %rd2,
[%SP+8]`): a copy of a parameter, a pointer chosen in a branch, a struct
built field by field. Only the thread itself can reach that memory, so a
value stored there at a constant offset can be read back exactly, as a
register would be. Each stored slot is a pseudo-register named after its
object, offset and size; merging at joins, loop classification and
substitution then treat it like any register. A store the analysis cannot
place exactly (an offset that is not constant, a vector, a store through an
untraced pointer, a call that can reach the thread's local memory) makes
the slots it may overwrite approximated values, never leaves them stale.
"""

from __future__ import annotations

PREFIX = "%local:"
"""The names of slot pseudo-registers start with this."""


def slot_name(obj: str, start: int, size: int) -> str:
    """The pseudo-register of the `size` bytes at `start` in local object `obj`."""
    return f"{PREFIX}{obj}@{start}+{size}"


def parse_slot(name: str) -> tuple[str, int, int] | None:
    """(object, start, size) of a slot pseudo-register; None for any other register."""
    if not name.startswith(PREFIX):
        return None
    obj, _, where = name[len(PREFIX):].rpartition("@")
    start, _, size = where.partition("+")
    return obj, int(start), int(size)


def overlapping(names, obj: str, start: int | None, size: int) -> list[str]:
    """The slots of `obj` among `names` that bytes `start .. start + size` overlap (all of them when `start` is None)."""
    out = []
    for name in names:
        slot = parse_slot(name)
        if slot is None or slot[0] != obj:
            continue
        if start is None or (slot[1] < start + size and start < slot[1] + slot[2]):
            out.append(name)
    return out
