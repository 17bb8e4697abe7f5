"""`exec_program`: build a CUDA program, run its host code natively against gpurace's runtime, collect findings.

The steps: build the program (`build.py`) and gpurace's `libcudart.so.13`
(`shim_build.py`); compile each CUDA source to PTX once more for the
simulator (`frontend.load`); create the device (`device.py`: the arenas,
with every module's variables in place); start the program
(`process.py`) with the arenas and a socket to the device server
(`server.py`), which answers its CUDA calls until it ends. A program built
already (one ELF file in place of sources) is run as it is, its PTX taken
from the fatbinary it carries (`prebuilt.py`).

Which launches are checked is `filters.LaunchFilter`'s choice (the others
run without detection), and a suppressions file (`report.suppressions`)
takes the findings it names out of the result, once the program has ended.

The program's host code is the user's own code, run natively: that is what
`exec` is for, and it says so. Its stdout and stderr pass through unchanged
(or are captured, `capture_output`), and its exit status comes back in the
result, which the command line turns into gpurace's own (`ExecResult.exit_code`).
"""

from __future__ import annotations

import gc
import os
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpurace.detect.findings import PERFORMANCE, Finding
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.hip import any_hip, compiled_as_cuda, hip_spelling, report_notes
from gpurace.frontend.link import load_linked
from gpurace.frontend.load import load_module
from gpurace.frontend.sandbox import CompilerDir
from gpurace.limits import EXEC_TIMEOUT_S, Limits
from gpurace.report.model import Report
from gpurace.report.suppressions import Suppressions
from gpurace.runtime import protocol
from gpurace.runtime.build import (
    SOURCE_SUFFIXES,
    build_program,
    check_program_source,
    device_flags,
    relocatable,
    source_text,
)
from gpurace.runtime.device import Device
from gpurace.runtime.filters import LaunchFilter
from gpurace.runtime.launch import LaunchOutcome
from gpurace.runtime.nvrtc_library import build_folders, nvrtc_root
from gpurace.runtime.prebuilt import is_prebuilt, load_prebuilt
from gpurace.runtime.process import Program
from gpurace.runtime.server import DeviceServer, unsupported_message
from gpurace.runtime.shim_build import NVRTC_CAPTURE_NAME, shim_directory
from gpurace.runtime.sites import SourceLines
from gpurace.words import plural

EXIT_UNHANDLED = 2


@dataclass
class ExecResult:
    """What one run of a program showed.

    `findings` are merged across the run (host-side checks and every checked launch: `checked` of the
    `launches`), less the suppressed ones, which `suppressed` counts (None without suppressions);
    `partial_footprints` counts the launches whose footprint outgrew its budget (`detect.footprint`), against
    which fewer stream races could be seen; `replayed` those that repeated an earlier launch exactly and were
    not simulated again (`runtime.repeats`; a replayed launch that the filters select counts as checked);
    `status` is the program's own exit status (128 + N when signal N ended
    it); `errors` say why the program could not be run to its end under
    gpurace (an unsupported CUDA call, a launch the simulator cannot run,
    the time limit), each naming the call and its host line where known;
    `stdout`/`stderr` hold its output when it was captured.
    """

    findings: list[Finding]
    status: int
    errors: list[str]
    launches: int
    checked: int
    suppressed: int | None = None
    partial_footprints: int = 0
    replayed: int = 0
    stdout: str | None = None
    stderr: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings and not self.errors

    def report(self, program: str, options: dict) -> Report:
        """The run as a `Report` for the renderers: the program in place of a kernel, every launch's findings, and
        how many launches were checked when filters left some out."""
        counts = [plural(self.launches, "launch", "launches")]
        stats = {"launches": self.launches, "checked_launches": self.checked}
        if self.checked != self.launches:
            counts.append(f"{self.checked} checked")
        if self.replayed:
            counts.append(f"{self.replayed} replayed")
            stats["replayed_launches"] = self.replayed
        if self.suppressed is not None:
            stats["suppressed"] = self.suppressed
        if self.partial_footprints:
            stats["partial_footprints"] = self.partial_footprints
        return Report(
            kernel=f"{program} ({', '.join(counts)})",
            mangled=program,
            source=None,
            launch={
                "program": program, "launches": self.launches, "status": self.status, **options,
                **({"notes": list(self.notes)} if self.notes else {}),
            },
            findings=self.findings,
            stats=stats,
        )

    def exit_code(self, error_exitcode: int = 1) -> int:
        """gpurace's exit status: 2 when the program could not be handled, `error_exitcode` when there are
        findings (performance notes aside), else the program's own status."""
        if self.errors:
            return EXIT_UNHANDLED
        if any(f.severity != PERFORMANCE for f in self.findings):
            return error_exitcode
        return self.status


def exec_program(
    sources: str | os.PathLike | Iterable[str | os.PathLike],
    args: Iterable[str] = (),
    *,
    include_dirs: Iterable[str | os.PathLike] = (),
    defines: Iterable[str] = (),
    arch: str = DEFAULT_ARCH,
    nvcc_flags: Iterable[str] = (),
    limits: Limits | None = None,
    leak_check: bool = False,
    capture_output: bool = False,
    detector: str = "auto",
    model: str = "cuda",
    schedules: int | None = None,
    seed: int = 0,
    max_steps: int = 2_000_000,
    shadow_cells: int = 4,
    kernel_name: str | None = None,
    kernel_exclude: str | None = None,
    launch_skip: int = 0,
    launch_count: int | None = None,
    suppressions: Suppressions | None = None,
    on_launch: Callable[[LaunchOutcome], None] | None = None,
) -> ExecResult:
    """Build the program from `sources` and run it with `args`, every CUDA call answered by gpurace.

    `sources` may instead be one program built already (an ELF executable
    linked with `-cudart shared` that carries PTX: `prebuilt.rebuild_flags`),
    which runs as it is, `arch` choosing among its PTX texts.
    `include_dirs`, `defines` and `arch` apply to host and device code;
    `nvcc_flags` are extra nvcc options (`build.check_nvcc_flag` says which).
    `leak_check` reports allocations never freed; `capture_output` keeps the
    program's stdout and stderr in the result instead of passing them on.
    Every kernel launch is checked as `gpurace.check.check` checks one, with
    `detector`, `model`, `schedules`, `seed`, `max_steps` and `shadow_cells`, unless the
    launch filters leave it out (`kernel_name`/`kernel_exclude`: regular
    expressions searched in the kernel's name; then the first `launch_skip`
    launches of the kernels they let through are left out and the next
    `launch_count` checked, see `filters.LaunchFilter`): such a launch runs
    without detection, and its faults still reach the program as CUDA errors.
    `suppressions` take the findings they name out of the result;
    `on_launch` is told the outcome of every launch as it ends (a progress line).
    The whole run stays within `limits`: the compilers' memory and time, the
    simulated device's memory (half the budget), and `timeout` for
    everything, after which the program is stopped.
    """
    limits = (limits or Limits(timeout=EXEC_TIMEOUT_S)).started()
    launch_filter = LaunchFilter(kernel_name, kernel_exclude, launch_skip, launch_count)
    paths = [Path(sources)] if isinstance(sources, (str, os.PathLike)) else [Path(s) for s in sources]
    include_dirs, defines, nvcc_flags = list(include_dirs), list(defines), list(nvcc_flags)
    prebuilt = _prebuilt(paths, include_dirs, defines, nvcc_flags)
    if prebuilt is None:
        paths = [check_program_source(p) for p in paths]
    shim = shim_directory(limits)
    with CompilerDir() as workdir:
        if prebuilt is not None:
            executable, modules = load_prebuilt(prebuilt, arch=arch, limits=limits)
        else:
            nvrtc = build_folders(workdir)  # after the user's: their own NVRTC comes first
            if nvrtc is not None:
                include_dirs.append(nvrtc[0])
            executable = build_program(
                paths,
                workdir=workdir,
                include_dirs=include_dirs,
                defines=defines,
                arch=arch,
                nvcc_flags=nvcc_flags,
                library_dirs=[shim, *nvrtc[1:]] if nvrtc else [shim],
                limits=limits,
            )
            device_sources = [p for p in paths if p.suffix.lower() == ".cu" or compiled_as_cuda(p, source_text(p))]
            compile_options = dict(
                include_dirs=include_dirs, defines=defines, arch=arch, limits=limits, nvcc_flags=device_flags(nvcc_flags)
            )
            if relocatable(nvcc_flags) and device_sources:
                modules = [load_linked(device_sources, **compile_options)]  # one device program, as nvlink makes it
            else:
                modules = [load_module(p, **compile_options) for p in device_sources]
        options = dict(
            detector=detector, model=model, schedules=schedules, seed=seed, max_steps=max_steps, shadow_cells=shadow_cells
        )
        device = Device(
            modules,
            arch=arch,
            limits=limits,
            source_lines=SourceLines(workdir.links),
            check_options=options,
            launch_filter=launch_filter,
            on_launch=on_launch,
        )
        try:
            result = _run(executable, list(args), device, shim, limits, leak_check, capture_output)
        finally:
            device.close()
            gc.collect()  # the last launches' engines and detectors: the report must not meet the memory budget
        result.notes = report_notes(modules)
        if any_hip(modules):
            _spell_for_hip(result)
    if suppressions is not None:
        result.findings, result.suppressed = suppressions.split(result.findings, None)
    return result


def _spell_for_hip(result: ExecResult) -> None:
    """Name the CUDA runtime's calls, errors and allocations in `result` as a HIP program does (`hip_spelling`)."""
    for f in result.findings:
        f.cause = hip_spelling(f.cause)
        f.sites = tuple(replace(site, op=hip_spelling(site.op)) for site in f.sites)
        if f.address is not None:
            f.address = replace(f.address, allocation=hip_spelling(f.address.allocation))
        f.details = {k: hip_spelling(v) if isinstance(v, str) else v for k, v in f.details.items()}
    result.errors = [hip_spelling(e) for e in result.errors]


def _prebuilt(paths: list[Path], include_dirs: list, defines: list, nvcc_flags: list) -> Path | None:
    """The program to run as it is, when `paths` is one file built already (an ELF file, not a source); else None.

    Build options have nothing to apply to such a program, so they are refused rather than ignored.
    """
    programs = [p for p in paths if p.suffix.lower() not in SOURCE_SUFFIXES and is_prebuilt(p)]
    if not programs:
        return None
    if len(paths) > 1:
        raise UserError(f"{programs[0]}: gpurace exec runs the sources of a program or one program built already, not both")
    given = [name for name, values in (("-I", include_dirs), ("-D", defines), ("--nvcc-flag", nvcc_flags)) if values]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise UserError(f"{programs[0]} is built already: {' and '.join(given)} {verb} only to building a program from sources")
    return programs[0]


def _run(
    executable: Path, args: list[str], device: Device, shim: Path, limits: Limits, leak_check: bool, capture: bool
) -> ExecResult:
    server = DeviceServer(device)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours:
        with theirs:
            fds = (theirs.fileno(), device.global_arena.fd, device.const_arena.fd)
            program = Program(executable, args, _environment(device, fds, shim), fds, capture)
        errors = []
        # What lives now (gpurace's modules, the device) lives through the run: out of the collector's sight,
        # the collection before a large launch (`sim.collector.before_launch`) does not traverse it every time.
        gc.collect()
        gc.freeze()
        try:
            if not server.serve(ours, limits.deadline):
                program.kill()
                errors.append(f"the program ran longer than the time limit of {limits.timeout:g} s (--timeout) and was stopped")
        except BaseException:
            program.kill()
            raise
        finally:
            gc.unfreeze()
            status = program.wait()
    if server.failure is not None:
        raise server.failure
    errors += server.errors + [unsupported_message(name, None) for name in program.missing_symbols]
    if leak_check and not errors:
        server.checks.leaks(server.virtual.unreleased())
    return ExecResult(
        findings=device.findings.sorted(),
        status=status,
        errors=errors,
        launches=device.launches,
        checked=device.checked_launches,
        partial_footprints=server.partial_footprints,
        replayed=device.repeats.replayed,
        stdout=program.stdout,
        stderr=program.stderr,
    )


def _environment(device: Device, fds: tuple[int, int, int], shim: Path) -> dict[str, str]:
    """The program's environment: the user's, with gpurace's runtime first in the library path (NVRTC's
    package last), gpurace's NVRTC capture preloaded, and the variables that tell the runtime where the device
    is (see `protocol`)."""
    socket_fd, global_fd, const_fd = fds
    env = dict(os.environ)
    root = nvrtc_root()
    nvrtc_lib = str(root / "lib") if root is not None and ":" not in str(root) else None
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(shim), env.get("LD_LIBRARY_PATH"), nvrtc_lib) if p)
    capture = str(shim / NVRTC_CAPTURE_NAME)
    if not any(c.isspace() for c in capture):  # LD_PRELOAD splits at spaces
        env["LD_PRELOAD"] = " ".join(p for p in (capture, env.get("LD_PRELOAD")) if p)
    env.update(
        {
            protocol.ENV_SOCKET: str(socket_fd),
            protocol.ENV_GLOBAL_FD: str(global_fd),
            protocol.ENV_GLOBAL_BASE: f"{device.global_arena.base:x}",
            protocol.ENV_GLOBAL_BYTES: str(device.global_arena.nbytes),
            protocol.ENV_CONST_FD: str(const_fd),
            protocol.ENV_CONST_BASE: f"{device.const_arena.base:x}",
            protocol.ENV_CONST_BYTES: str(device.const_arena.nbytes),
            protocol.ENV_WINDOW_BASE: f"{device.global_arena.spread.base:x}",
            protocol.ENV_WINDOW_BYTES: str(device.global_arena.spread.limit - device.global_arena.spread.base),
            protocol.ENV_DEVICE_CC: str(device.capability),
            protocol.ENV_DEVICE_SHARED_OPTIN: str(device.shared_optin_bytes),
        }
    )
    return env
