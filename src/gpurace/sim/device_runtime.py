"""CUDA Dynamic Parallelism: the device runtime's calls (`cudadevrt`) as a kernel makes them.

A launch in device code (`child<<<grid, block, smem, stream>>>(args)`) is
compiled by nvcc into `cudaGetParameterBufferV2(kernel, grid, block, smem)`,
stores of the arguments into the buffer it returns, and
`cudaLaunchDeviceV2(buffer, stream)`; CUDA 12 and later name the calls
`__cudaCDP2GetParameterBufferV2` and so on, and both spellings are accepted
(`cudaLaunchDevice(kernel, buffer, grid, block, smem, stream)` with
`cudaGetParameterBuffer(alignment, size)` too).

The parameter buffer lies in the launching thread's own local memory, above
its current call frame: no other thread can reach it, so filling it is no
shared access, and nvcc emits nothing but the argument stores between the two
calls. The launch records a `DeviceLaunch` with the `DeviceLaunchLog` that
watches the run (one per grid, given by `gpurace exec`): the kernel, its
configuration, the argument bytes as they are at that moment, the stream,
and where in the parent's run it happened. The child grids run after their
parent's run has ended (`runtime.child_grids`), which also works out their
ordering with the parent and with each other.

The log also keeps the parent's global memory accesses, each with its
thread's count of completed barriers and, when a happens-before detector
watches the run, its clocks (`detect.hb`: `stamps`, `ordered_before`); from
them `before_launch` tells which accesses a child is guaranteed to see: the
launching thread's own earlier ones, and those that the detector orders
before the launch (barriers, warp syncs, release and acquire patterns), or,
without such a detector, those of its block that a barrier before the launch
orders.

`malloc`/`free` and `cudaMalloc`/`cudaFree` allocate from the device heap the
log gives (`runtime.device` places it): a bump allocator whose state lies in
the heap's first bytes, so that each schedule of a launch, starting from the
same memory, allocates the same addresses. `cudaGetLastError` and
`cudaPeekAtLastError` return the thread's last launch or allocation error;
`cudaStreamCreateWithFlags` (with `cudaStreamNonBlocking`, as CUDA requires
in device code) and `cudaStreamDestroy` give and take stream handles. Every
other device runtime call is refused by name. A kernel run without a log
(`gpurace check`) refuses device-side launches and allocations: they need
the whole program, which `gpurace exec` has.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from gpurace.errors import UserError
from gpurace.frontend.compile import DEVICE_SYNCHRONIZE_REMOVED
from gpurace.frontend.kernels import param_layout
from gpurace.sim.events import AccessBatch, Event, SyncEvent
from gpurace.sim.geometry import MAX_BLOCK_DIMS, MAX_GRID_DIMS, MAX_THREADS_PER_BLOCK
from gpurace.sim.memory.layout import LOCAL_WINDOW, MAX_LOCAL_BYTES_PER_THREAD, Allocation, Space, align_up

CDP2_PREFIX = "__cudaCDP2"

MAX_DEPTH = 24
"""The deepest nesting of device launches CUDA allows (the host's grid is depth 0)."""
MAX_PENDING_LAUNCHES = 2048
"""`cudaLimitDevRuntimePendingLaunchCount`'s default: launches one grid may have waiting to run."""
MAX_LOGGED_ACCESSES = 1 << 22
"""Parent accesses kept for ordering children against (thread lanes); past it fewer races are seen, never false ones."""

NULL_STREAM, TAIL_LAUNCH, FIRE_AND_FORGET = 0, 3, 4
"""Stream handles of device code: the block's implicit NULL stream, `cudaStreamTailLaunch`, `cudaStreamFireAndForget`."""
FIRST_CREATED_STREAM = 0x100
STREAM_NON_BLOCKING = 1

SUCCESS, INVALID_VALUE, MEMORY_ALLOCATION, INVALID_CONFIGURATION = 0, 1, 2, 9
MAX_DEPTH_EXCEEDED, PENDING_COUNT_EXCEEDED, INVALID_DEVICE_FUNCTION = 65, 69, 98
"""`cudaError_t` values the device runtime returns."""

SUPPORTED = frozenset(
    {
        "GetParameterBufferV2",
        "GetParameterBuffer",
        "LaunchDeviceV2",
        "LaunchDevice",
        "GetLastError",
        "PeekAtLastError",
        "StreamCreateWithFlags",
        "StreamDestroy",
        "Malloc",
        "Free",
    }
)
HEAP_CALLS = frozenset({"malloc", "free", "Malloc", "Free"})
"""Calls that allocate from (or give back to) the device heap: C's `malloc`/`free` and the runtime's."""

DEVICE_HEAP_BYTES = 8 << 20
"""`cudaLimitMallocHeapSize`'s default: the device heap kernels' `malloc` and `cudaMalloc` allocate from."""
HEAP_HEADER_BYTES = 16
"""The heap's first bytes: the offset of its next free byte and the bytes freed so far (u64 each). Kept in device
memory, so that every schedule of a launch, which starts from the same memory, allocates the same addresses."""
HEAP_ALIGN = 16

def runtime_call(name: str) -> str | None:
    """The device runtime function a PTX callee names (`__cudaCDP2LaunchDeviceV2`, `cudaLaunchDeviceV2` ->
    `LaunchDeviceV2`), or None when it is none of them."""
    if name.startswith(CDP2_PREFIX):
        return name[len(CDP2_PREFIX):]
    if name.startswith("cuda") and name[4:] in SUPPORTED | {"DeviceSynchronize"}:
        return name[4:]
    return None


def device_call(name: str) -> str | None:
    """What `DeviceRuntime.handler` calls a PTX callee: its `runtime_call` name, or C's `malloc`/`free`."""
    return name if name in ("malloc", "free") else runtime_call(name)


def refusal(name: str) -> str:
    """Why the device runtime call `name` (as `runtime_call` gives it) cannot be simulated."""
    if name == "DeviceSynchronize":
        return DEVICE_SYNCHRONIZE_REMOVED
    return (
        f"device-side cuda{name} is not supported (device code may launch kernels, create and destroy streams, "
        "allocate and free device heap memory and read the last error)"
    )


@dataclass
class DeviceLaunch:
    """One launch made by a thread of a grid: what runs, and where in the parent's run it was made.

    `thread`/`block_id` are the launching thread's and block's ids in its grid, `seq` the last event before the
    launch, `barriers` how many barriers the thread had completed; `stream` the handle it named."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    params: bytes
    stream: int
    thread: int
    block_id: int
    seq: int
    barriers: int
    seen: list[np.ndarray] | None  # per access logged before the launch, the lanes ordered before it (`launch_point`)
    loc: object  # the launch's source line (`SourceLoc`), or None

    @property
    def tail(self) -> bool:
        return self.stream == TAIL_LAUNCH

    def order_key(self) -> tuple | None:
        """Launches with the same key run one after another, in launch order; None: ordered with none (a
        fire-and-forget launch). Streams belong to a block: its implicit NULL stream, and those its threads created
        (using one in another block is undefined behaviour)."""
        if self.stream == FIRE_AND_FORGET:
            return None
        return (self.block_id, self.stream)


@dataclass
class DeviceLaunchLog:
    """Watches one grid's run (the first schedule's, like `detect.footprint.LaunchFootprint`): the launches its
    threads make, and its global memory accesses (see the module docstring); and gives its threads the device heap."""

    depth: int = 0
    heap: Allocation | None = None  # the device heap (`runtime.device`), when kernels of the program allocate
    records: bool = True  # whether kernels of the program launch kernels: only then are accesses kept
    launches: list[DeviceLaunch] = field(default_factory=list)
    complete: bool = True  # every access was kept (see MAX_LOGGED_ACCESSES)
    name = "device-launches"
    first_run_only = True

    def __post_init__(self) -> None:
        self.active = True
        self.ctx = None
        # (global lanes of a batch, their threads' barrier counts, their happens-before stamps or None)
        self.accesses: list[tuple[AccessBatch, np.ndarray, tuple | None]] = []
        self.order = None  # the run's happens-before detector, if it has one (`detect.hb`: stamps, ordered_before)
        self.grids: list = []  # every grid of the tree below, once they ran (`runtime.child_grids.Grid`)
        self._logged = 0
        self._barriers = np.zeros(0, dtype=np.int64)

    def bind(self, ctx) -> None:
        self.active = self.ctx is None
        self.ctx = self.ctx or ctx

    def _counts(self, threads: np.ndarray) -> np.ndarray:
        need = int(threads.max()) + 1 if len(threads) else 0
        if need > len(self._barriers):
            grown = np.zeros(max(need, 2 * len(self._barriers)), dtype=np.int64)
            grown[: len(self._barriers)] = self._barriers
            self._barriers = grown
        return self._barriers

    def on_event(self, ev: Event) -> None:
        if not (self.active and self.records):
            return
        if isinstance(ev, SyncEvent) and ev.kind == "barrier":
            self._counts(ev.threads)[ev.threads] += 1
        elif isinstance(ev, AccessBatch) and self.complete:
            lanes = np.flatnonzero(ev.space == Space.GLOBAL)
            if not len(lanes):
                return
            if self._logged + len(lanes) > MAX_LOGGED_ACCESSES:
                self.complete = False
                return
            self._logged += len(lanes)
            batch = ev if len(lanes) == len(ev.threads) else _lanes_of(ev, lanes)
            stamps = self.order.stamps(batch.threads) if self.order is not None else None
            self.accesses.append((batch, self._counts(batch.threads)[batch.threads].copy(), stamps))

    def launch_point(self, thread: int) -> tuple[int, list[np.ndarray] | None]:
        """Where thread `thread` of the grid stands as it launches: its count of completed barriers, and, with a
        happens-before detector watching, which lanes of each access logged so far happen before this point."""
        barriers = int(self._barriers[thread]) if thread < len(self._barriers) else 0
        if self.order is None:
            return barriers, None
        seen = [self.order.ordered_before(thread, batch.threads, *stamps) for batch, _counts, stamps in self.accesses]
        return barriers, seen

    def before_launch(self, index: int, launches: list[DeviceLaunch]) -> np.ndarray:
        """Which lanes of logged access `index` come before one of `launches` in the parent: the launching thread's
        own earlier accesses, and those that happen before its launch by the detector's clocks (barriers, warp
        syncs, release and acquire patterns), or, without such a detector, its block's accesses before a barrier
        the launching thread completed too."""
        batch, counts, _stamps = self.accesses[index]
        before = np.zeros(len(batch.threads), dtype=np.bool_)
        if self.ctx is None:
            return before
        block_of = self.ctx.geometry.block_of
        for launch in launches:
            before |= (batch.threads == launch.thread) & (batch.seq <= launch.seq)
            if launch.seen is None:
                before |= (block_of[batch.threads] == launch.block_id) & (counts < launch.barriers)
            elif index < len(launch.seen):
                before |= launch.seen[index]
        return before


def _lanes_of(batch: AccessBatch, lanes: np.ndarray) -> AccessBatch:
    """`batch` cut down to `lanes`."""
    pick = {"threads": batch.threads[lanes], "addrs": batch.addrs[lanes], "space": batch.space[lanes]}
    for name in ("values", "stored", "compare"):
        value = getattr(batch, name)
        if value is not None:
            pick[name] = value[lanes]
    return replace(batch, **pick)


def only_lanes(batch: AccessBatch, keep: np.ndarray) -> AccessBatch | None:
    """`batch` with the lanes `keep` marks, or None when it marks none."""
    if keep.all():
        return batch
    return _lanes_of(batch, np.flatnonzero(keep)) if keep.any() else None


class DeviceRuntime:
    """The device runtime of one engine's run: each thread's last error, the streams it created."""

    def __init__(self, eng) -> None:
        self.eng = eng
        self._last_error: np.ndarray | None = None  # made on first use: most kernels never call the device runtime
        self.next_stream = FIRST_CREATED_STREAM
        self._configs: dict[int, tuple] = {}  # thread -> the configuration its latest GetParameterBufferV2 named
        self.log = next((s for s in eng.sinks if isinstance(s, DeviceLaunchLog)), None)
        if self.log is not None and self.log.active:
            self.log.order = next((s for s in eng.sinks if hasattr(s, "ordered_before")), None)

    @property
    def last_error(self) -> np.ndarray:
        """Each thread's last `cudaError_t` (what `cudaGetLastError` returns)."""
        if self._last_error is None:
            self._last_error = np.zeros(self.eng.geo.nthreads, dtype=np.int32)
        return self._last_error

    def handler(self, dec, name: str, rets: list[str], args: list[str]):
        """The handler of a call of device runtime function `name` (`runtime_call`), or of C's `malloc`/`free`."""
        if name not in SUPPORTED | HEAP_CALLS:
            raise UserError(f"{dec.ins.where()}: {refusal(name)}")
        caller = dec.program.functions[dec.fn]
        slots = [caller.params[a] for a in args]
        ret = caller.params[rets[0]] if rets else None
        call = getattr(self, f"_c_{name}" if name in ("malloc", "free") else f"_{name}")(dec, slots, ret)
        nxt = dec.pc + 1

        def step(idx):
            call(idx)
            return nxt

        return step

    # ------------------------------------------------------------------ helpers

    def _arg(self, slot: int, idx: np.ndarray, dtype, count: int = 1) -> np.ndarray:
        size = np.dtype(dtype).itemsize * count
        raw = self.eng.state.param_buffer(slot)[idx, :size].copy().view(dtype)
        return raw if count > 1 else raw[:, 0]

    def _return(self, ret: int | None, idx: np.ndarray, values: np.ndarray) -> None:
        if ret is not None:
            values = np.ascontiguousarray(values)
            self.eng.state.param_buffer(ret)[idx, : values.itemsize] = values.view(np.uint8).reshape(len(idx), -1)

    def _fail(self, idx: np.ndarray, error: int, ret: int | None) -> None:
        self.last_error[idx] = error
        self._return(ret, idx, np.full(len(idx), error, dtype=np.int32))

    def _buffer_address(self, dec, idx: np.ndarray, size: int) -> np.ndarray:
        """Room for `size` bytes of arguments above each thread's current frame, as a generic address."""
        state, eng = self.eng.state, self.eng
        frame = dec.program.functions[dec.fn].frame_size
        start = align_up(state.frame_base[idx] + frame, 64)
        top = int(start.max()) + max(size, 8)
        if top > MAX_LOCAL_BYTES_PER_THREAD:
            raise UserError(f"{dec.ins.where()}: a device launch's parameter buffer does not fit in the thread's local memory")
        eng.mem.ensure_local(top)
        return start.astype(np.uint64) + np.uint64(LOCAL_WINDOW)

    def _kernel_names(self, dec, idx: np.ndarray, slot: int) -> list[str | None]:
        """The kernel each thread's function pointer names (None: not a kernel of the module)."""
        names = {address: name for name, address in dec.program.function_addresses.items()}
        kernels = []
        for address in self._arg(slot, idx, np.uint64).tolist():
            name = names.get(address)
            kernels.append(name if name is not None and dec.program.module.functions[name].is_entry else None)
        return kernels

    def _store_u64(self, dec, idx: np.ndarray, pointers: np.ndarray, values: np.ndarray) -> None:
        """Each thread stores a u64 where its generic pointer points (what a call returns through `T *out`)."""
        if len(idx):
            eng = self.eng
            acc = eng.mem.resolve(Space.GENERIC, pointers, idx, eng.geo.block_of[idx], 8, write=True)
            eng.report_access_errors(dec.pc, acc, idx, "write", 8)
            eng.mem.store(acc, 8, values)

    def _heap_words(self, dec, idx: np.ndarray):
        """The device heap, its header (next free offset, bytes freed) as an access, and the header's values."""
        heap = self.log.heap if self.log is not None else None
        if heap is None:
            raise UserError(
                f"{dec.ins.where()}: the kernel allocates device heap memory (malloc or cudaMalloc in device code), "
                "which `gpurace check` cannot run on its own: run the whole program with `gpurace exec`"
            )
        return (heap, *self._words(idx, np.array([heap.base, heap.base + 8], dtype=np.uint64)))

    def _words(self, idx: np.ndarray, addresses: np.ndarray):
        """The u64 words of global memory at `addresses` as one access (made by `idx`'s first thread: no event), and
        their values."""
        eng = self.eng
        threads = np.repeat(idx[:1], len(addresses))
        acc = eng.mem.resolve(Space.GLOBAL, addresses, threads, eng.geo.block_of[threads], 8, write=True)
        return acc, eng.mem.load(acc, 8).astype(np.uint64)

    def _allocate(self, dec, idx: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Device heap addresses of `sizes` bytes for each thread, in thread order (0 where the heap is full).

        Each block is preceded by a 16-byte header holding its size, for `_free`. Freed memory is not reused: a
        program whose allocation fails only because of that is stopped, with the reason, rather than given a
        NULL that a GPU would not give."""
        heap, acc, (top, freed) = self._heap_words(dec, idx)
        blocks = align_up(sizes.astype(np.int64), HEAP_ALIGN) + HEAP_ALIGN
        ends = int(top) + np.cumsum(blocks)
        fits = (ends <= heap.size) & (sizes > 0)
        fits &= np.cumsum(~fits) == 0  # after the first that does not fit, none is placed
        short = np.flatnonzero(~fits & (sizes > 0))
        if len(short) and int(ends[short[0]] - top) <= heap.size - int(top) + int(freed):
            raise UserError(
                f"{dec.ins.where()}: the device heap ({DEVICE_HEAP_BYTES >> 20} MiB) has no room left for a "
                f"{int(sizes[short[0]])}-byte allocation, which would fit in the memory the program freed: gpurace "
                "does not reuse freed device heap memory"
            )
        addresses = np.where(fits, heap.base + ends - blocks + HEAP_ALIGN, 0).astype(np.uint64)
        if fits.any():
            headers, _ = self._words(idx, addresses[fits] - np.uint64(HEAP_ALIGN))
            self.eng.mem.store(headers, 8, blocks[fits].astype(np.uint64))
            self.eng.mem.store(acc, 8, np.array([int(ends[fits][-1]), int(freed)], dtype=np.uint64))
        return addresses

    def _free(self, dec, idx: np.ndarray, pointers: np.ndarray) -> None:
        """Count the bytes of the blocks at the non-null `pointers` as freed (`_allocate` says why)."""
        given = pointers[pointers != 0]
        if len(given):
            _heap, acc, (top, freed) = self._heap_words(dec, idx)
            _headers, blocks = self._words(idx, given - np.uint64(HEAP_ALIGN))
            self.eng.mem.store(acc, 8, np.array([int(top), int(freed) + int(blocks.sum())], dtype=np.uint64))

    # ------------------------------------------------------------------ the calls

    def _GetParameterBufferV2(self, dec, slots, ret):
        def get_buffer(idx):
            kernels = self._kernel_names(dec, idx, slots[0])
            grids, blocks = self._arg(slots[1], idx, np.uint32, 3), self._arg(slots[2], idx, np.uint32, 3)
            shared = self._arg(slots[3], idx, np.uint32)
            for lane, g in enumerate(idx.tolist()):
                self._configs[g] = (kernels[lane], tuple(grids[lane].tolist()), tuple(blocks[lane].tolist()), int(shared[lane]))
            sizes = [_params_size(dec.program.module.functions[k]) if k else 0 for k in kernels]
            addresses = self._buffer_address(dec, idx, max(sizes))
            bad = np.array([k is None for k in kernels])
            addresses[bad] = 0
            self.last_error[idx[bad]] = INVALID_DEVICE_FUNCTION
            self._return(ret, idx, addresses)

        return get_buffer

    def _GetParameterBuffer(self, dec, slots, ret):
        def get_buffer(idx):
            sizes = self._arg(slots[1], idx, np.uint64)
            self._return(ret, idx, self._buffer_address(dec, idx, int(sizes.max())))

        return get_buffer

    def _LaunchDeviceV2(self, dec, slots, ret):
        def launch(idx):
            buffers = self._arg(slots[0], idx, np.uint64)
            streams = self._arg(slots[1], idx, np.uint64)
            for lane, g in enumerate(idx.tolist()):
                self._launch_one(dec, g, int(buffers[lane]), int(streams[lane]), None, ret)

        return launch

    def _LaunchDevice(self, dec, slots, ret):
        def launch(idx):
            kernels = self._kernel_names(dec, idx, slots[0])
            buffers = self._arg(slots[1], idx, np.uint64)
            grids, blocks = self._arg(slots[2], idx, np.uint32, 3), self._arg(slots[3], idx, np.uint32, 3)
            shared, streams = self._arg(slots[4], idx, np.uint32), self._arg(slots[5], idx, np.uint64)
            for lane, g in enumerate(idx.tolist()):
                config = (kernels[lane], tuple(grids[lane].tolist()), tuple(blocks[lane].tolist()), int(shared[lane]))
                self._launch_one(dec, g, int(buffers[lane]), int(streams[lane]), config, ret)

        return launch

    def _launch_one(self, dec, g: int, buffer: int, stream: int, config, ret) -> None:
        """Thread `g` launches the grid whose arguments lie at `buffer` (its configuration from the V2 call that
        gave the buffer, when `config` is None)."""
        idx = np.array([g], dtype=np.int64)
        if config is None:
            config = self._configs.pop(g, None)
        if config is None:
            raise UserError(f"{dec.ins.where()}: cudaLaunchDeviceV2 with a buffer no cudaGetParameterBufferV2 of the thread gave")
        kernel, grid, block, shared = config
        error = SUCCESS
        log = self.log
        if log is None:
            raise UserError(
                f"{dec.ins.where()}: the kernel launches a kernel from device code (CUDA Dynamic Parallelism), which "
                "`gpurace check` cannot run on its own: run the whole program with `gpurace exec` (built with "
                "--nvcc-flag=-rdc=true --nvcc-flag=-lcudadevrt)"
            )
        if kernel is None:
            error = INVALID_DEVICE_FUNCTION
        elif _invalid(grid, block):
            error = INVALID_CONFIGURATION
        elif stream not in (NULL_STREAM, TAIL_LAUNCH, FIRE_AND_FORGET) and not FIRST_CREATED_STREAM <= stream < self.next_stream:
            error = INVALID_VALUE
        elif log.depth >= MAX_DEPTH:
            error = MAX_DEPTH_EXCEEDED
        elif len(log.launches) >= MAX_PENDING_LAUNCHES:
            error = PENDING_COUNT_EXCEEDED
        if error != SUCCESS:
            self._fail(idx, error, ret)
            return
        self._return(ret, idx, np.zeros(1, dtype=np.int32))
        if not log.active:
            return
        eng = self.eng
        size = _params_size(dec.program.module.functions[kernel])
        params = eng.thread_bytes(g, buffer, size) if size else b""
        thread = g + eng.geo.thread_base
        block_id = int(eng.geo.block_of[g]) + eng.geo.first_block
        barriers, seen = log.launch_point(thread)
        log.launches.append(
            DeviceLaunch(kernel, grid, block, shared, params, stream, thread, block_id, eng.last_seq, barriers, seen, dec.ins.loc)
        )

    def _GetLastError(self, dec, slots, ret):
        def get_last_error(idx):
            self._return(ret, idx, self.last_error[idx].copy())
            self.last_error[idx] = SUCCESS

        return get_last_error

    def _PeekAtLastError(self, dec, slots, ret):
        def peek(idx):
            self._return(ret, idx, self.last_error[idx].copy())

        return peek

    def _Malloc(self, dec, slots, ret):
        def malloc(idx):
            addresses = self._allocate(dec, idx, self._arg(slots[1], idx, np.uint64))
            self._store_u64(dec, idx, self._arg(slots[0], idx, np.uint64), addresses)
            errors = np.where(addresses != 0, SUCCESS, MEMORY_ALLOCATION).astype(np.int32)
            self.last_error[idx[errors != SUCCESS]] = MEMORY_ALLOCATION
            self._return(ret, idx, errors)

        return malloc

    def _c_malloc(self, dec, slots, ret):
        def malloc(idx):
            self._return(ret, idx, self._allocate(dec, idx, self._arg(slots[0], idx, np.uint64)))

        return malloc

    def _Free(self, dec, slots, ret):
        def free(idx):
            self._free(dec, idx, self._arg(slots[0], idx, np.uint64))
            self._return(ret, idx, np.zeros(len(idx), dtype=np.int32))

        return free

    def _c_free(self, dec, slots, ret):
        def free(idx):
            self._free(dec, idx, self._arg(slots[0], idx, np.uint64))

        return free

    def _StreamCreateWithFlags(self, dec, slots, ret):
        def create(idx):
            pointers = self._arg(slots[0], idx, np.uint64)
            flags = self._arg(slots[1], idx, np.uint32)
            ok = (flags & STREAM_NON_BLOCKING) != 0
            handles = np.arange(self.next_stream, self.next_stream + len(idx), dtype=np.uint64)
            self.next_stream += len(idx)
            self._store_u64(dec, idx[ok], pointers[ok], handles[ok])
            self.last_error[idx[~ok]] = INVALID_VALUE
            self._return(ret, idx, np.where(ok, SUCCESS, INVALID_VALUE).astype(np.int32))

        return create

    def _StreamDestroy(self, dec, slots, ret):
        def destroy(idx):
            self._return(ret, idx, np.zeros(len(idx), dtype=np.int32))

        return destroy


def _invalid(grid, block) -> bool:
    threads = block[0] * block[1] * block[2]
    return (
        min(*grid, *block) < 1
        or threads > MAX_THREADS_PER_BLOCK
        or any(b > m for b, m in zip(block, MAX_BLOCK_DIMS))
        or any(d > m for d, m in zip(grid, MAX_GRID_DIMS))
    )


def _params_size(fn) -> int:
    """The bytes of a kernel's parameters as a launch passes them (`frontend.kernels.param_layout`)."""
    layout = param_layout(fn)
    return sum(layout[-1]) if layout else 0


def launches_kernels(module) -> bool:
    """Whether a function of `module` launches kernels from device code (its kernels then get a `DeviceLaunchLog`)."""
    return _calls_any(module, _LAUNCHES)


def allocates_on_device(module) -> bool:
    """Whether a function of `module` calls `malloc`/`free` or `cudaMalloc`/`cudaFree` in device code (the program
    then gets a device heap)."""
    return _calls_any(module, HEAP_CALLS)


def _calls_any(module, wanted) -> bool:
    return any(
        ins.opcode == "call" and any(device_call(getattr(op, "name", "")) in wanted for op in ins.operands)
        for fn in module.functions.values()
        for ins in fn.body
    )


_LAUNCHES = ("LaunchDeviceV2", "LaunchDevice")
