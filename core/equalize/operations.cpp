#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <thread>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/controls.h"
#include "core/equalize/ops/apply/options.h"
#include "core/equalize/ops/temporal/options.h"
#include "core/equalize/ops/lut/options.h"
#include "core/equalize/ops/histogram/options.h"
#include "core/equalize/equalize.h"
#include "core/equalize/fused_gpu.h"
#include "core/equalize/operation.h"
#include "core/equalize/planner.h"
#include "core/equalize/runner.h"
#include "core/histogram/histogram.h"
#include "core/image/fork_join.h"

namespace histeq::eq {
namespace {

FrameLevels levels_of(const FrameContext& ctx) {
  return frame_levels(ctx.settings->quality, ctx.format->bit_depth, ctx.full_range);
}

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

MemoryKind memory_of(const FrameContext& ctx) { return ctx.backend == Backend::gpu ? MemoryKind::device : MemoryKind::host; }

Result<cuda::Buffer> allocate(MemoryKind kind, size_t bytes) { return cuda::Buffer::allocate(kind, bytes); }

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

// An operation whose CPU form spreads over the cores: the process's shared pool (image::shared_pool(),
// the histogram kernel's too, so one set of threads serves every stage of a frame awake; none for
// the GPU or on a single core).
class PooledOp : public Operation {
 public:
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    (void)slots, (void)format;
    pool_ = backend == Backend::cpu ? image::shared_pool() : nullptr;
    return Status::ok();
  }

 protected:
  image::ForkJoin* pool_ = nullptr;  // the process's pool, shared with the cpu_parallel kernel
};

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

// The colour pass's planes and levels for the frame (chroma follow): the apply's, or the fold's.
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

Operations standard_operations() {
  Operations ops;
  for (const OperationInfo& o : operation_list()) ops.push_back(o.make());
  return ops;
}

template <class Op>
std::unique_ptr<Operation> make() {
  return std::make_unique<Op>();
}

OperationInfo equalize_operation() { return {"equalize", {}, make<FusedOp>}; }

OperationInfo histogram_operation() { return {"histogram", histogram_controls(), make<HistogramOp>}; }

OperationInfo lut_operation() { return {"lut", lut_controls(), make<LutOp>}; }

OperationInfo temporal_operation() { return {"temporal", temporal_controls(), make<TemporalOp>}; }

OperationInfo apply_operation() { return {"apply", apply_controls(), make<ApplyOp>}; }

std::string tiles_kernel(const std::string& kernel, Mode mode, Backend backend) {
  if (mode != Mode::clahe) return kernel;
  const hist::KernelEntry* e = hist::find_kernel(kernel);
  if (e != nullptr && e->info.tiles) return kernel;
  return backend == Backend::gpu ? kFusedKernel : "cpu_parallel";
}

Status check_kernel(const std::string& name, Backend backend, const video::FrameFormat& format) {
  const hist::KernelEntry* e = hist::find_kernel(name);
  if (e == nullptr) return hist::create_kernel(name).status();  // the registry's "unknown kernel (known: ...)"
  const bool gpu = e->info.backend == Backend::gpu;
  if (gpu != (backend == Backend::gpu))
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + name + "' runs on the " + (gpu ? "GPU" : "CPU") +
                                                    ", but this equalizer runs on the " + (gpu ? "CPU" : "GPU"));
  if (gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "kernel '" + name + "' needs a CUDA device and none is available");
  const int bins = format.bins();
  if (e->info.supports(format.bytes_per_sample(), bins)) return Status::ok();
  std::string ok;
  for (const auto& k : hist::registry())
    if (k.info.supports(format.bytes_per_sample(), bins)) ok += (ok.empty() ? "" : ", ") + k.info.name;
  return HISTEQ_ERROR(Code::unsupported, "kernel '" + e->info.name + "' has no " + std::to_string(bins) + "-bin mode for " +
                                             std::to_string(format.bit_depth) + "-bit video (kernels that do: " + ok + ")");
}

}  // namespace histeq::eq
