// The CUDA side of convert.h: the same operations as kernels on the current device, queued on
// `stream` (convert.cpp makes the device current and checks the launch).
#pragma once

#include <cuda_runtime_api.h>

#include "convert.h"

namespace histeq::py::gpu {

cudaError_t load_plane(const Strided& src, const WorkPlane& dst, cudaStream_t stream);
cudaError_t store_plane(const WorkPlane& src, const Strided& dst, cudaStream_t stream);
cudaError_t load_colour(const Strided* rgb, const WorkPlane* ycbcr, cudaStream_t stream);
cudaError_t store_colour(const WorkPlane* ycbcr, const Strided* rgb, const Strided& alpha_in, const Strided& alpha_out,
                         cudaStream_t stream);
// min, max and a NaN flag of the planes together into `out` (device memory: 3 floats as min, max,
// nan), then copied into `host` (pageable) on `stream`; the caller waits for the stream.
cudaError_t value_range(const Strided* planes, size_t count, float* out, float* host, cudaStream_t stream);

}  // namespace histeq::py::gpu
