// @kernel produce_consume(int*, int*, int*)
// @atomics produce_consume 21:exch.gpu 23:add.gpu
// @fences produce_consume 20:gpu
// @launch --grid 2 --block 32 --arg buf:1 --arg buf:1 --arg buf:1
// @expect data-race global 19 25 error
// @expect_ptx data-race global 19 25
// @expect_scord data-race global 19 25 error
// Block 0 publishes a value: it writes the data, fences, and raises a flag
// with an atomic. Block 1 waits for the flag and reads the data, but with no
// fence between its flag read and its data read. Under the PTX model (and
// gpurace's default) a strong read acquires only when a fence follows it, so
// the data read races with the write: the report says "missing fence after
// the flag read". ScoRD's rules need no consumer fence but order only strong
// accesses, so --model scord says "not a strong access" for the plain data.
__global__ void produce_consume(int* data, int* flag, int* result)
{
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        *data = 42;
        __threadfence();
        atomicExch(flag, 1);
    } else {
        while (atomicAdd(flag, 0) == 0) {}
        // missing: __threadfence();
        *result = *data;
    }
}
