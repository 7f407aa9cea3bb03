// The planner: which operations of the list work on a frame. The operation list is made
// once (operations.def's order, every operation prepared for the slots, the fused path's buffers
// included), and the plan of each frame is taken from the frame's settings and what the operations
// active on it say (Operation::fusable, ::foldable), so a live change of the settings is planned at
// the next frame and allocates nothing. The runner (runner.h) plans each frame once and passes the
// plan in FrameContext::plan.
//
//   fused path  the GPU, samples not in the high bits (sample_shift 0), the fused path's kernel
//               (kFusedKernel), and every operation active on the frame fusable(): the fused
//               operation does the histogram, the LUT and the apply in one launch (fused_gpu.h)
//               and the steps sit out. The standard operations are fusable exactly for plain
//               settings (global mode, no clip limit, no temporal filter, chroma kept, no
//               denoiser: Quality::plain()); an operation that does not say so (the default) keeps
//               the path off, so it is never skipped by a launch that knows nothing of it.
//   steps       otherwise: histogram -> lut -> temporal -> apply; the fused operation sits out.
//     folded    among the steps, where the fused path's conditions but fusable() do not all hold:
//               the temporal filter on, at most kFoldMaxBins bins, and every active operation
//               foldable() (the standard ones are for global mode). The temporal operation counts
//               the histogram, builds the curve and applies it (the LUT, or the colour pass with
//               chroma follow) in one launch (temporal_fold_gpu, equalize.h), and the histogram,
//               LUT and apply steps (Part::curve) sit out; their timing rows stay empty and the
//               temporal row holds all four. A curve operation (a Part::step between the LUT and
//               the apply) is foldable() false, the default: with it active the steps stay apart.
// Filters (the denoiser, ...) run on both paths, before the equalization. Operations and front ends
// never test for the fused path: they read the plan (FrameContext::plan, Plan::runs). Both paths
// give the same frames.
#pragma once

#include <vector>

#include "core/cuda/backend.h"
#include "core/equalize/operation.h"
#include "core/video/frame.h"

namespace histeq::eq {

// Whether the fused path can serve frames of `format` on `backend` at all (what the fused operation
// allocates for at prepare()).
bool fused_usable(Backend backend, const video::FrameFormat& format) noexcept;

// The plan of the frame of `ctx` (its settings, backend and format) through `ops`, of which
// active[k] says whether ops[k] is active on it (Operation::active).
Plan plan_frame(const Operations& ops, const std::vector<bool>& active, const FrameContext& ctx);

// The plan of a frame of `format` equalized with `settings` on `backend` through `ops` (each asked
// active() on a context holding those); ops empty: standard_operations().
Plan plan_frame(const Settings& settings, Backend backend, const video::FrameFormat& format, const Operations& ops = {});

}  // namespace histeq::eq
