// The device half of rdc_counter.cu: a function and a variable that the other file's kernel uses (-rdc=true).
__device__ int hits;

__device__ int scaled(int x) { return 3 * x; }
