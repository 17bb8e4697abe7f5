"""Where things live: the generic address map, global/const allocation tables, the shared-memory layout.

Everything here is bookkeeping about *addresses*; the bytes themselves live in
`store.py`. The constants are the documented generic address map (see the
package docstring); the detectors and reports rely on them being stable.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

import numpy as np

# --------------------------------------------------------------------------
# The generic address map
# --------------------------------------------------------------------------

WINDOW_SIZE = 1 << 32
SHARED_WINDOW = 0x1_0000_0000
"""Generic addresses [SHARED_WINDOW, SHARED_WINDOW + WINDOW_SIZE) are the executing thread's block's shared memory."""
LOCAL_WINDOW = 0x2_0000_0000
"""Generic addresses [LOCAL_WINDOW, LOCAL_WINDOW + WINDOW_SIZE) are the executing thread's own local memory."""
PARAM_BASE = 0x3_0000_0000
"""Generic address of byte 0 of the kernel parameter buffer (the same for every thread)."""
CONST_BASE = 0x4_0000_0000
"""Start of the `.const` region; const addresses are their own generic addresses."""
CONST_LIMIT = CONST_BASE + WINDOW_SIZE
FUNCTION_BASE = 0x8_0000_0000
"""Generic address of the first device function of a module (`mov.u64 %rd, f;`, virtual function tables): function
addresses lie in no allocation, so a load or store through one is out of bounds, and a call through a data address
names no function."""
FUNCTION_STRIDE = 256
GLOBAL_BASE = 0x10_0000_0000
"""Start of the global region; global addresses are their own generic addresses."""
GLOBAL_LIMIT = 1 << 47

REDZONE = 256
"""Minimum gap between two global (or const) allocations, so small overflows hit no allocation."""
ALLOC_ALIGN = 256
"""Minimum alignment of a global or const allocation (what cudaMalloc guarantees)."""
STORE_ALIGN = 16
"""Per-block shared and per-thread local strides are multiples of this, so every naturally
aligned access of up to 16 bytes is aligned in the flat backing store too."""
PAGE_SIZE = 4096
"""Granularity of lazily committed memory: automatic buffers report the pages they touched, and the
race detectors keep shadow memory only for touched global pages. A naturally aligned access (every
performed access is one) never straddles a page."""
AUTO_BUFFER_BYTES = 64 << 20
"""Bytes reserved for each automatic buffer (`--arg auto` for a pointer parameter). Only the pages
a kernel touches are ever committed, so the reservation costs address space, not memory."""
AUTO_FILL_BYTES = 4 << 20
"""Bytes at the start of an automatic buffer that `auto:PATTERN` fills (the rest stays zero): more than any
launch the input search tries can index with its thread ids, and committed at once, so kept small."""
AUTO_GUARD_BYTES = 16 << 20
"""Gap before each automatic buffer: an access up to this far before its start, or past the end of
the reservation before it, is in no allocation and so is reported as out of bounds."""
AUTO_SPREAD_BYTES = 1 << 38
"""Address space (256 GiB) left unbacked before each automatic buffer, beyond its guard: more than any 32-bit index
of elements up to 64 bytes reaches, so that an out-of-bounds access through one automatic buffer lands in no other
allocation and is reported as out of bounds, never as an access to a neighbour. The backing store and canonical
addresses leave it out (`Allocation.shift`), so detectors see the buffers AUTO_GUARD_BYTES apart."""

MAX_LOCAL_BYTES_PER_THREAD = 512 << 10
"""Local memory one thread may use on a GPU (local arrays, spills and call frames): 512 KiB for every
compute capability since 2.0 (CUDA C++ Programming Guide, technical specifications per compute capability)."""
SHARED_BYTES_PER_BLOCK = (
    (0, 48 << 10),
    (70, 96 << 10),
    (75, 64 << 10),
    (80, 163 << 10),
    (86, 99 << 10),
    (87, 163 << 10),
    (89, 99 << 10),
    (90, 227 << 10),
    (120, 99 << 10),
)
"""(compute capability as major*10+minor, bytes): shared memory one block may use, static plus dynamic, from
that capability on, with the opt-in (`cudaFuncAttributeMaxDynamicSharedMemorySize`) that lifts the default 48 KiB
(same table of the programming guide: 96 KiB for 7.0, 64 KiB for 7.5, 163 KiB for 8.0 and 8.7, 99 KiB for 8.6,
8.9 and 12.x, 227 KiB for 9.0 to 11.x)."""
MAX_STATIC_SHARED_BYTES = 48 << 10
"""Static (`__shared__`) shared memory of one kernel: more must be dynamic, the programming guide says."""
MAX_CONSTANT_BYTES = 64 << 10
"""`__constant__` memory of a module, on every GPU (same table)."""


def max_shared_bytes(capability: int) -> int:
    """The shared memory per block that GPUs of `capability` (e.g. 75 for compute_75) allow."""
    return [nbytes for since, nbytes in SHARED_BYTES_PER_BLOCK if since <= capability][-1]


SHARED_BYTES_PER_SM = 64 << 10
"""The shared memory of one multiprocessor of the virtual device, up to compute 7.5 (`runtime/shim/cudart.c`)."""
RESERVED_SHARED_PER_BLOCK = 1 << 10
"""What compute 8.0 and later keep of each block's shared memory for the system, beside the opt-in maximum."""


def shared_bytes_per_sm(capability: int) -> int:
    """The shared memory of one multiprocessor of the virtual device at `capability`: from compute 8.0 on, as
    NVIDIA's parts have it, the largest block's opt-in plus the 1 KiB reserved for it (228 KiB at 9.0)."""
    if capability < 80:
        return SHARED_BYTES_PER_SM
    return max_shared_bytes(capability) + RESERVED_SHARED_PER_BLOCK


def reserved_shared_bytes(capability: int) -> int:
    """The shared memory a block of `capability` occupies on its multiprocessor beyond its own."""
    return RESERVED_SHARED_PER_BLOCK if capability >= 80 else 0


# Canonical addresses: global, const and param use their generic address (below
# 2**48). Shared and local put a tag in the top two bits, the block or thread
# index in bits 32..61 and the offset in the low 32 bits.
CANON_SHARED_TAG = 1 << 62
CANON_LOCAL_TAG = 2 << 62
CANON_TAG_MASK = 3 << 62
CANON_OWNER_SHIFT = 32
CANON_OWNER_MASK = (1 << 30) - 1
CANON_OFFSET_MASK = (1 << 32) - 1


class Space(IntEnum):
    """A PTX state space. `GENERIC` and `SHARED_CLUSTER` are only instructions' spaces; accesses always resolve
    to one of the others."""

    GLOBAL = 0
    SHARED = 1
    LOCAL = 2
    CONST = 3
    PARAM = 4
    GENERIC = 5
    SHARED_CLUSTER = 6
    """`.shared::cluster`: an instruction's space only, resolving to the shared memory of a block of the
    executing thread's cluster (`sim.clusters`)."""

    @staticmethod
    def from_ptx(name: str | None) -> Space:
        """The Space of a PTX state-space modifier (`None`, no modifier, is generic)."""
        return Space.GENERIC if name is None else Space[name.upper().replace("::", "_")]


class ErrorKind(IntEnum):
    """Why an access was not performed (`OK` when it was)."""

    OK = 0
    OUT_OF_BOUNDS = 1
    MISALIGNED = 2
    WRITE_TO_CONST = 3
    """A store or atomic to read-only memory: `.const` data or the kernel parameter buffer."""


def function_addresses(names) -> dict[str, int]:
    """The address of each function of a module, by name, in the module's order: the same wherever it is asked for."""
    return {name: FUNCTION_BASE + FUNCTION_STRIDE * i for i, name in enumerate(names)}


def align_up(value: int, align: int) -> int:
    return -(-value // align) * align


def to_generic(space: Space, addrs: np.ndarray) -> np.ndarray:
    """`cvta.<space>`: a space address to its generic address (identity for global and const)."""
    addrs = np.asarray(addrs, dtype=np.uint64)
    base = {Space.SHARED: SHARED_WINDOW, Space.LOCAL: LOCAL_WINDOW, Space.PARAM: PARAM_BASE}.get(space, 0)
    return addrs + np.uint64(base)


def from_generic(space: Space, addrs: np.ndarray) -> np.ndarray:
    """`cvta.to.<space>`: a generic address to the space address (identity for global and const).

    Like the hardware, this is plain arithmetic: an address outside the window
    gives a space address that the later access reports as out of bounds.
    """
    addrs = np.asarray(addrs, dtype=np.uint64)
    base = {Space.SHARED: SHARED_WINDOW, Space.LOCAL: LOCAL_WINDOW, Space.PARAM: PARAM_BASE}.get(space, 0)
    return addrs - np.uint64(base)


def space_of(addrs: np.ndarray) -> np.ndarray:
    """The Space each generic address falls in (`isspacep`); anything outside the windows is GLOBAL."""
    a = np.asarray(addrs, dtype=np.uint64)
    out = np.full(a.shape, Space.GLOBAL, dtype=np.int8)
    for space, lo, hi in (
        (Space.SHARED, SHARED_WINDOW, SHARED_WINDOW + WINDOW_SIZE),
        (Space.LOCAL, LOCAL_WINDOW, LOCAL_WINDOW + WINDOW_SIZE),
        (Space.PARAM, PARAM_BASE, PARAM_BASE + WINDOW_SIZE),
        (Space.CONST, CONST_BASE, CONST_LIMIT),
    ):
        out[(a >= np.uint64(lo)) & (a < np.uint64(hi))] = space
    return out


# --------------------------------------------------------------------------
# Allocations
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Allocation:
    """A named byte range: a global or const buffer/variable, a shared variable, the params or a thread's local memory.

    `base` is the space address (the generic address for global and const,
    an offset for shared, local and param). `shift` is how far the
    allocation's addresses lie above its canonical addresses (and its bytes in
    the backing store): the unbacked address space left before automatic
    buffers (AUTO_SPREAD_BYTES each), or between the device-only allocations of
    a program under `gpurace exec` (`runtime.spread`); 0 for every other allocation.
    """

    name: str
    base: int
    size: int
    space: Space
    shift: int = 0

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def canonical_base(self) -> int:
        """The canonical address of byte 0 (what detectors and reports see)."""
        return self.base - self.shift


class Location(NamedTuple):
    """What a canonical address points at, for reports."""

    space: Space
    allocation: str | None
    offset: int


class Nearest(NamedTuple):
    """The allocation nearest to an out-of-bounds access, for reports.

    `distance` is signed: `address - end` (>= 0) when the access starts at or
    after the allocation's end, `address - base` (< 0) when it starts before
    the allocation; `straddles` is True (distance 0) when the access starts
    inside the allocation but runs past its end.
    """

    allocation: Allocation
    distance: int
    straddles: bool = False

    @property
    def name(self) -> str:
        return self.allocation.name

    def text(self) -> str:
        """E.g. "4 bytes past the end of `out` (1024 bytes)"."""
        a = self.allocation
        if self.straddles:
            where = "straddling the end of"
        elif self.distance < 0:
            where = f"{-self.distance} bytes before the start of"
        else:
            where = f"{self.distance} bytes past the end of"
        return f"{where} `{a.name}` ({a.size} bytes)"


def nearest_of(allocations: list[Allocation], address: int) -> Nearest | None:
    """The allocation in `allocations` closest to `address` (linear scan: reports only)."""
    best: Nearest | None = None
    for a in allocations:
        if a.base <= address < a.end:
            return Nearest(a, 0, straddles=True)
        cand = Nearest(a, address - a.end) if address >= a.end else Nearest(a, address - a.base)
        if best is None or abs(cand.distance) < abs(best.distance):
            best = cand
    return best


class AllocationTable:
    """The allocations of one region (global or const), in increasing address order.

    Allocations are placed one after the other with at least REDZONE bytes of
    gap and ALLOC_ALIGN alignment (registered host memory excepted, see
    `place`), so the table is sorted by construction and a
    vectorised `np.searchsorted` finds the candidate allocation of each address.
    """

    def __init__(self, region_base: int, region_limit: int, space: Space):
        self.region_base = region_base
        self.region_limit = region_limit
        self.space = space
        self.allocations: list[Allocation] = []
        self.bases = np.zeros(0, dtype=np.uint64)
        self.ends = np.zeros(0, dtype=np.uint64)
        self.shifts = np.zeros(0, dtype=np.uint64)
        self.top = region_base  # first free address (before the next red zone)
        self.shift = 0  # the greatest `Allocation.shift` of any allocation: 0 when addresses are canonical
        self._spread = 0  # unbacked address space `place` has left so far (its last allocation's shift)
        self._by_canonical: list[Allocation] | None = []  # the allocations by canonical base (None: to be sorted)

    def place(self, name: str, nbytes: int, align: int, gap: int = REDZONE, offset: int = 0, spread: int = 0) -> Allocation:
        """Place an allocation after the last one, at least `gap` (>= REDZONE) bytes after it, `offset` bytes past
        a multiple of `align` (0 but for host memory registered for the device, which keeps its host address's
        offset in its page: `runtime.heap`). `spread` more bytes of address space (a multiple of `align`) are
        left before it that neither the backing store nor canonical addresses hold."""
        align = max(align, ALLOC_ALIGN)
        base = align_up(self.top + (max(gap, REDZONE) if self.allocations else 0), align) + offset + spread
        if base + nbytes > self.region_limit:
            raise MemoryError(f"{self.space.name.lower()} region exhausted allocating {name!r} ({nbytes} bytes)")
        self._spread += spread
        self.shift = max(self.shift, self._spread)
        alloc = Allocation(name, base, nbytes, self.space, self._spread)
        self.top = base + nbytes
        if self.allocations and base < self.allocations[-1].base:  # after allocations `insert` put above `top`
            return self._inserted(alloc)
        self.allocations.append(alloc)
        self.bases = np.append(self.bases, np.uint64(base))
        self.ends = np.append(self.ends, np.uint64(base + nbytes))
        self.shifts = np.append(self.shifts, np.uint64(self._spread))
        if self._by_canonical is not None:
            self._by_canonical.append(alloc)
        return alloc

    def reserve(self, nbytes: int, align: int) -> int:
        """The base of `nbytes` of address space after the last allocation that no allocation holds: the range of
        `cuMemAddressReserve`, in which `insert` later places what the program maps. MemoryError as for `place`."""
        align = max(align, ALLOC_ALIGN)
        base = align_up(self.top + (REDZONE if self.top > self.region_base else 0), align)
        if base + nbytes > self.region_limit:
            raise MemoryError(f"{self.space.name.lower()} region exhausted reserving {nbytes} bytes")
        self.top = base + nbytes
        return base

    def insert(self, name: str, base: int, nbytes: int, shift: int | None = None) -> Allocation:
        """An allocation at `base`, in address space `reserve` left free (the caller keeps it free of overlaps).
        Its bytes lie `shift` below it (a range `reserve` gave), or as far below as those of the allocation
        before it when None."""
        if shift is None:
            i = bisect.bisect_right(self.allocations, base, key=lambda a: a.base)
            shift = self.allocations[i - 1].shift if i else 0
        self.shift = max(self.shift, shift)
        return self._inserted(Allocation(name, base, nbytes, self.space, shift))

    def _inserted(self, alloc: Allocation) -> Allocation:
        i = bisect.bisect_right(self.allocations, alloc.base, key=lambda a: a.base)
        self.allocations.insert(i, alloc)
        self.bases = np.insert(self.bases, i, np.uint64(alloc.base))
        self.ends = np.insert(self.ends, i, np.uint64(alloc.end))
        self.shifts = np.insert(self.shifts, i, np.uint64(alloc.shift))
        self._by_canonical = None
        return alloc

    def remove(self, alloc: Allocation) -> None:
        """Take `alloc` out of the table (an unmapped range): its addresses are in no allocation again."""
        i = bisect.bisect_left(self.allocations, alloc.base, key=lambda a: a.base)
        while self.allocations[i] is not alloc:  # allocations of no bytes may share a base
            i += 1
        del self.allocations[i]
        self.bases, self.ends, self.shifts = (np.delete(a, i) for a in (self.bases, self.ends, self.shifts))
        self._by_canonical = None

    def contiguous_end(self, alloc: Allocation) -> int:
        """The end of `alloc` and of the allocations that follow it with no gap (only allocations mapped side by side
        in reserved address space do: `insert`), through which one copy may run as through one range."""
        i = bisect.bisect_right(self.allocations, alloc.base, key=lambda a: a.base)
        end = alloc.end
        while i < len(self.allocations) and self.allocations[i].base == end:
            end = self.allocations[i].end
            i += 1
        return end

    @property
    def span(self) -> int:
        """Bytes from the region base to the end of the last allocation, unbacked spread left out (the backing
        store's size)."""
        return self.top - self.region_base - self._spread

    def canonical(self, addrs: np.ndarray) -> np.ndarray:
        """The canonical address of each address of an allocation (the address less its allocation's shift)."""
        if not self.shift or not len(self.bases):  # (every allocation shifted apart may have been freed)
            return addrs
        i = np.maximum(np.searchsorted(self.bases, addrs, side="right") - 1, 0)
        return addrs - self.shifts[i]

    def holding_all(self, addrs: np.ndarray, size: int) -> int | None:
        """The index of the one allocation holding every [addr, addr+size) of `addrs`, when one does.

        The common access (a warp or a whole group reading one array) needs two reductions here, not a search
        per address (`contains`, `canonical`)."""
        if not len(addrs) or not len(self.bases):
            return None
        low, high = int(addrs.min()), int(addrs.max())
        i = int(np.searchsorted(self.bases, np.uint64(low), side="right")) - 1
        return i if i >= 0 and high + size <= int(self.ends[i]) else None

    def find_canonical(self, canonical: int) -> Allocation | None:
        """The allocation holding the byte at canonical address `canonical`, if any.

        Canonical bases rise with addresses but where `insert` placed allocations out of their bytes' order
        (`runtime.spread`), so the allocations are searched in an order of their own, sorted when first needed."""
        if self._by_canonical is None:
            self._by_canonical = sorted(self.allocations, key=lambda a: a.canonical_base)
        by_canonical = self._by_canonical
        i = bisect.bisect_right(by_canonical, canonical, key=lambda a: a.canonical_base) - 1
        if i >= 0 and canonical < by_canonical[i].canonical_base + by_canonical[i].size:
            return by_canonical[i]
        return None

    def contains(self, addrs: np.ndarray, size: int) -> np.ndarray:
        """Whether [addr, addr+size) lies inside one allocation, per address."""
        if not self.allocations:
            return np.zeros(addrs.shape, dtype=np.bool_)
        i = np.searchsorted(self.bases, addrs, side="right") - 1
        ok = i >= 0
        i = np.maximum(i, 0)
        # addr + size <= end, written so it cannot wrap around for huge addresses
        ends = self.ends[i]
        return ok & (ends >= np.uint64(size)) & (addrs <= ends - np.uint64(size))

    def find(self, address: int) -> Allocation | None:
        """The allocation holding byte `address`, if any."""
        i = bisect.bisect_right(self.allocations, address, key=lambda a: a.base) - 1
        if i >= 0 and address < self.allocations[i].end:
            return self.allocations[i]
        return None

    def nearest(self, address: int) -> Nearest | None:
        """The allocation closest to an access starting at `address`, and how far it is."""
        i = bisect.bisect_right(self.allocations, address, key=lambda a: a.base) - 1
        return nearest_of(self.allocations[max(i, 0) : i + 2], address)


# --------------------------------------------------------------------------
# Shared memory
# --------------------------------------------------------------------------


class SharedLayout:
    """The per-block shared memory layout: named static variables, then the dynamic area.

    Every `extern .shared` array (size 0) aliases the start of the dynamic
    area, which holds `dynamic_bytes` bytes (the launch's `--shared-bytes`).
    """

    def __init__(self, variables: list[tuple[str, int, int]], dynamic_bytes: int):
        self.offsets: dict[str, int] = {}
        self.variables: list[Allocation] = []
        top = 0
        extern: list[tuple[str, int]] = []
        for name, size, align in variables:
            align = max(int(align or 1), 1)
            if size == 0:
                extern.append((name, align))
                continue
            base = align_up(top, align)
            self.offsets[name] = base
            self.variables.append(Allocation(name, base, size, Space.SHARED))
            top = base + size
        dyn_align = max([STORE_ALIGN] + [a for _, a in extern])
        self.dynamic_base = align_up(top, dyn_align) if (extern or dynamic_bytes) else top
        for name, _ in extern:
            self.offsets[name] = self.dynamic_base
        self.dynamic = Allocation(
            "/".join(n for n, _ in extern) or "dynamic shared memory", self.dynamic_base, dynamic_bytes, Space.SHARED
        )
        self._has_dynamic = bool(extern or dynamic_bytes)
        self.size = self.dynamic_base + dynamic_bytes
        self.stride = align_up(self.size, STORE_ALIGN)

    def allocations(self) -> list[Allocation]:
        """Static variables and (if it has any bytes or extern names) the dynamic area, by offset."""
        out = list(self.variables)
        if self._has_dynamic:
            out.append(self.dynamic)
        return out

    def find(self, offset: int) -> Allocation | None:
        for a in self.allocations():
            if a.base <= offset < a.end:
                return a
        return None

    def nearest(self, offset: int) -> Nearest | None:
        """Nearest variable to an out-of-range offset (the whole block's shared memory if none is declared)."""
        allocs = self.allocations() or [Allocation("shared memory", 0, self.size, Space.SHARED)]
        return nearest_of(allocs, offset)
