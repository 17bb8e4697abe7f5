// A virtual call the compiler cannot resolve: the PTX holds virtual function tables, device variables whose
// initial values are function addresses, and the call goes through the address the object's table holds.
// @kernel call(int*, int)
// @launch --grid 1 --block 1 --arg buf:1 --arg 1
// @expect clean
struct Base {
    __device__ virtual int f() { return 1; }
};
struct Derived : Base {
    __device__ int f() override { return 2; }
};

__device__ __noinline__ Base *pick(Base *a, Base *b, int i) { return i ? a : b; }

__global__ void call(int *out, int i) {
    Derived d;
    Base b;
    out[0] = pick(&d, &b, i)->f();
}
