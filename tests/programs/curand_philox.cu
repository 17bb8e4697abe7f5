// @stdout philox matches the host's reference for 4 threads
// @exit 0
// @launches 1
// @expect clean
// Device-side cuRAND (<curand_kernel.h>) builds whether or not the toolkit was installed with cuRAND, and
// draws what a GPU draws: each thread's first four numbers from Philox4x32-10 (seed, subsequence = thread)
// are compared with the generator computed on the host from its published definition.
#include <cstdio>
#include <cstdint>
#include <curand_kernel.h>

const unsigned long long SEED = 0x123456789abcdefULL;
const int THREADS = 4;

__global__ void draw(unsigned *out) {
    curandStatePhilox4_32_10_t state;
    curand_init(SEED, threadIdx.x, 0, &state);
    for (int k = 0; k < 4; k++)
        out[4 * threadIdx.x + k] = curand(&state);
}

// Philox4x32-10 (Salmon et al., SC'11): ten rounds of two 32x32 multiplications, with the key bumped by the
// Weyl constants between rounds.
static void philox(uint32_t ctr[4], uint32_t key[2], uint32_t out[4]) {
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]}, k[2] = {key[0], key[1]};
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k[0], (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k[1],
                         (uint32_t)p0};
        for (int i = 0; i < 4; i++)
            c[i] = n[i];
        k[0] += 0x9E3779B9u;
        k[1] += 0xBB67AE85u;
    }
    for (int i = 0; i < 4; i++)
        out[i] = c[i];
}

int main() {
    unsigned *d, got[4 * THREADS];
    cudaMalloc(&d, sizeof(got));
    draw<<<1, THREADS>>>(d);
    cudaMemcpy(got, d, sizeof(got), cudaMemcpyDeviceToHost);
    cudaFree(d);
    int matching = 0;
    for (int t = 0; t < THREADS; t++) {
        uint32_t ctr[4] = {0, 0, (uint32_t)t, 0}, key[2] = {(uint32_t)SEED, (uint32_t)(SEED >> 32)}, want[4];
        philox(ctr, key, want);
        bool same = true;
        for (int k = 0; k < 4; k++)
            same = same && got[4 * t + k] == want[k];
        matching += same;
    }
    if (matching == THREADS)
        printf("philox matches the host's reference for %d threads\n", THREADS);
    else
        printf("philox differs from the host's reference for %d of %d threads\n", THREADS - matching, THREADS);
    return 0;
}
