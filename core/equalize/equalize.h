// Histogram equalization of a luma plane: CDF -> LUT -> apply, on the CPU or on the GPU, with the
// same integer formula (lut.h), so that both give bit-identical frames.
//
//   bins   = 2^bit_depth of the plane (256 for 8-bit, 1024 for 10-bit): one bin per value.
//   lut    = `bins` uint16_t entries, each in [0, bins - 1].
//   levels = what the curve maps onto (lut.h: the video's nominal range, or the textbook 0..max).
//
// CPU functions are synchronous and need no CUDA device. GPU functions take device pointers and
// are asynchronous on `stream`; build_lut_gpu reads the histogram on the device, so frame data
// never makes a host round trip. All return a Status for bad arguments and never print.
//
// The functions live with their operations (core/equalize/ops/<name>/, docs/architecture.md): this
// header gathers them for the callers that use several.
#pragma once

#include "core/equalize/ops/apply/apply.h"
#include "core/equalize/ops/histogram/tiles.h"
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/ops/temporal/temporal.h"
