"""The `gpurace` command.

Every subcommand takes a kernel file plus the compiler options of
`source_options`; every `UserError` raised below a subcommand becomes
`gpurace: error: <message>` on stderr and exit status 2 (the same status click
uses for usage errors), never a traceback. Exit statuses 0 and 1 are left to
the subcommands (clean / findings).
"""

from __future__ import annotations

import io
import json
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
from gpurace.check import DEFAULT_SCHEDULES, DETECTORS, build_report
from gpurace.check import check as run_check
from gpurace.detect.base import MODELS
from gpurace.detect.tsan import DEFAULT_SHADOW_CELLS, SHADOW_CELLS
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.gpuverify import LaunchHeader, read_launch_header
from gpurace.frontend.kernels import KernelInfo, describe_kernels
from gpurace.frontend.load import load_module
from gpurace.report.json_format import to_json
from gpurace.report.sarif import to_sarif
from gpurace.report.text import automatic_arguments, render_text
from gpurace.search import DEFAULT_GENERATIONS, DEFAULT_POPULATION, SEARCH_STEP_BUDGET
from gpurace.search import search as run_search
from gpurace.search.progress import SearchProgressBar
from gpurace.sim.engine import POLICIES
from gpurace.sim.geometry import parse_dims
from gpurace.sim.launch import simulate
from gpurace.trace.binary import write as write_binary_trace
from gpurace.trace.record import TraceRecorder
from gpurace.trace.replay import analyze as analyze_trace

INPUT_ERROR_STATUS = 2


class InputError(click.ClickException):
    """A UserError on its way out of click: printed as `gpurace: error: ...`, exit status 2."""

    exit_code = INPUT_ERROR_STATUS

    def show(self, file=None) -> None:
        click.echo(f"gpurace: error: {self.format_message()}", err=True)


class GpuraceGroup(click.Group):
    """A click group whose subcommands may raise UserError freely."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except UserError as e:
            raise InputError(str(e)) from e


def source_options(command: Callable) -> Callable:
    """FILE, -I DIR, -D NAME[=VALUE], --arch and -G, shared by every command that loads a kernel file."""
    decorators = [
        click.argument("file", type=click.Path(dir_okay=False, path_type=str)),
        click.option("-I", "include_dirs", multiple=True, metavar="DIR", help="Add DIR to the include path."),
        click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Define a preprocessor macro."),
        click.option(
            "--arch", default=DEFAULT_ARCH, show_default=True, help="Target architecture (compute_XX or sm_XX)."
        ),
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


def load_from_options(file: str, include_dirs: tuple[str, ...], defines: tuple[str, ...], arch: str, device_debug: bool):
    """The module for the common options of `source_options`.

    The `-D` options of the file's GPUVerify header (`//--blockDim=64 -DN=64`)
    are added, except for names that `defines` defines itself.
    """
    header = file_header(file)
    if header is not None:
        given = {d.split("=", 1)[0] for d in defines}
        defines = (*(d for d in header.defines if d.split("=", 1)[0] not in given), *defines)
    return load_module(file, include_dirs=include_dirs, defines=defines, arch=arch, device_debug=device_debug)


def file_header(file: str) -> LaunchHeader | None:
    """The GPUVerify launch header of FILE, or None (also when FILE is missing: loading it says so)."""
    return read_launch_header(file) if os.path.isfile(file) else None


@click.group(cls=GpuraceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpurace")
def cli() -> None:
    """Find data races and synchronisation bugs in CUDA kernels by simulating their PTX."""


@cli.command()
@source_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def kernels(
    file: str, include_dirs: tuple[str, ...], defines: tuple[str, ...], arch: str, device_debug: bool, fmt: str
) -> None:
    """List the kernels in FILE with their parameters and static shared memory."""
    infos = describe_kernels(load_from_options(file, include_dirs, defines, arch, device_debug))
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
        console.print(f"[bold]{escape(k.name)}[/bold]  ({k.mangled})  static shared memory: {k.shared_bytes} bytes")
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
    """--kernel, --grid, --block, --arg, --shared-bytes, --seed, --max-steps: one launch, shared by `run` and `check`."""
    decorators = [
        click.option("--kernel", default=None, help="Kernel to launch (demangled or mangled name); needed when FILE has several."),
        click.option("--grid", default=None, help="Grid dimensions X[,Y[,Z]]; default: the file's GPUVerify header (//--gridDim=...)."),
        click.option("--block", default=None, help="Block dimensions X[,Y[,Z]]; default: the file's GPUVerify header (//--blockDim=...)."),
        click.option(
            "--arg",
            "args",
            multiple=True,
            metavar="SPEC",
            help="One per kernel parameter, in order: a scalar (1024, -3, 2.5), a buffer "
            "buf:COUNT[:INIT] / TYPE:COUNT[:INIT] (TYPE i8..i64, u8..u64, f16, f32, f64; "
            "INIT zeros, ones, iota, rand or file:PATH.npy), or auto (a buffer that grows as the kernel "
            "touches it; for a scalar: the thread count, 1.0 or true). No --arg at all: auto for every parameter.",
        ),
        click.option("--shared-bytes", default=0, show_default=True, type=click.IntRange(min=0), help="Dynamic shared memory per block."),
        click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0), help="Seed for rand buffers and random schedules."),
        click.option(
            "--max-steps",
            default=2_000_000,
            show_default=True,
            type=click.IntRange(min=1),
            help="Scheduler step budget; a run that exceeds it is reported as a livelock. With check --search: "
            "the budget of each candidate launch, default 10000; a candidate that exceeds it is discarded.",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def launch_dims(file: str, grid: str | None, block: str | None, *, search: bool = False):
    """(grid, block, header) of a launch of FILE: `--grid`/`--block` win over its GPUVerify header.

    Without dimensions from either place the launch cannot run, unless an
    input search is to choose them (`search`; they are then None).
    """
    header = file_header(file)
    grid_dims = parse_dims(grid, "grid") if grid is not None else (header.grid if header else None)
    block_dims = parse_dims(block, "block") if block is not None else (header.block if header else None)
    # The one place that decides a launch cannot run without both dimensions.
    missing = [f"--{what}" for what, dims in (("grid", grid_dims), ("block", block_dims)) if dims is None]
    if missing and not search:
        raise UserError(
            f"{file}: no launch dimensions: pass {' and '.join(missing)}, "
            "or start the file with a GPUVerify header such as //--blockDim=64 --gridDim=4"
        )
    return grid_dims, block_dims, header


def analysis_options(command: Callable) -> Callable:
    """--format, --detector, --model, --shadow-cells and --output: how detection runs and reports, shared by `check` and `analyze`."""
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
            help="Write the report to PATH instead of standard output.",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


@cli.command()
@source_options
@launch_options
@click.option("--policy", type=click.Choice(list(POLICIES)), default="min-pc", show_default=True, help="Scheduling policy.")
@click.option("--save-args", type=click.Path(dir_okay=False, path_type=str), default=None, help="Save the arguments after the run to OUT.npz (arg0, arg1, ...; of an automatic buffer, the part the kernel used).")
def run(file, include_dirs, defines, arch, device_debug, kernel, grid, block, args, shared_bytes, seed, max_steps, policy, save_args) -> None:
    """Simulate one launch of a kernel in FILE; exit 1 if the simulation found a problem."""
    grid_dims, block_dims, _header = launch_dims(file, grid, block)
    module = load_from_options(file, include_dirs, defines, arch, device_debug)
    with _Progress() as progress:
        result = simulate(
            module,
            kernel=kernel,
            grid=grid_dims,
            block=block_dims,
            args=list(args) or None,
            shared_bytes=shared_bytes,
            seed=seed,
            policy=policy,
            max_steps=max_steps,
            progress=progress,
        )
    if save_args:
        _save_args(save_args, result.args)
    console = Console(highlight=False, stderr=False)
    geo = result.geometry
    st = result.stats
    console.print(
        f"{escape(result.kernel.name)}: {geo.nthreads} threads (grid {_dims(geo.grid)}, block {_dims(geo.block)}), "
        f"{st.thread_instructions} thread-instructions in {st.steps} steps"
    )
    report = build_report(
        result, result.findings, model=None, detector=None, shared_bytes=shared_bytes, args=list(args) or None, seconds=0.0
    )
    if result.findings:
        render_text(report, console)
        raise SystemExit(1)
    for line in automatic_arguments(report):
        console.print(line, soft_wrap=True)


@cli.command()
@source_options
@launch_options
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
    type=click.IntRange(min=1),
    help="With --search: candidate inputs that survive each generation.",
)
@click.option(
    "--generations",
    default=DEFAULT_GENERATIONS,
    show_default=True,
    type=click.IntRange(min=0),
    help="With --search: generations of mutation after the initial population.",
)
@click.option(
    "--schedules",
    default=None,
    type=click.IntRange(min=1),
    help="Check N schedules of the launch: the default one, the reversed one and N-2 seeded variations (warp and "
    "block order, holds, preemption around synchronisation); reports the union of findings, each with its schedule. "
    f"Default: {DEFAULT_SCHEDULES} for kernels with atomics, fences or strong accesses, 1 otherwise "
    "(1 with --search or --record).",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    metavar="TRACE",
    help="Also write the launch's event stream to TRACE (binary trace format), for gpurace analyze.",
)
def check(
    file, include_dirs, defines, arch, device_debug, kernel, grid, block, args, shared_bytes, seed, max_steps, fmt, detector, model,
    shadow_cells, redundant_barriers, search, population, generations, schedules, output, record,
) -> None:
    """Check one launch of a kernel in FILE for races and synchronisation bugs.

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
    grid_dims, block_dims, header = launch_dims(file, grid, block, search=search)
    module = load_from_options(file, include_dirs, defines, arch, device_debug)
    launch = dict(
        kernel=kernel,
        grid=grid_dims,
        block=block_dims,
        args=list(args) or None,
        shared_bytes=shared_bytes,
        seed=seed,
        detector=detector,
        model=model,
        shadow_cells=shadow_cells,
        redundant_barriers=redundant_barriers,
        schedules=schedules,
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
            report = run_check(module, **launch, max_steps=max_steps, progress=progress, sinks=recorder)
        if record:
            write_binary_trace(recorder[0].trace(kernel=report.kernel, mangled=report.mangled, source=report.source), record)
    if header is not None:
        report.launch["header_expect"] = header.expect
    _emit_report(report, fmt, output)


@cli.command()
@click.argument("trace", type=click.Path(dir_okay=False, path_type=str))
@analysis_options
def analyze(trace, fmt, detector, model, shadow_cells, output) -> None:
    """Run a race detector over TRACE: a text trace, or a binary one written by check --record.

    Exit status: 0 nothing found, 1 findings, 2 the trace could not be read (the message names the file and line).
    """
    _emit_report(analyze_trace(trace, detector=detector, model=model, shadow_cells=shadow_cells), fmt, output)


def _emit_report(report, fmt: str, output: str | None) -> None:
    """Render `report` in `fmt` to `output` (standard output when None) and exit with its status."""
    if fmt == "text":
        _write_text(report, output)
    else:
        data = to_json(report) if fmt == "json" else to_sarif(report)
        _write(output, json.dumps(data, indent=2) + "\n")
    raise SystemExit(report.exit_code())


def _write(path: str | None, text: str) -> None:
    if path is None:
        click.echo(text, nl=False)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UserError(f"--output: cannot write {path}: {e.strerror}") from None


def _write_text(report, path: str | None) -> None:
    if path is None:
        render_text(report, Console(highlight=False))
        return
    console = Console(record=True, highlight=False, file=io.StringIO(), width=120)
    render_text(report, console)
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
    """Console-script entry point."""
    cli(prog_name="gpurace")
