// @kernel scoped_orders(int*, int*, int*)
// @atomics scoped_orders 7:add.cta 8:add.gpu 9:max.sys 10:exch.cta
// @launch --grid 1 --block 32 --arg buf:4 --arg buf:1 --arg buf:32
// Scoped atomics with explicit memory orders through the __nv_atomic builtins.
__global__ void scoped_orders(int* cnt, int* flag, int* out)
{
    int a = __nv_atomic_fetch_add(&cnt[0], 1, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_BLOCK);
    int b = __nv_atomic_fetch_add(&cnt[1], 1, __NV_ATOMIC_ACQ_REL, __NV_THREAD_SCOPE_DEVICE);
    int c = __nv_atomic_fetch_max(&cnt[2], (int)threadIdx.x, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_SYSTEM);
    int old = __nv_atomic_exchange_n(&cnt[3], a, __NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_BLOCK);
    __nv_atomic_store_n(flag, 1, __NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_DEVICE);
    int seen = __nv_atomic_load_n(flag, __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_DEVICE);
    out[threadIdx.x] = a + b + c + old + seen;
}
