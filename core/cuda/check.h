// CUDA error checking that returns, never exits.
//
//   HISTEQ_CUDA_TRY(cudaMalloc(&p, n));     // returns Status{cuda_error, "cudaMalloc(&p, n): out of memory", file, line}
//   HISTEQ_CUDA_TRY_LAUNCH();               // after a <<<>>> launch: checks cudaGetLastError, and with
//                                           // HISTEQ_DEBUG_SYNC also synchronizes and checks the kernel ran.
//
// Thread-safety: stateless. Works in any translation unit (CUDA runtime API only).
#pragma once

#include <cuda_runtime_api.h>

#include "core/cuda/status.h"

namespace histeq::cuda {

// Builds the Status for a failed CUDA call. `call` is the stringified expression.
Status make_cuda_status(cudaError_t err, const char* call, const char* file, int line);

}  // namespace histeq::cuda

#define HISTEQ_CUDA_STATUS(call)                                                           \
  ([&]() -> ::histeq::Status {                                                              \
    const cudaError_t histeq_err_ = (call);                                                 \
    if (histeq_err_ == cudaSuccess) return ::histeq::Status::ok();                          \
    return ::histeq::cuda::make_cuda_status(histeq_err_, #call, __FILE__, __LINE__);        \
  }())

#define HISTEQ_CUDA_TRY(call) HISTEQ_TRY(HISTEQ_CUDA_STATUS(call))

#ifdef HISTEQ_DEBUG_SYNC
#define HISTEQ_CUDA_TRY_LAUNCH()                             \
  do {                                                       \
    HISTEQ_CUDA_TRY(cudaGetLastError());                     \
    HISTEQ_CUDA_TRY(cudaDeviceSynchronize());                \
  } while (0)
#else
#define HISTEQ_CUDA_TRY_LAUNCH() HISTEQ_CUDA_TRY(cudaGetLastError())
#endif
