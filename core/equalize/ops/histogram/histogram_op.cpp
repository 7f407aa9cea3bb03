// The histogram operation (operation.h): the luma histogram by a registry kernel, and clahe's tile
// histograms (tiles.h for their sum and the textbook clahe's padded picture).
#include <map>
#include <memory>
#include <string>

#include "core/equalize/ops/histogram/options.h"
#include "core/equalize/ops/histogram/tiles.h"
#include "core/equalize/ops/op_support.h"
#include "core/equalize/runner.h"
#include "core/histogram/histogram.h"

namespace histeq::eq {
namespace {

// The luma histogram by a registry kernel. Instances are made at the first frame that names them
// and kept per slot (a kernel instance may hold scratch memory that one stream uses, e.g. cub's),
// so a live switch waits for nothing and switching back costs nothing; a slot with a frame in
// flight keeps the instance it used alive. Clahe frames: the tile histograms in one call, in the
// slot's TileScratch (the runner's, which sets the context's tile bundle for the later stages),
// summed into the frame's histogram; on the textbook clahe's padded picture (TileLayout), the
// frame's histogram counted apart.
class HistogramOp final : public Operation {
 public:
  bool fusable(const Settings& s) const override { return s.quality.mode == Mode::global; }
  bool foldable(const Settings& s) const override { return s.quality.mode == Mode::global; }
  video::StageId stage() const override { return id_; }
  Part part() const override { return Part::curve; }
  bool takes_source(const FrameContext&) const override { return true; }
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    (void)backend, (void)format;
    kernels_.clear();
    kernels_.resize(static_cast<size_t>(slots));
    return Status::ok();
  }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    auto& set = kernels_.at(static_cast<size_t>(ctx.slot));
    auto it = set.find(ctx.settings->kernel);
    if (it == set.end()) {
      auto k = hist::create_kernel(ctx.settings->kernel);
      if (!k) return k.status();
      it = set.emplace(ctx.settings->kernel, std::move(k.value())).first;
    }
    hist::Kernel& kernel = *it->second;
    const MemoryKind mem = memory_of(ctx);
    const PlaneRef& luma = ctx.source.data != nullptr ? ctx.source : ctx.luma;
    if (ctx.settings->quality.mode != Mode::clahe) return hist::compute(kernel, luma, {ctx.curve.counts, ctx.bins, mem}, stream);

    TileScratch& t = *ctx.tiles.scratch;  // the slot's (the runner's)
    HISTEQ_TRY(t.ensure(ctx, tile_layout(ctx.settings->quality, ctx.luma.width, ctx.luma.height), stream));
    if (ctx.tiles.padded) {
      auto padded = t.pad(ctx, luma, stream);
      if (!padded) return padded.status();
      HISTEQ_TRY(hist::compute_tiles(kernel, padded.value(), ctx.tiles.grid, {ctx.tiles.counts, ctx.bins, mem}, stream));
      return hist::compute(kernel, luma, {ctx.curve.counts, ctx.bins, mem}, stream);
    }
    HISTEQ_TRY(hist::compute_tiles(kernel, luma, ctx.tiles.grid, {ctx.tiles.counts, ctx.bins, mem}, stream));
    if (ctx.backend == Backend::gpu) return sum_tiles_gpu(ctx.tiles.counts, ctx.tiles.grid.count(), ctx.bins, ctx.curve.counts, stream);
    return sum_tiles(ctx.tiles.counts, ctx.tiles.grid.count(), ctx.bins, ctx.curve.counts);
  }

 private:
  video::StageId id_ = video::stage_id("histogram");
  std::vector<std::map<std::string, std::unique_ptr<hist::Kernel>>> kernels_;
};

}  // namespace

OperationInfo histogram_operation() { return {"histogram", histogram_controls(), make_operation<HistogramOp>}; }

}  // namespace histeq::eq
