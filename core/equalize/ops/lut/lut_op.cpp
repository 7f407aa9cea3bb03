// The lut operation (operation.h): the frame's curve from its histogram (build_lut.h), or clahe's
// tile curves from the tile histograms.
#include "core/equalize/ops/lut/build_lut.h"
#include "core/equalize/ops/lut/options.h"
#include "core/equalize/ops/op_support.h"

namespace histeq::eq {
namespace {

// CPU CLAHE's 64 tile curves (a clip and a shadow-floor search each) go over the pool.
class LutOp final : public PooledOp {
 public:
  bool fusable(const Settings& s) const override { return s.quality.clip_limit == 0; }
  bool foldable(const Settings& s) const override { return s.quality.mode == Mode::global; }
  video::StageId stage() const override { return id_; }
  Part part() const override { return Part::curve; }
  bool takes_source(const FrameContext&) const override { return true; }  // reads the histograms only
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    const Quality& q = ctx.settings->quality;
    const bool gpu = ctx.backend == Backend::gpu;
    const uint32_t clip = clip_q8(q), w = ctx.settings->weight;
    const Levels levels = levels_of(ctx).luma;
    if (q.mode == Mode::clahe) {
      if (ctx.tiles.counts == nullptr) return HISTEQ_ERROR(Code::internal, "clahe LUTs without tile histograms");
      const int tiles = ctx.tiles.grid.count();
      return gpu ? build_tile_luts_gpu(ctx.tiles.counts, tiles, ctx.bins, w, clip, levels, ctx.tiles.luts, ctx.curve.lut, stream)
                 : build_tile_luts(ctx.tiles.counts, tiles, ctx.bins, w, clip, levels, ctx.tiles.luts, ctx.curve.lut, pool_);
    }
    // clip 0: build_lut / build_lut_gpu themselves, so plain equalization is the fused path's bit for bit.
    return gpu ? build_lut_clipped_gpu(ctx.curve.counts, ctx.bins, w, clip, levels, ctx.curve.lut, stream)
               : build_lut_clipped(ctx.curve.counts, ctx.bins, w, clip, levels, ctx.curve.lut);
  }

 private:
  video::StageId id_ = video::stage_id("lut");
};

}  // namespace

OperationInfo lut_operation() { return {"lut", lut_controls(), make_operation<LutOp>}; }

}  // namespace histeq::eq
