#include "core/equalize/planner.h"

namespace histeq::eq {

bool fused_usable(Backend backend, const video::FrameFormat& format) noexcept {
  // P010 keeps its samples in the high bits, which the fused kernel does not shift.
  return backend == Backend::gpu && format.sample_shift() == 0;
}

Plan plan_frame(const Settings& settings, Backend backend, const video::FrameFormat& format) noexcept {
  Plan p;
  // The fused kernel computes plain equalization only: every other tone control needs the steps.
  p.fused = fused_usable(backend, format) && settings.kernel == kFusedKernel && settings.quality.plain();
  return p;
}

bool works(const Operation& op, const FrameContext& ctx) {
  const bool active = op.active(ctx);
  return active && plan_frame(*ctx.settings, ctx.backend, *ctx.format).runs(op.part());
}

}  // namespace histeq::eq
