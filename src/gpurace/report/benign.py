"""`--benign-same-value`: leave out the data races between two stores of the same value.

GPUVerify calls a write-write conflict in which both threads store the same
value benign (a flag every thread raises, `found = 1`); the PTX memory model
still calls it a race, and so does gpurace by default, as a warning with the
cause `both threads wrote the same value` (`Finding.same_value`). Users who
follow GPUVerify's convention drop those findings with this option; the
report counts them (`stats["same_value_dropped"]`), so nothing leaves it
unsaid. A finding merged from instances of which one stored different values
is an ordinary error and is kept.
"""

from __future__ import annotations

from gpurace.detect.findings import Finding
from gpurace.report.model import Report

STAT = "same_value_dropped"


def split_same_value(findings: list[Finding]) -> tuple[list[Finding], int]:
    """(the findings that are not same-value races, how many were)."""
    kept = [f for f in findings if not f.same_value]
    return kept, len(findings) - len(kept)


def drop_same_value(report: Report) -> Report:
    """`report` without its same-value races (in place), their number in `stats["same_value_dropped"]`."""
    report.findings, report.stats[STAT] = split_same_value(report.findings)
    return report
