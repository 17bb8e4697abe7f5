// CHECK(call): a driver call that must succeed; otherwise the test program prints which call failed and how,
// and returns 3 from main.
#pragma once
#include <cstdio>
#include <cuda.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        CUresult r_ = (call);                                                            \
        if (r_ != CUDA_SUCCESS) {                                                        \
            const char *name_;                                                           \
            cuGetErrorName(r_, &name_);                                                  \
            printf("%s failed: %s\n", #call, name_);                                     \
            return 3;                                                                    \
        }                                                                                \
    } while (0)
