#include "core/equalize/planner.h"

#include "core/equalize/equalize.h"

namespace histeq::eq {

bool fused_usable(Backend backend, const video::FrameFormat& format) noexcept {
  // P010 keeps its samples in the high bits, which the fused kernel does not shift.
  return backend == Backend::gpu && format.sample_shift() == 0;
}

Plan plan_frame(const Operations& ops, const std::vector<bool>& active, const FrameContext& ctx) {
  Plan p;
  const Settings& s = *ctx.settings;
  if (!fused_usable(ctx.backend, *ctx.format) || s.kernel != kFusedKernel) return p;
  // The fold's one-block filter runs one LUT, one bin a thread of the fused block, in the temporal step.
  bool fuse = true, fold = s.fold && s.quality.temporal_s > 0 && ctx.format->bins() <= kFoldMaxBins;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!active[k]) continue;
    fuse = fuse && ops[k]->fusable(s);
    fold = fold && ops[k]->foldable(s);
  }
  p.fused = fuse;
  p.folded = fold && !fuse;
  return p;
}

Plan plan_frame(const Settings& settings, Backend backend, const video::FrameFormat& format, const Operations& ops) {
  const Operations standard = ops.empty() ? standard_operations() : Operations{};
  const Operations& list = ops.empty() ? standard : ops;
  FrameContext ctx;
  ctx.backend = backend;
  ctx.format = &format;
  ctx.settings = &settings;
  ctx.bins = format.bins();
  std::vector<bool> active(list.size());
  for (size_t k = 0; k < list.size(); ++k) active[k] = list[k]->active(ctx);
  return plan_frame(list, active, ctx);
}

}  // namespace histeq::eq
