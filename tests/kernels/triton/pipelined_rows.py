# @expect clean
# Launch: gpurace.triton.check(row_max, programs, x, out, rows, cols, BLOCK=..., num_stages=2), and
# gpurace.triton.check(tuned_row_max, programs, x, out, rows, cols, config=...)
# (tests/frontend/test_triton.py). Each program takes every programs-th row
# and stores its maximum. `num_stages` is both a parameter of the kernel and
# Triton's launch option, as in kernels that pipeline their own loop: Triton
# binds the keyword to both. The autotuned twin's configurations have a
# pre_hook, which Triton runs before the launch with the arguments by name.
import triton
import triton.language as tl


@triton.jit
def row_max(x_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    for row in tl.range(tl.program_id(0), rows, tl.num_programs(0), num_stages=num_stages):
        offsets = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * cols + offsets, mask=offsets < cols, other=-float("inf"))
        tl.store(out_ptr + row, tl.max(x, axis=0))


def mark_unwritten(nargs):
    """Fill the outputs the launch leaves alone (past `rows`) with the configuration's block size."""
    nargs["out_ptr"][nargs["rows"] :] = nargs["BLOCK"]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64}, num_warps=2, num_stages=2, pre_hook=mark_unwritten),
        triton.Config({"BLOCK": 128}, num_warps=4, num_stages=3, pre_hook=mark_unwritten),
    ],
    key=["cols"],
)
@triton.jit
def tuned_row_max(x_ptr, out_ptr, rows, cols, BLOCK: tl.constexpr):
    for row in tl.range(tl.program_id(0), rows, tl.num_programs(0)):
        offsets = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * cols + offsets, mask=offsets < cols, other=-float("inf"))
        tl.store(out_ptr + row, tl.max(x, axis=0))
