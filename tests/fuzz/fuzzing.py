"""What the fuzz tests share: a short reproducible run in CI, a long random one on request, and the property.

The property every fuzz test asserts of a command: exit status 0 (clean), 1
(findings) or 2 (the input could not be handled, with a `gpurace: error:`
message), never a traceback, and never status 3: an internal error is a bug
in gpurace, and a fuzz test that finds one fails with the message.

In CI every fuzz test tries `GPURACE_FUZZ_EXAMPLES` inputs (default 40) with
Hypothesis's derandomised search, so a run is the same on every machine and a
failure reproduces. `benchmarks/fuzz.py` sets `GPURACE_FUZZ_EXAMPLES` high
and `GPURACE_FUZZ_SEED` for a long campaign (random search, seeded with
pytest's `--hypothesis-seed`).
"""

from __future__ import annotations

import os

from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from gpurace.cli import cli

EXAMPLES = int(os.environ.get("GPURACE_FUZZ_EXAMPLES", "40"))
SEED = os.environ.get("GPURACE_FUZZ_SEED")

settings.register_profile(
    "gpurace-fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=SEED is None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
FUZZ = settings.get_profile("gpurace-fuzz")
"""Decorate each fuzz test with `@FUZZ` (above or below `@given`), so it follows the profile above."""


def run_cli(args: list[str]):
    """Run `gpurace ARGS` in-process; the click result (exit_code, output, stderr)."""
    return CliRunner().invoke(cli, args, catch_exceptions=True)


def assert_handled(args: list[str]):
    """Run `gpurace ARGS` and assert that it ended with 0, 1 or 2 and no traceback; the result."""
    result = run_cli(args)
    shown = f"gpurace {' '.join(args)}\n{result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), shown + repr(result.exception)
    assert result.exit_code in (0, 1, 2), shown
    assert "Traceback" not in result.output, shown
    if result.exit_code == 2:
        assert "gpurace: error:" in result.output or "Error:" in result.output, shown
    return result
