// The equalize operation (operation.h): histogram -> LUT -> apply in one launch, the planner's fused
// path (planner.h), with method2_tuned's count (fused_gpu.h).
#include "core/equalize/ops/equalize/fused_gpu.h"
#include "core/equalize/ops/op_support.h"
#include "core/equalize/planner.h"

namespace histeq::eq {
namespace {

// Histogram -> LUT -> apply in one launch (fused_gpu.h), for the fused kernel on the GPU. One
// FusedEqualizer per slot: instances share nothing, and a slot's frames are ordered on its stream.
class FusedOp final : public Operation {
 public:
  bool fusable(const Settings&) const override { return true; }
  bool foldable(const Settings&) const override { return true; }
  video::StageId stage() const override { return id_; }
  Part part() const override { return Part::fused; }
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    fused_.clear();
    if (!fused_usable(backend, format)) return Status::ok();
    for (int i = 0; i < slots; ++i) {
      auto f = FusedEqualizer::create();
      if (!f) return f.status();
      fused_.push_back(std::move(f.value()));
    }
    return Status::ok();
  }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    FusedEqualizer& fe = fused_.at(static_cast<size_t>(ctx.slot));
    const FusedOutputs out{ctx.curve.counts, ctx.curve.lut};  // the side data and the displays read them
    const Levels levels = levels_of(ctx).luma;
    const uint32_t w = ctx.settings->weight;
    if (ctx.luma.bytes_per_sample == 1) HISTEQ_TRY(fe.run(ctx.luma.as_writable<uint8_t>(), w, levels, stream, out));
    else HISTEQ_TRY(fe.run(ctx.luma.as_writable<uint16_t>(), w, levels, stream, out));
    return Status::ok();
  }

 private:
  video::StageId id_ = video::stage_id("equalize");
  std::vector<FusedEqualizer> fused_;
};

}  // namespace

OperationInfo equalize_operation() { return {"equalize", {}, make_operation<FusedOp>}; }

}  // namespace histeq::eq
