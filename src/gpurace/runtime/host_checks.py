"""The program's memory calls checked against its allocations: findings at the host line of the call.

Host code runs natively, so only the part of a call that touches device
memory (the arenas) can be checked; a plain host pointer is the program's
own business. A call that breaks a rule gets the error a CUDA runtime
returns (`cudaErrorInvalidValue`), does not happen (nothing is copied,
set or freed), and becomes a finding whose one site is the call, with no
thread:

* `out-of-bounds` (space global or const): a device range that is not
  inside one allocation: past its end, before its start, in a red zone;
* `use-after-free`: a device range in an allocation already freed;
* `invalid-copy-direction`: a copy whose `cudaMemcpyKind` says device memory
  for host memory or the reverse (managed and page-locked host memory count
  as both, as with unified addressing);
* `invalid-device-pointer`: `cudaMemset` of memory that is not device memory;
* `invalid-free`: `cudaFree`/`cudaFreeHost` of anything but the start of a
  live allocation of its kind (double free, interior or host pointer, a
  variable, `cudaFreeHost` of `cudaMalloc` memory), and `cudaHostUnregister`
  of anything but a pointer `cudaHostRegister` registered and that is still
  registered (`cudaErrorHostMemoryNotRegistered`, or `cudaErrorInvalidValue`
  for a pointer into a registration or into page-locked memory, as NVIDIA's
  runtime returns them);
* `invalid-host-access`, `use-after-free`: host code itself touching
  `cudaMalloc` memory, or freed memory (caught by page protection,
  `protection.py`);
* `leak` (only when asked, at exit): allocations never freed, one finding
  per allocating line, with a count.

`cudaHostRegister` itself reports nothing: its errors
(`cudaErrorHostMemoryAlreadyRegistered` for a range that overlaps a live
registration or is page-locked memory already, `cudaErrorInvalidValue` for
device memory) go back to the program only, since programs register memory
that may be registered already and take the error as "done".

A copy or memset that goes ahead records the device bytes it writes
(`Heap.written`), so that the uninitialised-read check of the kernels that
read them later knows they hold a value; a device-to-device copy counts as
writing its destination whatever its source held.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

import numpy as np

from gpurace.detect.findings import ERROR, Address, Finding
from gpurace.runtime.arena import Arena
from gpurace.runtime.device import Device
from gpurace.runtime.heap import Block
from gpurace.runtime.protocol import CudaError, MemcpyKind, MemoryKind, WireSite
from gpurace.runtime.sites import at_where
from gpurace.runtime.virtual_memory import Physical
from gpurace.sim.memory.layout import Allocation
from gpurace.words import plural

DIRECTION_NAMES = {
    MemcpyKind.HOST_TO_HOST: "cudaMemcpyHostToHost",
    MemcpyKind.HOST_TO_DEVICE: "cudaMemcpyHostToDevice",
    MemcpyKind.DEVICE_TO_HOST: "cudaMemcpyDeviceToHost",
    MemcpyKind.DEVICE_TO_DEVICE: "cudaMemcpyDeviceToDevice",
    MemcpyKind.DEFAULT: "cudaMemcpyDefault",
}


class Side(Enum):
    """Which memory a pointer of a call must be."""

    HOST = "host"
    DEVICE = "device"
    EITHER = "either"


_PAGE_LOCKED = (MemoryKind.HOST, MemoryKind.REGISTERED)

_RELEASED_BY = {  # the kind of release call (FREE's kind) that ends a block of each kind
    MemoryKind.DEVICE: MemoryKind.DEVICE,
    MemoryKind.MANAGED: MemoryKind.DEVICE,
    MemoryKind.HOST: MemoryKind.HOST,
    MemoryKind.REGISTERED: MemoryKind.REGISTERED,
}

SIDES = {  # direction -> (destination side, source side)
    MemcpyKind.HOST_TO_HOST: (Side.HOST, Side.HOST),
    MemcpyKind.HOST_TO_DEVICE: (Side.DEVICE, Side.HOST),
    MemcpyKind.DEVICE_TO_HOST: (Side.HOST, Side.DEVICE),
    MemcpyKind.DEVICE_TO_DEVICE: (Side.DEVICE, Side.DEVICE),
    MemcpyKind.DEFAULT: (Side.EITHER, Side.EITHER),
}


class HostChecks:
    """Checks the memory calls of one run on `device`, adding findings to `device.findings`."""

    def __init__(self, device: Device):
        self.device = device

    # ------------------------------------------------------------------ calls

    def copy(self, dst: int, src: int, count: int, direction: int, site: WireSite) -> CudaError:
        return self._wrote(self._copy(dst, count, src, count, direction, site), dst, count)

    def copy_2d(
        self, dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, direction: int, site: WireSite
    ) -> CudaError:
        """`height` rows of `width` bytes, `dpitch` and `spitch` bytes apart; checked as the span from first to last row."""
        if width > dpitch or width > spitch:
            return CudaError.INVALID_PITCH_VALUE
        status = self._copy(dst, (height - 1) * dpitch + width, src, (height - 1) * spitch + width, direction, site)
        return self._wrote(status, dst + dpitch * np.arange(height, dtype=np.uint64), width)

    def _copy(self, dst: int, dst_bytes: int, src: int, src_bytes: int, direction: int, site: WireSite) -> CudaError:
        if direction not in MemcpyKind._value2member_map_:
            return CudaError.INVALID_MEMCPY_DIRECTION
        kind = MemcpyKind(direction)
        dst_side, src_side = SIDES[kind]
        how = f"{site.call} ({DIRECTION_NAMES[kind]})"
        statuses = [
            self._range(dst, dst_bytes, dst_side, "writes", "destination", how, site),
            self._range(src, src_bytes, src_side, "reads", "source", how, site),
        ]
        return next((s for s in statuses if s is not CudaError.SUCCESS), CudaError.SUCCESS)

    def memset(self, dst: int, pitch: int, width: int, height: int, site: WireSite) -> CudaError:
        """`height` rows of `width` bytes, `pitch` bytes apart (`cudaMemset`: one row); checked as the span from
        the first row to the last."""
        if width > pitch:
            return CudaError.INVALID_PITCH_VALUE
        span = (height - 1) * pitch + width
        status = self._range(dst, span, Side.DEVICE, "sets", "destination", site.call, site)
        return self._wrote(status, dst + pitch * np.arange(height, dtype=np.uint64), width)

    def _wrote(self, status: CudaError, starts, width: int) -> CudaError:
        """`status`, after recording, when the call goes ahead, that it writes `width` bytes at each of `starts`
        (the shim then does), so that kernels reading them later read initialised memory. The starts are in one
        allocation (the call was checked), and recorded where its bytes are (`Heap.written`)."""
        if status is CudaError.SUCCESS:
            starts = np.atleast_1d(np.asarray(starts, dtype=np.uint64))
            first = int(starts[0])
            starts = starts - np.uint64(first - self.device.global_arena.canonical(first))
            self.device.heap.written.host_wrote(starts, starts + np.uint64(width))
        return status

    def register(self, host: int, size: int, flags: int, site: WireSite) -> tuple[CudaError, Block | None]:
        """`cudaHostRegister` of [host, host + size): the block that maps it for the device, or the error."""
        heap = self.device.heap
        if self.device.arena_of(host) is not None:
            block = heap.block_at(host)
            pinned = block is not None and block.freed_at is None and block.kind in _PAGE_LOCKED
            return (CudaError.HOST_MEMORY_ALREADY_REGISTERED if pinned else CudaError.INVALID_VALUE), None
        if heap.registered_at(host, size) is not None:
            return CudaError.HOST_MEMORY_ALREADY_REGISTERED, None
        block = heap.register(host, size, flags, site)
        return (CudaError.SUCCESS, block) if block is not None else (CudaError.MEMORY_ALLOCATION, None)

    def unregister(self, host: int, site: WireSite) -> CudaError:
        """`cudaHostUnregister(host)`: the registration that starts at `host` ends; anything else is an invalid free."""
        heap = self.device.heap
        block = heap.registered_at(host)
        if block is not None and block.host == host:
            heap.free(block, site)
            return CudaError.SUCCESS
        if block is not None:
            self._report(
                "invalid-free",
                f"{site.call} of 0x{host:x}, {plural(host - block.host, 'byte')} into the host memory "
                f"{_named(block.allocation)} that cudaHostRegister registered {self._where(block.allocated_at)}, "
                "not its start",
                site,
                alloc=block.allocation,
                address=block.allocation.base + host - block.host,
                allocated_at=self._where(block.allocated_at),
            )
            return CudaError.INVALID_VALUE
        other = heap.blocks.get(host)
        if other is not None and other.freed_at is None:
            self._wrong_release(other, site)
            return CudaError.INVALID_VALUE
        self._not_registered(host, site)
        return CudaError.HOST_MEMORY_NOT_REGISTERED

    def _not_registered(self, host: int, site: WireSite) -> None:
        """`site` unregisters `host`, which is not registered: no longer, or never."""
        ended = self.device.heap.unregistered.get(host)
        if ended is None:
            cause = f"{site.call} of 0x{host:x}, which cudaHostRegister did not register"
            self._report("invalid-free", cause, site, address=host)
            return
        cause = (
            f"{site.call} of 0x{host:x}, whose registration ({_named(ended.allocation)}) already ended "
            f"{self._where(ended.freed_at)}"
        )
        self._report("invalid-free", cause, site, address=host, allocated_at=self._where(ended.allocated_at))

    def free(self, address: int, kind: MemoryKind, site: WireSite) -> CudaError:
        """`cudaFree` (`kind` DEVICE) or `cudaFreeHost` (HOST) of `address`."""
        heap = self.device.heap
        block = heap.blocks.get(address)
        if block is None:
            self._report("invalid-free", f"{site.call} of {self._what_is(address)}", site, address=address)
            return CudaError.INVALID_VALUE
        alloc = block.allocation
        if block.freed_at is not None:
            self._report(
                "invalid-free",
                f"{site.call} of {_named(alloc)}, which was already freed {self._where(block.freed_at)}",
                site,
                alloc=alloc,
                address=address,
                allocated_at=self._where(block.allocated_at),
                freed_at=self._where(block.freed_at),
            )
            return CudaError.INVALID_VALUE
        if _RELEASED_BY[block.kind] is not kind:
            self._wrong_release(block, site)
            return CudaError.INVALID_VALUE
        heap.free(block, site)
        return CudaError.SUCCESS

    def _wrong_release(self, block: Block, site: WireSite) -> None:
        """`site`'s call frees or unregisters the live `block` (at its base address), which another call must."""
        alloc, where = block.allocation, self._where(block.allocated_at)
        if block.kind is MemoryKind.REGISTERED:
            what = f"the device address of host memory that cudaHostRegister registered {where}"
            how = f"unregistered with cudaHostUnregister of its host pointer 0x{block.host:x}"
        else:
            what = f"memory that {block.allocating_call} allocated {where}"
            how = f"freed with {'cudaFreeHost' if block.kind is MemoryKind.HOST else 'cudaFree'}"
        cause = f"{site.call} of `{alloc.name}`, {what}: it must be {how}"
        self._report("invalid-free", cause, site, alloc=alloc, address=alloc.base, allocated_at=where)

    def host_fault(self, address: int, write: bool, block: Block | None, site: WireSite) -> None:
        """The host code touched `address`, in device memory (`block`'s, or in no block) or in freed memory: a
        finding at the access. On a GPU's host the access crashes the program."""
        verb = "writes" if write else "reads"
        if block is not None and block.freed_at is not None:
            alloc = block.allocation
            self._report(
                "use-after-free",
                f"the host {verb} {_named(alloc)} at offset {address - alloc.base}, which was freed "
                f"{self._where(block.freed_at)}",
                site,
                space="global",
                alloc=alloc,
                address=address,
                allocated_at=self._where(block.allocated_at),
                freed_at=self._where(block.freed_at),
            )
            return
        if block is None:  # the rest of the last page of a cudaMalloc block
            near = self.device.global_table.nearest(address)
            alloc, what, details = near.allocation, f"0x{address:x} ({near.text()})", {}
        else:
            alloc = block.allocation
            what = f"{_named(alloc)} at offset {address - alloc.base}"
            details = {"allocated_at": self._where(block.allocated_at)}
        self._report(
            "invalid-host-access",
            f"the host {verb} {what}: memory from cudaMalloc belongs to the device, and host code cannot reach it "
            "(on a GPU the program crashes here with a segmentation fault)",
            site,
            space="global",
            alloc=alloc,
            address=address,
            **details,
        )

    def leaks(self, unreleased: Sequence[Physical] = ()) -> None:
        """A `leak` finding for every allocation still live, and for every physical allocation of the driver's
        virtual memory management (`unreleased`) never released (call when the program has ended)."""
        for physical in unreleased:
            self._report(
                "leak",
                f"{plural(physical.size, 'byte')} allocated by cuMemCreate were never released (cuMemRelease)",
                physical.created_at,
                space="global",
                address=None,
            )
        for block in self.device.heap.live():
            if block.kind is MemoryKind.REGISTERED:  # the program's own memory, which it frees itself
                continue
            alloc = block.allocation
            self._report(
                "leak",
                f"{plural(alloc.size, 'byte')} allocated by {block.allocating_call} were never freed",
                block.allocated_at,
                space="global",
                alloc=alloc,
                address=alloc.base,
            )

    # ------------------------------------------------------------------ ranges

    def _range(self, address: int, count: int, side: Side, verb: str, role: str, how: str, site: WireSite) -> CudaError:
        """Whether [address, address + count) is memory of `side` that the call may touch; a finding when not."""
        arena = self.device.arena_of(address)
        if arena is None:
            if side is not Side.DEVICE:
                return CudaError.SUCCESS
            kind = "invalid-copy-direction" if site.call.startswith("cudaMemcpy") else "invalid-device-pointer"
            self._report(kind, f"{how}: the {role} 0x{address:x} is host memory, not device memory", site, address=address)
            return CudaError.INVALID_VALUE
        alloc = arena.table.find(address)
        what = f"{how} {verb} {plural(count, 'byte')} at 0x{address:x}"
        freed = self.device.heap.freed_block_at(address) if alloc is None else None
        if freed is not None:
            self._report(
                "use-after-free",
                f"{what}, in {_named(freed.allocation)}, which was freed {self._where(freed.freed_at)}",
                site,
                space=_space(arena),
                alloc=freed.allocation,
                address=address,
                allocated_at=self._where(freed.allocated_at),
                freed_at=self._where(freed.freed_at),
            )
            return CudaError.INVALID_VALUE
        if alloc is None:
            near = arena.table.nearest(address)
            self._report(
                "out-of-bounds",
                f"{what}: " + (near.text() if near else "no allocation there"),
                site,
                space=_space(arena),
                alloc=near.allocation if near else None,
                address=address,
            )
            return CudaError.INVALID_VALUE
        block = self.device.heap.blocks.get(alloc.base)
        end = arena.table.contiguous_end(alloc)
        if address + count > end:
            self._report(
                "out-of-bounds",
                f"{what}: {plural(address + count - end, 'byte')} past the end of {_named(alloc)}",
                site,
                space=_space(arena),
                alloc=alloc,
                address=address,
                **({"allocated_at": self._where(block.allocated_at)} if block else {}),
            )
            return CudaError.INVALID_VALUE
        if side is Side.HOST and not self.device.host_visible(address):
            self._report(
                "invalid-copy-direction",
                f"{how}: the {role} is device memory (`{alloc.name}`), not host memory",
                site,
                space=_space(arena),
                alloc=alloc,
                address=address,
            )
            return CudaError.INVALID_VALUE
        return CudaError.SUCCESS

    def _what_is(self, address: int) -> str:
        """How a pointer that starts no allocation looks, for an invalid free."""
        arena = self.device.arena_of(address)
        alloc = arena.table.find(address) if arena else None
        block = self.device.heap.freed_block_at(address)
        if block is not None:
            return f"0x{address:x}, {plural(address - block.allocation.base, 'byte')} into {_named(block.allocation)}, not its start"
        if alloc is not None:
            if alloc.base in self.device.heap.blocks:
                return f"0x{address:x}, {plural(address - alloc.base, 'byte')} into {_named(alloc)}, not its start"
            return f"the address of the device variable `{alloc.name}`"
        if arena is not None:
            return f"0x{address:x}, which is in no allocation"
        return f"0x{address:x}, which no CUDA allocation call returned"

    # ------------------------------------------------------------------ findings

    def _where(self, site: WireSite) -> str:
        """`at prog.cu:12` (or `in main`, or `earlier` when the site is unknown), for causes."""
        return at_where(self.device.source_lines.frame(site).where()) or "earlier"

    def _report(
        self,
        kind: str,
        cause: str,
        site: WireSite,
        *,
        space: str | None = None,
        alloc: Allocation | None = None,
        address: int | None,
        **details,
    ) -> None:
        frame = self.device.source_lines.frame(site)
        where = Address(alloc.name, address - alloc.base, address) if alloc is not None else None
        self.device.findings.add(
            Finding(kind, ERROR, cause, (frame.site(),), space=space, address=where, details={"call": site.call, **details})
        )


def _named(alloc: Allocation) -> str:
    """"`cudaMalloc#1` (256 bytes)": an allocation as causes name it."""
    return f"`{alloc.name}` ({plural(alloc.size, 'byte')})"


def _space(arena: Arena) -> str:
    return arena.space.name.lower()
