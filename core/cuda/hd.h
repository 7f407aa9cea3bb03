// HISTEQ_HD marks small inline functions usable from host and device code alike.
#pragma once
#ifdef __CUDACC__
#define HISTEQ_HD __host__ __device__ __forceinline__
#else
#define HISTEQ_HD inline
#endif
