/*
 * gpurace's cuda.h for kernels written for GPUVerify.
 *
 * GPUVerify kernels include "cuda.h" and use its annotation language. gpurace
 * runs a kernel instead of proving it, so each annotation gets the meaning it
 * can have in one execution:
 *
 *   __assert(e), __global_assert(e)
 *       checked when executed: a thread for which e is false gives an
 *       assertion-failure finding at the line of the __assert (the threads
 *       carry on, unlike with assert()).
 *   __requires(e), __global_requires(e)
 *       executable preconditions: in the kernel, a thread for which e is
 *       false stops the run with "the launch violates __requires(e) at
 *       FILE:LINE"; in a function the kernel calls, it is the callee's
 *       precondition, and a thread for which it is false is an
 *       assertion-failure finding (its caller breaks it).
 *   __assume(e)
 *       an assumption the user states at that point (in a kernel or a
 *       function it calls): a thread for which e is false when it gets there
 *       stops the run with "the launch violates __assume(e) at FILE:LINE",
 *       as a kernel's __requires does; `gpurace verify` assumes it.
 *   __implies, __ite, __is_pow2, __mod_pow2, __add_noovfl(a, b, ...),
 *   __enabled() (true: the thread evaluating it is executing that code)
 *       evaluated; __add_noovfl_int(x, y) and its typed variants return x + y
 *       (the no-overflow assumption is not checked).
 *   __read, __write, __other_int, __same_group, __uniform_int, ...
 *       facts about access sets or about a second thread, which only a
 *       verifier can decide: they compile, and executing one stops the run
 *       with "not supported: GPUVerify predicate ... can only be checked
 *       statically".
 *   __axiom(e), at file scope
 *       an assumption about every thread of every kernel of the file (its
 *       launch, its parameters): `gpurace verify` assumes it at each kernel's
 *       start; a run ignores it. It becomes a function of its own,
 *       __gpurace_axiom_LINE, that no kernel calls, kept in the PTX for verify
 *       (one __axiom per line).
 *   __invariant, __ensures, __barrier_invariant, ...
 *       proof annotations: accepted and not checked (they expand to nothing,
 *       so their arguments are not even compiled).
 *
 * gpurace puts this file's directory on the include path of NVRTC compiles
 * (NVRTC has no cuda.h of its own) and of nvcc compiles of files written in
 * GPUVerify's style; under nvcc the toolkit's own cuda.h is included as well.
 * Such files also get cooperative groups and cuRAND's device API without
 * including them, as under GPUVerify (see below).
 * The functions named __gpurace_* are implemented by the simulator.
 */
#ifndef GPURACE_GPUVERIFY_CUDA_H
#define GPURACE_GPUVERIFY_CUDA_H

#if !defined(__CUDACC_RTC__) && defined(__has_include_next)
#if __has_include_next(<cuda.h>)
#include_next <cuda.h>
#endif
#endif

/* GPUVerify's cuda.h also declared cooperative groups and cuRAND's device API, so its kernels use them
   without including anything. gpurace defines these macros for a file in GPUVerify's style that names
   them (gpuverify.library_macros), and the real headers are included here. */
#ifdef __GPURACE_COOPERATIVE_GROUPS
#include <cooperative_groups.h>
namespace cooperative_groups {
/* GPUVerify's name for cooperative_groups::sync(group). */
template <class Group>
static __device__ __forceinline__ void synchronize(const Group &group) { group.sync(); }
}
#endif
#ifdef __GPURACE_CURAND
#if defined(__has_include) && !__has_include(<curand_kernel.h>)
#error "the kernel uses cuRAND, whose device headers (curand_kernel.h, PyPI package nvidia-curand) this compiler cannot find"
#endif
#include <curand_kernel.h>
#include <curand_mtgp32_kernel.h>
#endif

extern "C" {
__device__ void __gpurace_assert(int holds, const char *annotation);
__device__ void __gpurace_requires(int holds, const char *annotation);
__device__ void __gpurace_assume(int holds, const char *annotation);

__device__ bool __gpurace_verifier_only_read(const volatile void *p);
__device__ bool __gpurace_verifier_only_write(const volatile void *p);
__device__ bool __gpurace_verifier_only_no_read(const volatile void *p);
__device__ bool __gpurace_verifier_only_no_write(const volatile void *p);
__device__ unsigned long long __gpurace_verifier_only_read_offset_bytes(const volatile void *p);
__device__ unsigned long long __gpurace_verifier_only_write_offset_bytes(const volatile void *p);
__device__ int __gpurace_verifier_only_ptr_base(const volatile void *p);
__device__ unsigned long long __gpurace_verifier_only_ptr_offset_bytes(const volatile void *p);
__device__ bool __gpurace_verifier_only_atomic_has_taken_value(const volatile void *array, unsigned offset, unsigned value);
__device__ int __gpurace_verifier_only_other_int(int x);
__device__ bool __gpurace_verifier_only_other_bool(bool x);
__device__ int __gpurace_verifier_only_other_ptr_base(int x);
__device__ bool __gpurace_verifier_only_uniform_int(int x);
__device__ bool __gpurace_verifier_only_uniform_bool(bool x);
__device__ bool __gpurace_verifier_only_uniform_ptr_base(int x);
__device__ bool __gpurace_verifier_only_distinct_int(int x);
__device__ bool __gpurace_verifier_only_distinct_bool(bool x);
__device__ bool __gpurace_verifier_only_distinct_ptr_base(int x);
__device__ bool __gpurace_verifier_only_all(bool x);
__device__ bool __gpurace_verifier_only_exclusive(bool x);
__device__ bool __gpurace_verifier_only_same_group(void);
__device__ bool __gpurace_verifier_only_dominator_enabled(void);
__device__ int __gpurace_verifier_only_return_val_int(void);
__device__ bool __gpurace_verifier_only_return_val_bool(void);
__device__ void *__gpurace_verifier_only_return_val_ptr(void);
__device__ int __gpurace_verifier_only_old_int(int x);
__device__ bool __gpurace_verifier_only_old_bool(bool x);
}

/* ---- checked when executed ---------------------------------------------- */

/* glibc's <assert.h> declares a three-argument function __assert; only the
   one-argument form is the annotation, so a declaration with three arguments
   is left as it is (a macro does not expand its own name again). The text
   is taken before the arguments are expanded, so messages show the source. */
#define __GPURACE_FOURTH(a, b, c, d, ...) d
#define __GPURACE_KEEP_ASSERT(text, ...) __assert(__VA_ARGS__)
#define __GPURACE_ASSERT(text, e) __gpurace_assert((e) ? 1 : 0, "__assert(" text ")")
#define __assert(...) \
  __GPURACE_FOURTH(__VA_ARGS__, __GPURACE_KEEP_ASSERT, __GPURACE_KEEP_ASSERT, __GPURACE_ASSERT, unused)(#__VA_ARGS__, __VA_ARGS__)
#define __global_assert(e) __gpurace_assert((e) ? 1 : 0, "__global_assert(" #e ")")
#define __unsafe_assert(e) __gpurace_assert((e) ? 1 : 0, "__unsafe_assert(" #e ")")
#define __unsafe_global_assert(e) __gpurace_assert((e) ? 1 : 0, "__unsafe_global_assert(" #e ")")

#define __requires(e) __gpurace_requires((e) ? 1 : 0, "__requires(" #e ")")
#define __global_requires(e) __gpurace_requires((e) ? 1 : 0, "__global_requires(" #e ")")
#define __assume(e) __gpurace_assume((e) ? 1 : 0, "__assume(" #e ")")

/* ---- evaluated ------------------------------------------------------------ */

#define __implies(a, b) (!(a) || (b))
#define __ite(c, x, y) ((c) ? (x) : (y))
#define __enabled() true
#define __is_pow2(x) ((((x) & ((x) - 1)) == 0))
#define __mod_pow2(x, y) (((y) - 1) & (x))

extern "C++" {
/* True when adding every argument, in the type of the first, never overflows. */
template <typename T>
static __device__ __forceinline__ bool __gpurace_add_noovfl(T) { return true; }

template <typename T, typename U, typename... Rest>
static __device__ __forceinline__ bool __gpurace_add_noovfl(T a, U b, Rest... rest) {
  const T c = (T)b;
  const T sum = (T)((unsigned long long)a + (unsigned long long)c);
  const bool is_signed = (T)-1 < (T)0;
  const bool overflow = is_signed ? (T)((a ^ sum) & (c ^ sum)) < (T)0 : sum < a;
  return !overflow && __gpurace_add_noovfl(sum, rest...);
}
}
#define __add_noovfl(...) __gpurace_add_noovfl(__VA_ARGS__)

#define __GPURACE_PLAIN_ADD(T, NAME) \
  static __device__ __forceinline__ T NAME(T x, T y) { return (T)(x + y); }
__GPURACE_PLAIN_ADD(char, __add_noovfl_char)
__GPURACE_PLAIN_ADD(short, __add_noovfl_short)
__GPURACE_PLAIN_ADD(int, __add_noovfl_int)
__GPURACE_PLAIN_ADD(long, __add_noovfl_long)
__GPURACE_PLAIN_ADD(unsigned char, __add_noovfl_unsigned_char)
__GPURACE_PLAIN_ADD(unsigned short, __add_noovfl_unsigned_short)
__GPURACE_PLAIN_ADD(unsigned int, __add_noovfl_unsigned_int)
__GPURACE_PLAIN_ADD(unsigned long, __add_noovfl_unsigned_long)
#undef __GPURACE_PLAIN_ADD
#define __add_noovfl_signed(x, y) __add_noovfl_int(x, y)
#define __add_noovfl_unsigned(x, y) __add_noovfl_unsigned_int(x, y)

/* ---- only a verifier can decide these --------------------------------------- */

#define __read(p) __gpurace_verifier_only_read((const volatile void *)(p))
#define __write(p) __gpurace_verifier_only_write((const volatile void *)(p))
#define __no_read(p) __gpurace_verifier_only_no_read((const volatile void *)(p))
#define __no_write(p) __gpurace_verifier_only_no_write((const volatile void *)(p))
#define __read_implies(p, e) __implies(__read(p), e)
#define __write_implies(p, e) __implies(__write(p), e)
#define __read_offset_bytes(p) __gpurace_verifier_only_read_offset_bytes((const volatile void *)(p))
#define __write_offset_bytes(p) __gpurace_verifier_only_write_offset_bytes((const volatile void *)(p))
#define __ptr_base(p) __gpurace_verifier_only_ptr_base((const volatile void *)(p))
#define __ptr_offset_bytes(p) __gpurace_verifier_only_ptr_offset_bytes((const volatile void *)(p))
#define __atomic_has_taken_value(a, o, v) __gpurace_verifier_only_atomic_has_taken_value((const volatile void *)(a), o, v)
#define __other_int(x) __gpurace_verifier_only_other_int(x)
#define __other_bool(x) __gpurace_verifier_only_other_bool(x)
#define __other_ptr_base(x) __gpurace_verifier_only_other_ptr_base(x)
#define __uniform_int(x) __gpurace_verifier_only_uniform_int(x)
#define __uniform_bool(x) __gpurace_verifier_only_uniform_bool(x)
#define __uniform_ptr_base(x) __gpurace_verifier_only_uniform_ptr_base(x)
#define __distinct_int(x) __gpurace_verifier_only_distinct_int(x)
#define __distinct_bool(x) __gpurace_verifier_only_distinct_bool(x)
#define __distinct_ptr_base(x) __gpurace_verifier_only_distinct_ptr_base(x)
#define __all(x) __gpurace_verifier_only_all(x)
#define __exclusive(x) __gpurace_verifier_only_exclusive(x)
#define __same_group __gpurace_verifier_only_same_group()
#define __dominator_enabled() __gpurace_verifier_only_dominator_enabled()
#define __return_val_int() __gpurace_verifier_only_return_val_int()
#define __return_val_bool() __gpurace_verifier_only_return_val_bool()
#define __return_val_ptr() __gpurace_verifier_only_return_val_ptr()
#define __old_int(x) __gpurace_verifier_only_old_int(x)
#define __old_bool(x) __gpurace_verifier_only_old_bool(x)

/* ---- proof annotations: accepted, not checked ------------------------------- */

#define __invariant(e) ((void)0)
#define __global_invariant(e) ((void)0)
#define __candidate_invariant(e) ((void)0)
#define __candidate_global_invariant(e) ((void)0)
#define __function_wide_invariant(e) ((void)0)
#define __function_wide_candidate_invariant(e) ((void)0)
#define __ensures(e) ((void)0)
#define __global_ensures(e) ((void)0)
#define __candidate_assert(e) ((void)0)
#define __candidate_global_assert(e) ((void)0)
#define __unsafe_candidate_assert(e) ((void)0)
#define __unsafe_candidate_global_assert(e) ((void)0)
#define __barrier_invariant(...) ((void)0)
#define __barrier_invariant_binary(...) ((void)0)
#define __barrier_invariant_0(...) ((void)0)
#define __barrier_invariant_1(...) ((void)0)
#define __barrier_invariant_2(...) ((void)0)
#define __barrier_invariant_3(...) ((void)0)
#define __barrier_invariant_4(...) ((void)0)
#define __barrier_invariant_binary_0(...) ((void)0)
#define __barrier_invariant_binary_1(...) ((void)0)
#define __barrier_invariant_binary_2(...) ((void)0)
#define __barrier_invariant_binary_3(...) ((void)0)
#define __barrier_invariant_binary_4(...) ((void)0)
#define __array_snapshot(dst, src) ((void)0)
#define __requires_fresh_array(p) ((void)0)
#define __reads_from(p) ((void)0)
#define __writes_to(p) ((void)0)
#define __read_permission(x) ((void)0)
#define __write_permission(x) ((void)0)
#define __non_temporal_loads_begin() ((void)0)
#define __non_temporal_loads_end() ((void)0)
#define __GPURACE_AXIOM_AT(n, text, e) \
  extern "C" __device__ __noinline__ __attribute__((used)) void __gpurace_axiom_##n(void) { \
    __gpurace_assume((e) ? 1 : 0, "__axiom(" text ")"); \
  }
#define __GPURACE_AXIOM(n, text, e) __GPURACE_AXIOM_AT(n, text, e)
#define __axiom(e) __GPURACE_AXIOM(__LINE__, #e, e)

#endif
