"""What the input search varies, one candidate input, and how candidates mutate (Simulee, Algorithm 2).

A `SearchSpace` says which parts of a launch are searched: every scalar
parameter whose argument is `auto` (integers, floating point, bool; a struct
passed by value keeps its `auto` value), and the grid and
block dimensions when the user fixed neither. Everything the user gave is
fixed. A pointer parameter keeps its argument, except that the contents of
an automatic buffer (`auto`) whose loaded values feed addresses or branches
(`loaded_values.steering_contents`) are searched too: zeros, ones, iota or
random small numbers at its start (`auto:PATTERN`), since a kernel that
indexes by values it loads (`y[i + offsets[i]]`) races only on some contents.
So are the contents of the arrays of numbers the kernel reads that way from
module variables (a `__constant__` table the host may fill with
`cudaMemcpyToSymbol`) and the user did not set with `--global`: as declared,
or filled with a pattern (`--global NAME=auto:PATTERN`).

A `Candidate` is the genome: dimensions as integers, scalars as floats, as in
Simulee, which views arguments as floating-point numbers and converts them to
their actual types only to launch. `SearchSpace.launch` does that conversion
(rounding integers, clamping to the type's range and to bounds a
`__requires` states), and the result is the concrete `LaunchInput`, written
as `--arg` specs so a finding's input can be replayed on the command line.

Mutation follows Simulee: each parent has two children, one adding a
normal step to every scalar (small steps, good near an optimum) and one a
Cauchy step (heavy-tailed: the occasional huge jump escapes a poor region).
Simulee's steps are standard (|normal step| averages 0.8), so a value moves by
about one per generation: an offset that must go from 512 to 185 never gets
there in a search of a few hundred candidates. So each step is scaled by
2**k, k drawn uniformly from 0 to log2 of the value's reach (its magnitude,
at least STEP_REACH for integers and 1 for floats): every octave of step size
is equally likely, so the search crosses hundreds in a few generations and
still makes the unit steps that land on an exact value. The secondary
fitness (the narrowest footprint) steers those steps toward colliding
accesses. Each child's dimensions move by -1, 0 or +1 per searched axis,
times 2**k with k uniform from 0 to log2 of the dimension, so a block can
double or halve as easily as grow by one thread. The searched axes are x,
plus y and z only where the kernel reads that component (`%tid.y`,
`%ntid.z`, ...), since a dimension the kernel never looks at cannot change
what it does.

Dimensions stay sensible: a block has at most 1024 threads (1024 x 1024 x
64 per axis), a grid at most MAX_SEARCH_THREADS threads in all, so that one
candidate stays cheap to simulate. A mutation that would leave these limits
keeps the parent's dimensions. Contents change less often: each child
re-draws each buffer's pattern with probability CONTENTS_MUTATION. They are
drawn from a generator of their own, so the scalars and dimensions a seed
gives are the same whether or not a kernel has automatic buffers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gpurace.check import describe_arg
from gpurace.frontend.gpuverify import requirement_bounds
from gpurace.frontend.kernels import KernelInfo, ParamInfo, reachable_functions
from gpurace.frontend.ptx.ir import Function, Module, SpecialReg, Variable
from gpurace.report.model import format_input
from gpurace.search.loaded_values import steering_contents
from gpurace.sim.args import AUTO, AUTO_FILLS, auto_scalar_value, buffer_name, is_pointer, scalar_dtype
from gpurace.sim.device_vars import cpp_name

Dims = tuple[int, int, int]

MAX_BLOCK_THREADS = 1024
BLOCK_AXIS_LIMITS = (1024, 1024, 64)
GRID_AXIS_LIMITS = (2**31 - 1, 65535, 65535)
MAX_SEARCH_THREADS = 65536
"""Most threads (grid x block) of a candidate launch whose grid is searched."""
INITIAL_GRID_AXIS = 8
"""Initial searched grid axes are drawn from 1..INITIAL_GRID_AXIS (blocks from the whole 1..1024)."""
INITIAL_INT_MAGNITUDE = 1024
"""Initial integer scalars have a log-uniform magnitude in 0..INITIAL_INT_MAGNITUDE (negative half the time
for signed types): sizes, strides and offsets of small launches live there, and races often need small values."""
STEP_REACH = INITIAL_INT_MAGNITUDE
"""Integer mutation steps are scaled by up to the larger of this and the value's magnitude."""
CONTENTS_MUTATION = 0.25
"""Probability that a child re-draws one automatic buffer's contents pattern."""
INITIAL_FLOAT_DECADES = (-3.0, 3.0)
"""Initial floating-point scalars have a log-uniform magnitude in 10**-3..10**3 and a random sign."""

_AXES = ("x", "y", "z")


@dataclass(frozen=True)
class Scalar:
    """A searched scalar parameter: its position, how reports name it, its type and inclusive bounds."""

    index: int
    label: str
    dtype: np.dtype
    lo: int | float
    hi: int | float

    def clamp(self, value: float) -> float:
        return float(min(max(value, self.lo), self.hi))

    def spec(self, value: float) -> str:
        """The `--arg` text of the genome value: rounded and converted to the parameter's type.

        Integers are clamped after rounding, in Python integers, since a float
        near the top of a 64-bit type rounds past it.
        """
        if self.dtype.kind == "f":
            return str(self.dtype.type(value))
        return str(min(max(int(round(value)), self.lo), self.hi))


@dataclass(frozen=True)
class Candidate:
    """One genome: grid and block dimensions, one float per searched scalar and one `AUTO_FILLS` index per
    automatic buffer (see the module docstring)."""

    grid: Dims
    block: Dims
    values: tuple[float, ...]
    fills: tuple[int, ...] = ()
    variable_fills: tuple[int, ...] = ()
    """One `VARIABLE_FILLS` index per searched array variable."""


VARIABLE_FILLS = ("declared", *AUTO_FILLS)
"""What a searched array variable holds: its initialiser, or an `auto:PATTERN` fill."""


@dataclass(frozen=True)
class LaunchInput:
    """A concrete launch: dimensions, `args` for `check` and their `specs` as `--arg` texts, and the `--global`
    specs of the searched variables that do not hold what they were declared with."""

    grid: Dims
    block: Dims
    args: tuple
    specs: tuple[str, ...]
    global_vars: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> tuple:
        """Identity of the launch: two candidates that round to the same input are the same input."""
        return (self.grid, self.block, self.specs, self.global_vars)

    def as_dict(self) -> dict:
        launch = {"grid": list(self.grid), "block": list(self.block), "args": list(self.specs)}
        return launch | ({"global_vars": dict(self.global_vars)} if self.global_vars else {})

    def describe(self) -> str:
        """`grid 2x1x1 block 64x1x1 args auto 0`, as reports show it."""
        return format_input(self.as_dict())


@dataclass(frozen=True)
class SearchSpace:
    """The searched and the fixed parts of a launch (see the module docstring)."""

    grid: Dims | None
    block: Dims | None
    grid_axes: tuple[int, ...]
    block_axes: tuple[int, ...]
    scalars: tuple[Scalar, ...]
    fixed_args: tuple
    buffers: tuple[tuple[int, str], ...] = ()
    """(parameter index, label) of each automatic buffer whose contents are searched (they steer the kernel)."""
    variables: tuple[tuple[str, str], ...] = ()
    """(C++ name, label) of each array variable whose contents are searched (they steer the kernel)."""

    @staticmethod
    def build(
        module: Module,
        fn: Function,
        info: KernelInfo,
        *,
        grid: Dims | None,
        block: Dims | None,
        args: list | None,
        bounds: Mapping[int, tuple[float | None, float | None]],
        arrays: Sequence[tuple[Variable, ParamInfo]] = (),
    ) -> SearchSpace:
        """The space for one kernel: `args` as for `check` (None: all `auto`), `bounds` inclusive bounds
        per parameter index (see `requirement_bounds`; None for an open side), `arrays` the array variables the
        user left as declared (`device_vars.fillable_arrays`)."""
        given = [AUTO] * len(info.params) if args is None else list(args)
        scalars, buffers = [], []
        steering = steering_contents(fn, frozenset(v.name for v, _ in arrays))
        variables = tuple((cpp_name(v), p.cpp_name) for v, p in arrays if v.name in steering)
        for i, (p, a) in enumerate(zip(info.params, given)):
            dtype = scalar_dtype(p)
            automatic = isinstance(a, str) and a.strip() == AUTO
            if automatic and is_pointer(p) and i in steering:
                buffers.append((i, buffer_name(i, p)))
            if not automatic or is_pointer(p) or dtype is None:
                continue
            lo, hi = _type_range(dtype)
            want_lo, want_hi = bounds.get(i, (None, None))
            if want_lo is not None:
                lo = max(lo, want_lo if dtype.kind == "f" else math.ceil(want_lo))
            if want_hi is not None:
                hi = min(hi, want_hi if dtype.kind == "f" else math.floor(want_hi))
            scalars.append(Scalar(i, buffer_name(i, p), dtype, lo, hi))
        grid_axes, block_axes = used_axes(module, fn)
        return SearchSpace(
            grid=grid,
            block=block,
            grid_axes=() if grid is not None else grid_axes,
            block_axes=() if block is not None else block_axes,
            scalars=tuple(scalars),
            fixed_args=tuple(given),
            buffers=tuple(buffers),
            variables=variables,
        )

    @property
    def searched(self) -> list[str]:
        """What the search varies, for the report: `grid.x`, `block.x`, scalar names."""
        dims = [f"grid.{_AXES[a]}" for a in self.grid_axes] + [f"block.{_AXES[a]}" for a in self.block_axes]
        contents = [label for _, label in self.buffers] + [label for _, label in self.variables]
        return dims + [s.label for s in self.scalars] + [f"contents of {label}" for label in contents]

    # ------------------------------------------------------------------ candidates

    def initial(self, rng: np.random.Generator, count: int, contents: np.random.Generator) -> list[Candidate]:
        """`count` starting candidates: the first with the scalars and (zero) contents `auto` would choose, the
        others random; `contents` draws the buffers' patterns."""
        out = []
        for n in range(count):
            block = self.block or _fit(
                _random_dims(rng, self.block_axes, BLOCK_AXIS_LIMITS[0]), BLOCK_AXIS_LIMITS, MAX_BLOCK_THREADS
            )
            budget = max(1, MAX_SEARCH_THREADS // math.prod(block))
            grid = self.grid or _fit(_random_dims(rng, self.grid_axes, INITIAL_GRID_AXIS), GRID_AXIS_LIMITS, budget)
            nthreads = math.prod(grid) * math.prod(block)
            values = tuple(
                s.clamp(float(auto_scalar_value(s.dtype, nthreads)) if n == 0 else _random_scalar(rng, s))
                for s in self.scalars
            )
            fills = tuple(0 if n == 0 else int(contents.integers(len(AUTO_FILLS))) for _ in self.buffers)
            variable_fills = tuple(0 if n == 0 else int(contents.integers(len(VARIABLE_FILLS))) for _ in self.variables)
            out.append(Candidate(grid, block, values, fills, variable_fills))
        return out

    def mutate(self, parent: Candidate, rng: np.random.Generator, contents: np.random.Generator) -> tuple[Candidate, Candidate]:
        """Simulee's two children of `parent`: a Gaussian and a Cauchy step on the scalars, +-1 on the dimensions;
        each buffer's pattern re-drawn from `contents` with probability CONTENTS_MUTATION."""
        k = len(self.scalars)
        normal = rng.standard_normal(k) * step_scales(self.scalars, parent.values, rng)
        cauchy = rng.standard_cauchy(k) * step_scales(self.scalars, parent.values, rng)
        children = []
        for steps in (normal, cauchy):
            values = tuple(s.clamp(v + float(d)) for s, v, d in zip(self.scalars, parent.values, steps))
            grid = _nudge(parent.grid, self.grid_axes, rng)
            block = _nudge(parent.block, self.block_axes, rng)
            if not self._fits(grid, block):
                grid, block = parent.grid, parent.block
            fills = _redraw(parent.fills, len(AUTO_FILLS), contents)
            variable_fills = _redraw(parent.variable_fills, len(VARIABLE_FILLS), contents)
            children.append(Candidate(grid, block, values, fills, variable_fills))
        return children[0], children[1]

    def launch(self, candidate: Candidate) -> LaunchInput:
        """The concrete input of a candidate (arrays among the fixed arguments are the user's own: copy them
        before a run, which writes its buffers)."""
        args = list(self.fixed_args)
        for s, v in zip(self.scalars, candidate.values):
            args[s.index] = s.spec(v)
        for (index, _), fill in zip(self.buffers, candidate.fills):
            args[index] = AUTO if AUTO_FILLS[fill] == "zeros" else f"{AUTO}:{AUTO_FILLS[fill]}"
        specs = tuple(a if isinstance(a, str) else describe_arg(a) for a in args)
        filled = tuple(
            (name, f"{AUTO}:{VARIABLE_FILLS[fill]}") for (name, _), fill in zip(self.variables, candidate.variable_fills) if fill
        )
        return LaunchInput(candidate.grid, candidate.block, tuple(args), specs, filled)

    def _fits(self, grid: Dims, block: Dims) -> bool:
        threads = math.prod(block)
        if threads > MAX_BLOCK_THREADS or any(d < 1 or d > lim for d, lim in zip(block, BLOCK_AXIS_LIMITS)):
            return False
        if any(d < 1 or d > lim for d, lim in zip(grid, GRID_AXIS_LIMITS)):
            return False
        return self.grid is not None or math.prod(grid) * threads <= MAX_SEARCH_THREADS


def _redraw(fills: tuple[int, ...], choices: int, contents: np.random.Generator) -> tuple[int, ...]:
    """Each pattern re-drawn from `choices` with probability CONTENTS_MUTATION."""
    return tuple(int(contents.integers(choices)) if contents.random() < CONTENTS_MUTATION else f for f in fills)


def used_axes(module: Module, fn: Function) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(grid axes, block axes) the kernel reads: x always, y and z where `%ctaid`/`%nctaid` (grid) or
    `%tid`/`%ntid` (block) of that component appear in the kernel or a function it calls."""
    grid, block = {0}, {0}
    for f in reachable_functions(module, fn):
        for ins in f.body:
            for op in ins.operands:
                if isinstance(op, SpecialReg) and op.component in _AXES:
                    axis = _AXES.index(op.component)
                    if op.name in ("tid", "ntid"):
                        block.add(axis)
                    elif op.name in ("ctaid", "nctaid"):
                        grid.add(axis)
    return tuple(sorted(grid)), tuple(sorted(block))


def _type_range(dtype: np.dtype) -> tuple[int | float, int | float]:
    if dtype.kind == "b":
        return 0, 1
    if dtype.kind == "f":
        top = float(np.finfo(dtype).max)
        return -top, top
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _random_dims(rng: np.random.Generator, axes: tuple[int, ...], top: int) -> Dims:
    """Log-uniform 1..top on each searched axis, 1 elsewhere."""
    dims = [1, 1, 1]
    for a in axes:
        dims[a] = int(np.exp(rng.uniform(0.0, np.log(top + 1))))
    return (dims[0], dims[1], dims[2])


def _random_scalar(rng: np.random.Generator, s: Scalar) -> float:
    if s.dtype.kind == "b":
        return float(rng.integers(0, 2))
    if s.dtype.kind == "f":
        magnitude = 10.0 ** rng.uniform(*INITIAL_FLOAT_DECADES)
        return magnitude if rng.random() < 0.5 else -magnitude
    magnitude = float(np.floor(np.exp(rng.uniform(0.0, np.log(INITIAL_INT_MAGNITUDE + 2))))) - 1.0
    negative = s.dtype.kind == "i" and rng.random() < 0.5
    return -magnitude if negative else magnitude


def step_scales(scalars: tuple[Scalar, ...], values: tuple[float, ...], rng: np.random.Generator) -> np.ndarray:
    """2**k per scalar, k uniform in 0..log2(reach + 1) (see the module docstring); 1 for bools."""
    reach = np.array(
        [0.0 if s.dtype.kind == "b" else max(abs(v), 1.0 if s.dtype.kind == "f" else STEP_REACH) for s, v in zip(scalars, values)]
    )
    return np.exp2(rng.uniform(0.0, 1.0, len(scalars)) * np.log2(reach + 1.0))


def _nudge(dims: Dims, axes: tuple[int, ...], rng: np.random.Generator) -> Dims:
    """-1, 0 or +1 per searched axis, times 2**k with k uniform in 0..log2(dimension)."""
    out = list(dims)
    steps = rng.integers(-1, 2, size=len(axes))
    octaves = rng.uniform(0.0, 1.0, len(axes))
    for a, step, u in zip(axes, steps, octaves):
        out[a] += int(step) * int(2 ** int(u * (np.log2(out[a]) + 1)))
    return (out[0], out[1], out[2])


def _fit(dims: Dims, limits: tuple[int, int, int], total: int) -> Dims:
    """`dims` within per-axis `limits`, halving the largest axis until the product is at most `total`."""
    out = [min(d, lim) for d, lim in zip(dims, limits)]
    while math.prod(out) > total:
        i = out.index(max(out))
        out[i] = max(1, out[i] // 2)
    return (out[0], out[1], out[2])
