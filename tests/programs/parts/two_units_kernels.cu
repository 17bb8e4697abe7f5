// The second translation unit of two_units.cu.
__constant__ int k;

__global__ void read_theirs(int *out) { out[0] = k; }

void run_other_unit(int *out) {
    int v = 22;
    cudaMemcpyToSymbol(k, &v, sizeof v);
    read_theirs<<<1, 1>>>(out);
}
