"""Schedules that share schedule 0's run up to the first instruction whose order between warps matters.

`check` runs several schedules of one launch. Two of them, `reverse` and
`flip`, pick exactly as schedule 0 (`min-pc`) does until it first picks an
instruction whose order between warps can change what a thread observes:
an atomic, a fence, a strong load or store, an mbarrier operation
(`order_matters`; barriers are left out, since they release every
participant together whatever order they arrived in, and `reverse` differs
there only in that order). Up to that step, the *fork point*, their runs are
schedule 0's, so they need not be simulated again. In a kernel that loads,
reduces and only then takes a ticket (a last-block reduction) the fork point
comes after nearly all the work. The `random` schedules hold warps back from
the start, which can let other warps overtake their plain accesses, so they
share nothing and run from the start.

The sharing is a `fork()`. At the fork point a *template* process is forked
and waits; the parent runs on as schedule 0. For each shared schedule the
parent sends the template a policy, the template forks a *worker* that takes
that policy from the fork point on, finishes the launch and its detectors,
and sends its report back through a pipe; the parent takes the reports one at
a time, in schedule order, so results do not depend on timing. The processes
share memory copy-on-write, so a fork costs what the run changes after it. A
program's device memory under `gpurace exec` is a shared mapping
(`runtime.arena`): the template copies it into private memory at the same
addresses before the parent goes on, so only schedule 0 writes the program's
memory.

Event sinks passed to `check` (under `exec`: the launch's footprint, its
printf output, the uninitialised-read check of device memory) see schedule 0's
run in the parent and a forked schedule's suffix in its worker. Forking needs
each of them to say how (`shareable`): `first_run_only` (it keeps schedule 0's
run only), or `forked()` (called in the worker at the fork point),
`fork_result()` (what the worker sends back) and `absorb(result)` (the parent
takes it in, schedule by schedule). Other sinks watch every schedule from the
start, so with them nothing forks.

When schedule 0 never reaches a fork point, `reverse` and `flip` would run
exactly its run, and are not run again. Where `fork` is not available, or
this process's resident memory exceeds what the machine has available
(`fits_twice`), they run from the start as *followers*: `min-pc` up to the
fork point and their own policy after it, the same run a worker makes, so a
report does not depend on whether a fork was made.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import pickle
import struct
import sys
import traceback

import numpy as np

from gpurace.errors import UserError
from gpurace.sim.program import Program
from gpurace.sim.schedule import synchronises

_HEADER = struct.Struct("<Q")

FORKED_POLICIES = frozenset({"reverse", "flip"})
"""The policies that pick as `min-pc` does up to the fork point, and so fork from schedule 0's run."""


def order_matters(program: Program) -> np.ndarray:
    """Per pc, whether the order in which warps execute it can change what threads observe: `synchronises`,
    barriers excepted."""
    return np.array(
        [synchronises(ins) and ins.opcode not in ("bar", "barrier") for ins in program.instructions], dtype=np.bool_
    )


def shareable(sinks) -> bool:
    """Whether every sink can be forked with (module docstring)."""
    return all(getattr(s, "first_run_only", False) or hasattr(s, "absorb") for s in sinks)


def fits_twice() -> bool:
    """Whether this process's resident memory fits in what the machine has available (a fork may come to
    hold a second copy of every page the runs after it change)."""
    try:
        with open("/proc/self/statm") as f:
            resident = int(f.read().split()[1]) * mmap.PAGESIZE
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return False
    return resident <= available


class SharedPrefix:
    """One launch's fork point: the template process, the pipes to it, and the role of this process.

    Roles: the *parent* (schedule 0, and the caller of `run`), the *template* (waits at the fork point, never
    returns from `reached`), a *worker* (continues the launch under `policy`; `_check_schedules` sends its
    report with `finish` and exits)."""

    def __init__(self, follow=None):
        """With a policy to `follow`, a run from the start that takes that policy at the fork point without
        forking (role "follower"): the same run a worker makes, where no fork is made."""
        self.role = "parent" if follow is None else "follower"
        self.state = "pending"  # "forked", "declined" (no fork: run schedules from the start), "worker" or "followed"
        self.steps = 0  # schedule 0's steps at the fork point
        self.steps_before = 0  # the steps of the waves of blocks before the running one (`sim.waves`)
        self.policy = None  # a worker's or follower's policy, once it took it
        self._follow = follow
        self._pid = 0
        self._commands = -1  # parent -> template: pickled policies
        self._results = -1  # workers -> parent: pickled reports

    @property
    def pending(self) -> bool:
        return self.state == "pending"

    def min_pc_steps(self, run_steps: int) -> int:
        """The steps a run of `run_steps` made as `min-pc`: up to the fork point, or all of them when it never came."""
        return run_steps if self.pending else self.steps

    # ------------------------------------------------------------------ at the fork point (in the engine)

    def reached(self, engine) -> object | None:
        """Schedule 0 is about to run an instruction whose order matters: fork the template. Returns None in the
        parent, and in a worker or follower the policy it runs from here on (the template never returns)."""
        self.steps = self.steps_before + engine.stats.steps
        if self.role == "follower":
            self.state, self.policy = "followed", self._follow
            return self.policy
        if not hasattr(os, "fork") or not fits_twice():
            self.state = "declined"
            return None
        commands, results, ready = os.pipe(), os.pipe(), os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            for fd in (*commands, *results, *ready):
                os.close(fd)
            self.state = "declined"
            return None
        if pid:
            os.close(commands[0])
            os.close(results[1])
            os.close(ready[1])
            self._pid, self._commands, self._results = pid, commands[1], results[0]
            ok = os.read(ready[0], 1)
            os.close(ready[0])
            self.state = "forked" if ok == b"r" else "declined"
            if self.state == "declined":
                self.close()
            return None
        os.close(commands[1])
        os.close(results[0])
        os.close(ready[0])
        return self._template(engine, commands[0], results[1], ready[1])

    def _template(self, engine, commands: int, results: int, ready: int):
        """The template's life: make the device memory private, then fork a worker per policy received."""
        self.role = "template"
        try:
            _privatise(engine.mem)
            os.write(ready, b"r")
            os.close(ready)
            while True:
                policy = _receive(commands)
                if policy is None:
                    os._exit(0)
                pid = os.fork()
                if pid == 0:
                    os.close(commands)
                    self.role, self.state, self.policy, self._results = "worker", "worker", policy, results
                    for sink in engine.sinks:
                        if hasattr(sink, "forked"):
                            sink.forked()
                    return policy
                _, status = os.waitpid(pid, 0)
                if status:  # the worker died without its answer (a signal, the system's memory killer)
                    _send(results, ("error", f"the process of the {policy.kind} schedule ended with wait status {status}"))
        except BaseException:  # the template must never run the parent's code on
            os._exit(3)

    # ------------------------------------------------------------------ parent

    def run(self, policy, sinks):
        """Schedule `policy` from the fork point (parent only): the worker's report, its `sinks`' results absorbed,
        or its error raised again."""
        _send(self._commands, policy)
        kind, value = _receive(self._results)
        if kind == "error":
            if isinstance(value, UserError):
                raise value
            raise RuntimeError(f"a schedule's process failed:\n{value}")
        report, results = value
        for sink, result in zip(sinks, results):
            if result is not None:
                sink.absorb(result)
        return report

    def close(self) -> None:
        """Stop the template (parent only)."""
        if self._pid:
            try:
                _send(self._commands, None)
            except OSError:
                pass
            os.close(self._commands)
            os.close(self._results)
            os.waitpid(self._pid, 0)
            self._pid = 0

    # ------------------------------------------------------------------ worker

    def finish(self, report=None, sinks=(), error: BaseException | None = None) -> None:
        """Send a worker's report and its `sinks`' results (or its error) to the parent, and end the worker."""
        try:
            if error is None:
                message = ("report", (report, [s.fork_result() if hasattr(s, "absorb") else None for s in sinks]))
            elif isinstance(error, UserError):
                message = ("error", error)
            else:
                message = ("error", "".join(traceback.format_exception(error)))
            _send(self._results, message)
        finally:
            os._exit(0)


def _send(fd: int, value) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int):
    size = _HEADER.unpack(_read_exactly(fd, _HEADER.size))[0]
    return pickle.loads(_read_exactly(fd, size))


def _read_exactly(fd: int, n: int) -> bytes:
    parts, left = [], n
    while left:
        part = os.read(fd, min(left, 1 << 24))
        if not part:
            raise EOFError("a schedule's process ended without an answer")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


_libc = None


def _privatise(mem) -> None:
    """Replace the shared mappings of a program's device memory by private copies at the same addresses, so
    that views of them stay valid and writes stay in this process."""
    device = mem.device
    if device is None:
        return
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    saved = device.snapshot()
    for _table, store in device.spaces():
        address = store.ctypes.data
        length = -(-store.size // mmap.PAGESIZE) * mmap.PAGESIZE
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x10  # MAP_FIXED
        got = _libc.mmap(address, length, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0)
        if got != address:
            raise OSError(ctypes.get_errno(), "could not map the device memory privately")
    device.restore(saved)
