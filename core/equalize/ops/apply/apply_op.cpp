// The apply operation (operation.h): the curve on the luma (apply.h: the LUT, or clahe's tile LUTs)
// and, with chroma follow, the colour pass.
#include "core/equalize/ops/apply/apply.h"
#include "core/equalize/ops/apply/options.h"
#include "core/equalize/ops/op_support.h"

namespace histeq::eq {
namespace {

// The CPU's apply is most of its frame time once the colour is scaled: rows over the pool.
class ApplyOp final : public PooledOp {
 public:
  bool fusable(const Settings& s) const override { return s.quality.chroma == ChromaMode::keep; }
  bool foldable(const Settings&) const override { return true; }
  Part part() const override { return Part::curve; }  // folded into the temporal step's launch (planner.h)
  video::StageId stage() const override { return id_; }
  // The luma alone from the source into the luma, on the CPU (the colour pass works in place).
  bool takes_source(const FrameContext& ctx) const override {
    return ctx.backend == Backend::cpu && ctx.settings->quality.chroma != ChromaMode::follow;
  }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    const Quality& q = ctx.settings->quality;
    const bool gpu = ctx.backend == Backend::gpu;
    TileLuts tiles;
    if (q.mode == Mode::clahe) {
      if (ctx.tiles.luts == nullptr) return HISTEQ_ERROR(Code::internal, "clahe apply without tile LUTs");
      tiles = {ctx.tiles.luts, ctx.tiles.grid, ctx.tiles.x, ctx.tiles.y, ctx.format->sample_shift()};
    }
    const TileLuts* tp = q.mode == Mode::clahe ? &tiles : nullptr;
    if (ctx.source.data != nullptr) {
      if (!takes_source(ctx)) return HISTEQ_ERROR(Code::internal, "apply given a source it cannot take");
      const PlaneRef src = ctx.source;
      ctx.source = {};
      return apply_from(src, ctx, tp);
    }
    if (q.chroma == ChromaMode::follow) {
      auto c = chroma_planes(ctx);
      if (!c) return c.status();
      return gpu ? apply_colour_gpu(ctx.luma, *c, ctx.curve.lut, tp, ctx.bins, stream) : apply_colour(ctx.luma, *c, ctx.curve.lut, tp, ctx.bins, pool_);
    }
    if (tp != nullptr) {
      if (ctx.luma.bytes_per_sample == 1)
        return gpu ? apply_tiles_gpu(ctx.luma.as_writable<uint8_t>(), tiles, ctx.bins, stream)
                   : apply_tiles(ctx.luma.as_writable<uint8_t>(), tiles, ctx.bins, pool_);
      return gpu ? apply_tiles_gpu(ctx.luma.as_writable<uint16_t>(), tiles, ctx.bins, stream)
                 : apply_tiles(ctx.luma.as_writable<uint16_t>(), tiles, ctx.bins, pool_);
    }
    if (ctx.luma.bytes_per_sample == 1)
      return gpu ? apply_lut_gpu(ctx.luma.as_writable<uint8_t>(), ctx.curve.lut, ctx.bins, stream)
                 : apply_lut(ctx.luma.as_writable<uint8_t>(), ctx.curve.lut, ctx.bins, pool_);
    const int shift = ctx.format->sample_shift();  // P010: the table maps v >> 6
    return gpu ? apply_lut_gpu(ctx.luma.as_writable<uint16_t>(), ctx.curve.lut, ctx.bins, stream, shift)
               : apply_lut(ctx.luma.as_writable<uint16_t>(), ctx.curve.lut, ctx.bins, shift, pool_);
  }

 private:
  // CPU: the luma mapped from `src` into ctx.luma in one pass.
  Status apply_from(const PlaneRef& src, const FrameContext& ctx, const TileLuts* tp) {
    if (src.bytes_per_sample == 1) {
      const PlaneView<const uint8_t> in = src.as<uint8_t>();
      return tp != nullptr ? apply_tiles(in, ctx.luma.as_writable<uint8_t>(), *tp, ctx.bins, pool_)
                           : apply_lut(in, ctx.luma.as_writable<uint8_t>(), ctx.curve.lut, ctx.bins, pool_);
    }
    const PlaneView<const uint16_t> in = src.as<uint16_t>();
    return tp != nullptr ? apply_tiles(in, ctx.luma.as_writable<uint16_t>(), *tp, ctx.bins, pool_)
                         : apply_lut(in, ctx.luma.as_writable<uint16_t>(), ctx.curve.lut, ctx.bins, ctx.format->sample_shift(), pool_);
  }
  video::StageId id_ = video::stage_id("apply");
};

}  // namespace

Result<ChromaPlanes> chroma_planes(const FrameContext& ctx) {
  ChromaPlanes c;
  const video::FrameFormat& f = *ctx.format;
  c.interleaved = f.layout == video::PlaneLayout::semi_planar;
  c.planes[0] = ctx.chroma[0];
  c.planes[1] = ctx.chroma[1];
  if (c.planes[0].data == nullptr || (!c.interleaved && c.planes[1].data == nullptr))
    return HISTEQ_ERROR(Code::internal, "chroma follow without the chroma planes");
  c.shift_x = f.chroma_shift_x;
  c.shift_y = f.chroma_shift_y;
  const FrameLevels levels = levels_of(ctx);
  c.black = levels.black;
  c.lo = levels.chroma_lo;
  c.hi = levels.chroma_hi;
  c.limit_q12 = chroma_limit_q12(ctx.settings->quality);
  c.shift = f.sample_shift();
  return c;
}

OperationInfo apply_operation() { return {"apply", apply_controls(), make_operation<ApplyOp>}; }

}  // namespace histeq::eq
