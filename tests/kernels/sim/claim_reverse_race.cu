// @kernel claim_reverse_race(int*, int*, int)
// @atomics claim_reverse_race 18:cas.gpu
// @launch --grid 1 --block 64 --arg buf:1 --arg buf:64 --arg 64
// @expect data-race global 16 19
// Every thread writes its own slot, then the first n threads race to claim the owner word with atomicCAS,
// and the winner overwrites slot 0. Under schedule 0 (min-pc) lane 0 wins, so the two writes to slot 0 are
// one thread's; under the reverse schedule warp 1 goes first and lane 32 wins, so its write races with
// thread 0's. The reverse schedule forks from schedule 0's run at the atomicCAS (tests/sim/test_shared_prefix.py);
// with n = 0 no thread reaches it, and the reverse schedule is schedule 0's run.
__global__ void claim_reverse_race(int* owner, int* slots, int n)
{
    // slot writes before the claim: shared with schedule 0
    int t = threadIdx.x;
    int v = t * 3;
    v = v ^ (v >> 1);
    slots[t] = v;
    if (t < n) {
        if (atomicCAS(owner, 0, 1) == 0)
            slots[0] = -1;
    }
}
