// One equalization per frame in one launch: histogram -> LUT -> apply, fused on the GPU.
//
//   auto fe = eq::FusedEqualizer::create();                       // Result<FusedEqualizer>
//   HISTEQ_TRY(fe->run(plane, weight, stream));                   // plane equalized in place
//   HISTEQ_TRY(fe->run(plane, weight, stream, {d_hist, d_lut}));  // ... and its histogram and LUT
//
// The result is bit-identical to the unfused path of equalize.h (a histogram of 2^bit_depth bins,
// build_lut_gpu, apply_lut_gpu) with the same levels: the same integer formula (lut.h), the same
// exact histogram.
//
// How (core/equalize/ops/equalize/fused_gpu.cuh): a cooperative grid of method2_tuned blocks (one per SM at
// most, core/histogram/agent/method2_tuned.cuh) counts the plane with thread-private counters;
// every block adds its whole histogram to a device accumulator; the last block to finish sums it,
// runs the LUT builder and publishes the LUT; the other blocks, which have meanwhile loaded their
// first samples to apply, wait for it, and every block applies it to the units it counted (still in
// L2 at video sizes). No host round trip, no memset, one kernel node (also inside a CUDA graph).
//
// Planes: device memory, 8-bit (bit depth 8, 256 bins) or 16-bit with bit depth 1..10 (2^depth
// bins, e.g. 1024 for 10-bit video); samples >= 2^depth are neither counted nor changed. Any size,
// pitch and alignment (16-byte vector accesses where the rows allow them); only the `width`
// samples of each row are read or written, never the padding.
//
// Custom LUT builders (temporal smoothing, clip limits): see run_with() and fused_gpu.cuh.
//
// Threads and streams: a FusedEqualizer owns its device scratch (a few KB, allocated by create()
// on the current device) and must not be used by two threads at once; calls on one instance must be
// ordered (one stream, or synchronized between streams), since they share that scratch. Separate
// instances are independent.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/cuda/resources.h"
#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/image/plane.h"

namespace histeq::eq {

// Optional copies of what the frame's equalization used, for a display: device memory, or null.
struct FusedOutputs {
  uint32_t* d_hist = nullptr;  // 2^bit_depth counters (the frame's histogram)
  uint16_t* d_lut = nullptr;   // 2^bit_depth entries (the LUT that was applied)
};

// The launch a run used (reports, tests). blocks x warps of 32 threads, all resident at once.
struct FusedLaunch {
  int blocks = 0;
  int warps = 0;
  size_t shared_bytes = 0;
};

class FusedEqualizer {
 public:
  FusedEqualizer() = default;
  // Allocates and zeroes the scratch on the current device; no_device without one.
  static Result<FusedEqualizer> create();

  // Equalizes `plane` in place on `stream` with strength weight `weight` (strength_weight(),
  // 0..kWeightOne), with the plain builder (lut.h's formula within `levels`: lo <= hi < 2^depth).
  // Asynchronous; one kernel launch. Without levels: the textbook ones (0..max, cv2.equalizeHist's).
  Status run(const PlaneView<uint8_t>& plane, uint32_t weight, const Levels& levels, cudaStream_t stream,
             const FusedOutputs& out = {});
  Status run(const PlaneView<uint16_t>& plane, uint32_t weight, const Levels& levels, cudaStream_t stream,
             const FusedOutputs& out = {});
  Status run(const PlaneView<uint8_t>& plane, uint32_t weight, cudaStream_t stream, const FusedOutputs& out = {});
  Status run(const PlaneView<uint16_t>& plane, uint32_t weight, cudaStream_t stream, const FusedOutputs& out = {});

  // The same with a caller's LUT builder (a device functor, see fused_gpu.cuh for its contract and
  // PlainLutBuilder for the model). Defined in fused_gpu.cuh: call it from a .cu file that
  // includes that header, which instantiates the kernel for the builder.
  template <class Builder, class T>
  Status run_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, cudaStream_t stream,
                  const FusedOutputs& out = {});

  // The histogram and the builder's LUT only, in one launch: `plane` is counted, not changed; the
  // LUT goes to out.d_lut (required) and the histogram to out.d_hist (optional), for a caller that
  // applies it later. Defined in fused_gpu.cuh, as run_with.
  template <class Builder, class T>
  Status count_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, cudaStream_t stream,
                    const FusedOutputs& out);

  // As run_with, with a caller's apply (a device functor, see fused_gpu.cuh) in place of the LUT's
  // on `plane`: e.g. the colour pass, which maps the luma and scales the chroma by its gain
  // (temporal_fold_gpu). `plane` is counted; what is written is the applier's. Defined in
  // fused_gpu.cuh, as run_with.
  template <class Builder, class Applier, class T>
  Status apply_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, const Applier& applier,
                    cudaStream_t stream, const FusedOutputs& out = {});

  const FusedLaunch& last_launch() const noexcept { return last_; }

  // Device scratch (internal; public for fused_gpu.cuh's free functions).
  struct Scratch {
    uint32_t* acc = nullptr;     // kMaxBins x acc_stride words, zero between calls
    uint32_t* ticket = nullptr;  // finished blocks, zero between calls
    uint32_t* gen = nullptr;     // LUT generation: bumped by the last block when the LUT is out
    uint16_t* lut = nullptr;     // kMaxBins: the LUT the last block publishes
  };
  const Scratch& scratch() const noexcept { return s_; }
  FusedLaunch& launch_record() noexcept { return last_; }

 private:
  template <class Builder, class Applier, class T>
  Status launch_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, const Applier& applier, cudaStream_t stream,
                     const FusedOutputs& out, bool apply);

  cuda::Buffer buf_;
  Scratch s_;
  FusedLaunch last_;
};

}  // namespace histeq::eq
