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
import time
from typing import Callable

import click
import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpurace import __version__
from gpurace.check import DETECTORS, build_report
from gpurace.check import check as run_check
from gpurace.detect.base import MODELS
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.kernels import KernelInfo, describe_kernels
from gpurace.frontend.load import load_module
from gpurace.report.json_format import to_json
from gpurace.report.sarif import to_sarif
from gpurace.report.text import render_text
from gpurace.sim.geometry import parse_dims
from gpurace.sim.launch import simulate

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
    """FILE, -I DIR, -D NAME[=VALUE] and --arch, shared by every command that loads a kernel file."""
    decorators = [
        click.argument("file", type=click.Path(dir_okay=False, path_type=str)),
        click.option("-I", "include_dirs", multiple=True, metavar="DIR", help="Add DIR to the include path."),
        click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Define a preprocessor macro."),
        click.option(
            "--arch", default=DEFAULT_ARCH, show_default=True, help="Target architecture (compute_XX or sm_XX)."
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def load_from_options(file: str, include_dirs: tuple[str, ...], defines: tuple[str, ...], arch: str):
    """The module for the common options of `source_options`."""
    return load_module(file, include_dirs=include_dirs, defines=defines, arch=arch)


@click.group(cls=GpuraceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpurace")
def cli() -> None:
    """Find data races and synchronisation bugs in CUDA kernels by simulating their PTX."""


@cli.command()
@source_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def kernels(file: str, include_dirs: tuple[str, ...], defines: tuple[str, ...], arch: str, fmt: str) -> None:
    """List the kernels in FILE with their parameters and static shared memory."""
    infos = describe_kernels(load_from_options(file, include_dirs, defines, arch))
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
        click.option("--grid", required=True, help="Grid dimensions X[,Y[,Z]]."),
        click.option("--block", required=True, help="Block dimensions X[,Y[,Z]]."),
        click.option(
            "--arg",
            "args",
            multiple=True,
            metavar="SPEC",
            help="One per kernel parameter, in order: a scalar (1024, -3, 2.5) or a buffer "
            "buf:COUNT[:INIT] / TYPE:COUNT[:INIT] (TYPE i8..i64, u8..u64, f16, f32, f64; "
            "INIT zeros, ones, iota, rand or file:PATH.npy).",
        ),
        click.option("--shared-bytes", default=0, show_default=True, type=click.IntRange(min=0), help="Dynamic shared memory per block."),
        click.option("--seed", default=0, show_default=True, type=int, help="Seed for rand buffers and random schedules."),
        click.option(
            "--max-steps",
            default=2_000_000,
            show_default=True,
            type=click.IntRange(min=1),
            help="Scheduler step budget; a run that exceeds it is reported as a livelock.",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


@cli.command()
@source_options
@launch_options
@click.option("--policy", type=click.Choice(["min-pc", "random"]), default="min-pc", show_default=True, help="Scheduling policy.")
@click.option("--save-args", type=click.Path(dir_okay=False, path_type=str), default=None, help="Save the arguments after the run to OUT.npz (arg0, arg1, ...).")
def run(file, include_dirs, defines, arch, kernel, grid, block, args, shared_bytes, seed, max_steps, policy, save_args) -> None:
    """Simulate one launch of a kernel in FILE; exit 1 if the simulation found a problem."""
    module = load_from_options(file, include_dirs, defines, arch)
    with _Progress() as progress:
        result = simulate(
            module,
            kernel=kernel,
            grid=parse_dims(grid, "grid"),
            block=parse_dims(block, "block"),
            args=list(args),
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
    if result.findings:
        report = build_report(
            result, result.findings, model=None, detector=None, shared_bytes=shared_bytes, args=list(args), seconds=0.0
        )
        render_text(report, console)
        raise SystemExit(1)


@cli.command()
@source_options
@launch_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True)
@click.option(
    "--detector",
    type=click.Choice(list(DETECTORS)),
    default="auto",
    show_default=True,
    help="auto: barrier-interval for barrier-only kernels, happens-before otherwise.",
)
@click.option(
    "--model",
    type=click.Choice(list(MODELS)),
    default="cuda",
    show_default=True,
    help="Memory model: cuda (volatile is not atomic), ptx (the PTX model to the letter), scord (ScoRD's fence rules).",
)
@click.option("--output", type=click.Path(dir_okay=False, path_type=str), default=None, help="Write the report to PATH instead of standard output.")
def check(file, include_dirs, defines, arch, kernel, grid, block, args, shared_bytes, seed, max_steps, fmt, detector, model, output) -> None:
    """Check one launch of a kernel in FILE for races and synchronisation bugs.

    Exit status: 0 nothing found, 1 findings, 2 the input could not be handled.
    """
    module = load_from_options(file, include_dirs, defines, arch)
    with _Progress() as progress:
        report = run_check(
            module,
            kernel=kernel,
            grid=parse_dims(grid, "grid"),
            block=parse_dims(block, "block"),
            args=list(args),
            shared_bytes=shared_bytes,
            seed=seed,
            max_steps=max_steps,
            detector=detector,
            model=model,
            progress=progress,
        )
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
