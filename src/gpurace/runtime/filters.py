"""Which launches of a program `gpurace exec` checks: `--kernel-name`, `--kernel-exclude`, `--launch-skip`, `--launch-count`.

A long program makes thousands of launches; checking each one costs the
detectors' time, while the bug a user hunts usually sits in one kernel, or
shows in its first few launches. A launch left out still runs in the
simulator (the program's results must stay exact) but without detection
(`launch.run_launch`).

The kernel filters are Python regular expressions, searched (`re.search`, so
`reduce` matches `block_reduce<int>`) in the kernel's demangled name and in
its mangled one. Launches of kernels that pass them are counted from 1: the
first `skip` are left out, then `count` are checked, then none.
"""

from __future__ import annotations

import re

from gpurace.errors import UserError
from gpurace.frontend.demangle import demangle_signature


class LaunchFilter:
    """The launch selection of one run; `select` is asked once per launch, in launch order."""

    def __init__(
        self, kernel_name: str | None = None, kernel_exclude: str | None = None, skip: int = 0, count: int | None = None
    ):
        self._name = _pattern(kernel_name, "--kernel-name")
        self._exclude = _pattern(kernel_exclude, "--kernel-exclude")
        self.skip = _count(skip, "--launch-skip")
        self.count = None if count is None else _count(count, "--launch-count")
        self._matched = 0

    @property
    def selects_all(self) -> bool:
        """True when no option leaves any launch out (the report then need not say how many were checked)."""
        return self._name is None and self._exclude is None and self.skip == 0 and self.count is None

    def select(self, mangled: str) -> str | None:
        """None when the next launch, of kernel `mangled`, is checked; else the option that leaves it out."""
        if self._name is not None or self._exclude is not None:
            names = (demangle_signature(mangled).name, mangled)
            if self._name is not None and not any(self._name.search(n) for n in names):
                return "--kernel-name"
            if self._exclude is not None and any(self._exclude.search(n) for n in names):
                return "--kernel-exclude"
        self._matched += 1
        if self._matched <= self.skip:
            return "--launch-skip"
        if self.count is not None and self._matched > self.skip + self.count:
            return "--launch-count"
        return None


def _pattern(regex: str | None, option: str) -> re.Pattern | None:
    if regex is None:
        return None
    try:
        return re.compile(regex)
    except re.error as e:
        raise UserError(f"{option}: {regex!r} is not a valid regular expression: {e}") from None


def _count(value, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(f"{option}: expected a non-negative integer, got {value!r}")
    return value
