#include "core/equalize/planner.h"

#include "core/equalize/equalize.h"

namespace histeq::eq {

bool fused_usable(Backend backend, const video::FrameFormat& format) noexcept {
  // P010 keeps its samples in the high bits, which the fused kernel does not shift.
  return backend == Backend::gpu && format.sample_shift() == 0;
}

Plan plan_frame(const Settings& settings, Backend backend, const video::FrameFormat& format) noexcept {
  Plan p;
  // The fused kernel computes plain equalization only: every other tone control needs the steps.
  const bool fusable = fused_usable(backend, format) && settings.kernel == kFusedKernel;
  const Quality& q = settings.quality;
  p.fused = fusable && q.plain();
  // The fold's one-block filter runs global mode's one LUT, one bin a thread of the fused block.
  p.folded = settings.fold && fusable && !p.fused && q.mode == Mode::global && q.temporal_s > 0 && format.bins() <= kFoldMaxBins;
  return p;
}

bool works(const Operation& op, const FrameContext& ctx) {
  const bool active = op.active(ctx);
  return active && plan_frame(*ctx.settings, ctx.backend, *ctx.format).runs(op.part());
}

}  // namespace histeq::eq
