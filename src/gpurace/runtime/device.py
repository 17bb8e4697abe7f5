"""The simulated GPU of one `gpurace exec` run: its memory, its code, and what was found on it.

The device server (`server.py`) and the simulator (`launch.run_launch`)
share one `Device`:

* `global_store` / `const_store`: NumPy uint8 views of the two arenas
  (`global_store[0]` is the byte at `GLOBAL_BASE`, `const_store[0]` the byte
  at `CONST_BASE`), the very memory the program's host code reads and writes;
* `global_table` / `const_table`: the `AllocationTable`s of those arenas:
  module variables first, then every `cudaMalloc`/`cudaMallocManaged`/
  `cudaMallocHost` (and the memory of every `cudaHostRegister`) in call order, the bytes of each in
  the arena; `cudaMalloc` memory is addressed in the device-only window (`spread.py`). A freed allocation
  leaves the table (its address space is unmapped, and never reused, so a late access faults and is told
  apart from a new allocation); `heap.freed_block_at(address)` names it;
* `modules`: the PTX modules of the program's sources, then those the
  program loads through the driver API (`load`: each load a module of its
  own, with its own variables, as each `cuModuleLoad` is on a GPU); a kernel
  is known by its module's index and its name, and `variables[i]` holds the
  allocation of each `__device__`/`__constant__`/`__managed__` variable of
  module `i`, by PTX name;
* `findings`: the `FindingSet` every finding of the run goes into, from the
  host side and from every checked launch; `launches` counts the launches so
  far, `checked_launches` those checked, and `simulated_seconds` is the time
  they took on the virtual device (`SIMULATED_CLOCK_HZ`);
* `check_options`: how each launch is checked (`detector`, `model`,
  `schedules`, `seed`, `max_steps`, `shadow_cells`, as `gpurace.check.check` takes them);
  `launch_filter` which launches are (`filters.LaunchFilter`), and
  `on_launch`, when set, is told the outcome of each (`launch.LaunchOutcome`).

Sizes: the global arena is half the memory budget (`Limits.max_memory`), at
most `MAX_GLOBAL_ARENA_BYTES`, so that the program's device memory leaves the
simulator at least the other half; the constant arena is `CONST_ARENA_BYTES`,
64 KiB of `__constant__` memory for each of dozens of modules. Untouched
pages cost nothing, and the budget (gpurace's address-space limit) counts
what is allocated in the arenas, not their mappings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpurace.detect.findings import Address, FindingSet
from gpurace.errors import UserError
from gpurace.frontend.kernels import param_layout
from gpurace.frontend.ptx.ir import Module
from gpurace.limits import Limits, format_size, shift_address_limit
from gpurace.runtime.arena import Arena
from gpurace.runtime.filters import LaunchFilter
from gpurace.runtime.heap import Heap
from gpurace.runtime.module_images import LoadedImage
from gpurace.runtime.repeats import RepeatedLaunches
from gpurace.runtime.protocol import WireSite
from gpurace.runtime.sites import SourceLines
from gpurace.runtime.spread import Spread
from gpurace.sim.budget import compute_capability
from gpurace.sim.clusters import launch_cluster
from gpurace.sim.device_runtime import DEVICE_HEAP_BYTES, HEAP_HEADER_BYTES, allocates_on_device
from gpurace.sim.launch import place_module_variables
from gpurace.sim.memory import Memory
from gpurace.sim.memory.layout import (
    ALLOC_ALIGN,
    CONST_BASE,
    GLOBAL_BASE,
    PAGE_SIZE,
    Allocation,
    AllocationTable,
    SharedLayout,
    Space,
    max_shared_bytes,
)
from gpurace.sim.program import build_program

SIMULATED_CLOCK_HZ = 1_000_000
"""The virtual device's clock: one scheduler step of the simulator is one cycle, and one microsecond (what
`%clock` and `%globaltimer` read, and the clock rate the shim reports, 1 MHz). `cudaEventElapsedTime` reports
the kernels' steps at this rate: simulated time, not a GPU's, the same in every run of a program; a kernel
that spins until `clock()` has advanced by the clock rate times some milliseconds spins that long in it."""

MAX_GLOBAL_ARENA_BYTES = 64 << 30
CONST_ARENA_BYTES = 4 << 20


def _addressed_apart(arena: Arena, alloc: Allocation) -> Allocation:
    """`alloc`, placed in `arena`, addressed in its device-only window instead when that has room (`spread.py`)."""
    address = arena.spread.take(alloc.size) if arena.spread is not None else None
    if address is None:
        return alloc
    arena.table.remove(alloc)
    return arena.table.insert(alloc.name, address, alloc.size, shift=address - alloc.base)


@dataclass(frozen=True)
class KernelAttributes:
    """What `cudaFuncGetAttributes` reports of a kernel's resources."""

    static_shared_bytes: int
    const_bytes: int
    local_bytes: int
    cluster_dims: tuple[int, int, int] = (0, 0, 0)
    """The kernel's `__cluster_dims__` (`.reqnctapercluster`); zeros without."""
    cluster_dims_must_be_set: bool = False
    """Compiled for cluster launches (`.explicitcluster`) without fixed dimensions: a launch must give them."""


class Device:
    """Arenas, modules and findings of one run (see the module docstring for what the simulator uses)."""

    def __init__(
        self,
        modules: list[Module],
        *,
        arch: str,
        limits: Limits,
        source_lines: SourceLines,
        check_options: dict | None = None,
        launch_filter: LaunchFilter | None = None,
        on_launch: Callable | None = None,
    ):
        self.modules = list(modules)
        self._sources = len(self.modules)  # the modules of the program's sources come first
        self.check_options = dict(check_options or {})
        self.launch_filter = launch_filter or LaunchFilter()
        self.on_launch = on_launch
        self.arch = arch
        self.limits = limits
        self.source_lines = source_lines
        self.capability = compute_capability(self.modules[0] if self.modules else Module(), arch)
        self.shared_optin_bytes = max_shared_bytes(self.capability)
        global_bytes = max(PAGE_SIZE, min(MAX_GLOBAL_ARENA_BYTES, limits.max_memory // 2) // PAGE_SIZE * PAGE_SIZE)
        self.global_arena = Arena(Space.GLOBAL, GLOBAL_BASE, global_bytes, Spread())
        self.const_arena = Arena(Space.CONST, CONST_BASE, CONST_ARENA_BYTES)
        self.findings = FindingSet()
        self.launches = 0
        # module index -> whether its kernels launch kernels and whether they allocate (`sim.device_runtime`)
        self.runtime_use: dict[int, tuple[bool, bool]] = {}
        self.checked_launches = 0
        self.simulated_seconds = 0.0  # the kernels' simulated time so far (SIMULATED_CLOCK_HZ)
        self.textures: dict[int, object] = {}  # live texture and surface objects by handle (`sim.textures`)
        self.heap = Heap(self.global_arena)
        self.repeats = RepeatedLaunches(budget=limits.max_memory // 16)
        self._kernels: dict[str, int] = {}
        for index, module in enumerate(self.modules):
            for fn in module.kernels:
                self._kernels.setdefault(fn.name, index)
        self._initial: list[tuple[Arena, Allocation, bytes | None]] = []  # what `reset` restores (from the start)
        self.variables = [self._place_variables(module) for module in self.modules]
        self.device_heap: Allocation | None = None
        for module in self.modules:
            self._heap_for(module)
        # The arenas are mapped whole but cost only the pages written: the memory budget, this process's
        # address-space limit, counts the module variables and the program's live allocations (`Heap`), not
        # the mappings, so that a launch may use what the program's device memory leaves of the budget.
        self._uncounted = sum(arena.nbytes - (arena.table.top - arena.base) for arena in (self.global_arena, self.const_arena))
        shift_address_limit(self._uncounted)
        self._handle_modules: dict[int, int] = {}  # translation unit (`__cudaRegisterFatBinary`) -> module index
        self._loaded: dict[int, int | None] = {}  # module handle of the driver API -> module index (None: unloaded)
        self.host_visible_variables: set[int] = set()  # bases of __managed__ variables

    # ------------------------------------------------------------------ what the simulator reads

    @property
    def global_store(self):
        return self.global_arena.store

    @property
    def const_store(self):
        return self.const_arena.store

    @property
    def global_table(self) -> AllocationTable:
        return self.global_arena.table

    @property
    def const_table(self) -> AllocationTable:
        return self.const_arena.table

    def arena_of(self, address: int) -> Arena | None:
        for arena in (self.global_arena, self.const_arena):
            if arena.contains(address):
                return arena
        return None

    def host_visible(self, address: int) -> bool:
        """Whether host code may touch the device memory at `address`: managed and page-locked blocks, and
        `__managed__` variables (not `cudaMalloc` memory, nor other variables, nor memory in no allocation)."""
        arena = self.arena_of(address)
        alloc = arena.table.find(address) if arena is not None else None
        if alloc is None:
            return False
        block = self.heap.blocks.get(alloc.base)
        return block.host_visible if block is not None else alloc.base in self.host_visible_variables

    def describe_address(self, canonical: int) -> tuple[Address, str]:
        """The allocation and offset of a byte of device memory at `canonical`, where its bytes are in an arena (as
        launch footprints and the timeline name it), and its memory space, as findings name them."""
        arena = self.arena_of(canonical)
        alloc = arena.table.find_canonical(canonical) if arena is not None else None
        where = Address(alloc.name, canonical - alloc.canonical_base, canonical) if alloc is not None else Address("?", 0, canonical)
        return where, arena.space.name.lower() if arena is not None else "global"

    # ------------------------------------------------------------------ registration (the program's start-up)

    def register_function(self, handle: int, mangled: str) -> tuple[int, list[tuple[int, int]]] | None:
        """The index of the module of kernel `mangled` and the (offset, size) of each of its parameters, or None
        when its module does not define it.

        `handle` is a module loaded through the driver API (`load`), whose
        kernel it must be, or a translation unit of the program: the first
        source that defines the kernel is then known to be the unit's module.
        """
        if handle in self._loaded:
            index = self._loaded[handle]
            fn = self.modules[index].functions.get(mangled) if index is not None else None
            return (index, param_layout(fn)) if fn is not None and fn.is_entry and not fn.is_declaration else None
        index = self._kernels.get(mangled)
        if index is None:
            return None
        self._handle_modules.setdefault(handle, index)
        return index, param_layout(self.modules[index].functions[mangled])

    def load(self, handle: int, image: LoadedImage, where: str) -> None:
        """Make `image`, which the program loaded (`cuModuleLoad*`, image `where`), driver-API module `handle`, a
        module of its own: its variables are placed anew, with their initial values.

        An image of machine code only runs the one source module that
        defines all its kernels (`module_images`); a UserError when none does.
        """
        module = image.module or self._source_module(image.kernels, where)
        tops = sum(arena.table.top for arena in (self.global_arena, self.const_arena))
        self.modules.append(module)
        self.variables.append(self._place_variables(module))
        self._heap_for(module)
        grown = sum(arena.table.top for arena in (self.global_arena, self.const_arena)) - tops
        shift_address_limit(-grown)  # the budget counts them from now on (see __init__)
        self._uncounted -= grown
        self._loaded[handle] = len(self.modules) - 1

    def unload(self, handle: int) -> int | None:
        """`cuModuleUnload`: the index of the module `handle` was, or None when it is no loaded module. The handle
        stays known, as one that names no module (never a translation unit's)."""
        index = self._loaded.get(handle)
        if index is not None:
            self._loaded[handle] = None
        return index

    def loaded_global(self, handle: int, name: str) -> Allocation | None:
        """`cuModuleGetGlobal`: the allocation of variable `name` of loaded module `handle`, or None."""
        index = self._loaded.get(handle)
        return self.variables[index].get(name) if index is not None else None

    def _source_module(self, kernels: tuple[str, ...], where: str) -> Module:
        """The module compiled from the program's sources that defines every kernel of `kernels`."""
        sources = self.modules[: self._sources]
        found = [m for m in sources if kernels and {f.name for f in m.kernels} >= set(kernels)]
        if not found:
            names = ", ".join(kernels) or "none"
            raise UserError(
                f"{where} holds machine code only (kernels: {names}), and gpurace simulates PTX: give gpurace exec "
                "the source file that defines these kernels with the program's sources, or build the image with its "
                "PTX (`-gencode arch=compute_XX,code=compute_XX` beside the `code=sm_XX`)"
            )
        return found[0]

    def register_variable(self, handle: int, name: str, managed: bool) -> Allocation | None:
        """The allocation of module variable `name` registered from translation unit `handle`, or None.

        The unit's module is the one its kernels were found in; a unit with no
        kernels takes the first module that defines the name.
        """
        index = self._handle_modules.get(handle)
        candidates = [self.variables[index]] if index is not None else self.variables
        alloc = next((v[name] for v in candidates if name in v), None)
        if alloc is not None and managed:
            self.host_visible_variables.add(alloc.base)
        return alloc

    def kernel_attributes(self, index: int, mangled: str) -> KernelAttributes | None:
        """The attributes of kernel `mangled` of module `index` (`cudaFuncGetAttributes`), or None when its code
        cannot be built."""
        module = self.modules[index]
        directives = module.functions[mangled].directives
        try:
            program = build_program(module, mangled)
            dims, explicit = launch_cluster(None, directives)
        except UserError:
            return None
        shared = SharedLayout([(v.name, v.size, v.align or v.elem_size) for v in program.shared_vars], 0)
        const = sum(v.size for v in module.variables if v.space == "const")
        fixed = "reqnctapercluster" in directives
        return KernelAttributes(
            shared.dynamic_base, const, program.entry.frame_size, dims if fixed else (0, 0, 0), explicit and not fixed
        )

    # ------------------------------------------------------------------ module variables

    def _place_variables(self, module: Module) -> dict[str, Allocation]:
        """Place `module`'s global and constant variables after those placed so far, with their initial values.

        The simulator's own placement (`sim.launch.place_module_variables`)
        runs on a scratch `Memory` whose regions are first filled up to where
        this device's arenas end, so that every variable gets the address it
        gets here and pointer initializers (`&other_variable`) hold the right
        addresses; the bytes are then copied into the arenas.

        A `__device__` array (not `__managed__`: host code reaches those) is
        addressed in the device-only window, as `cudaMalloc` memory is
        (`spread.py`), so that an index past its end reaches no other variable;
        its bytes stay where the scratch placed them, and the initializers
        are written again with the addresses the variables have here.
        """
        scratch = Memory(1, 1, limits=self.limits)
        for arena in (self.global_arena, self.const_arena):
            if arena.table.top > arena.base:  # allocations, or address space reserved
                scratch.allocate_global(
                    "(earlier modules)", arena.table.top - arena.base, const=arena.space is Space.CONST, symbol=False
                )
        try:
            place_module_variables(scratch, module, isolated=False)
        except MemoryError:
            raise UserError(self._too_large(module)) from None
        except UserError as e:
            raise UserError(f"{module.source_path}: {e}") from None
        placed: dict[str, tuple[Arena, Allocation, Allocation]] = {}  # PTX name -> arena, allocation, scratch's
        for var in module.variables:
            if var.space not in ("global", "const") or var.linkage == "extern":
                continue
            space, base = scratch.symbol(var.name)
            arena = self.global_arena if space is Space.GLOBAL else self.const_arena
            theirs = scratch.nearest(base, space).allocation
            try:
                alloc = arena.table.place(var.name, theirs.size, ALLOC_ALIGN, gap=base - arena.table.top)
            except MemoryError:
                raise UserError(self._too_large(module)) from None
            if var.space == "global" and not var.managed and var.size > var.elem_size:
                alloc = _addressed_apart(arena, alloc)
                scratch.relocate_symbol(var.name, alloc.base)
            placed[var.name] = (arena, alloc, theirs)
        for var in module.variables:
            if var.name not in placed:
                continue
            arena, alloc, theirs = placed[var.name]
            initial = None
            if var.init:
                scratch.write_initializer(theirs, var.type, var.init)  # with the addresses of variables placed apart
                initial = scratch.read(theirs)
                arena.view(alloc.canonical_base, alloc.size)[:] = np.frombuffer(initial, dtype=np.uint8)
            self._initial.append((arena, alloc, initial))
        return {name: alloc for name, (_arena, alloc, _theirs) in placed.items()}

    def _heap_for(self, module: Module) -> None:
        """Place the device heap kernels allocate from (`sim.device_runtime`), empty, if `module` is the first to
        use it; `reset` empties it again."""
        if self.device_heap is not None or not allocates_on_device(module):
            return
        arena = self.global_arena
        try:
            heap = arena.table.place("device heap", DEVICE_HEAP_BYTES, PAGE_SIZE)
        except MemoryError:
            raise UserError("the device heap (8 MiB) does not fit the simulated device's global memory") from None
        empty = np.array([HEAP_HEADER_BYTES, 0], dtype=np.uint64).tobytes()
        arena.view(heap.base, len(empty))[:] = np.frombuffer(empty, dtype=np.uint8)
        self._initial.append((arena, heap, empty))
        self.device_heap = heap

    def _too_large(self, module: Module) -> str:
        return (
            f"{module.source_path}: its __device__ and __constant__ variables do not fit the simulated device's "
            f"memory ({format_size(self.global_arena.nbytes)} global, {format_size(self.const_arena.nbytes)} constant; "
            "the global memory is half of --max-memory)"
        )

    def reset(self, site: WireSite) -> None:
        """`cudaDeviceReset` at `site`: every allocation freed (without findings), variables back to their initial values."""
        self.heap.free_all(site)
        self.textures.clear()
        self.repeats.clear()
        for arena, alloc, initial in self._initial:
            view = arena.view(alloc.canonical_base, alloc.size)
            view[:] = 0
            if initial is not None:
                view[: len(initial)] = np.frombuffer(initial, dtype=np.uint8)

    def close(self) -> None:
        shift_address_limit(self.heap.live_bytes - self._uncounted)
        self.global_arena.close()
        self.const_arena.close()
