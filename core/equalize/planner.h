// The planner: which operations of the list work on a frame. The operation list is made
// once (operations.def's order, every operation prepared for the slots, the fused path's buffers
// included), and the plan of each frame is taken from the frame's settings, so a live change of the
// settings is planned at the next frame and allocates nothing.
//
//   fused path  the GPU, samples not in the high bits (sample_shift 0), the fused path's kernel
//               (kFusedKernel) and plain settings (Quality::plain()): the fused operation does the
//               histogram, the LUT and the apply in one launch (fused_gpu.h) and the steps sit out;
//   steps       otherwise: histogram -> lut -> temporal -> apply; the fused operation sits out.
//     folded    among the steps, where the fused path's conditions hold but the settings are not
//               plain: global mode with the temporal filter on and at most kFoldMaxBins bins. The
//               temporal operation counts the histogram, builds the curve and applies it (the
//               LUT, or the colour pass with chroma follow) in one launch (temporal_fold_gpu,
//               equalize.h), and the histogram, LUT and apply steps (Part::curve) sit out; their
//               timing rows stay empty and the temporal row holds all four.
// Filters (the denoiser, ...) run on both paths, before the equalization. Operations and front ends
// never test for the fused path: they ask the plan (Plan::runs). Both paths give the same frames.
#pragma once

#include "core/cuda/backend.h"
#include "core/equalize/operation.h"
#include "core/video/frame.h"

namespace histeq::eq {

// Whether the fused path can serve frames of `format` on `backend` at all (what the fused operation
// allocates for at prepare()).
bool fused_usable(Backend backend, const video::FrameFormat& format) noexcept;

// The plan of a frame equalized with `settings`.
Plan plan_frame(const Settings& settings, Backend backend, const video::FrameFormat& format) noexcept;

// Whether `op` works on the frame of `ctx`: its own active() (asked first, so that it is asked for
// every frame) and its part in the frame's plan. For a caller that runs a list itself (the
// equalizer plans once per frame instead).
bool works(const Operation& op, const FrameContext& ctx);

}  // namespace histeq::eq
