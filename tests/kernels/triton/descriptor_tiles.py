# @launch --kernel transpose_add --grid 2,3 --arg f32:3840:rand --arg f32:3840 --arg 48 --arg 80 --meta BM=32 --meta BN=32 --arch sm_90
# @expect clean
# Launch: gpurace.triton.check(transpose_add, (2, 3), x, out, 48, 80, BM=32, BN=32, cc=90)
# (tests/frontend/test_triton.py). Each program loads one 32x32 tile of the 48x80 matrix x through a tensor
# descriptor made in the kernel and stores its transpose plus one into the 80x48 matrix out through another.
# At cc=90 Triton builds both tensor maps on the device (zeroed shared memory edited field by field with
# tensormap.replace, copied to global scratch with tensormap.cp_fenceproxy) and moves the tiles with TMA;
# tiles past the matrices' edges are clipped by the maps.
import triton
import triton.language as tl


@triton.jit
def transpose_add(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    dx = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dout = tl.make_tensor_descriptor(out_ptr, shape=[N, M], strides=[M, 1], block_shape=[BN, BM])
    tile = dx.load([pm * BM, pn * BN])
    dout.store([pn * BN, pm * BM], tile.T + 1)
