// @kernel count(int*)
// @atomics count 16:add.cta 18:add.cta
// @launch --grid 2 --block 32 --arg buf:1
// @expect data-race global 16 16
// @expect data-race global 16 18
// @expect data-race global 18 18
// cuda::atomic_ref with block scope on a counter that two blocks update: insufficient scope.
// The racing `atom` instructions lie in libcu++'s headers, inlined six calls deep; each finding
// must lead with the user's line that calls fetch_add (16 or 18), and the two calls, whose
// innermost positions in the header are the same, must stay two statements.
#include <cuda/atomic>

__global__ void count(int* counter)
{
    cuda::atomic_ref<int, cuda::thread_scope_block> total(*counter);
    total.fetch_add(1, cuda::memory_order_relaxed);
    if (threadIdx.x == 0)
        total.fetch_add(2, cuda::memory_order_relaxed);
}
