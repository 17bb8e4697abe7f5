"""`Memory`: the backing stores of every state space, and vectorised load, store and atomic on them.

Each space has one flat `np.uint8` array: the global and const regions (from
their region base to the end of their last allocation, capacity grown
geometrically), the param buffer, shared memory as `nblocks` rows of
`shared_stride` bytes, local memory as `nthreads` rows of `local_stride`
bytes (the blocks and threads of the wave that runs, `enter_wave`, whose
canonical addresses still carry their ids in the launch). An `Access`
carries byte indices into these arrays; since every performed access is
naturally aligned (and strides and region bases are multiples of 16), loads
and stores index a typed view (`store.view(np.uint32)`) instead of gathering
bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.ptx.ir import AddressOf, type_size
from gpurace.limits import LimitExceeded, Limits, format_size
from gpurace.sim.memory import atomics
from gpurace.sim.memory.access import Access, SpaceLimits, resolve
from gpurace.sim.memory.floats import FLOAT_OF_TYPE, UINT_OF_SIZE, f32_to_bf16
from gpurace.sim.memory.layout import (
    AUTO_BUFFER_BYTES,
    AUTO_GUARD_BYTES,
    AUTO_SPREAD_BYTES,
    CANON_LOCAL_TAG,
    CANON_OFFSET_MASK,
    CANON_OWNER_MASK,
    CANON_OWNER_SHIFT,
    CANON_SHARED_TAG,
    CANON_TAG_MASK,
    CONST_BASE,
    CONST_LIMIT,
    FUNCTION_BASE,
    FUNCTION_STRIDE,
    GLOBAL_BASE,
    GLOBAL_LIMIT,
    MAX_LOCAL_BYTES_PER_THREAD,
    PAGE_SIZE,
    PARAM_BASE,
    STORE_ALIGN,
    WINDOW_SIZE,
    Allocation,
    AllocationTable,
    ErrorKind,
    Location,
    Nearest,
    SharedLayout,
    Space,
    align_up,
    from_generic,
    nearest_of,
    space_of,
    to_generic,
)

LOCAL_NAME = "local memory"
PARAMS_NAME = "kernel parameters"


@dataclass
class DeviceMemory:
    """Global and constant memory that outlives one launch: a whole program's device under `gpurace exec`.

    The stores are the arenas the program's host code shares (`store[0]` is
    the byte at the table's base); the tables hold every allocation and
    module variable, placed by the runtime, never by a launch; `symbols` are
    the kernel's module variables by PTX name; `textures` the program's live
    texture and surface objects by handle (`sim.textures`).
    """

    global_table: AllocationTable
    global_store: np.ndarray
    const_table: AllocationTable
    const_store: np.ndarray
    symbols: dict[str, tuple[Space, int]]
    textures: dict[int, object] = field(default_factory=dict)

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """A copy of every byte placed so far, for `restore` (each schedule of a launch starts from the same memory)."""
        return tuple(store[: table.top - table.region_base].copy() for table, store in self.spaces())  # type: ignore[return-value]

    def restore(self, saved: tuple[np.ndarray, np.ndarray]) -> None:
        for (_table, store), data in zip(self.spaces(), saved):
            store[: len(data)] = data

    def spaces(self):
        """(table, store) of global and then constant memory."""
        return ((self.global_table, self.global_store), (self.const_table, self.const_store))


class Memory:
    """All memory of one kernel launch (see the package docstring for the address model).

    `limits.max_memory` bounds the local memory that calls grow during the run
    (the launch checks everything else before it creates the Memory). With a
    `device`, global and constant memory are the device's, allocations and
    all, and the launch places none of its own.
    """

    def __init__(
        self,
        nblocks: int,
        block_size: int,
        *,
        dynamic_shared_bytes: int = 0,
        limits: Limits | None = None,
        device: DeviceMemory | None = None,
        rank_block: np.ndarray | None = None,
    ):
        self.limits = limits or Limits()
        self.nblocks = nblocks
        # the block of each rank of each block's cluster, for distributed shared memory (`sim.clusters`)
        self.rank_block = np.arange(nblocks, dtype=np.int64)[:, None] if rank_block is None else rank_block
        self.block_size = block_size
        self.nthreads = nblocks * block_size
        self.block_base = 0  # the launch's id of block 0 of the shared store, and of thread 0 of the local one
        self.thread_base = 0
        self.dynamic_shared_bytes = dynamic_shared_bytes
        self.device = device
        # texture and surface objects by handle: the program's under `exec`, those `--arg tex:`/`surf:` made under check
        self.textures: dict[int, object] = device.textures if device is not None else {}
        self._tables = {
            Space.GLOBAL: AllocationTable(GLOBAL_BASE, GLOBAL_LIMIT, Space.GLOBAL),
            Space.CONST: AllocationTable(CONST_BASE, CONST_LIMIT, Space.CONST),
        }
        self._stores: dict[Space, np.ndarray] = {s: np.zeros(0, dtype=np.uint8) for s in Space if s not in (Space.GENERIC, Space.SHARED_CLUSTER)}
        self._symbols: dict[str, tuple[Space, int]] = {}
        self.functions: dict[str, int] = {}
        """The address of each device function of the module (`layout.function_addresses`), for initializers."""
        if device is not None:
            self._tables = {Space.GLOBAL: device.global_table, Space.CONST: device.const_table}
            self._stores[Space.GLOBAL] = device.global_store
            self._stores[Space.CONST] = device.const_store
            self._symbols.update(device.symbols)
        self._shared_defined = False
        self.shared = SharedLayout([], dynamic_shared_bytes)
        self._stores[Space.SHARED] = np.zeros(nblocks * self.shared.stride, dtype=np.uint8)
        self.local_size = 0
        self._local_stride = 0
        self._param_symbols: list[tuple[int, str]] = []
        self.param_size = 0
        self._automatic: list[Allocation] = []

    # ----------------------------------------------------------------------
    # Setting up
    # ----------------------------------------------------------------------

    def allocate_global(
        self,
        name: str,
        nbytes: int,
        *,
        init: bytes | np.ndarray | None = None,
        const: bool = False,
        align: int = 256,
        symbol: bool = True,
        isolated: bool = False,
    ) -> Allocation:
        """Place a global (or, with `const`, a `.const`) allocation and optionally fill it.

        `symbol` registers `name` for `symbol()` (module-scope PTX variables);
        pass False for buffers made for kernel arguments, whose names are only
        for reports and may repeat. An `isolated` global buffer (a kernel
        argument's) is placed as automatic buffers are, after AUTO_SPREAD_BYTES
        of unbacked address space, so that an out-of-bounds access through it
        lands in no other allocation and is reported as out of bounds, never as
        an access to (or a race on) a neighbour; the detectors' canonical
        addresses leave the spread out.
        """
        space = Space.CONST if const else Space.GLOBAL
        if self.device is not None:
            raise RuntimeError("a launch on a device's memory places no allocations: the runtime does")
        if self._automatic and space is Space.GLOBAL:
            raise RuntimeError("global allocations must be placed before the automatic buffers")
        spread = AUTO_SPREAD_BYTES if isolated and space is Space.GLOBAL else 0
        alloc = self._tables[space].place(name, nbytes, align, spread=spread)
        self._grow_region(space)
        if symbol:
            if name in self._symbols:
                raise UserError(f"symbol {name!r} is defined twice")
            self._symbols[name] = (space, alloc.base)
        if init is not None:
            self.write(alloc, init)
        return alloc

    def allocate_automatic(self, names: list[str]) -> list[Allocation]:
        """Place one zero-filled automatic buffer of AUTO_BUFFER_BYTES per name, after every other global allocation.

        Each is preceded by AUTO_GUARD_BYTES of unallocated space, and by AUTO_SPREAD_BYTES of unbacked address
        space before that, so that no out-of-bounds access reaches another allocation. The backing
        store is grown once for all of them and never copied afterwards (no
        global allocation may follow): `np.zeros` maps its memory on demand, so
        only the pages the kernel touches are ever committed.
        """
        if self._automatic:
            raise RuntimeError("allocate_automatic() must be called once per launch")
        table = self._tables[Space.GLOBAL]
        room = (table.region_limit - table.top) // (AUTO_SPREAD_BYTES + AUTO_GUARD_BYTES + AUTO_BUFFER_BYTES)
        if len(names) > room:
            raise UserError(
                f"{len(names)} automatic buffers do not fit in the simulated address space, which holds {room}: "
                "give some of the pointers buffers of their own (--arg buf:COUNT)"
            )
        allocs = [
            table.place(name, AUTO_BUFFER_BYTES, PAGE_SIZE, gap=AUTO_GUARD_BYTES, spread=AUTO_SPREAD_BYTES) for name in names
        ]
        self._grow_region(Space.GLOBAL)
        self._automatic = allocs
        return allocs

    def global_allocations(self) -> list[Allocation]:
        """Every global allocation (argument buffers, `__device__` variables, automatic buffers), in address order."""
        return list(self._tables[Space.GLOBAL].allocations)

    def _grow_region(self, space: Space) -> None:
        table = self._tables[space]
        need = align_up(table.span, STORE_ALIGN)
        store = self._stores[space]
        if need > len(store):
            grown = np.zeros(max(need, 2 * len(store)), dtype=np.uint8)
            grown[: len(store)] = store
            self._stores[space] = grown

    def define_shared(self, variables: list[tuple[str, int, int]]) -> dict[str, int]:
        """Lay out the block's shared variables (name, size, align); size-0 (extern) arrays alias the dynamic area.

        Call once, before running; returns each variable's shared offset.
        """
        if self._shared_defined:
            raise RuntimeError("define_shared() must be called once per launch")
        self._shared_defined = True
        self.shared = SharedLayout(variables, self.dynamic_shared_bytes)
        if self.shared.size > WINDOW_SIZE:
            raise UserError(f"shared memory of {self.shared.size} bytes per block does not fit the shared window")
        self._stores[Space.SHARED] = np.zeros(0, dtype=np.uint8)  # let the old store go before the new one is made
        self._stores[Space.SHARED] = np.zeros(self.nblocks * self.shared.stride, dtype=np.uint8)
        for name, offset in self.shared.offsets.items():
            self._symbols[name] = (Space.SHARED, offset)
        return dict(self.shared.offsets)

    def set_params(self, buffer: bytes, symbols: dict[str, int]) -> None:
        """Set the kernel parameter buffer and each parameter's offset in it."""
        self.param_size = len(buffer)
        store = np.zeros(align_up(len(buffer), STORE_ALIGN), dtype=np.uint8)
        store[: len(buffer)] = np.frombuffer(bytes(buffer), dtype=np.uint8)
        self._stores[Space.PARAM] = store
        for name, offset in symbols.items():
            self._symbols[name] = (Space.PARAM, offset)
        self._param_symbols = sorted((off, name) for name, off in symbols.items())

    def ensure_local(self, nbytes: int) -> None:
        """Grow every thread's local memory to at least `nbytes`, keeping its contents (call frames, recursion).

        More than a GPU allows per thread (MAX_LOCAL_BYTES_PER_THREAD), or
        more than the memory budget for all threads, is a LimitExceeded.
        """
        if nbytes <= self.local_size:
            return
        if nbytes > MAX_LOCAL_BYTES_PER_THREAD:
            raise LimitExceeded(
                f"local memory of {format_size(nbytes)} per thread (local arrays, spills and call frames) is more "
                f"than the {format_size(MAX_LOCAL_BYTES_PER_THREAD)} per thread a GPU allows"
            )
        stride = align_up(nbytes, STORE_ALIGN)
        if stride > self._local_stride:
            stride = max(stride, min(2 * self._local_stride, MAX_LOCAL_BYTES_PER_THREAD))
            self.limits.check_memory(
                self.nthreads * stride, f"local memory of {self.nthreads:,} threads x {format_size(stride)}"
            )
            grown = np.zeros((self.nthreads, stride), dtype=np.uint8)
            if self._local_stride:
                grown[:, : self._local_stride] = self._stores[Space.LOCAL].reshape(self.nthreads, self._local_stride)
            self._stores[Space.LOCAL] = grown.reshape(-1)
            self._local_stride = stride
        self.local_size = nbytes

    def enter_wave(self, first_block: int, nblocks: int) -> None:
        """Make shared and local memory those of a wave of blocks (`sim.waves`): blocks `first_block` onwards.

        The stores are the wave's size and start zeroed, as a block's shared
        and local memory start undefined; canonical addresses keep the launch's
        block and thread ids, so that detectors tell every block of the
        launch apart.
        """
        self.block_base, self.nblocks = first_block, nblocks
        self.thread_base, self.nthreads = first_block * self.block_size, nblocks * self.block_size
        self.rank_block = np.arange(nblocks, dtype=np.int64)[:, None]
        self._stores[Space.SHARED] = np.zeros(0, dtype=np.uint8)  # let the old stores go before the new ones are made
        self._stores[Space.LOCAL] = np.zeros(0, dtype=np.uint8)
        self._stores[Space.SHARED] = np.zeros(nblocks * self.shared.stride, dtype=np.uint8)
        self._stores[Space.LOCAL] = np.zeros(self.nthreads * self._local_stride, dtype=np.uint8)

    def symbol(self, name: str) -> tuple[Space, int]:
        """The space and space address of a global, const, shared or param symbol."""
        try:
            return self._symbols[name]
        except KeyError:
            raise UserError(f"unknown symbol {name!r}") from None

    def relocate_symbol(self, name: str, address: int) -> None:
        """Give symbol `name` the space address `address` from now on (initializers written afterwards hold it):
        where `gpurace exec` addresses a variable whose bytes this memory placed (`runtime.device`)."""
        space, _ = self.symbol(name)
        self._symbols[name] = (space, address)

    def write_initializer(self, alloc: Allocation, ptx_type: str, values) -> None:
        """Fill `alloc` from a PTX initializer: ints, floats and `AddressOf` entries, in element order.

        Ints wrap to the element width; a number for a float type is converted
        numerically; an `AddressOf` is its symbol's space address (generic
        address for `generic(sym)`) plus offset. Elements past the values stay 0.
        """
        size = type_size(ptx_type)
        for v in values:
            if isinstance(v, AddressOf) and v.symbol not in self._symbols and v.symbol not in self.functions:
                raise UserError(
                    f"the initial value of device variable {alloc.name!r} holds the address of {v.symbol!r}, "
                    "which the PTX does not declare"
                )
        data = b"".join(self._encode(ptx_type, size, v) for v in values)
        if len(data) > alloc.size:
            raise UserError(f"initializer of {alloc.name!r} has {len(data)} bytes, the variable only {alloc.size}")
        self.write(alloc, data)

    def _encode(self, ptx_type: str, size: int, value) -> bytes:
        if isinstance(value, AddressOf) and value.symbol in self.functions:
            value = self.functions[value.symbol] + value.offset
        elif isinstance(value, AddressOf):
            space, addr = self.symbol(value.symbol)
            if value.generic:
                addr = int(to_generic(space, np.array([addr]))[0])
            value = addr + value.offset
        if ptx_type in FLOAT_OF_TYPE:
            return np.array([value], dtype=FLOAT_OF_TYPE[ptx_type]).tobytes()
        if ptx_type == "bf16":
            return f32_to_bf16(np.array([value], dtype=np.float32)).tobytes()
        if not isinstance(value, int):
            raise UserError(f"initializer value {value!r} is not an integer for type .{ptx_type}")
        return (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    # ----------------------------------------------------------------------
    # Direct access to allocations (setting up arguments, reading results)
    # ----------------------------------------------------------------------

    def _slice(self, alloc: Allocation) -> np.ndarray:
        if alloc.space in (Space.GLOBAL, Space.CONST):
            start = alloc.canonical_base - self._tables[alloc.space].region_base
            return self._stores[alloc.space][start : start + alloc.size]
        raise ValueError(f"{alloc.space.name.lower()} allocations are not directly addressable")

    def write(self, alloc: Allocation, data: bytes | np.ndarray, offset: int = 0) -> None:
        """Copy raw bytes (or an array's bytes) into a global/const allocation."""
        raw = np.frombuffer(data if isinstance(data, bytes | bytearray) else np.ascontiguousarray(data).tobytes(), np.uint8)
        if offset + len(raw) > alloc.size:
            raise UserError(f"{len(raw)} bytes at offset {offset} do not fit {alloc.name!r} ({alloc.size} bytes)")
        self._slice(alloc)[offset : offset + len(raw)] = raw

    def read(self, alloc: Allocation, nbytes: int | None = None) -> bytes:
        """The current contents of a global/const allocation, or of its first `nbytes` bytes."""
        data = self._slice(alloc)
        return (data if nbytes is None else data[:nbytes]).tobytes()

    def shared_bytes(self, block: int) -> bytes:
        """The current contents of one block's shared memory (of the wave that runs)."""
        stride = self.shared.stride
        return self._stores[Space.SHARED][block * stride : block * stride + self.shared.size].tobytes()

    # ----------------------------------------------------------------------
    # The hot path
    # ----------------------------------------------------------------------

    def resolve(
        self,
        space: Space,
        addrs: np.ndarray,
        threads: np.ndarray,
        blocks: np.ndarray,
        size: int,
        *,
        write: bool = False,
        owned: bool = False,
    ) -> Access:
        """Resolve the addresses of one memory instruction (see `Access`).

        `space` is the instruction's state space; `threads` the global linear
        ids and `blocks` the block index of each lane; `size` the access size
        in bytes (element size x vector width); `write` marks stores and
        atomics, which fail on const and param memory; `owned` says that
        `addrs` is a uint64 array made for this call, which the `Access` may
        keep instead of a copy.
        """
        return resolve(space, addrs, threads, blocks, size, write, self.space_limits(), owned)

    def space_limits(self) -> SpaceLimits:
        """What resolution needs to know about the memory's shape now (it changes as allocations and local memory grow)."""
        return SpaceLimits(
            self._tables[Space.GLOBAL],
            self._tables[Space.CONST],
            self.shared.size,
            self.shared.stride,
            self.local_size,
            self._local_stride,
            self.param_size,
            self.rank_block,
            self.block_base,
            self.thread_base,
        )

    def backing(self, space: Space) -> np.ndarray:
        """The flat byte store of `space` as it is now, indexed as `Access.index` says (the compiling executor reads
        and writes it directly; a store is replaced when its memory grows, so ask again after)."""
        return self._stores[space]

    def _lanes_by_space(self, acc: Access):
        """(space, lanes) for the ok lanes of an access; lanes is None when it means all lanes."""
        if acc.uniform_space is not None and acc.all_ok:
            return [(acc.uniform_space, None)]
        ok = acc.ok
        if acc.uniform_space is not None:
            return [(acc.uniform_space, np.flatnonzero(ok))]
        return [(Space(s), np.flatnonzero(ok & (acc.space == s))) for s in np.unique(acc.space[ok])]

    @staticmethod
    def _shape(acc: Access, elem_size: int, count: int) -> tuple[int, int, np.dtype]:
        if acc.size != elem_size * count:
            raise ValueError(f"access resolved for {acc.size} bytes used with {count} x {elem_size}-byte elements")
        if elem_size == 16:
            return 8, 2 * count, np.dtype(np.uint64)
        return elem_size, count, np.dtype(UINT_OF_SIZE[elem_size])

    def load(self, acc: Access, elem_size: int, count: int = 1) -> np.ndarray:
        """Raw little-endian values: shape (N,) or (N, count); 16-byte elements as (N, 2) or (N, count, 2) uint64.

        Lanes whose access is not ok read 0.
        """
        esz, cnt, dtype = self._shape(acc, elem_size, count)
        n = len(acc)
        out = None
        for space, lanes in self._lanes_by_space(acc):
            view = self._stores[space].view(dtype)
            ei = acc.index // esz if lanes is None else acc.index[lanes] // esz
            vals = view[ei] if cnt == 1 else view[ei[:, None] + np.arange(cnt)]
            if lanes is None:
                out = vals
            else:
                if out is None:
                    out = np.zeros((n,) if cnt == 1 else (n, cnt), dtype=dtype)
                out[lanes] = vals
        if out is None:
            out = np.zeros((n,) if cnt == 1 else (n, cnt), dtype=dtype)
        if elem_size == 16:
            out = out.reshape(n, 2) if count == 1 else out.reshape(n, count, 2)
        return out

    def store(self, acc: Access, elem_size: int, vals: np.ndarray) -> None:
        """Write raw values (shaped as `load` returns them); lanes whose access is not ok are skipped.

        Lanes take effect in batch order, so when several write the same
        address the last lane of the batch (the highest thread) wins.
        """
        count = acc.size // elem_size
        esz, cnt, dtype = self._shape(acc, elem_size, count)
        n = len(acc)
        vals = np.asarray(vals).reshape(n, cnt) if cnt > 1 else np.asarray(vals).reshape(n)
        vals = vals.astype(dtype, copy=False)
        for space, lanes in self._lanes_by_space(acc):
            view = self._stores[space].view(dtype)
            ei = acc.index // esz if lanes is None else acc.index[lanes] // esz
            v = vals if lanes is None else vals[lanes]
            keep = _last_writers(ei)
            if keep is not None:
                ei, v = ei[keep], v[keep]
            if cnt == 1:
                view[ei] = v
            else:
                view[ei[:, None] + np.arange(cnt)] = v

    def atomic(self, acc: Access, op: str, ptx_type: str, a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
        """Atomic `op` on every ok lane, one lane at a time in batch order; returns each lane's old raw value (0 where not ok).

        `a` is the operand (compare value for `cas`, bound for `inc`/`dec`),
        `b` the new value for `cas`; both raw bits of the element width.
        """
        esz = type_size(ptx_type)
        if acc.size != esz:
            raise ValueError(f"access resolved for {acc.size} bytes used by a {esz}-byte atomic")
        dtype = np.dtype(UINT_OF_SIZE[esz])
        n = len(acc)
        a = np.broadcast_to(np.asarray(a), (n,))
        b = None if b is None else np.broadcast_to(np.asarray(b), (n,))
        out = np.zeros(n, dtype=dtype)
        for space, lanes in self._lanes_by_space(acc):
            view = self._stores[space].view(dtype)
            sel = slice(None) if lanes is None else lanes
            out[sel] = atomics.apply(view, acc.index[sel] // esz, op, ptx_type, a[sel], None if b is None else b[sel])
        return out

    def bytes_at(self, canonical: np.ndarray) -> np.ndarray:
        """The byte (uint8) now at each shared or global canonical address that a performed access touched.

        Stores reach the detectors before they take effect, so a detector
        reading here during a store's event sees what the last earlier write
        left: the race detectors compare it with the store's own value to
        tell same-value write-write races apart.
        """
        c = np.asarray(canonical, dtype=np.uint64)
        out = np.empty(len(c), dtype=np.uint8)
        shared = (c & np.uint64(CANON_TAG_MASK)) == np.uint64(CANON_SHARED_TAG)
        if shared.any():
            s = c[shared]
            owner = ((s >> np.uint64(CANON_OWNER_SHIFT)) & np.uint64(CANON_OWNER_MASK)).astype(np.int64) - self.block_base
            out[shared] = self._stores[Space.SHARED][owner * self.shared.stride + (s & np.uint64(CANON_OFFSET_MASK)).astype(np.int64)]
        if not shared.all():
            out[~shared] = self._stores[Space.GLOBAL][(c[~shared] - np.uint64(GLOBAL_BASE)).astype(np.int64)]
        return out

    # ----------------------------------------------------------------------
    # Addresses, for the engine and for reports
    # ----------------------------------------------------------------------

    space_of = staticmethod(space_of)
    to_generic = staticmethod(to_generic)
    from_generic = staticmethod(from_generic)

    def _params_allocation(self) -> Allocation:
        return Allocation(PARAMS_NAME, 0, self.param_size, Space.PARAM)

    def describe(self, canonical: int) -> Location:
        """(space, allocation name, offset in it) of a canonical address; name None where no allocation holds it."""
        c = int(canonical)
        tag = c & CANON_TAG_MASK
        offset = c & CANON_OFFSET_MASK
        if tag == CANON_SHARED_TAG:
            a = self.shared.find(offset)
            return Location(Space.SHARED, a.name, offset - a.base) if a else Location(Space.SHARED, None, offset)
        if tag == CANON_LOCAL_TAG:
            return Location(Space.LOCAL, LOCAL_NAME, offset)
        if PARAM_BASE <= c < PARAM_BASE + WINDOW_SIZE:
            off = c - PARAM_BASE
            named = [(o, n) for o, n in self._param_symbols if o <= off]
            if named:
                return Location(Space.PARAM, named[-1][1], off - named[-1][0])
            return Location(Space.PARAM, PARAMS_NAME, off)
        space = Space.CONST if CONST_BASE <= c < CONST_LIMIT else Space.GLOBAL
        a = self._tables[space].find_canonical(c)
        return Location(space, a.name, c - a.canonical_base) if a else Location(space, None, c)

    def owner_of(self, canonical: int) -> int | None:
        """The block (shared) or thread (local) a canonical address belongs to; None for launch-wide memory."""
        c = int(canonical)
        if c & CANON_TAG_MASK in (CANON_SHARED_TAG, CANON_LOCAL_TAG):
            return (c >> CANON_OWNER_SHIFT) & CANON_OWNER_MASK
        return None

    def nearest(self, address: int, space: Space = Space.GENERIC) -> Nearest | None:
        """The allocation nearest to an access at `address` (generic, or a `space` address), for out-of-bounds reports."""
        address = int(address)
        if space is Space.GENERIC:
            space = Space(int(space_of(np.array([address], dtype=np.uint64))[0]))
            if space not in (Space.GLOBAL, Space.CONST):
                address = int(from_generic(space, np.array([address], dtype=np.uint64))[0])
        if space is Space.SHARED:
            return self.shared.nearest(address)
        if space is Space.LOCAL:
            return nearest_of([Allocation(LOCAL_NAME, 0, self.local_size, Space.LOCAL)], address)
        if space is Space.PARAM:
            return nearest_of([self._params_allocation()], address)
        return self._tables[space].nearest(address)

    def describe_error(self, acc: Access, lane: int) -> str:
        """A one-line explanation of why lane `lane` of `acc` was not performed (for the finding's message)."""
        kind = ErrorKind(int(acc.error[lane]))
        space = Space(int(acc.space[lane]))
        where = f"{acc.size}-byte {space.name.lower()} access at 0x{int(acc.address[lane]):x}"
        if kind is ErrorKind.MISALIGNED:
            return f"misaligned {where} (needs {acc.size}-byte alignment)"
        if kind is ErrorKind.WRITE_TO_CONST:
            loc = self.describe(int(acc.canonical[lane]))
            return f"write to read-only {space.name.lower()} memory `{loc.allocation}` by {where}"
        functions_end = FUNCTION_BASE + FUNCTION_STRIDE * len(self.functions)
        if kind is ErrorKind.OUT_OF_BOUNDS and space is Space.GLOBAL and FUNCTION_BASE <= int(acc.address[lane]) < functions_end:
            return f"out-of-bounds {where}: among device function addresses (a function pointer used as a data pointer)"
        if kind is ErrorKind.OUT_OF_BOUNDS:
            near = self.nearest(int(acc.space_address[lane]), space)
            return f"out-of-bounds {where}: " + (near.text() if near else "no allocation in this space")
        return f"{where} is in bounds"


def _last_writers(ei: np.ndarray) -> np.ndarray | None:
    """Positions to keep so that each element index is written once, by its last lane in batch order.

    None when the indices are already distinct (the common, coalesced case is
    detected in O(N) without sorting).
    """
    if len(ei) < 2:
        return None
    before, after = ei[:-1], ei[1:]
    if (after > before).all():  # a comparison, not a difference: a byte per lane instead of eight
        return None
    if (after >= before).all():
        return np.flatnonzero(np.append(after != before, True))
    order = np.argsort(ei, kind="stable")
    s = ei[order]
    last = np.append(s[1:] != s[:-1], True)
    return order[last]
