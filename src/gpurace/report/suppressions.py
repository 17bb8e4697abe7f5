"""Suppressions: findings a project has judged and keeps out of its reports, listed in a file beside its code.

A CI job runs `gpurace check` or `gpurace exec` on every change and fails on
findings; a finding the team has looked at and accepted (a benign race on a
flag, a bug in a vendored kernel) must not fail it forever, and must not
hide the next finding either. `--suppressions FILE` names such findings by
kind and source position, the two things a report leads each finding with:

    # gpurace suppressions: KIND  LOCATION  [LOCATION]
    data-race      src/histogram.cu:41             # benign: every thread stores the same value
    data-race      reduce.cu:30  reduce.cu:32      # the race between these two lines only
    out-of-bounds  third_party/*                   # not ours
    *              legacy/*.cu                      # every kind

One rule per line; `#` starts a comment; blank lines are ignored. KIND is a
finding kind as reports print it in brackets (`[data-race]`), or `*` for
any. A LOCATION is `PATH_GLOB` or `PATH_GLOB:LINE`. The path is matched
against the file of the position a report leads a site with (its user
frame, `report.locations.frames`), written as reports write it
(`debuginfo.display_path`), and against every tail of it made of whole
components, so `reduce.cu`, `src/reduce.cu` and `*/reduce.cu` all match
`project/src/reduce.cu` whichever directory gpurace runs in. `*` and `?`
match any characters, `/` included; `[...]` a set, as in the shell. With
one location, a finding is suppressed when any of its sites matches it;
with two, its two sites must match them, in either order. A finding whose
sites have no source position is never suppressed.

Suppressed findings leave the report (and its exit status) and are counted
(`stats["suppressed"]`). A mistake in the file is an error naming FILE:LINE.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import permutations

from gpurace.detect.findings import Finding, Site
from gpurace.errors import UserError
from gpurace.frontend.ptx.debuginfo import display_path
from gpurace.report.locations import frames
from gpurace.report.model import KINDS, Report
from gpurace.words import plural

ANY_KIND = "*"
MAX_LOCATIONS = 2  # a finding has at most two sites


@dataclass(frozen=True)
class Location:
    """`PATH_GLOB[:LINE]` of a rule; `line` None matches every line of the file."""

    glob: str
    line: int | None

    def matches(self, path: str, line: int) -> bool:
        if self.line is not None and line != self.line:
            return False
        parts = path.split("/")
        return any(fnmatchcase("/".join(parts[i:]), self.glob) for i in range(len(parts)))


@dataclass(frozen=True)
class Rule:
    """One line of a suppressions file: a kind (or `*`) and one or two locations; `origin` is its FILE:LINE."""

    kind: str
    locations: tuple[Location, ...]
    origin: str

    def matches(self, finding: Finding, checked: str | None) -> bool:
        """True when `finding` is of this rule's kind and its sites match the rule's locations (module docstring)."""
        if self.kind not in (ANY_KIND, finding.kind):
            return False
        positions = [p for p in (_position(s, checked) for s in finding.sites) if p is not None]
        chosen = permutations(positions, len(self.locations))
        return any(all(loc.matches(*p) for loc, p in zip(self.locations, pick)) for pick in chosen)


class Suppressions:
    """The rules of one suppressions file."""

    def __init__(self, rules: list[Rule]):
        self.rules = list(rules)

    @classmethod
    def load(cls, path: str) -> Suppressions:
        """The rules of the file at `path`; a UserError names the file (and line) when it cannot be used."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise UserError(f"--suppressions: cannot read {path}: {e.strerror}") from None
        except UnicodeDecodeError:
            raise UserError(f"--suppressions: {path} is not a UTF-8 text file") from None
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, name: str) -> Suppressions:
        """The rules in `text`, read from the file `name` (for the messages)."""
        rules = []
        for number, line in enumerate(text.splitlines(), start=1):
            fields = line.split("#", 1)[0].split()
            if fields:
                rules.append(_rule(fields, f"{name}:{number}"))
        return cls(rules)

    def split(self, findings: list[Finding], checked: str | None) -> tuple[list[Finding], int]:
        """`findings` without the suppressed ones, in order, and how many were suppressed. `checked` is the
        checked file (`Report.source`), against which relative source names are resolved."""
        kept = [f for f in findings if not any(rule.matches(f, checked) for rule in self.rules)]
        return kept, len(findings) - len(kept)


def suppress(report: Report, suppressions: Suppressions | None) -> Report:
    """`report`, its suppressed findings taken out (in place) and counted in `stats["suppressed"]`; unchanged
    without suppressions. The one place `check` and `analyze` apply a suppressions file (`exec_program` splits
    its findings itself, before its exit status is decided)."""
    if suppressions is None:
        return report
    kept, suppressed = suppressions.split(report.findings, report.source)
    report.findings = kept
    report.stats["suppressed"] = suppressed
    return report


def _rule(fields: list[str], origin: str) -> Rule:
    kind, *locations = fields
    if not 1 <= len(locations) <= MAX_LOCATIONS:
        raise UserError(
            f"{origin}: a suppression is `KIND LOCATION [LOCATION]` (a location is PATH_GLOB or PATH_GLOB:LINE), "
            f"got {plural(len(fields), 'field')}"
        )
    if kind != ANY_KIND and kind not in KINDS:
        raise UserError(f"{origin}: unknown finding kind {kind!r} (use * or one of: {', '.join(sorted(KINDS))})")
    return Rule(kind, tuple(_location(text, origin) for text in locations), origin)


_LINE_SUFFIX = re.compile(r"^(?P<glob>.+):(?P<line>[^:/]*)$")


def _location(text: str, origin: str) -> Location:
    """`PATH_GLOB` or `PATH_GLOB:LINE`; whatever follows the last `:` must then be a line number."""
    if text.startswith(":"):
        raise UserError(f"{origin}: {text!r}: a location needs a path (a glob such as * or src/*.cu) before ':'")
    m = _LINE_SUFFIX.match(text)
    if m is None:
        return Location(text, None)
    line = m["line"]
    if not (line.isascii() and line.isdigit()) or int(line) < 1:
        raise UserError(f"{origin}: {text!r}: the line after ':' must be a positive number, got {line!r}")
    return Location(m["glob"], int(line))


def _position(site: Site, checked: str | None) -> tuple[str, int] | None:
    """The path and line a report leads `site` with, or None when it has no source position."""
    if site.loc is None:
        return None
    lead = frames(site.loc).lead
    return display_path(lead.file, checked), lead.line
