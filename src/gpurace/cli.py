"""The `gpurace` command.

Every subcommand takes a kernel file plus the compiler options of
`source_options`; every `UserError` raised below a subcommand becomes
`gpurace: error: <message>` on stderr and exit status 2 (the same status click
uses for usage errors), never a traceback. Exit statuses 0 and 1 are left to
the subcommands (clean / findings).
"""

from __future__ import annotations

import json
from typing import Callable

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpurace import __version__
from gpurace.errors import UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.kernels import KernelInfo, describe_kernels
from gpurace.frontend.load import load_module

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
        "params": [{"name": p.name, "type": p.type, "size": p.size} for p in k.params],
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
        table.add_column("C++ type")
        table.add_column("PTX type")
        table.add_column("bytes", justify="right")
        for i, p in enumerate(k.params):
            table.add_row(str(i), p.name, escape(p.type or "?"), p.ptx_type, str(p.size))
        console.print(table)
        console.print()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="gpurace")
