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
    const FusedOutputs out{ctx.counts, ctx.lut};  // the side data and the displays read them
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

// A slot's buffers for tiled frames: the tile histograms and LUTs (sized for the largest grid, so
// a live change of the grid never reallocates under a frame in flight), the interpolation tables
// of the layout it last served (on the GPU uploaded from pinned staging on the slot's stream), and
// the textbook clahe's padded picture when a frame needs one.
struct TileScratch {
  cuda::Buffer counts, luts, x_table, y_table, x_stage, y_stage, padded;
  TileLayout layout;

  Status ensure(const FrameContext& ctx, const TileLayout& want, cudaStream_t stream) {
    const MemoryKind mem = memory_of(ctx);
    const size_t most = static_cast<size_t>(hist::kMaxTiles) * hist::kMaxTiles * static_cast<size_t>(ctx.bins);
    const int w = ctx.luma.width, h = ctx.luma.height;
    if (counts.empty()) {
      auto c = allocate(mem, sizeof(uint32_t) * most);
      if (!c) return c.status();
      counts = std::move(c.value());
      auto l = allocate(mem, sizeof(uint16_t) * most);
      if (!l) return l.status();
      luts = std::move(l.value());
      auto x = allocate(mem, sizeof(uint32_t) * static_cast<size_t>(std::max(1, w)));
      if (!x) return x.status();
      x_table = std::move(x.value());
      auto y = allocate(mem, sizeof(uint32_t) * static_cast<size_t>(std::max(1, h)));
      if (!y) return y.status();
      y_table = std::move(y.value());
      if (mem == MemoryKind::device) {
        auto xs = allocate(MemoryKind::pinned, x_table.bytes());
        if (!xs) return xs.status();
        x_stage = std::move(xs.value());
        auto ys = allocate(MemoryKind::pinned, y_table.bytes());
        if (!ys) return ys.status();
        y_stage = std::move(ys.value());
      }
    }
    if (layout != want) {
      const bool dev = mem == MemoryKind::device;
      axis_table(w, want.grid.cols, static_cast<uint32_t*>(dev ? x_stage.data() : x_table.data()), want.step_x);
      axis_table(h, want.grid.rows, static_cast<uint32_t*>(dev ? y_stage.data() : y_table.data()), want.step_y);
      if (dev) {
        HISTEQ_CUDA_TRY(cudaMemcpyAsync(x_table.data(), x_stage.data(), sizeof(uint32_t) * w, cudaMemcpyHostToDevice, stream));
        HISTEQ_CUDA_TRY(cudaMemcpyAsync(y_table.data(), y_stage.data(), sizeof(uint32_t) * h, cudaMemcpyHostToDevice, stream));
      }
      layout = want;
    }
    return Status::ok();
  }

  // `luma` padded to the layout's picture (TileLayout), in this scratch; rows 16-byte aligned, as
  // the GPU kernels' units read them best. Grown when a frame needs more, before the stream uses it.
  Result<PlaneRef> pad(const FrameContext& ctx, const PlaneRef& luma, cudaStream_t stream) {
    PlaneRef p = luma;
    p.width = layout.width;
    p.height = layout.height;
    p.pitch = (static_cast<size_t>(p.width) * p.bytes_per_sample + 15) / 16 * 16;
    if (padded.bytes() < p.pitch * static_cast<size_t>(p.height)) {
      auto b = allocate(memory_of(ctx), p.pitch * static_cast<size_t>(p.height));
      if (!b) return b.status();
      padded = std::move(b.value());
    }
    p.data = padded.data();
    if (ctx.backend == Backend::gpu) HISTEQ_TRY(pad_reflect_gpu(luma, p, stream));
    else HISTEQ_TRY(pad_reflect(luma, p));
    return p;
  }
};

// The luma histogram by a registry kernel. Instances are made at the first frame that names them
// and kept per slot (a kernel instance may hold scratch memory that one stream uses, e.g. cub's),
// so a live switch waits for nothing and switching back costs nothing; a slot with a frame in
// flight keeps the instance it used alive. Clahe frames: the tile histograms in one call, summed
// into the frame's histogram, and the tile fields of the context for the later stages; on the
// textbook clahe's padded picture (TileLayout), the frame's histogram counted apart.
class HistogramOp final : public Operation {
 public:
  video::StageId stage() const override { return id_; }
  Part part() const override { return Part::curve; }
  bool takes_source(const FrameContext&) const override { return true; }
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    (void)backend, (void)format;
    kernels_.clear();
    kernels_.resize(static_cast<size_t>(slots));
    tiles_.clear();
    tiles_.resize(static_cast<size_t>(slots));
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
    if (ctx.settings->quality.mode != Mode::clahe) return hist::compute(kernel, luma, {ctx.counts, ctx.bins, mem}, stream);

    TileScratch& t = tiles_.at(static_cast<size_t>(ctx.slot));
    const TileLayout layout = tile_layout(ctx.settings->quality, ctx.luma.width, ctx.luma.height);
    ctx.tiles = layout.grid;
    ctx.tiles_padded = layout.padded(ctx.luma.width, ctx.luma.height);
    HISTEQ_TRY(t.ensure(ctx, layout, stream));
    ctx.tile_counts = static_cast<uint32_t*>(t.counts.data());
    ctx.tile_luts = static_cast<uint16_t*>(t.luts.data());
    ctx.tile_x = static_cast<const uint32_t*>(t.x_table.data());
    ctx.tile_y = static_cast<const uint32_t*>(t.y_table.data());
    if (ctx.tiles_padded) {
      auto padded = t.pad(ctx, luma, stream);
      if (!padded) return padded.status();
      HISTEQ_TRY(hist::compute_tiles(kernel, padded.value(), ctx.tiles, {ctx.tile_counts, ctx.bins, mem}, stream));
      return hist::compute(kernel, luma, {ctx.counts, ctx.bins, mem}, stream);
    }
    HISTEQ_TRY(hist::compute_tiles(kernel, luma, ctx.tiles, {ctx.tile_counts, ctx.bins, mem}, stream));
    if (ctx.backend == Backend::gpu) return sum_tiles_gpu(ctx.tile_counts, ctx.tiles.count(), ctx.bins, ctx.counts, stream);
    return sum_tiles(ctx.tile_counts, ctx.tiles.count(), ctx.bins, ctx.counts);
  }

 private:
  video::StageId id_ = video::stage_id("histogram");
  std::vector<std::map<std::string, std::unique_ptr<hist::Kernel>>> kernels_;
  std::vector<TileScratch> tiles_;
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
  video::StageId stage() const override { return id_; }
  Part part() const override { return Part::curve; }
  bool takes_source(const FrameContext&) const override { return true; }  // reads the histograms only
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    const Quality& q = ctx.settings->quality;
    const bool gpu = ctx.backend == Backend::gpu;
    const uint32_t clip = clip_q8(q), w = ctx.settings->weight;
    const Levels levels = levels_of(ctx).luma;
    if (q.mode == Mode::clahe) {
      if (ctx.tile_counts == nullptr) return HISTEQ_ERROR(Code::internal, "clahe LUTs without tile histograms");
      const int tiles = ctx.tiles.count();
      return gpu ? build_tile_luts_gpu(ctx.tile_counts, tiles, ctx.bins, w, clip, levels, ctx.tile_luts, ctx.lut, stream)
                 : build_tile_luts(ctx.tile_counts, tiles, ctx.bins, w, clip, levels, ctx.tile_luts, ctx.lut, pool_);
    }
    // clip 0: build_lut / build_lut_gpu themselves, so plain equalization is the fused path's bit for bit.
    return gpu ? build_lut_clipped_gpu(ctx.counts, ctx.bins, w, clip, levels, ctx.lut, stream)
               : build_lut_clipped(ctx.counts, ctx.bins, w, clip, levels, ctx.lut);
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
  video::StageId stage() const override { return id_; }
  // It reads the histogram and LUTs only, but folded it applies the curve to the luma in place.
  bool takes_source(const FrameContext& ctx) const override { return !plan_frame(*ctx.settings, ctx.backend, *ctx.format).folded; }
  bool stateful() const override { return true; }
  bool active(const FrameContext& ctx) const override {
    if (ctx.settings->quality.temporal_s > 0) return true;
    active_ = false;  // a frame without the filter: the next one with it starts over
    return false;
  }
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
    const hist::TileGrid layout = clahe ? ctx.tiles : hist::TileGrid{0, 0};
    double dt = ctx.time_s - last_time_;
    if (!(dt > 0 && dt <= kMaxInterval)) dt = interval_;  // a jump (or no previous frame): the last interval
    const Levels levels = levels_of(ctx).luma;  // a frame whose range tag changed starts over too
    const bool same = active_ && layout == layout_ && set.weight == last_.weight && q == last_.quality && levels == levels_;
    TemporalArgs a;
    a.counts = ctx.counts;
    a.bins = bins_;
    a.luts = clahe ? ctx.tile_luts : ctx.lut;
    a.count = clahe ? ctx.tiles.count() : 1;
    a.extra = clahe ? ctx.lut : nullptr;
    // The brightness measured on the tiles only where they sum to the frame (else on the mean LUT).
    a.tile_counts = clahe && !ctx.tiles_padded ? ctx.tile_counts : nullptr;
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
    if (!plan_frame(*ctx.settings, ctx.backend, *ctx.format).folded) return temporal_update_gpu(a, stream);
    const Quality& q = ctx.settings->quality;
    FusedEqualizer& fe = fold_.at(static_cast<size_t>(ctx.slot));
    if (q.chroma != ChromaMode::follow)
      return temporal_fold_gpu(fe, ctx.luma, ctx.settings->weight, clip_q8(q), a, ctx.counts, stream, FoldApply::luma);
    auto c = chroma_planes(ctx);
    if (!c) return c.status();
    return temporal_fold_gpu(fe, ctx.luma, ctx.settings->weight, clip_q8(q), a, ctx.counts, stream, FoldApply::colour, &c.value());
  }

  static constexpr double kMaxInterval = 1.0;          // longer gaps are jumps, not frame intervals
  static constexpr double kDefaultInterval = 1 / 30.0;  // before two frames have given one
  video::StageId id_ = video::stage_id("temporal");
  int bins_ = 256;
  cuda::Buffer state_, buffers_;
  std::vector<FusedEqualizer> fold_;  // one per slot, where the curve may be folded in
  mutable bool active_ = false;  // the filter ran on the previous frame (active() clears it)
  hist::TileGrid layout_{0, 0};
  Levels levels_;
  Settings last_;
  double last_time_ = 0, interval_ = kDefaultInterval;
  int parity_ = 0;
};

// The CPU's apply is most of its frame time once the colour is scaled: rows over the pool.
class ApplyOp final : public PooledOp {
 public:
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
      if (ctx.tile_luts == nullptr) return HISTEQ_ERROR(Code::internal, "clahe apply without tile LUTs");
      tiles = {ctx.tile_luts, ctx.tiles, ctx.tile_x, ctx.tile_y, ctx.format->sample_shift()};
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
      return gpu ? apply_colour_gpu(ctx.luma, *c, ctx.lut, tp, ctx.bins, stream) : apply_colour(ctx.luma, *c, ctx.lut, tp, ctx.bins, pool_);
    }
    if (tp != nullptr) {
      if (ctx.luma.bytes_per_sample == 1)
        return gpu ? apply_tiles_gpu(ctx.luma.as_writable<uint8_t>(), tiles, ctx.bins, stream)
                   : apply_tiles(ctx.luma.as_writable<uint8_t>(), tiles, ctx.bins, pool_);
      return gpu ? apply_tiles_gpu(ctx.luma.as_writable<uint16_t>(), tiles, ctx.bins, stream)
                 : apply_tiles(ctx.luma.as_writable<uint16_t>(), tiles, ctx.bins, pool_);
    }
    if (ctx.luma.bytes_per_sample == 1)
      return gpu ? apply_lut_gpu(ctx.luma.as_writable<uint8_t>(), ctx.lut, ctx.bins, stream)
                 : apply_lut(ctx.luma.as_writable<uint8_t>(), ctx.lut, ctx.bins, pool_);
    const int shift = ctx.format->sample_shift();  // P010: the table maps v >> 6
    return gpu ? apply_lut_gpu(ctx.luma.as_writable<uint16_t>(), ctx.lut, ctx.bins, stream, shift)
               : apply_lut(ctx.luma.as_writable<uint16_t>(), ctx.lut, ctx.bins, shift, pool_);
  }

 private:
  // CPU: the luma mapped from `src` into ctx.luma in one pass.
  Status apply_from(const PlaneRef& src, const FrameContext& ctx, const TileLuts* tp) {
    if (src.bytes_per_sample == 1) {
      const PlaneView<const uint8_t> in = src.as<uint8_t>();
      return tp != nullptr ? apply_tiles(in, ctx.luma.as_writable<uint8_t>(), *tp, ctx.bins, pool_)
                           : apply_lut(in, ctx.luma.as_writable<uint8_t>(), ctx.lut, ctx.bins, pool_);
    }
    const PlaneView<const uint16_t> in = src.as<uint16_t>();
    return tp != nullptr ? apply_tiles(in, ctx.luma.as_writable<uint16_t>(), *tp, ctx.bins, pool_)
                         : apply_lut(in, ctx.luma.as_writable<uint16_t>(), ctx.lut, ctx.bins, ctx.format->sample_shift(), pool_);
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
