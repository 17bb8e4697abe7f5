"""The progress bar of `gpurace check --search` on stderr: generations and candidates.

A search runs many launches, so unlike a single check it shows progress from
the start; like the single check's status line it appears only when stderr
is a terminal, so pipes, files and tests see nothing. The bar's total is the
planned number of candidates; the search may stop early (see `evolve`), and
then the bar simply closes.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class SearchProgressBar:
    """Use as `with SearchProgressBar() as bar: search(..., progress=bar)`."""

    def __init__(self) -> None:
        console = Console(stderr=True)
        self._bar = (
            Progress(
                TextColumn("search: generation {task.fields[generation]}/{task.fields[generations]}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("candidates"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            if console.is_terminal
            else None
        )
        self._task = None

    def __call__(self, generation: int, generations: int, candidates: int, planned: int) -> None:
        if self._bar is None:
            return
        if self._task is None:
            self._task = self._bar.add_task("search", total=planned, generation=generation, generations=generations)
        self._bar.update(self._task, completed=candidates, generation=generation)

    def __enter__(self) -> SearchProgressBar:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
