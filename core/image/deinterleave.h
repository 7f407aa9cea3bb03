// Splits an interleaved chroma plane (the UV plane of NV12/P010: U0 V0 U1 V1 ... per row) into two
// planes, for consumers that take planar chroma (the GL renderer's textures). 8- or 16-bit samples;
// `uv` is 2 x u.width samples wide. Host planes are split on the calling thread; device planes by a
// kernel on `stream` (asynchronous). All three planes in the same memory kind.
#pragma once

#include <cuda_runtime_api.h>

#include "core/cuda/status.h"
#include "core/image/plane.h"

namespace histeq {

Status deinterleave_uv(const PlaneRef& uv, const PlaneRef& u, const PlaneRef& v, cudaStream_t stream = nullptr);

}  // namespace histeq
