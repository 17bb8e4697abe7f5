// @launch --arch compute_90 --grid 6,2 --block 48 --resident-threads 96 --arg buf:576 --arg buf:576 --arg buf:576 --arg buf:576
// @expect clean
// Every thread records special registers: its launch coordinates, the launch's
// dimensions, its lane masks and cluster registers. The launch runs in waves
// of two blocks; each value must be what the launch gives that thread.
__global__ void special_registers(unsigned* coords, unsigned* dims, unsigned* masks, unsigned* clusters)
{
    unsigned g = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    unsigned lt, ge, eq, cid, crank;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
    asm("mov.u32 %0, %%lanemask_eq;" : "=r"(eq));
    asm("mov.u32 %0, %%clusterid.y;" : "=r"(cid));
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(crank));
    coords[g] = blockIdx.y * 10000 + blockIdx.x * 100 + threadIdx.x;
    dims[g] = gridDim.x * 10000 + gridDim.y * 100 + blockDim.x;
    masks[g] = (lt ^ ge) == 0xffffffffu && eq == (1u << (threadIdx.x % 32)) && lt == eq - 1;
    clusters[g] = cid * 100 + crank;
}
