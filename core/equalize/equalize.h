// Histogram equalization of a luma plane: CDF -> LUT -> apply, on the CPU or on the GPU, with the
// same integer formula (lut.h), so that both give bit-identical frames.
//
//   bins = 2^bit_depth of the plane (256 for 8-bit, 1024 for 10-bit): one bin per value.
//   lut  = `bins` uint16_t entries, each in [0, bins - 1].
//
// CPU functions are synchronous and need no CUDA device. GPU functions take device pointers and
// are asynchronous on `stream`; build_lut_gpu reads the histogram on the device, so frame data
// never makes a host round trip. All return a Status for bad arguments and never print.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/image/plane.h"

namespace histeq::eq {

// Quantizes a strength in [0, 1] to the integer weight both sides use: round(s * 65536).
// Out-of-range or NaN strengths are an invalid_argument error.
Result<uint32_t> strength_weight(double strength);

// Checks bins (a power of two in 2..1024) and weight (<= kWeightOne).
Status validate_lut_args(int bins, uint32_t weight);

// lut[v] for v in [0, bins) from counts[0, bins) (host memory).
Status build_lut(const uint32_t* counts, int bins, uint32_t weight, uint16_t* lut);

// plane[x, y] = lut[plane[x, y]] for samples < bins (others unchanged), in place, host plane.
// Only the `width` samples of each row are touched, never the padding.
Status apply_lut(const PlaneView<uint8_t>& plane, const uint16_t* lut, int bins);
// 16-bit samples; `shift` > 0 for samples stored in the high bits (P010: shift 6): the table is
// indexed by v >> shift and its entry goes back to the high bits (the low bits are kept).
Status apply_lut(const PlaneView<uint16_t>& plane, const uint16_t* lut, int bins, int shift = 0);

namespace detail {
// The 8-bit host apply has an AVX-512 VBMI path, chosen at run time; tests compare it with the
// plain loop.
bool apply_lut_has_simd();
Status apply_lut_scalar(const PlaneView<uint8_t>& plane, const uint16_t* lut, int bins);
}  // namespace detail

// GPU: d_lut[v] from d_counts (both device memory), one block, on `stream`.
Status build_lut_gpu(const uint32_t* d_counts, int bins, uint32_t weight, uint16_t* d_lut, cudaStream_t stream);

// GPU: apply d_lut to a device plane in place, on `stream`. Any pitch and alignment; 16-byte
// vector accesses where the rows allow them. Only the `width` samples of each row are touched.
Status apply_lut_gpu(const PlaneView<uint8_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream);
Status apply_lut_gpu(const PlaneView<uint16_t>& plane, const uint16_t* d_lut, int bins, cudaStream_t stream, int shift = 0);

}  // namespace histeq::eq
