"""The search space: which parts of a launch are searched, initial candidates, and Simulee's mutation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpurace.frontend.kernels import describe_kernel
from gpurace.frontend.load import load_module
from gpurace.search.candidates import (
    BLOCK_AXIS_LIMITS,
    MAX_BLOCK_THREADS,
    MAX_SEARCH_THREADS,
    STEP_REACH,
    Candidate,
    Scalar,
    SearchSpace,
    requirement_bounds,
    step_scales,
    used_axes,
)
from gpurace.sim.args import auto_scalar_value, parse_scalar_text

MIXED = r"""
__global__ void k(int* a, unsigned char c, int n, float f, bool b, long long big, short s) {
  int i = threadIdx.y * blockDim.x + threadIdx.x;
  a[i] = c + n + (int)f + b + (int)big + s;
}
"""


STEERED = r"""
__global__ void k(const int* offsets, float* y, const char* flags, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (flags[i] && i < n) y[i + offsets[i]] = 1.0f;
}
"""


def load(tmp_path, text: str, name: str = "k.cu"):
    path = tmp_path / name
    path.write_text(text)
    module = load_module(path)
    fn = module.kernels[0]
    return module, fn, describe_kernel(module, fn)


def space_of(tmp_path, text: str, **launch) -> SearchSpace:
    module, fn, info = load(tmp_path, text)
    options = {"grid": None, "block": None, "args": None} | launch
    return SearchSpace.build(module, fn, info, bounds=requirement_bounds(module, info), **options)


def test_auto_scalars_and_unfixed_dimensions_are_searched(tmp_path):
    space = space_of(tmp_path, MIXED)
    assert [s.label for s in space.scalars] == [
        "c (unsigned char)", "n (int)", "f (float)", "b (bool)", "big (long long)", "s (short)"
    ]
    # threadIdx.y is read, so the block's y axis is searched; the grid only along x.
    assert (space.grid_axes, space.block_axes) == ((0,), (0, 1))
    assert space.buffers == ()  # `a` is only written: its contents steer nothing
    assert space.searched == ["grid.x", "block.x", "block.y", *[s.label for s in space.scalars]]


def test_given_arguments_and_dimensions_are_fixed(tmp_path):
    space = space_of(
        tmp_path, MIXED, grid=(2, 1, 1), block=(32, 1, 1), args=["buf:64", "7", "auto", "1.5", "auto", "auto", "3"]
    )
    assert [s.label for s in space.scalars] == ["n (int)", "b (bool)", "big (long long)"]
    assert (space.grid_axes, space.block_axes) == ((), ()) and space.buffers == ()
    launch = space.launch(Candidate((2, 1, 1), (32, 1, 1), (5.4, 0.6, -2.5)))
    assert launch.specs == ("buf:64", "7", "5", "1.5", "1", "-2", "3")


def test_mutation_stays_within_types_bounds_and_launch_limits(tmp_path):
    space = space_of(tmp_path, MIXED)
    rng, contents = np.random.default_rng(1), np.random.default_rng(2)
    population = space.initial(rng, 8, contents)
    for _ in range(60):
        population = [child for parent in population for child in space.mutate(parent, rng, contents)][:16]
        for c in population:
            assert all(s.lo <= v <= s.hi for s, v in zip(space.scalars, c.values))
            assert all(1 <= d <= lim for d, lim in zip(c.block, BLOCK_AXIS_LIMITS)) and math.prod(c.block) <= MAX_BLOCK_THREADS
            assert c.grid[1:] == (1, 1) and c.block[2] == 1  # axes the kernel does not read stay 1
            assert math.prod(c.grid) * math.prod(c.block) <= MAX_SEARCH_THREADS
            launch = space.launch(c)
            for s in space.scalars:
                # every spec packs into the parameter's type without a range error
                parse_scalar_text(launch.specs[s.index], s.dtype, s.label)


def test_the_two_children_are_a_scaled_gaussian_and_a_scaled_cauchy_step(tmp_path):
    space = space_of(tmp_path, MIXED, grid=(1, 1, 1), block=(32, 1, 1))
    parent = Candidate((1, 1, 1), (32, 1, 1), (100.0, 5.0, 0.5, 0.0, 10.0, 1.0))
    normal_child, cauchy_child = space.mutate(parent, np.random.default_rng(7), np.random.default_rng(8))
    replay = np.random.default_rng(7)
    normal = replay.standard_normal(6) * step_scales(space.scalars, parent.values, replay)
    cauchy = replay.standard_cauchy(6) * step_scales(space.scalars, parent.values, replay)
    assert normal_child.values == tuple(s.clamp(v + d) for s, v, d in zip(space.scalars, parent.values, normal))
    assert cauchy_child.values == tuple(s.clamp(v + d) for s, v, d in zip(space.scalars, parent.values, cauchy))


def test_step_scales_cover_every_octave_up_to_the_reach(tmp_path):
    space = space_of(tmp_path, MIXED)
    rng = np.random.default_rng(5)
    ints = [s for s in space.scalars if s.dtype.kind in "iu"][:1] * 4000
    scales = step_scales(tuple(ints), (0.0,) * len(ints), rng)
    assert scales.min() >= 1.0 and scales.max() <= STEP_REACH + 1
    octaves = np.bincount(np.log2(scales).astype(int))
    assert octaves[: int(np.log2(STEP_REACH))].min() > 200  # about uniform over the octaves below the reach
    big = step_scales(tuple(ints[:1000]), (1e6,) * 1000, rng)
    assert big.max() > STEP_REACH * 16  # a large value takes large steps too


def test_dimension_mutation_moves_each_axis_by_a_power_of_two_within_its_size(tmp_path):
    space = space_of(tmp_path, MIXED)
    rng = np.random.default_rng(3)
    parent = Candidate((4, 1, 1), (16, 8, 1), (0.0,) * 6)
    seen = set()
    for _ in range(200):
        for child in space.mutate(parent, rng, rng):
            for a, b in zip(child.grid + child.block, parent.grid + parent.block):
                step = abs(a - b)
                assert step == 0 or (step & (step - 1) == 0 and step <= b)
                seen.add(step)
    assert {0, 1, 2, 4, 8} <= seen


def test_mutation_is_deterministic_per_seed(tmp_path):
    space = space_of(tmp_path, MIXED)

    def run(seed):
        rng, contents = np.random.default_rng(seed), np.random.default_rng([seed, 1])
        population = space.initial(rng, 4, contents)
        for _ in range(5):
            population = [child for parent in population for child in space.mutate(parent, rng, contents)][:8]
        return [space.launch(c).key for c in population]

    assert run(11) == run(11)
    assert run(11) != run(12)


def test_the_first_initial_candidate_has_the_auto_values(tmp_path):
    space = space_of(tmp_path, MIXED, grid=(2, 1, 1), block=(64, 1, 1))
    first = space.initial(np.random.default_rng(0), 3, np.random.default_rng(1))[0]
    assert first.values == tuple(float(auto_scalar_value(s.dtype, 128)) for s in space.scalars)
    assert space.launch(first).specs[0] == "auto"  # zero contents, as `auto` gives


def test_automatic_buffer_contents_are_searched_and_mutate_sometimes(tmp_path):
    """Each automatic buffer's pattern is a gene of its own: every pattern is tried, a child keeps its
    parent's most of the time, and the scalars a seed draws do not depend on it."""
    space = space_of(tmp_path, STEERED, grid=(2, 1, 1), block=(64, 1, 1))
    assert space.buffers == ((0, "offsets (const int*)"), (2, "flags (const char*)"))
    assert space.searched == ["n (int)", "contents of offsets (const int*)", "contents of flags (const char*)"]
    population = space.initial(np.random.default_rng(4), 40, np.random.default_rng(5))
    assert {space.launch(c).specs[0] for c in population} == {"auto", "auto:ones", "auto:iota", "auto:rand"}
    assert all(space.launch(c).specs[1] == "auto" for c in population)  # y is written, never steers
    rng, contents = np.random.default_rng(6), np.random.default_rng(7)
    kept = sum(child.fills == parent.fills for parent in population for child in space.mutate(parent, rng, contents))
    assert 0.6 * 80 < kept < 0.95 * 80
    other = space.initial(np.random.default_rng(4), 40, np.random.default_rng(9))
    assert [c.values for c in other] == [c.values for c in population]


def test_integer_specs_clamp_exactly_at_the_top_of_64_bit_types():
    s = Scalar(0, "x", np.dtype(np.int64), -(2**63), 2**63 - 1)
    assert s.spec(9.3e18) == str(2**63 - 1)
    u = Scalar(0, "u", np.dtype(np.uint8), 0, 255)
    assert (u.spec(-3.0), u.spec(254.6), u.spec(1e9)) == ("0", "255", "255")


def test_simple_requires_bound_the_searched_values(tmp_path):
    text = r"""
#include <cuda.h>
__global__ void k(int* a, int stride, unsigned n) {
    __requires(stride >= 1 && stride < 9);
    __requires(n == 64);
    a[threadIdx.x * stride] = n;
}
"""
    space = space_of(tmp_path, text)
    assert [(s.label, s.lo, s.hi) for s in space.scalars] == [("stride (int)", 1, 8), ("n (unsigned int)", 64, 64)]


@pytest.mark.parametrize(
    "body, grid_axes, block_axes",
    [
        ("a[threadIdx.x] = 1;", (0,), (0,)),
        ("a[threadIdx.z * blockDim.y + blockIdx.y] = gridDim.z;", (0, 1, 2), (0, 1, 2)),
    ],
)
def test_used_axes_follow_the_special_registers_the_kernel_reads(tmp_path, body, grid_axes, block_axes):
    module, fn, _ = load(tmp_path, f"__global__ void k(int* a) {{ {body} }}\n")
    assert used_axes(module, fn) == (grid_axes, block_axes)


TABLED = r"""
__constant__ int slot[64] = {0, 1, 2, 3};
__constant__ float weight[64];
__device__ int offsets[64];

__global__ void k(float* y) {
  int i = threadIdx.x;
  if (offsets[i] >= 0) y[slot[i]] = weight[i];
}
"""


def test_arrays_whose_loaded_values_steer_are_searched_as_declared_or_filled(tmp_path):
    from gpurace.frontend.type_probe import TypeProbe
    from gpurace.sim.device_vars import fillable_arrays

    module, fn, info = load(tmp_path, TABLED)
    arrays = fillable_arrays(module, fn, TypeProbe(module))
    assert [v.name for v, _ in arrays] == ["slot", "weight", "offsets"]
    space = SearchSpace.build(module, fn, info, grid=(1, 1, 1), block=(64, 1, 1), args=None, bounds={}, arrays=arrays)
    assert space.variables == (("slot", "__constant__ slot"), ("offsets", "__device__ offsets"))  # weight: values only
    assert space.searched == ["contents of __constant__ slot", "contents of __device__ offsets"]
    population = space.initial(np.random.default_rng(4), 40, np.random.default_rng(5))
    assert space.launch(population[0]).global_vars == ()  # the first candidate: as declared
    launches = [space.launch(c) for c in population]
    assert {dict(x.global_vars).get("slot", "declared") for x in launches} == {"declared", "auto:zeros", "auto:ones", "auto:iota", "auto:rand"}
    filled = next(x for x in launches if x.global_vars)
    assert filled.as_dict()["global_vars"] == dict(filled.global_vars)
    assert "globals " in filled.describe() and filled.key != launches[0].key
