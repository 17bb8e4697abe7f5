# @launch --kernel chunks --grid 4 --arg f32:400:iota --arg f32:400 --arg 400 --arg 100
# @expect data-race global 21 21
# @launch_clean --kernel chunks --grid 4 --arg f32:512:iota --arg f32:512 --arg 512 --arg 128
# Each program stores x + its id into its own chunk of `chunk` elements,
# with a block that a heuristic (@triton.heuristics) rounds up to a power of
# two; the mask keeps stores inside the array but not inside the chunk, so a
# chunk of 100 (block 128) lets each program store 28 elements of the next
# program's chunk, with a different value. Chunks of 128 fill their blocks
# exactly and do not overlap (the @launch_clean line).
import triton
import triton.language as tl


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["chunk"])})
@triton.jit
def chunks(x_ptr, out_ptr, n, chunk, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * chunk + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + pid, mask=mask)
