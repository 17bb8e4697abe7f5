"""`search`: Simulee's evolutionary input search, with every candidate launch fully checked.

A race shows only under inputs that make threads meet in memory: a stride of
0, a modulus smaller than the block, an offset smaller than the thread count,
a block of more than one warp. Simulee (Wu et al., Algorithm 1) looks for
such inputs with Evolutionary Programming: a population of candidate inputs
(`candidates.SearchSpace`), each generation every parent makes a Gaussian and
a Cauchy child, and the fittest (`fitness.Fitness`: fewest distinct
addresses per thread-address pair, then the narrowest footprint) survive.

Here every candidate is a complete `check` of the launch (same detector,
memory model and number of schedules), with the fitness sink watching the same
event stream, and the report is the union of all candidates' findings
(`union.FindingUnion`), each with the input (and schedule) that first exposed it. Simulee stops at the first acceptable
input; since the union is the point, all generations run, except that the
search ends early once a generation tried no input that had not been tried
before, or the population has converged (more than one survivor, all with
the same fitness) and the generation found nothing new.

Candidates that are not valid inputs are discarded, counted by reason in the
report's `stats["search"]["discarded"]`, and never survive: one that violates
a `__requires` (`PreconditionViolated`), one that exhausts the per-candidate
step budget (SEARCH_STEP_BUDGET unless given; smaller than a plain check's,
so that a candidate whose loop bound came out huge costs little; its livelock
finding is not reported), and one that accesses memory out of bounds or
misaligned (an input too large for the buffers says nothing about the
kernel; `check` without a search reports such accesses). When every candidate
is discarded, nothing was checked, and that is an input error.

Deterministic: `numpy.random.Generator`s seeded with `seed` draw every
random number in a fixed order, every candidate is checked with the same
`seed`, and candidates that round to the same input are checked once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from gpurace.check import check, describe_arg
from gpurace.errors import PreconditionViolated, UserError
from gpurace.frontend.compile import DEFAULT_ARCH
from gpurace.frontend.hip import report_notes
from gpurace.frontend.kernels import describe_kernel
from gpurace.frontend.load import load_module
from gpurace.frontend.ptx.ir import Module
from gpurace.frontend.type_probe import TypeProbe
from gpurace.limits import Limits
from gpurace.report.model import Report, headline
from gpurace.search.candidates import Candidate, LaunchInput, SearchSpace, requirement_bounds
from gpurace.search.fitness import Fitness, FitnessSink
from gpurace.search.union import FindingUnion
from gpurace.sim.args import copy_arg
from gpurace.sim.device_vars import automatic_pointers, cpp_name, fillable_arrays, is_named
from gpurace.sim.launch import as_dims, select_kernel
from gpurace.sim.program import build_program
from gpurace.words import plural

DEFAULT_POPULATION = 8
DEFAULT_GENERATIONS = 20
MAX_POPULATION = 1024
MAX_GENERATIONS = 10_000
"""Bounds of --population and --generations: a search costs up to population x (1 + 2 x generations) checks."""
SEARCH_STEP_BUDGET = 10_000
"""Default scheduler-step budget of one candidate launch."""

INVALID_ACCESS_KINDS = frozenset({"out-of-bounds", "misaligned-access"})
DISCARD_REASONS = ("precondition", "step_budget", "invalid_access")

Progress = Callable[[int, int, int, int], None]
"""Called as progress(generation, generations, candidates checked, candidates planned) after each candidate."""


@dataclass(frozen=True)
class Scored:
    """A candidate and what checking its input gave: a fitness, or None when it was discarded."""

    candidate: Candidate
    launch: LaunchInput
    fitness: Fitness | None
    order: int

    def rank(self) -> tuple:
        """Sort key: valid candidates by fitness, discarded ones last; ties by evaluation order."""
        if self.fitness is None:
            return (True, (), self.order)
        return (False, self.fitness.rank(), self.order)


class CandidateRuns:
    """Checks candidate inputs, once each, and keeps the union of their findings and the discard counts."""

    def __init__(self, module: Module, kernel: str, *, max_steps: int, check_options: dict):
        self.module = module
        self.kernel = kernel
        self.max_steps = max_steps
        self.global_vars = dict(check_options.get("global_vars") or {})
        # Candidates are ordinary launches: a grid of any size, so never a cooperative one.
        self.options = {"cooperative": False, **{k: v for k, v in check_options.items() if k != "global_vars"}}
        self.union = FindingUnion()
        self.discarded = dict.fromkeys(DISCARD_REASONS, 0)
        self.examples: dict[str, str] = {}
        self.totals = {"threads": 0, "steps": 0, "thread_instructions": 0, "events": 0}
        self.buffers: dict[str, dict] = {}
        self.dynamic_shared: dict | None = None
        self.detector: str | None = None
        self._seen: dict[tuple, Scored] = {}

    @property
    def checked(self) -> int:
        return len(self._seen)

    def score(self, candidate: Candidate, launch: LaunchInput) -> tuple[Scored, bool]:
        """The Scored candidate, and whether its input was new (an input seen before is not checked again)."""
        seen = self._seen.get(launch.key)
        if seen is not None:
            return Scored(candidate, launch, seen.fitness, seen.order), False
        scored = Scored(candidate, launch, self._run(launch), len(self._seen))
        self._seen[launch.key] = scored
        return scored, True

    def _run(self, launch: LaunchInput) -> Fitness | None:
        sink = FitnessSink()
        try:
            report = check(
                self.module,
                grid=launch.grid,
                block=launch.block,
                args=[copy_arg(a) for a in launch.args],  # every run starts afresh
                global_vars={**copy_arg(self.global_vars), **dict(launch.global_vars)},
                kernel=self.kernel,
                max_steps=self.max_steps,
                sinks=[sink],
                **self.options,
            )
        except PreconditionViolated as e:
            return self._discard("precondition", f"{launch.describe()}: {e}")
        for key in self.totals:
            self.totals[key] += report.stats[key]
        if longest_run(report) >= self.max_steps:
            return self._discard("step_budget", launch.describe())
        invalid = next((f for f in report.findings if f.kind in INVALID_ACCESS_KINDS), None)
        if invalid is not None:
            return self._discard("invalid_access", f"{launch.describe()}: {headline(invalid)}: {invalid.cause}")
        self.detector = report.launch["detector"]
        for b in report.stats.get("buffers", []):
            top = self.buffers.setdefault(b["name"], dict(b))
            top["bytes_used"] = max(top["bytes_used"], b["bytes_used"])
            top["pages"] = max(top["pages"], b["pages"])
        shared = report.stats.get("dynamic_shared")
        if shared is not None:
            most = max(shared["bytes"], self.dynamic_shared["bytes"] if self.dynamic_shared else 0)
            self.dynamic_shared = {**shared, "bytes": most}
        self.union.add(report, input=launch.as_dict())
        return sink.fitness()

    def _discard(self, reason: str, example: str) -> None:
        self.discarded[reason] += 1
        self.examples.setdefault(reason, example)
        return None


def search(
    source: str | os.PathLike | Module,
    *,
    grid=None,
    block=None,
    args: list | None = None,
    global_vars: Mapping[str, object] | None = None,
    kernel: str | None = None,
    detector: str = "auto",
    model: str = "cuda",
    redundant_barriers: bool = False,
    shared_bytes: int | None = None,
    seed: int = 0,
    shadow_cells: int = 4,
    schedules: int = 1,
    max_steps: int = SEARCH_STEP_BUDGET,
    population: int = DEFAULT_POPULATION,
    generations: int = DEFAULT_GENERATIONS,
    include_dirs=(),
    defines=(),
    arch: str = DEFAULT_ARCH,
    progress: Progress | None = None,
    limits: Limits | None = None,
) -> Report:
    """Search inputs of one kernel for races and synchronisation bugs; the report holds the union of findings.

    `grid` or `block` None is searched; `args` as for `check`, with every
    `auto` scalar searched (None: all `auto`); `global_vars` as for `check`, fixed. `max_steps` is the budget of one
    candidate launch (of each of its `schedules`, which `check` unions first). The report's findings carry `input`, the launch that
    first exposed them; `stats["search"]` says how the search went, and the
    simulation counters in `stats` are totals over all candidates. `limits` bound the whole search: when its
    time is spent, the candidate running ends with a `timeout` finding and no other candidate is checked.
    """
    if not 1 <= population <= MAX_POPULATION:
        raise UserError(f"--population must be from 1 to {MAX_POPULATION}, got {population}")
    if not 0 <= generations <= MAX_GENERATIONS:
        raise UserError(f"--generations must be from 0 to {MAX_GENERATIONS}, got {generations}")
    start = time.perf_counter()
    limits = (limits or Limits()).started()
    module = source if isinstance(source, Module) else load_module(source, include_dirs=include_dirs, defines=defines, arch=arch, limits=limits)
    mangled = select_kernel(module, kernel)
    fn = module.functions[mangled]
    info = describe_kernel(module, fn)
    types = TypeProbe(module, limits)
    arrays = [(v, p) for v, p in fillable_arrays(module, fn, types) if not any(is_named(v, n) for n in global_vars or {})]
    space = SearchSpace.build(
        module,
        fn,
        info,
        grid=None if grid is None else as_dims(grid, "grid"),
        block=None if block is None else as_dims(block, "block"),
        args=args,
        bounds=requirement_bounds(module, info),
        arrays=arrays,
    )
    if args is None or all(isinstance(a, str) and a.strip() == "auto" for a in args):
        # Candidates give scalars values, so they are not all-`auto` launches: name the variables a check
        # without arguments would give automatic buffers.
        automatic = {cpp_name(v): "auto" for v, _ in automatic_pointers(module, fn, types)}
        global_vars = {**automatic, **(global_vars or {})}
    options = {
        "global_vars": global_vars,
        "detector": detector,
        "model": model,
        "redundant_barriers": redundant_barriers,
        "shared_bytes": shared_bytes,
        "seed": seed,
        "shadow_cells": shadow_cells,
        "schedules": schedules,
        "limits": limits,
    }
    runs = CandidateRuns(module, mangled, max_steps=max_steps, check_options=options)
    rng = np.random.default_rng(seed)
    contents = np.random.default_rng([seed, 1])  # automatic buffers' patterns (`candidates` says why apart)
    planned = population * (1 + 2 * generations)
    tried = 0

    def evaluate(candidates: list[Candidate], generation: int) -> tuple[list[Scored], int]:
        nonlocal tried
        out, fresh = [], 0
        for c in candidates:
            if limits.expired():
                break
            scored, new = runs.score(c, space.launch(c))
            out.append(scored)
            fresh += new
            tried += 1
            if progress is not None:
                progress(generation, generations, tried, planned)
        return out, fresh

    survivors = _select(evaluate(space.initial(rng, population, contents), 0)[0], population)
    completed, converged = 0, False
    for generation in range(1, generations + 1):
        found_before = len(runs.union)
        children = [child for s in survivors for child in space.mutate(s.candidate, rng, contents)]
        scored, fresh = evaluate(children, generation)
        survivors = _select(survivors + scored, population)
        completed = generation
        converged = _converged(survivors)
        if fresh == 0 or (converged and len(runs.union) == found_before) or limits.expired():
            break
    if runs.detector is None:
        raise UserError(_nothing_checked(runs, max_steps))
    program = build_program(module, mangled) if redundant_barriers else None
    best = survivors[0]
    return Report(
        kernel=info.name,
        mangled=mangled,
        source=str(module.source_path) if module.source_path else None,
        launch={
            "grid": None if space.grid is None else list(space.grid),
            "block": None if space.block is None else list(space.block),
            "shared_bytes": runs.dynamic_shared["bytes"] if runs.dynamic_shared else shared_bytes or 0,
            "args": [a if isinstance(a, str) else describe_arg(a) for a in space.fixed_args],
            "model": model,
            "detector": runs.detector,
            "search": {"population": population, "generations": generations, "seed": seed},
            **({"schedules": {"count": schedules, "seed": seed}} if schedules > 1 else {}),
            **({"notes": notes} if (notes := report_notes([module])) else {}),
        },
        findings=runs.union.findings(program),
        stats={
            **runs.totals,
            "seconds": round(time.perf_counter() - start, 4),
            **({"buffers": list(runs.buffers.values())} if runs.buffers else {}),
            **({"dynamic_shared": runs.dynamic_shared} if runs.dynamic_shared else {}),
            "search": {
                "searched": space.searched,
                "candidates": runs.checked,
                "generations": completed,
                "converged": converged,
                "discarded": dict(runs.discarded),
                "step_budget": max_steps,
                "best_fitness": best.fitness.as_dict() if best.fitness else None,
                "best_input": best.launch.as_dict(),
            },
        },
    )


def longest_run(report: Report) -> int:
    """The scheduler steps of the longest run behind `report` (a check of several schedules sums them)."""
    return max((run["steps"] for run in report.stats.get("schedules", ())), default=report.stats["steps"])


def _select(scored: list[Scored], population: int) -> list[Scored]:
    """The `population` fittest distinct inputs (the population's winners survive, Algorithm 1 lines 14-16)."""
    distinct: dict[tuple, Scored] = {}
    for s in scored:
        distinct.setdefault(s.launch.key, s)
    return sorted(distinct.values(), key=Scored.rank)[:population]


def _converged(survivors: list[Scored]) -> bool:
    ranks = {s.fitness.rank() if s.fitness else None for s in survivors}
    return len(survivors) > 1 and len(ranks) == 1 and None not in ranks


def _nothing_checked(runs: CandidateRuns, max_steps: int) -> str:
    """Why every candidate was discarded, with an example input per reason."""
    reasons = {
        "precondition": "violated a __requires",
        "step_budget": f"exceeded the step budget of {max_steps} scheduler steps (raise --max-steps if the kernel is just long)",
        "invalid_access": "accessed memory out of bounds or misaligned",
    }
    parts = [
        f"{runs.discarded[r]} {reasons[r]} (e.g. {runs.examples[r]})" for r in DISCARD_REASONS if runs.discarded[r]
    ]
    return f"the input search could check none of its {plural(runs.checked, 'candidate input')}: " + "; ".join(parts)
