// @launch --grid 1 --block 64 --arg buf:64
// @expect data-race shared 12 13
// @prove s race found 12 13
// @prove out race-free
// @prove_schedules 1 not proved
// Each thread reads its right neighbour's slot with no barrier after the
// writes: verify's alarm is certain (exact condition and index), and the
// simulation reports the same race, a witness for it.
__global__ void shift(int* out)
{
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}
