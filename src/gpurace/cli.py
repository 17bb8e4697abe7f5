"""The `gpurace` command.

Every subcommand takes a kernel file plus the compiler options of
`source_options`; every `UserError` raised below a subcommand becomes
`gpurace: error: <message>` on stderr and exit status 2 (the same status click
uses for usage errors), never a traceback. Exit statuses 0 and 1 are left to
the subcommands (clean / findings). Anything else that escapes a subcommand is
a bug in gpurace: it becomes a one-paragraph message that names the input
and asks for a report, and exit status 3, so that a crash is never read as
"findings" by a CI job.
"""

from __future__ import annotations

import io
import json
import math
import os
import time
from typing import Callable

import click
from click.core import ParameterSource
import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpurace import __version__
from gpurace.check import DEFAULT_SCHEDULES, DETECTORS, MAX_SCHEDULES, build_report
from gpurace.check import check as run_check
from gpurace.detect.base import MODELS
from gpurace.detect.tsan import DEFAULT_SHADOW_CELLS, SHADOW_CELLS
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.gpuverify import LaunchHeader, read_launch_header
from gpurace.frontend.hip import report_notes, set_hip_path
from gpurace.frontend.instantiate import load_instantiated
from gpurace.frontend.kernels import KernelInfo, describe_kernels
from gpurace.frontend.link import load_linked
from gpurace.frontend.load import load_module
from gpurace.frontend.numba_kernels import compute_capability, drop_generated_volatile, is_numba_file, load_numba_launch
from gpurace.frontend.triton_files import compile_file as compile_triton_file
from gpurace.frontend.triton_files import is_triton_file, parse_meta, resolve_args
from gpurace.frontend.triton_kernels import launch_args
from gpurace.triton import drop_generated_same_value
from gpurace.frontend.sandbox import mapped_bytes
from gpurace import allocator
from gpurace.limits import (
    DEFAULT_MAX_CALL_DEPTH,
    DEFAULT_MAX_THREADS,
    DEFAULT_RESIDENT_THREADS,
    DEFAULT_TIMEOUT_S,
    EXEC_TIMEOUT_S,
    Limits,
    default_max_memory,
    format_size,
    limit_address_space,
    parse_size,
)
from gpurace.report.benign import STAT as SAME_VALUE_DROPPED
from gpurace.report.benign import drop_same_value, split_same_value
from gpurace.report.json_format import to_json
from gpurace.report.sarif import to_sarif
from gpurace.report.suppressions import Suppressions, suppress
from gpurace.report.text import automatic_arguments, render_text
from gpurace.search import DEFAULT_GENERATIONS, DEFAULT_POPULATION, MAX_GENERATIONS, MAX_POPULATION, SEARCH_STEP_BUDGET
from gpurace.search import search as run_search
from gpurace.search.progress import SearchProgressBar
from gpurace.sim.engine import POLICIES
from gpurace.sim.geometry import check_dims, parse_dims
from gpurace.sim.launch import names_instantiation, simulate
from gpurace.trace.binary import write as write_binary_trace
from gpurace.trace.record import TraceRecorder
from gpurace.trace.replay import analyze as analyze_trace
from gpurace.verify import DEFAULT_QUERY_BUDGET, verify_module
from gpurace.verify.report import as_json as verify_json
from gpurace.verify.report import as_text as verify_text
from gpurace.verify.report import exit_status as verify_exit_status
from gpurace.verify.sarif import as_sarif as verify_sarif
from gpurace.words import plural

INPUT_ERROR_STATUS = 2
INTERNAL_ERROR_STATUS = 3


class InputError(click.ClickException):
    """A UserError on its way out of click: printed as `gpurace: error: ...`, exit status 2."""

    exit_code = INPUT_ERROR_STATUS

    def show(self, file=None) -> None:
        click.echo(f"gpurace: error: {self.format_message()}", err=True)


class InternalError(click.ClickException):
    """A bug in gpurace on its way out of click: a message asking for a report, exit status 3, no traceback."""

    exit_code = INTERNAL_ERROR_STATUS

    def show(self, file=None) -> None:
        click.echo(f"gpurace: internal error: {self.format_message()}", err=True)


class GpuraceGroup(click.Group):
    """A click group whose subcommands may raise UserError freely, and whose crashes exit 3."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["gpurace.argv"] = list(args)  # for the internal-error message, which repeats the command
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except UserError as e:
            raise InputError(str(e)) from e
        except MemoryError:
            raise InputError(_memory_message(ctx)) from None
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as e:
            if os.environ.get("GPURACE_TRACEBACK"):
                import traceback

                traceback.print_exc()
            raise InternalError(_internal_message(ctx, e)) from e


def _inputs(ctx: click.Context) -> str:
    """The command line of the failing command, as the user could repeat it."""
    import shlex

    return shlex.join(["gpurace", *ctx.meta.get("gpurace.argv", [])])


def _internal_message(ctx: click.Context, error: Exception) -> str:
    import traceback

    frame = traceback.extract_tb(error.__traceback__)[-1]
    where = f"{os.path.basename(frame.filename)}:{frame.lineno}"
    return (
        f"gpurace {__version__} failed on `{_inputs(ctx)}` with {type(error).__name__} "
        f"({error}) at {where}. This is a bug in gpurace, not a finding about the kernel: please report it to "
        "gpurace's developers with this message and the input files (GPURACE_TRACEBACK=1 prints the traceback)."
    )


def _memory_message(ctx: click.Context) -> str:
    budget = ctx.meta.get("gpurace.limits.max_memory") or default_max_memory()
    return (
        f"`{_inputs(ctx)}` needed more memory than its budget of {format_size(budget)} allows (--max-memory); "
        "raise it, or check a smaller launch"
    )


def _hip_path(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        set_hip_path(value)


hip_path_option = click.option(
    "--hip-path",
    metavar="DIR",
    expose_value=False,
    callback=_hip_path,
    help="Where HIP's headers are, for .hip files and files that include <hip/...> (DIR/include/hip/hip_runtime.h "
    "or DIR/hip/hip_runtime.h; default $HIP_PATH, /opt/rocm, /usr, ~/.cache/gpurace/hip/usr).",
)


def _warp_size(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
    if value is not None and value != 32:
        raise UserError(
            f"--warp-size {value}: gpurace simulates 32-lane warps only, as NVIDIA GPUs have them; HIP sources are "
            "compiled through HIP's NVIDIA path, where warpSize is 32, so AMD's 64-lane wavefronts cannot be simulated"
        )


warp_size_option = click.option(
    "--warp-size",
    type=int,
    metavar="32",
    expose_value=False,
    callback=_warp_size,
    help="Lanes per warp: 32, the only size gpurace simulates (64-lane AMD wavefronts are refused).",
)


def source_options(command: Callable) -> Callable:
    """FILE, -I DIR, -D NAME[=VALUE], --arch, --hip-path, --warp-size and -G, shared by every command that loads a kernel file."""
    decorators = [
        click.argument("file", type=click.Path(dir_okay=False, path_type=str)),
        click.option("-I", "include_dirs", multiple=True, metavar="DIR", help="Add DIR to the include path."),
        click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Define a preprocessor macro."),
        click.option(
            "--arch", default=DEFAULT_ARCH, show_default=True, help="Target architecture (compute_XX or sm_XX)."
        ),
        hip_path_option,
        warp_size_option,
        click.option(
            "-G",
            "--device-debug",
            is_flag=True,
            help="Compile without optimisation, so that every access of the source happens (files written for "
            "GPUVerify always are).",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def _store_limit(ctx: click.Context, param: click.Parameter, value) -> None:
    if value is not None:
        ctx.meta[f"gpurace.limits.{param.name}"] = value


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    _store_limit(ctx, param, None if value is None else parse_size(value, "--max-memory"))


def limit_options(*, launch: bool, timeout: float = DEFAULT_TIMEOUT_S) -> Callable:
    """--max-memory and --timeout for every command; --max-threads and --max-call-depth for those that launch.

    They do not appear in the commands' signatures: `command_limits()` reads them, since every layer below
    the command takes them as one `Limits` value.
    """
    options = [
        click.option(
            "--max-memory",
            metavar="SIZE",
            expose_value=False,
            callback=_size,
            help=f"Memory gpurace may use (8G, 512M; default half of this machine's memory, "
            f"{format_size(default_max_memory())}); a launch that needs more stops with an error before it starts.",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0),
            default=timeout,
            show_default=True,
            expose_value=False,
            callback=_store_limit,
            help="Wall-clock budget in seconds for the whole command (0: none); a run still going when it is spent "
            "ends with a timeout finding, and a verification's questions still open are unknown.",
        ),
    ]
    if launch:
        options += [
            click.option(
                "--max-threads",
                type=click.IntRange(min=1),
                default=DEFAULT_MAX_THREADS,
                show_default=True,
                expose_value=False,
                callback=_store_limit,
                help="Largest launch (grid x block threads) gpurace simulates.",
            ),
            click.option(
                "--resident-threads",
                type=click.IntRange(min=1, max=DEFAULT_MAX_THREADS),
                default=DEFAULT_RESIDENT_THREADS,
                show_default=True,
                expose_value=False,
                callback=_store_limit,
                help="Threads simulated at once: a larger launch runs in waves of whole blocks, each starting when "
                "the one before has finished, as a GPU runs a grid larger than it holds.",
            ),
            click.option(
                "--max-call-depth",
                type=click.IntRange(min=1, max=1 << 20),
                default=DEFAULT_MAX_CALL_DEPTH,
                show_default=True,
                expose_value=False,
                callback=_store_limit,
                help="Nested calls per thread; deeper recursion ends the run with a stack-overflow finding.",
            ),
        ]

    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


_ENFORCE_ADDRESS_LIMIT = False
"""Set by `main()`: only a gpurace process of its own makes the memory budget its address-space limit."""


def command_limits() -> Limits:
    """The `Limits` of the running command, from its limit options; started, so the time budget runs from here."""
    meta = click.get_current_context().meta
    given = {k.removeprefix("gpurace.limits."): v for k, v in meta.items() if k.startswith("gpurace.limits.")}
    timeout = given.pop("timeout", DEFAULT_TIMEOUT_S)
    limits = Limits(timeout=timeout or None, **given).started()
    if _ENFORCE_ADDRESS_LIMIT:
        limit_address_space(limits.max_memory, mapped_bytes())
    return limits


def load_from_options(
    file: str, include_dirs: tuple[str, ...], defines: tuple[str, ...], arch: str, device_debug: bool, limits: Limits,
    kernel: str | None = None,
):
    """The module for the common options of `source_options`.

    The `-D` options of the file's GPUVerify header (`//--blockDim=64 -DN=64`)
    are added, except for names that `defines` defines itself. A `kernel` with template arguments that the
    file does not instantiate is instantiated (`frontend.instantiate`).
    """
    header = file_header(file)
    if header is not None:
        given = {d.split("=", 1)[0] for d in defines}
        defines = (*(d for d in header.defines if d.split("=", 1)[0] not in given), *defines)
    options = dict(include_dirs=include_dirs, defines=defines, arch=arch, device_debug=device_debug, limits=limits)
    module = load_module(file, **options)
    if kernel is None or "<" not in kernel or file.endswith(".ptx") or names_instantiation(module, kernel):
        return module
    try:
        return load_instantiated(file, kernel, **options)
    except UserError as e:
        raise UserError(f"--kernel {kernel!r}: {file} does not instantiate it, and instantiating it failed: {e}") from None


def file_header(file: str) -> LaunchHeader | None:
    """The GPUVerify launch header of FILE, or None (also when FILE is missing: loading it says so)."""
    return read_launch_header(file) if os.path.isfile(file) else None


@click.group(cls=GpuraceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpurace")
def cli() -> None:
    """Find data races and synchronisation bugs in CUDA kernels by simulating their PTX."""


@cli.command()
@source_options
@limit_options(launch=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def kernels(
    file: str, include_dirs: tuple[str, ...], defines: tuple[str, ...], arch: str, device_debug: bool, fmt: str
) -> None:
    """List the kernels in FILE with their parameters and static shared memory."""
    infos = describe_kernels(load_from_options(file, include_dirs, defines, arch, device_debug, command_limits()))
    if fmt == "json":
        click.echo(json.dumps({"kernels": [_kernel_json(k) for k in infos]}, indent=2))
    else:
        _print_kernels(infos)


def _kernel_json(k: KernelInfo) -> dict:
    return {
        "name": k.name,
        "mangled": k.mangled,
        "params": [{"name": p.name, "cpp_name": p.cpp_name, "type": p.type, "size": p.size} for p in k.params],
        "shared_bytes": k.shared_bytes,
    }


def _print_kernels(infos: list[KernelInfo]) -> None:
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 160)
    if not infos:
        console.print("no kernels")
        return
    for k in infos:
        console.print(f"[bold]{escape(k.name)}[/bold]  ({k.mangled})  static shared memory: {plural(k.shared_bytes, 'byte')}")
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("#", justify="right")
        table.add_column("parameter")
        table.add_column("PTX name")
        table.add_column("C++ type")
        table.add_column("PTX type")
        table.add_column("bytes", justify="right")
        for i, p in enumerate(k.params):
            table.add_row(str(i), p.cpp_name or "?", p.name, escape(p.type or "?"), p.ptx_type, str(p.size))
        console.print(table)
        console.print()


def launch_options(command: Callable) -> Callable:
    """--kernel, --grid, --block, --cluster, --arg, --global, --shared-bytes, --seed, --max-steps: one launch, shared
    by `run` and `check`."""
    decorators = [
        click.option("--kernel", default=None, help="Kernel to launch (demangled or mangled name); needed when FILE has several."),
        click.option("--grid", default=None, help="Grid dimensions X[,Y[,Z]]; default: the file's GPUVerify header (//--gridDim=...)."),
        click.option("--block", default=None, help="Block dimensions X[,Y[,Z]]; default: the file's GPUVerify header (//--blockDim=...)."),
        click.option(
            "--cluster",
            default=None,
            help="Thread-block cluster dimensions X[,Y[,Z]] (sm_90+; at most 8 blocks, dividing the grid); "
            "default: the kernel's __cluster_dims__, else clusters of one block.",
        ),
        click.option(
            "--arg",
            "args",
            multiple=True,
            metavar="SPEC",
            help="One per kernel parameter, in order: a scalar (1024, -3, 2.5), a buffer "
            "buf:COUNT[:INIT] / TYPE:COUNT[:INIT] (TYPE i8..i64, u8..u64, f16, f32, f64; "
            "INIT zeros, ones, iota, rand or file:PATH.npy), or auto (a buffer that grows as the kernel "
            "touches it; for a scalar: the thread count, 1.0 or true), or struct:FIELD=SPEC,... for a struct's "
            "fields, or tensormap:TYPE:ROWSxCOLS:BOXROWSxBOXCOLS:ARG for a CUtensorMap over the buffer of "
            "argument ARG (0-based). No --arg at all: auto for every parameter.",
        ),
        click.option(
            "--global",
            "global_vars",
            multiple=True,
            metavar="NAME=SPEC",
            callback=_global_vars,
            help="Set the __device__ (or __constant__) variable NAME as if a parameter of its type: a buffer, null, a number, auto, "
            "bytes:... or struct:... (repeatable). No --arg at all: pointer variables without an initialiser "
            "that the kernel uses get automatic buffers.",
        ),
        click.option(
            "--shared-bytes",
            default=None,
            type=click.IntRange(0, 1 << 31),
            help="Dynamic shared memory per block. Default: 0, or for a kernel with an extern __shared__ array "
            "the bytes its indexing reaches in a first run with 48 KiB per block (the report says how many).",
        ),
        click.option(
            "--seed", default=0, show_default=True, type=click.IntRange(0, (1 << 63) - 1), help="Seed for rand buffers and random schedules."
        ),
        click.option(
            "--max-steps",
            default=2_000_000,
            show_default=True,
            type=click.IntRange(1, 1 << 40),
            help="Scheduler step budget; a run that exceeds it is reported as a livelock. With check --search: "
            "the budget of each candidate launch, default 10000; a candidate that exceeds it is discarded.",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def _global_vars(_ctx: click.Context, _param: click.Parameter, items: tuple[str, ...]) -> dict[str, str]:
    """--global NAME=SPEC options as {NAME: SPEC}; a UserError (exit 2) for an item without `=`."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, spec = item.partition("=")
        if not eq or not name.strip() or not spec.strip():
            raise UserError(f"--global {item!r}: expected NAME=SPEC, e.g. --global data=buf:64")
        if name.strip() in out:
            raise UserError(f"--global {item!r}: {name.strip()} is given twice")
        out[name.strip()] = spec.strip()
    return out


def _cluster_dims(cluster: str | None) -> tuple[int, int, int] | None:
    """`--cluster X[,Y[,Z]]` as three ints (None: not given)."""
    return None if cluster is None else parse_dims(cluster, "cluster")


def launch_dims(file: str, grid: str | None, block: str | None, *, required: bool = True):
    """(grid, block, header) of a launch of FILE: `--grid`/`--block` win over its GPUVerify header.

    Without dimensions from either place the launch cannot run, unless they
    are not `required` (an input search chooses them; verify covers every
    launch): they are then None.
    """
    header = file_header(file)
    grid_dims = parse_dims(grid, "grid") if grid is not None else (header.grid if header else None)
    block_dims = parse_dims(block, "block") if block is not None else (header.block if header else None)
    # The one place that decides a launch cannot run without both dimensions.
    missing = [f"--{what}" for what, dims in (("grid", grid_dims), ("block", block_dims)) if dims is None]
    if missing and required:
        raise UserError(
            f"{file}: no launch dimensions: pass {' and '.join(missing)}, "
            "or start the file with a GPUVerify header such as //--blockDim=64 --gridDim=4"
        )
    return grid_dims, block_dims, header


def _load_suppressions(ctx: click.Context, _param: click.Parameter, path: str | None) -> None:
    """Read --suppressions at once, so a mistake in the file stops the command before any work (exit 2)."""
    ctx.meta["gpurace.suppressions"] = Suppressions.load(path) if path is not None else None


def command_suppressions() -> Suppressions | None:
    """The running command's --suppressions, read by `_load_suppressions`."""
    return click.get_current_context().meta.get("gpurace.suppressions")


def _store_benign_same_value(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    ctx.meta["gpurace.benign_same_value"] = value


def command_benign_same_value() -> bool:
    """Whether the running command was given --benign-same-value."""
    return bool(click.get_current_context().meta.get("gpurace.benign_same_value"))


def _set_executor(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """--executor sets GPURACE_EXECUTOR, which every launch of the command (and `exec`'s server) reads; restored after."""
    if value is None:
        return
    before = os.environ.get("GPURACE_EXECUTOR")
    os.environ["GPURACE_EXECUTOR"] = value

    def restore() -> None:
        if before is None:
            os.environ.pop("GPURACE_EXECUTOR", None)
        else:
            os.environ["GPURACE_EXECUTOR"] = before

    ctx.call_on_close(restore)


executor_option = click.option(
    "--executor",
    type=click.Choice(["interpreter", "native", "auto"]),
    default=None,
    expose_value=False,
    callback=_set_executor,
    help="How instructions run: the interpreter; native (straight-line register-only code, loads and stores compiled with LLVM); or auto "
    "(native for launches of 65536 threads or more, when llvmlite is installed). Default: $GPURACE_EXECUTOR, else auto. "
    "See \"Native execution\".",
)


def analysis_options(command: Callable) -> Callable:
    """--format, --detector, --model, --shadow-cells, --output, --stats, --suppressions and --benign-same-value: how
    detection runs and reports, shared by `check`, `analyze` and `exec`."""
    decorators = [
        click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True),
        click.option(
            "--detector",
            type=click.Choice(list(DETECTORS)),
            default="auto",
            show_default=True,
            help="auto: barrier-interval when barriers are the only synchronisation, the predictive gwcp otherwise; hb: scoped happens-before; "
            "gwcp: predictive (races another lock order would show); "
            "tsan: ThreadSanitizer's shadow cells (a few accesses per 8-byte word) with hb's happens-before; "
            "lockset: ScoRD's scoped lockset analysis with inferred locks, hb where no lock is held.",
        ),
        click.option(
            "--model",
            type=click.Choice(list(MODELS)),
            default="cuda",
            show_default=True,
            help="Memory model: cuda (volatile is not atomic), ptx (the PTX model to the letter), scord (ScoRD's fence rules).",
        ),
        click.option(
            "--shadow-cells",
            type=click.Choice([str(n) for n in SHADOW_CELLS]),
            default=str(DEFAULT_SHADOW_CELLS),
            show_default=True,
            callback=lambda _ctx, _param, value: int(value),
            help="Only for --detector tsan: accesses remembered per 8-byte word; fewer cells use less memory and "
            "miss races whose earlier access was evicted.",
        ),
        click.option(
            "--output",
            type=click.Path(dir_okay=False, path_type=str),
            default=None,
            metavar="FILE",
            help="Write the report to FILE instead of standard output.",
        ),
        click.option(
            "--stats",
            is_flag=True,
            help="Add the timings to the report (left out by default, so that the same input and seed always "
            "give the same report, byte for byte).",
        ),
        click.option(
            "--suppressions",
            type=click.Path(dir_okay=False, path_type=str),
            metavar="FILE",
            expose_value=False,
            callback=_load_suppressions,
            help="Leave out the findings FILE names: one `KIND PATH_GLOB[:LINE] [PATH_GLOB[:LINE]]` rule per line, "
            "# comments (see the README); the summary counts them.",
        ),
        click.option(
            "--benign-same-value",
            is_flag=True,
            expose_value=False,
            callback=_store_benign_same_value,
            help="Leave out data races between two stores that wrote the same value (benign under GPUVerify's "
            "convention; warnings otherwise); the summary counts them.",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


@cli.command()
@source_options
@launch_options
@limit_options(launch=True)
@executor_option
@click.option("--policy", type=click.Choice(list(POLICIES)), default="min-pc", show_default=True, help="Scheduling policy.")
@click.option("--save-args", type=click.Path(dir_okay=False, path_type=str), default=None, help="Save the arguments after the run to OUT.npz (arg0, arg1, ...; of an automatic buffer, the part the kernel used).")
def run(
    file, include_dirs, defines, arch, device_debug, kernel, grid, block, cluster, args, global_vars, shared_bytes, seed, max_steps,
    policy, save_args,
) -> None:
    """Simulate one launch of a kernel in FILE; exit 1 if the simulation found a problem."""
    limits = command_limits()
    grid_dims, block_dims, _header = launch_dims(file, grid, block)
    module = load_from_options(file, include_dirs, defines, arch, device_debug, limits, kernel)
    with _Progress() as progress:
        result = simulate(
            module,
            kernel=kernel,
            grid=grid_dims,
            block=block_dims,
            args=list(args) or None,
            global_vars=global_vars,
            shared_bytes=shared_bytes,
            seed=seed,
            policy=policy,
            max_steps=max_steps,
            progress=progress,
            limits=limits,
            cluster=_cluster_dims(cluster),
        )
    if save_args:
        _save_args(save_args, result.args)
    console = Console(highlight=False, stderr=False)
    geo = result.geometry
    st = result.stats
    console.print(
        f"{escape(result.kernel.name)}: {plural(geo.nthreads, 'thread')} (grid {_dims(geo.grid)}, block {_dims(geo.block)}), "
        f"{plural(st.thread_instructions, 'thread-instruction')} in {plural(st.steps, 'step')}"
    )
    report = build_report(
        result, result.findings, model=None, detector=None, args=list(args) or None, seconds=0.0, global_vars=global_vars
    )
    if result.findings:
        render_text(report, console)
        raise SystemExit(1)
    for line in automatic_arguments(report):
        console.print(line, soft_wrap=True)


@cli.command()
@source_options
@click.argument("linked_files", nargs=-1, metavar="[FILE]...", type=click.Path(dir_okay=False, path_type=str))
@launch_options
@limit_options(launch=True)
@executor_option
@analysis_options
@click.option(
    "--redundant-barriers",
    is_flag=True,
    help="Also report barriers that order no conflicting accesses (performance notes; they do not make the exit status 1).",
)
@click.option(
    "--search",
    is_flag=True,
    help="Search inputs for races (Simulee's evolutionary search): every auto scalar argument, and the grid "
    "or block when neither an option nor a header gives it; reports the union of findings, each with its input.",
)
@click.option(
    "--population",
    default=DEFAULT_POPULATION,
    show_default=True,
    type=click.IntRange(1, MAX_POPULATION),
    help="With --search: candidate inputs that survive each generation.",
)
@click.option(
    "--generations",
    default=DEFAULT_GENERATIONS,
    show_default=True,
    type=click.IntRange(0, MAX_GENERATIONS),
    help="With --search: generations of mutation after the initial population.",
)
@click.option(
    "--schedules",
    default=None,
    type=click.IntRange(1, MAX_SCHEDULES),
    help="Check N schedules of the launch: the default one, the reversed one and N-2 seeded variations (warp and "
    "block order, holds, preemption around synchronisation); reports the union of findings, each with its schedule. "
    f"Default: {DEFAULT_SCHEDULES} for kernels with atomics, fences or strong accesses, 1 otherwise (and for integer reductions whose result is never read) "
    "(1 with --search or --record).",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    metavar="TRACE",
    help="Also write the launch's event stream to TRACE (binary trace format), for gpurace analyze.",
)
@click.option(
    "--cooperative/--no-cooperative",
    default=None,
    help="Launch as cudaLaunchCooperativeKernel does (or not): the kernel may use cooperative_groups::this_grid().sync(); "
    "every block must fit on the simulated device at once. Default: cooperative exactly when the kernel uses this_grid().",
)
@click.option(
    "--prove",
    is_flag=True,
    help="First verify the kernel for this grid and block (every input, every schedule, as gpurace verify does): "
    "the report gains a proof per memory object, alarms say whether the simulation found them, and a kernel "
    "proved race-free with uniform barriers runs one schedule (unless --schedules says otherwise).",
)
@click.option(
    "--meta",
    multiple=True,
    metavar="NAME=VALUE",
    help="Triton kernels: a constexpr meta-parameter (an int, a float, true/false, else text), e.g. --meta BLOCK=256 (repeatable).",
)
@click.option(
    "--num-warps",
    default=None,
    type=click.IntRange(1, 32),
    help="Triton kernels: warps per program (a power of two); default 4, or the autotuning configuration's.",
)
@click.option(
    "--config",
    "autotune_config",
    default=None,
    type=int,
    metavar="N",
    help="Triton kernels: the @triton.autotune configuration to check, numbered from 0 in the configs list (default 0).",
)
def check(
    file, linked_files, include_dirs, defines, arch, device_debug, kernel, grid, block, cluster, args, global_vars, shared_bytes, seed, max_steps, fmt,
    detector, model,
    shadow_cells, redundant_barriers, search, population, generations, schedules, output, stats, record, cooperative,
    prove, meta, num_warps, autotune_config,
) -> None:
    """Check one launch of a kernel in FILE for races and synchronisation bugs.

    More files are compiled as relocatable device code and linked with FILE, as nvcc -rdc=true links them: the
    kernel may call `extern __device__` functions and use `extern __device__` variables another file defines.

    With --search, check many launches chosen by an evolutionary input search
    (--max-steps is then the budget of each, default 10000). With --schedules N,
    check N schedules of each launch.

    Exit status: 0 nothing found (or only performance notes), 1 findings, 2 the input could not be handled.
    """
    given = click.get_current_context().get_parameter_source
    if not search and any(given(o) is not ParameterSource.DEFAULT for o in ("population", "generations")):
        raise UserError("--population and --generations configure the input search: add --search")
    if record and (search or (schedules or 1) > 1):
        raise UserError("--record records one launch: it cannot be combined with --search or --schedules")
    if schedules is None and (search or record):
        schedules = 1
    if cluster is not None and search:
        raise UserError("--cluster cannot be combined with --search: check each cluster launch with --grid and --block")
    if cooperative and search:
        raise UserError("--cooperative cannot be combined with --search: check each cooperative launch on its own")
    if prove and search:
        raise UserError("--prove cannot be combined with --search: a proof covers one grid and block and every input; check with --grid and --block")
    limits = command_limits()
    triton_file = not linked_files and is_triton_file(file)
    if (meta or num_warps or autotune_config is not None) and not triton_file:
        raise UserError(f"{file}: --meta, --num-warps and --config configure Triton kernels; this file does not import triton")
    if triton_file:
        if block is not None or search or cluster is not None or cooperative or prove or global_vars or shared_bytes is not None:
            raise UserError("Triton kernels take --grid (programs), --arg, --meta, --num-warps and --config; not --block, --search, "
                            "--cluster, --cooperative, --prove, --global or --shared-bytes")  # fmt: skip
        analysis = dict(detector=detector, model=model, shadow_cells=shadow_cells, redundant_barriers=redundant_barriers)
        options = dict(meta=meta, num_warps=num_warps, config=autotune_config)
        report = _check_triton_file(file, kernel, grid, list(args), options, arch, seed, max_steps, schedules, limits, analysis)
        _emit_report(report, fmt, output, stats)
        return
    grid_dims, block_dims, header = launch_dims(file, grid, block, required=not search)
    numba_args = None  # a Numba kernel's arguments in its PTX parameters' layout (`frontend.numba_kernels`)
    if linked_files:
        sources = [file, *linked_files]
        module = load_linked(sources, include_dirs=include_dirs, defines=defines, arch=arch, device_debug=device_debug, limits=limits)
    elif is_numba_file(file):
        if search:
            raise UserError("--search does not take Numba kernels yet: check launches with explicit --arg values")
        nthreads = math.prod(grid_dims) * math.prod(block_dims)
        module, numba_args = load_numba_launch(file, kernel, list(args), arch=arch, limits=limits, seed=seed, nthreads=nthreads)
    else:
        module = load_from_options(file, include_dirs, defines, arch, device_debug, limits, kernel)
    if record and any(ins.opcode == "barrier" and ins.has("cluster") for fn in module.functions.values() for ins in fn.body):
        raise UserError(f"{file}: --record cannot record cluster barriers (barrier.cluster) yet: the trace format has no cluster")
    launch = dict(
        kernel=kernel,
        grid=grid_dims,
        block=block_dims,
        args=numba_args if numba_args is not None else list(args) or None,
        global_vars=global_vars,
        shared_bytes=shared_bytes,
        seed=seed,
        detector=detector,
        model=model,
        shadow_cells=shadow_cells,
        redundant_barriers=redundant_barriers,
        schedules=schedules,
        limits=limits,
    )
    if search:
        explicit_steps = given("max_steps") is not ParameterSource.DEFAULT
        with SearchProgressBar() as bar:
            report = run_search(
                module,
                **launch,
                max_steps=max_steps if explicit_steps else SEARCH_STEP_BUDGET,
                population=population,
                generations=generations,
                progress=bar,
            )
    else:
        recorder = [TraceRecorder()] if record else []
        with _Progress() as progress:
            report = run_check(
                module, **launch, max_steps=max_steps, progress=progress, sinks=recorder, cooperative=cooperative, prove=prove,
                cluster=_cluster_dims(cluster), benign_same_value=command_benign_same_value(),
            )
        if record:
            write_binary_trace(recorder[0].trace(kernel=report.kernel, mangled=report.mangled, source=report.source), record)
    if numba_args is not None:
        report.launch["args"] = list(args)
        if given("model") is ParameterSource.DEFAULT:
            report = drop_generated_volatile(report)
    if header is not None:
        report.launch["header_expect"] = header.expect
    _emit_report(report, fmt, output, stats)


def _check_triton_file(file, kernel, grid, specs, options, arch, seed, max_steps, schedules, limits, analysis):
    """The report of `gpurace check FILE.py` for a Triton file (`frontend.triton_files`): one launch of
    `grid` programs of `num_warps` warps, with Triton's generated same-value shared-memory races dropped.
    `options` are the Triton ones: `meta` (the --meta texts), `num_warps` and `config` (None when not given)."""
    if grid is None:
        raise UserError(f"{file}: pass --grid, the launch's programs X[,Y[,Z]]")
    programs = parse_dims(grid, "grid")
    values = resolve_args(specs, np.random.default_rng(seed), limits, nthreads=1)
    cc = int("".join(map(str, compute_capability(arch))))
    compiled, num_warps, config = compile_triton_file(
        file, kernel, values, parse_meta(options["meta"]), num_warps=options["num_warps"], config=options["config"],
        cc=cc, limits=limits,
    )  # fmt: skip
    report = run_check(
        compiled.module, kernel=compiled.name, grid=programs, block=(num_warps * 32, 1, 1),
        args=launch_args(compiled, math.prod(programs)), shared_bytes=compiled.shared_bytes, seed=seed,
        max_steps=max_steps, schedules=schedules, limits=limits, **analysis,
    )  # fmt: skip
    report.launch["args"], report.launch["num_warps"] = specs, num_warps
    if config is not None:
        report.launch["autotune_config"] = config
    return drop_generated_same_value(report)


@cli.command()
@click.argument("trace", type=click.Path(dir_okay=False, path_type=str))
@limit_options(launch=False)
@analysis_options
def analyze(trace, fmt, detector, model, shadow_cells, output, stats) -> None:
    """Run a race detector over TRACE: a text trace, or a binary one written by check --record.

    Exit status: 0 nothing found, 1 findings, 2 the trace could not be read (the message names the file and line).
    """
    report = analyze_trace(trace, detector=detector, model=model, shadow_cells=shadow_cells, limits=command_limits())
    _emit_report(report, fmt, output, stats)


@cli.command()
@source_options
@limit_options(launch=False)
@click.option("--kernel", default=None, help="Kernel to verify (demangled or mangled name); default: every kernel in FILE.")
@click.option("--grid", default=None, help="Grid dimensions X[,Y[,Z]]; default: the file's GPUVerify header, else any grid.")
@click.option("--block", default=None, help="Block dimensions X[,Y[,Z]]; default: the file's GPUVerify header, else any block.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True)
@click.option(
    "--query-budget", default=DEFAULT_QUERY_BUDGET, show_default=True, type=click.IntRange(1, 100_000),
    help="Millions of z3 resource units the solver may spend on one question (deterministic: the same verdicts on "
    "any machine and under any load); past it the object's verdict is unknown.",
)
@click.option(
    "--query-timeout", default=None, type=click.FloatRange(0.1, 3600),
    help="Seconds one question may take as well (default: no wall-clock limit). Where it ends a question, the "
    "verdict depends on the machine's speed and load.",
)
@click.option("--no-confirm", is_flag=True, help="Do not run possible alarms' witnesses in the simulator to confirm them.")
@click.option(
    "--benign-same-value", is_flag=True,
    help="Two stores proved to write the same value to the same bytes do not race (GPUVerify's convention; a race "
    "under the PTX memory model): objects proved so list those pairs.",
)
@click.option(
    "--within-block", is_flag=True,
    help="Look for races between threads of one block only (Faial's default): race-free then says nothing of "
    "threads of different blocks.",
)
def verify(
    file, include_dirs, defines, arch, device_debug, kernel, grid, block, fmt, query_budget, query_timeout, no_confirm, benign_same_value,
    within_block,
) -> None:
    """Prove kernels in FILE race-free for every input and every pair of threads, or raise alarms.

    Per kernel and memory object: race-free, race (certain or possible, with a
    witness) or unknown (with the reason). Exit status: 0 everything proved,
    1 alarms, 4 nothing found but something undecided, 2 the input could not be handled.
    """
    grid_dims, block_dims, _header = launch_dims(file, grid, block, required=False)
    # dimensions given here must be a launch CUDA runs; a GPUVerify header's may exceed it (see verify_module)
    check_dims((grid and grid_dims) or (1, 1, 1), (block and block_dims) or (1, 1, 1))
    limits = command_limits()
    module = load_from_options(file, include_dirs, defines, arch, device_debug, limits, kernel)
    verdicts, notes = verify_module(
        module, kernel=kernel, grid=grid_dims, block=block_dims, query_budget=query_budget, query_timeout=query_timeout,
        confirm=not no_confirm, benign_same_value=benign_same_value, from_header=True, within_block=within_block,
        deadline=limits.deadline,
    )
    for note in report_notes([module]):  # a HIP source's verdicts, too, are for 32-lane warps
        for v in verdicts:
            notes.setdefault(v.name, []).append(note)
    if fmt == "sarif":
        text = json.dumps(verify_sarif(file, verdicts, notes), indent=2) + "\n"
    else:
        text = verify_json(file, verdicts, notes) if fmt == "json" else verify_text(file, verdicts, notes)
    click.echo(text, nl=False)
    raise SystemExit(verify_exit_status(verdicts))


def _print_library_dir(ctx: click.Context, _param, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from gpurace.runtime.shim_build import shim_directory

    click.echo(shim_directory(Limits()))
    ctx.exit(0)


@cli.command("exec")
@click.argument("sources", nargs=-1, required=True, metavar="SOURCES...|PROGRAM", type=click.Path(dir_okay=False, path_type=str))
@click.option("-I", "include_dirs", multiple=True, metavar="DIR", help="Add DIR to the include path.")
@click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Define a preprocessor macro.")
@click.option("--arch", default=DEFAULT_ARCH, show_default=True, help="Target architecture (compute_XX or sm_XX).")
@click.option("--nvcc-flag", "nvcc_flags", multiple=True, metavar="FLAG", help="An extra nvcc option for building the program.")
@hip_path_option
@warp_size_option
@limit_options(launch=True, timeout=EXEC_TIMEOUT_S)
@executor_option
@analysis_options
@click.option("--schedules", default=None, type=click.IntRange(1, MAX_SCHEDULES), help="Schedules per launch (as for check).")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, (1 << 63) - 1), help="Seed for random schedules.")
@click.option("--max-steps", default=2_000_000, show_default=True, type=click.IntRange(1, 1 << 40), help="Scheduler step budget of each launch.")
@click.option("--leak-check", is_flag=True, help="Report device memory never freed when the program ends.")
@click.option(
    "--error-exitcode",
    default=1,
    show_default=True,
    type=click.IntRange(0, 255),
    help="Exit status when there are findings (otherwise the program's own).",
)
@click.option("--kernel-name", metavar="REGEX", default=None, help="Check only launches of kernels whose name (demangled or mangled) REGEX matches (re.search).")
@click.option("--kernel-exclude", metavar="REGEX", default=None, help="Do not check launches of kernels whose name REGEX matches.")
@click.option("--launch-skip", metavar="N", default=0, type=click.IntRange(min=0), help="Do not check the first N launches that the kernel filters let through.")
@click.option("--launch-count", metavar="N", default=None, type=click.IntRange(min=0), help="Check only N launches (after the skipped ones) of those the kernel filters let through.")
@click.option(
    "--library-dir",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_print_library_dir,
    help="Print the folder of gpurace's libcudart.so.13 and libcuda.so (built first if needed) and exit: a program "
    "built to run prebuilt that links the driver links with -L<that folder> -lcuda.",
)
def exec_command(
    sources, include_dirs, defines, arch, nvcc_flags, fmt, detector, model, shadow_cells, output, stats, schedules, seed,
    max_steps, leak_check, error_exitcode, kernel_name, kernel_exclude, launch_skip, launch_count,
) -> None:
    """Build a CUDA program from SOURCES and run it: its host code natively, every kernel launch in the simulator.

    In place of SOURCES, PROGRAM is an executable built already with `nvcc -cudart shared -lineinfo -g -gencode
    arch=compute_75,code=compute_75` (the shared CUDA runtime and PTX; see "Prebuilt executables" in the README),
    which runs as it is; -I, -D and --nvcc-flag do not apply to it, and --arch chooses among its PTX.

    This runs the program's own host code on this machine, as running the program would. Arguments after `--`
    go to the program. Its output passes through unchanged; gpurace's report goes to standard error (or
    --output). Exit status: the program's own when nothing was found, --error-exitcode (1) with findings, 2 when
    the program could not be handled (an unsupported CUDA call, a build error).

    Launches the filters (--kernel-name, --kernel-exclude, --launch-skip, --launch-count) leave out still run,
    without detection, so the program's results stay exact.
    """
    from gpurace.runtime import exec_program

    # Click hands over everything after `--` as more SOURCES; the raw command line tells where `--` was.
    argv = click.get_current_context().meta.get("gpurace.argv", [])
    program_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    files = list(sources[: len(sources) - len(program_args)])
    options = dict(detector=detector, model=model, schedules=schedules, seed=seed, max_steps=max_steps, shadow_cells=shadow_cells)
    result = exec_program(
        files,
        program_args,
        include_dirs=include_dirs,
        defines=defines,
        arch=arch,
        nvcc_flags=nvcc_flags,
        limits=command_limits(),
        leak_check=leak_check,
        kernel_name=kernel_name,
        kernel_exclude=kernel_exclude,
        launch_skip=launch_skip,
        launch_count=launch_count,
        suppressions=command_suppressions(),
        on_launch=_launch_progress(),
        **options,
    )
    for error in result.errors:
        click.echo(f"gpurace: error: {error}", err=True)
    dropped = None
    if command_benign_same_value():
        result.findings, dropped = split_same_value(result.findings)
    report = result.report(" ".join(files), {"model": model, "detector": detector})
    if dropped is not None:
        report.stats[SAME_VALUE_DROPPED] = dropped
    if result.findings or dropped or fmt != "text" or output:
        _render(report, fmt, output, stats, err=True)
    raise SystemExit(result.exit_code(error_exitcode))


def _emit_report(report, fmt: str, output: str | None, stats: bool) -> None:
    """Render `report` in `fmt` (with timings when `stats`) to `output` (standard output when None) and exit
    with its status; the one place `check` and `analyze` leave out what --suppressions and --benign-same-value name."""
    report = suppress(report, command_suppressions())
    if command_benign_same_value():
        report = drop_same_value(report)
    _render(report, fmt, output, stats)
    raise SystemExit(report.exit_code())


def _render(report, fmt: str, output: str | None, stats: bool, *, err: bool = False) -> None:
    """Write `report` in `fmt` to `output`, or to standard output (standard error with `err`)."""
    if fmt == "text":
        _write_text(report, output, stats, err)
    else:
        data = to_json(report, stats=stats) if fmt == "json" else to_sarif(report, stats=stats)
        _write(output, json.dumps(data, indent=2) + "\n", err)


def _write(path: str | None, text: str, err: bool = False) -> None:
    if path is None:
        click.echo(text, nl=False, err=err)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UserError(f"--output: cannot write {path}: {e.strerror}") from None


def _write_text(report, path: str | None, stats: bool, err: bool = False) -> None:
    if path is None:
        render_text(report, Console(highlight=False, stderr=err), stats=stats)
        return
    console = Console(record=True, highlight=False, file=io.StringIO(), width=120)
    render_text(report, console, stats=stats)
    _write(path, console.export_text())


class _Progress:
    """A status line on stderr while a long simulation runs (only when stderr is a terminal)."""

    def __init__(self) -> None:
        self.console = Console(stderr=True)
        self.status = None
        self.start = time.monotonic()

    def __call__(self, stats) -> None:
        if not self.console.is_terminal or time.monotonic() - self.start < 1.0:
            return
        text = f"simulating: {stats.steps:,} steps, {stats.thread_instructions:,} thread-instructions"
        if self.status is None:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.status is not None:
            self.status.stop()


def _launch_progress() -> Callable | None:
    """`gpurace exec`'s line per launch on stderr, as each ends (only when stderr is a terminal, as `_Progress`)."""
    console = Console(stderr=True, highlight=False)
    if not console.is_terminal:
        return None
    return lambda outcome: console.print(f"gpurace: {outcome.describe()}", markup=False, soft_wrap=True)


def _dims(d) -> str:
    return "x".join(str(v) for v in d)


def _save_args(path: str, values) -> None:
    arrays = {}
    for i, v in enumerate(values):
        arrays[f"arg{i}"] = v if isinstance(v, np.ndarray) else np.frombuffer(v, dtype=np.uint8)
    try:
        np.savez(path, **arrays)
    except OSError as e:
        raise UserError(f"--save-args: cannot write {path}: {e.strerror}") from None


def main() -> None:
    """Console-script entry point: a process of its own, so the memory budget can be its address-space limit."""
    global _ENFORCE_ADDRESS_LIMIT
    _ENFORCE_ADDRESS_LIMIT = True
    allocator.for_command_line()
    cli(prog_name="gpurace")
