# @expect_config0 clean
# @expect_config1 data-race global 28 28
# @launch_config0 --kernel scale --grid 8 --arg f32:1000:iota --arg f32:1000 --arg 1000 --config 0
# @launch_config1 --kernel scale --grid 8 --arg f32:1000:iota --arg f32:1000 --arg 1000 --config 1
# Launch: gpurace.triton.check(scale, lambda meta: (triton.cdiv(n, 128),), x, out, n, config=...)
# (tests/frontend/test_triton.py), or the @launch_config lines (tests/frontend/test_triton_cli.py).
# The programs step by 128 elements, as configuration 0's block has, whatever
# BLOCK the autotuner chose: configuration 1 (BLOCK 256) makes neighbouring
# programs store the same elements with different values. A GPU would
# benchmark both and keep the faster, so each configuration is a program of
# its own to check.
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=2)],
    key=["n"],
)
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * 128 + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * 2 + pid)
    else:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n) * 2 + pid, mask=offsets < n)
