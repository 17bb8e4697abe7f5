"""Simulated memory of one kernel launch: address spaces, allocations, bounds, loads, stores and atomics.

The engine executes one instruction for all threads at the same PC at once, so
every operation here takes arrays with one entry per executing thread (a
*batch*, in ascending thread order) and never loops over threads.

Address model
-------------
One 64-bit generic address space, laid out like the hardware's:

========================  =============================================
``0 .. 0x1_0000_0000``    unmapped (null pointers land here)
``SHARED_WINDOW``         0x1_0000_0000, 4 GiB: the executing thread's
                          block's shared memory (offset = addr - base)
``LOCAL_WINDOW``          0x2_0000_0000, 4 GiB: the executing thread's
                          own local memory
``PARAM_BASE``            0x3_0000_0000: the kernel parameter buffer
                          (read-only, the same for every thread)
``CONST_BASE``            0x4_0000_0000: ``.const`` allocations
                          (read-only)
``FUNCTION_BASE``         0x8_0000_0000: device function addresses
                          (function pointers; no data lives there)
``GLOBAL_BASE``           0x10_0000_0000 up to 2**47: global allocations
                          (argument buffers, module ``.global`` variables)
========================  =============================================

Global and const allocations are 256-byte aligned with at least 256 bytes of
red zone between them, so small overflows fall in no allocation and are
reported as out of bounds. Automatic buffers (`Memory.allocate_automatic`)
come after every other global allocation: AUTO_BUFFER_BYTES each, page
aligned, with AUTO_GUARD_BYTES of red zone before each, zero-filled and
committed by the operating system only where the kernel touches them.

Global and const addresses are their own generic addresses
(`cvta.global`/`cvta.const` are the identity); shared, local and param
*space* addresses are offsets from 0 and `cvta` adds or subtracts the window
base (`to_generic`, `from_generic`). `ld.global` of a const address reads the
const data, as on hardware.

Shared memory of a block is the static variables laid out in order (each at
its alignment), then the dynamic area of `dynamic_shared_bytes` bytes, which
every `extern .shared` array aliases. Local memory is per thread, empty until
the engine asks for it (`ensure_local`), and growable.

Canonical addresses
-------------------
`Access.canonical` names each accessed byte range uniquely across the launch,
so detectors can compare accesses from different threads and blocks directly:
global and const use the generic address, param `PARAM_BASE + offset`, shared
``1 << 62 | block << 32 | offset`` and local ``2 << 62 | thread << 32 |
offset`` (equal shared offsets in two blocks never collide). `describe` turns
one back into (space, allocation, offset); `nearest` finds the allocation
closest to an out-of-bounds address.

Semantics
---------
- Little-endian bytes; access sizes 1, 2, 4, 8, 16 bytes times vector width
  (1, 2 or 4); the whole access must be naturally aligned. A misaligned,
  out-of-bounds (in no allocation, straddling an allocation's end, past the
  block's shared size or the thread's local size) or read-only (store or
  atomic to const or param) access is not performed; `Access.error` says why.
- Stores of one batch take effect in batch order: when lanes write the same
  address, the last lane (the highest thread) wins.
- Atomics of one batch take effect one lane at a time in batch order, and
  each lane gets the old value that serial order gives (`atomics.py` explains
  how this is vectorised). Float atomic adds round to nearest even in the
  element type after every lane, without flushing subnormals.
"""

from gpurace.sim.memory.access import Access
from gpurace.sim.memory.layout import (
    AUTO_BUFFER_BYTES,
    AUTO_FILL_BYTES,
    AUTO_GUARD_BYTES,
    CONST_BASE,
    FUNCTION_BASE,
    GLOBAL_BASE,
    LOCAL_WINDOW,
    PAGE_SIZE,
    PARAM_BASE,
    REDZONE,
    SHARED_WINDOW,
    WINDOW_SIZE,
    Allocation,
    ErrorKind,
    Location,
    Nearest,
    Space,
    from_generic,
    function_addresses,
    space_of,
    to_generic,
)
from gpurace.sim.memory.store import DeviceMemory, Memory

__all__ = [
    "AUTO_BUFFER_BYTES",
    "AUTO_FILL_BYTES",
    "AUTO_GUARD_BYTES",
    "CONST_BASE",
    "DeviceMemory",
    "FUNCTION_BASE",
    "GLOBAL_BASE",
    "LOCAL_WINDOW",
    "PAGE_SIZE",
    "PARAM_BASE",
    "REDZONE",
    "SHARED_WINDOW",
    "WINDOW_SIZE",
    "Access",
    "Allocation",
    "ErrorKind",
    "Location",
    "Memory",
    "Nearest",
    "Space",
    "from_generic",
    "function_addresses",
    "space_of",
    "to_generic",
]
