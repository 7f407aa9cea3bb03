// The temporal operation (operation.h): the curve through time (temporal.h), and global mode's fold
// of the histogram, the curve and the apply into one launch where the planner folds (planner.h).
#include "core/equalize/ops/equalize/fused_gpu.h"
#include "core/equalize/ops/op_support.h"
#include "core/equalize/ops/temporal/options.h"
#include "core/equalize/ops/temporal/temporal.h"
#include "core/equalize/planner.h"
#include "core/histogram/histogram.h"

namespace histeq::eq {
namespace {

// The temporal filter (tone.h): its state (the filtered LUTs in Q12; the last normalized histogram
// and scalars,
// double-buffered so that a frame reads what its predecessor wrote) lives in the luma's memory, one
// copy for the whole equalizer: the equalizer orders its runs across slots. What the host keeps
// (the last frame's time and settings, whether the filter ran) decides when it starts over: after
// reset(), when it was off for the previous frame, when any setting changed (a mode, a grid, the
// strength...: the user sees a change at once rather than at the filter's pace).
class TemporalOp final : public PooledOp {
 public:
  bool foldable(const Settings&) const override { return true; }
  video::StageId stage() const override { return id_; }
  // It reads the histogram and LUTs only, but folded it applies the curve to the luma in place.
  bool takes_source(const FrameContext& ctx) const override { return !ctx.plan.folded; }
  bool stateful() const override { return true; }
  bool active(const FrameContext& ctx) const override { return ctx.settings->quality.temporal_s > 0; }
  void skipped(const FrameContext&) override { active_ = false; }  // the next frame with it starts over
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    HISTEQ_TRY(PooledOp::prepare(backend, slots, format));
    bins_ = format.bins();
    state_ = {};
    buffers_ = {};
    fold_.clear();
    if (fused_usable(backend, format) && bins_ <= kFoldMaxBins) {  // the planner may fold the curve in
      for (int i = 0; i < slots; ++i) {
        auto f = FusedEqualizer::create();
        if (!f) return f.status();
        fold_.push_back(std::move(f.value()));
      }
    }
    reset();
    return Status::ok();
  }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    const Settings& set = *ctx.settings;
    const Quality& q = set.quality;
    if (q.temporal_s <= 0) {
      active_ = false;
      return Status::ok();
    }
    const MemoryKind mem = memory_of(ctx);
    if (state_.empty()) {
      const size_t luts = static_cast<size_t>(hist::kMaxTiles) * hist::kMaxTiles + 1;
      auto st = allocate(mem, sizeof(int32_t) * luts * static_cast<size_t>(bins_));
      if (!st) return st.status();
      state_ = std::move(st.value());
      auto b = allocate(mem, sizeof(uint32_t) * 2 * (static_cast<size_t>(bins_) + kTemporalScalars));
      if (!b) return b.status();
      buffers_ = std::move(b.value());
    }
    const bool clahe = q.mode == Mode::clahe;
    const hist::TileGrid layout = clahe ? ctx.tiles.grid : hist::TileGrid{0, 0};
    double dt = ctx.time_s - last_time_;
    if (!(dt > 0 && dt <= kMaxInterval)) dt = interval_;  // a jump (or no previous frame): the last interval
    const Levels levels = levels_of(ctx).luma;  // a frame whose range tag changed starts over too
    const bool same = active_ && layout == layout_ && set.weight == last_.weight && q == last_.quality && levels == levels_;
    TemporalArgs a;
    a.counts = ctx.curve.counts;
    a.bins = bins_;
    a.luts = clahe ? ctx.tiles.luts : ctx.curve.lut;
    a.count = clahe ? ctx.tiles.grid.count() : 1;
    a.extra = clahe ? ctx.curve.lut : nullptr;
    // The brightness measured on the tiles only where they sum to the frame (else on the mean LUT).
    a.tile_counts = clahe && !ctx.tiles.padded ? ctx.tiles.counts : nullptr;
    a.state = static_cast<int32_t*>(state_.data());
    // buffers_: histogram 0, histogram 1, scalars 0, scalars 1.
    uint32_t* hist = static_cast<uint32_t*>(buffers_.data());
    int32_t* scalars = reinterpret_cast<int32_t*>(hist + 2 * bins_);
    a.prev_hist = hist + (parity_ ^ 1) * bins_;
    a.next_hist = hist + parity_ * bins_;
    a.prev_scalars = scalars + (parity_ ^ 1) * kTemporalScalars;
    a.next_scalars = scalars + parity_ * kTemporalScalars;
    a.restart = !same;
    a.levels = levels;
    a.cut_q16 = cut_q16(q);
    a.alpha_q16 = temporal_alpha_q16(q.temporal_s, dt);
    HISTEQ_TRY(update(ctx, a, stream));
    if (same) interval_ = dt;
    active_ = true;
    layout_ = layout;
    levels_ = levels;
    last_ = set;
    last_time_ = ctx.time_s;
    parity_ ^= 1;
    return Status::ok();
  }
  void reset() override {
    active_ = false;
    interval_ = kDefaultInterval;
  }

 private:
  // The filter on this frame's LUT; folded (planner.h): the histogram, the LUT and the apply too,
  // in one launch.
  Status update(const FrameContext& ctx, const TemporalArgs& a, cudaStream_t stream) {
    if (ctx.backend != Backend::gpu) return temporal_update(a, pool_);
    if (!ctx.plan.folded) return temporal_update_gpu(a, stream);
    const Quality& q = ctx.settings->quality;
    FusedEqualizer& fe = fold_.at(static_cast<size_t>(ctx.slot));
    if (q.chroma != ChromaMode::follow)
      return temporal_fold_gpu(fe, ctx.luma, ctx.settings->weight, clip_q8(q), a, ctx.curve.counts, stream, FoldApply::luma);
    auto c = chroma_planes(ctx);
    if (!c) return c.status();
    return temporal_fold_gpu(fe, ctx.luma, ctx.settings->weight, clip_q8(q), a, ctx.curve.counts, stream, FoldApply::colour, &c.value());
  }

  static constexpr double kMaxInterval = 1.0;          // longer gaps are jumps, not frame intervals
  static constexpr double kDefaultInterval = 1 / 30.0;  // before two frames have given one
  video::StageId id_ = video::stage_id("temporal");
  int bins_ = 256;
  cuda::Buffer state_, buffers_;
  std::vector<FusedEqualizer> fold_;  // one per slot, where the curve may be folded in
  bool active_ = false;  // the filter ran on the previous frame (skipped() clears it)
  hist::TileGrid layout_{0, 0};
  Levels levels_;
  Settings last_;
  double last_time_ = 0, interval_ = kDefaultInterval;
  int parity_ = 0;
};

}  // namespace

OperationInfo temporal_operation() { return {"temporal", temporal_controls(), make_operation<TemporalOp>}; }

}  // namespace histeq::eq
