"""`pytest -p gpurace.numba.pytest_plugin TESTS`: a Numba-CUDA test suite run in gpurace, unchanged.

The plugin enters `simulate()` when pytest starts, before it imports any
test module, so that kernels decorated with an explicit signature at import
compile at their launch instead of asking for a GPU, and leaves it when
pytest ends. A test's own assertions see the arrays the simulator updated;
a test whose launches had findings fails with their report (added as a note
when the test failed by itself already).
"""

from __future__ import annotations

import pytest

from gpurace.numba.simulation import RacesFound, Simulation, simulate

_SIMULATION = pytest.StashKey[tuple]()


def pytest_configure(config: pytest.Config) -> None:
    context = simulate(raise_on_findings=False)
    config.stash[_SIMULATION] = (context, context.__enter__())


def pytest_unconfigure(config: pytest.Config) -> None:
    context, _ = config.stash[_SIMULATION]
    context.__exit__(None, None, None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    simulation: Simulation = item.config.stash[_SIMULATION][1]
    start = len(simulation.reports)
    try:
        result = yield
    except BaseException as e:
        racy = [r for r in simulation.reports[start:] if r.findings]
        if racy:
            e.add_note(str(RacesFound(racy)))
        raise
    racy = [r for r in simulation.reports[start:] if r.findings]
    if racy:
        raise RacesFound(racy)
    return result
