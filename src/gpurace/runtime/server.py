"""The device server: answers one program's CUDA requests (see `protocol`) on a `Device`.

It runs in the gpurace process, one request at a time, until the program's
end closes the socket. Memory calls are checked (`host_checks`) and, when
allowed, carried out by the shim in the shared arenas; kernel launches run
in the simulator (`launch.run_launch`) on the same memory. The errors a CUDA
runtime would return go back to the program; what makes the program
impossible to go on with (an unsupported call, a launch the simulator cannot
run) is recorded in `errors` and ends it with exit status 2.
"""

from __future__ import annotations

import select
import socket
import struct
import time

from gpurace.errors import UserError
from gpurace.runtime.device import Device
from gpurace.runtime.host_checks import HostChecks
from gpurace.runtime.launch import run_launch
from gpurace.runtime.protocol import (
    HEADER,
    STICKY,
    STOP,
    CudaError,
    MemoryKind,
    Op,
    Reader,
    VarFlag,
    encode_reply,
)

_NEEDS_LIVE_CONTEXT = frozenset({Op.MALLOC, Op.FREE, Op.MEMCPY, Op.MEMCPY_2D, Op.MEMSET, Op.LAUNCH, Op.SYNCHRONIZE})
"""Requests that a sticky launch error answers, without effect, until RESET."""


class DeviceServer:
    """The requests of one program on `device`; `errors` say why it had to stop, if it did."""

    def __init__(self, device: Device):
        self.device = device
        self.checks = HostChecks(device)
        self.functions: dict[int, str] = {}  # host stub address -> mangled kernel name
        self.sticky: CudaError | None = None
        self.errors: list[str] = []
        self.failure: BaseException | None = None  # an internal error, raised again once the program has ended
        self._handlers = {
            Op.HELLO: self._hello,
            Op.REGISTER_FUNCTION: self._register_function,
            Op.REGISTER_VAR: self._register_var,
            Op.MALLOC: self._malloc,
            Op.FREE: self._free,
            Op.MEMCPY: self._memcpy,
            Op.MEMCPY_2D: self._memcpy_2d,
            Op.MEMSET: self._memset,
            Op.LAUNCH: self._launch,
            Op.SYNCHRONIZE: self._synchronize,
            Op.RESET: self._reset,
            Op.FUNC_ATTRIBUTES: self._func_attributes,
            Op.UNSUPPORTED: self._unsupported,
        }

    def serve(self, sock: socket.socket, deadline: float | None) -> bool:
        """Answer requests until the program closes `sock` (or dies); False when `deadline` (monotonic) passed first."""
        try:
            while True:
                header = _receive(sock, HEADER.size, deadline)
                if header is None:
                    return True
                if header is _TIMED_OUT:
                    return False
                op, length = HEADER.unpack(header)
                payload = _receive(sock, length, None) if length else b""
                if payload is None:
                    return True
                sock.sendall(self.answer(op, payload))
        except (BrokenPipeError, ConnectionResetError):  # the program ended while a thread of it waited for a reply
            return True

    def answer(self, op: int, payload: bytes) -> bytes:
        """The reply to one request."""
        try:
            op = Op(op)
            if self.sticky is not None and op in _NEEDS_LIVE_CONTEXT:
                return encode_reply(self.sticky)
            return self._handlers[op](Reader(payload))
        except Exception as e:  # noqa: BLE001 - kept, and raised again when the program has ended
            self.failure = self.failure or e
            return encode_reply(STOP)

    # ------------------------------------------------------------------ start-up

    def _hello(self, r: Reader) -> bytes:
        return encode_reply(CudaError.SUCCESS)

    def _register_function(self, r: Reader) -> bytes:
        handle, host_fun, name = r.u64(), r.u64(), r.str()
        layout = self.device.register_function(handle, name)
        if layout is None:
            return encode_reply(CudaError.INVALID_DEVICE_FUNCTION)
        self.functions[host_fun] = name
        payload = struct.pack("<I", len(layout)) + b"".join(struct.pack("<II", o, s) for o, s in layout)
        return encode_reply(CudaError.SUCCESS, payload)

    def _register_var(self, r: Reader) -> bytes:
        handle, _host_var, _size, flags, name = r.u64(), r.u64(), r.u64(), r.u32(), r.str()
        alloc = self.device.register_variable(handle, name, managed=bool(flags & VarFlag.MANAGED))
        if alloc is None:
            return encode_reply(CudaError.INVALID_SYMBOL)
        return encode_reply(CudaError.SUCCESS, struct.pack("<Q", alloc.base))

    def _func_attributes(self, r: Reader) -> bytes:
        name = self.functions.get(r.u64())
        attrs = self.device.kernel_attributes(name) if name else None
        if attrs is None:
            return encode_reply(CudaError.INVALID_DEVICE_FUNCTION)
        payload = struct.pack("<QQQ", attrs.static_shared_bytes, attrs.const_bytes, attrs.local_bytes)
        return encode_reply(CudaError.SUCCESS, payload)

    # ------------------------------------------------------------------ memory

    def _malloc(self, r: Reader) -> bytes:
        size, kind, site = r.u64(), MemoryKind(r.u32()), r.site()
        block = self.device.heap.allocate(size, kind, site)
        if block is None:
            return encode_reply(CudaError.MEMORY_ALLOCATION)
        return encode_reply(CudaError.SUCCESS, struct.pack("<Q", block.allocation.base))

    def _free(self, r: Reader) -> bytes:
        address, kind, site = r.u64(), MemoryKind(r.u32()), r.site()
        return encode_reply(self.checks.free(address, kind, site))

    def _memcpy(self, r: Reader) -> bytes:
        dst, src, count, direction, site = r.u64(), r.u64(), r.u64(), r.u32(), r.site()
        return encode_reply(self.checks.copy(dst, src, count, direction, site))

    def _memcpy_2d(self, r: Reader) -> bytes:
        dst, dpitch, src, spitch, width, height = (r.u64() for _ in range(6))
        direction, site = r.u32(), r.site()
        return encode_reply(self.checks.copy_2d(dst, dpitch, src, spitch, width, height, direction, site))

    def _memset(self, r: Reader) -> bytes:
        dst, _value, count, site = r.u64(), r.u32(), r.u64(), r.site()
        return encode_reply(self.checks.memset(dst, count, site))

    # ------------------------------------------------------------------ launches and the context

    def _launch(self, r: Reader) -> bytes:
        host_fun, grid, block, shared_bytes, _stream = r.u64(), r.dims(), r.dims(), r.u64(), r.u64()
        site, params = r.site(), r.bytes()
        name = self.functions.get(host_fun)
        if name is None:
            return encode_reply(CudaError.INVALID_DEVICE_FUNCTION)
        frame = self.device.source_lines.frame(site)
        self.device.launches += 1
        try:
            status = run_launch(self.device, name, grid, block, shared_bytes, params, frame)
        except UserError as e:
            self.errors.append(f"{_prefix(frame.where())}the launch of {name} cannot be simulated: {e}")
            return encode_reply(STOP)
        if status in STICKY:
            self.sticky = CudaError(status)
            return encode_reply(CudaError.SUCCESS)
        return encode_reply(status)

    def _synchronize(self, r: Reader) -> bytes:
        return encode_reply(CudaError.SUCCESS)

    def _reset(self, r: Reader) -> bytes:
        self.device.reset(r.site())
        self.sticky = None
        return encode_reply(CudaError.SUCCESS)

    def _unsupported(self, r: Reader) -> bytes:
        site = r.site()
        frame = self.device.source_lines.frame(site)
        self.errors.append(unsupported_message(site.call, frame.where()))
        return encode_reply(CudaError.SUCCESS)


def unsupported_message(call: str, where: str | None) -> str:
    """Why the program was stopped at an unsupported call (`where`: its host line, when known)."""
    what = call if call.startswith("launch of kernel") else f"{call} is not supported by gpurace's simulated CUDA runtime"
    return f"{_prefix(where)}{what}; the program was stopped"


def _prefix(where: str | None) -> str:
    return f"{where}: " if where else ""


_TIMED_OUT = object()


def _receive(sock: socket.socket, n: int, deadline: float | None) -> bytes | object | None:
    """Exactly `n` bytes; None when the program closed the socket, `_TIMED_OUT` when `deadline` passed first."""
    chunks: list[bytes] = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                return _TIMED_OUT
        chunk = sock.recv(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
