#include "core/equalize/runner.h"

#include <algorithm>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/equalize/equalize.h"
#include "core/histogram/histogram.h"

namespace histeq::eq {
namespace {

Status copy_into(const PlaneRef& src, const PlaneRef& dst, cudaStream_t stream) {
  if (dst.bytes_per_sample == 1) return copy_plane(src, dst.as_writable<uint8_t>(), stream);
  return copy_plane(src, dst.as_writable<uint16_t>(), stream);
}

}  // namespace

// A kernel of the other backend than the one asked for.
Status check_kernel_backend(BackendChoice want, const std::string& kernel, Backend kernel_backend) {
  if (want == BackendChoice::cpu && kernel_backend == Backend::gpu)
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + kernel + "' runs on the GPU, but backend is cpu");
  if (want == BackendChoice::gpu && kernel_backend == Backend::cpu)
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + kernel + "' runs on the CPU, but backend is gpu");
  return Status::ok();
}

Result<BackendPick> choose_backend(BackendChoice want, const std::string& kernel) {
  const hist::KernelEntry* e = kernel.empty() ? nullptr : hist::find_kernel(kernel);
  if (!kernel.empty() && e == nullptr) return hist::create_kernel(kernel).status();  // "unknown kernel (known: ...)"
  if (e != nullptr) HISTEQ_TRY(check_kernel_backend(want, kernel, e->info.backend));
  const bool gpu_kernel = e != nullptr && e->info.backend == Backend::gpu;
  const bool device = cuda::have_device();
  bool gpu = want == BackendChoice::gpu || gpu_kernel;
  if (want == BackendChoice::automatic && e == nullptr) gpu = device;
  if (gpu && !device)
    return HISTEQ_ERROR(Code::no_device, (gpu_kernel ? "kernel '" + kernel + "'" : std::string("backend gpu")) +
                                             " needs a CUDA device and none is usable (use the CPU backend)");
  BackendPick p;
  p.backend = gpu ? Backend::gpu : Backend::cpu;
  if (want == BackendChoice::automatic && e == nullptr && !gpu) p.note = "no CUDA device: equalizing on the CPU";
  return p;
}

Status TileScratch::allocate(MemoryKind mem, int bins, int width, int height) {
  const size_t most = static_cast<size_t>(hist::kMaxTiles) * hist::kMaxTiles * static_cast<size_t>(bins);
  const size_t sizes[4] = {sizeof(uint32_t) * most, sizeof(uint16_t) * most, sizeof(uint32_t) * static_cast<size_t>(std::max(1, width)),
                           sizeof(uint32_t) * static_cast<size_t>(std::max(1, height))};
  cuda::Buffer* bufs[4] = {&counts_, &luts_, &x_table_, &y_table_};
  for (int i = 0; i < 4; ++i) {
    auto b = cuda::Buffer::allocate(mem, sizes[i]);
    if (!b) return b.status();
    *bufs[i] = std::move(b.value());
  }
  if (mem != MemoryKind::device) return Status::ok();
  auto xs = cuda::Buffer::allocate(MemoryKind::pinned, x_table_.bytes());
  if (!xs) return xs.status();
  x_stage_ = std::move(xs.value());
  auto ys = cuda::Buffer::allocate(MemoryKind::pinned, y_table_.bytes());
  if (!ys) return ys.status();
  y_stage_ = std::move(ys.value());
  return Status::ok();
}

Status TileScratch::ensure(FrameContext& ctx, const TileLayout& want, cudaStream_t stream) {
  const bool dev = ctx.backend == Backend::gpu;
  const int w = ctx.luma.width, h = ctx.luma.height;
  if (counts_.empty()) HISTEQ_TRY(allocate(dev ? MemoryKind::device : MemoryKind::host, ctx.bins, w, h));
  if (layout_ != want) {
    axis_table(w, want.grid.cols, static_cast<uint32_t*>(dev ? x_stage_.data() : x_table_.data()), want.step_x);
    axis_table(h, want.grid.rows, static_cast<uint32_t*>(dev ? y_stage_.data() : y_table_.data()), want.step_y);
    if (dev) {
      HISTEQ_CUDA_TRY(cudaMemcpyAsync(x_table_.data(), x_stage_.data(), sizeof(uint32_t) * w, cudaMemcpyHostToDevice, stream));
      HISTEQ_CUDA_TRY(cudaMemcpyAsync(y_table_.data(), y_stage_.data(), sizeof(uint32_t) * h, cudaMemcpyHostToDevice, stream));
    }
    layout_ = want;
  }
  ctx.tiles.grid = want.grid;
  ctx.tiles.padded = want.padded(w, h);
  ctx.tiles.counts = static_cast<uint32_t*>(counts_.data());
  ctx.tiles.luts = static_cast<uint16_t*>(luts_.data());
  ctx.tiles.x = static_cast<const uint32_t*>(x_table_.data());
  ctx.tiles.y = static_cast<const uint32_t*>(y_table_.data());
  return Status::ok();
}

Result<PlaneRef> TileScratch::pad(const FrameContext& ctx, const PlaneRef& luma, cudaStream_t stream) {
  PlaneRef p = luma;
  p.width = layout_.width;
  p.height = layout_.height;
  p.pitch = (static_cast<size_t>(p.width) * p.bytes_per_sample + 15) / 16 * 16;
  const bool dev = ctx.backend == Backend::gpu;
  if (padded_.bytes() < p.pitch * static_cast<size_t>(p.height)) {
    auto b = cuda::Buffer::allocate(dev ? MemoryKind::device : MemoryKind::host, p.pitch * static_cast<size_t>(p.height));
    if (!b) return b.status();
    padded_ = std::move(b.value());
  }
  p.data = padded_.data();
  if (dev) HISTEQ_TRY(pad_reflect_gpu(luma, p, stream));
  else HISTEQ_TRY(pad_reflect(luma, p));
  return p;
}

Result<Runner> Runner::create(Backend backend, int slots, const video::FrameFormat& format, Operations ops) {
  if (slots < 1) return HISTEQ_ERROR(Code::invalid_argument, "a runner needs at least one slot");
  Runner r;
  r.backend_ = backend;
  r.format_ = format;
  r.ops_ = ops.empty() ? standard_operations() : std::move(ops);
  for (auto& op : r.ops_) HISTEQ_TRY(op->prepare(backend, slots, format));
  const MemoryKind mem = backend == Backend::gpu ? MemoryKind::device : MemoryKind::host;
  const auto bins = static_cast<size_t>(format.bins());
  r.slots_.resize(static_cast<size_t>(slots));
  for (Slot& s : r.slots_) {
    auto c = cuda::Buffer::allocate(mem, sizeof(uint32_t) * bins);
    if (!c) return c.status();
    auto l = cuda::Buffer::allocate(mem, sizeof(uint16_t) * bins);
    if (!l) return l.status();
    s.counts = std::move(c.value());
    s.lut = std::move(l.value());
  }
  r.state_ev_.resize(r.ops_.size());
  r.state_recorded_.assign(r.ops_.size(), false);
  r.active_.assign(r.ops_.size(), false);
  if (backend != Backend::gpu) return r;
  for (size_t k = 0; k < r.ops_.size(); ++k) {
    if (!r.ops_[k]->stateful()) continue;
    auto ev = cuda::Event::create(false);
    if (!ev) return ev.status();
    r.state_ev_[k] = std::move(ev.value());
  }
  return r;
}

Plan Runner::plan(const Settings& settings) const { return plan_frame(settings, backend_, format_, ops_); }

const uint32_t* Runner::counts(int slot) const { return static_cast<const uint32_t*>(slots_.at(static_cast<size_t>(slot)).counts.data()); }
const uint16_t* Runner::lut(int slot) const { return static_cast<const uint16_t*>(slots_.at(static_cast<size_t>(slot)).lut.data()); }

FrameContext Runner::context(const FrameInput& frame, const Settings& settings, int slot) {
  FrameContext c;
  c.backend = backend_;
  c.format = &format_;
  c.slot = slot;
  c.frame_index = frame.index;
  c.settings = &settings;
  c.luma = frame.luma;
  c.source = frame.source;
  c.chroma[0] = frame.chroma[0];
  c.chroma[1] = frame.chroma[1];
  c.bins = format_.bins();
  Slot& s = slots_.at(static_cast<size_t>(slot));
  c.curve.counts = static_cast<uint32_t*>(s.counts.data());
  c.curve.lut = static_cast<uint16_t*>(s.lut.data());
  c.tiles.scratch = &s.tiles;
  c.time_s = frame.time_s;
  c.full_range = frame.full_range;
  return c;
}

// One operation's run on the frame: the source copied in first when it cannot take it; on the
// GPU after its previous run when it keeps state.
Status Runner::turn(size_t k, FrameContext& ctx, cudaStream_t stream) {
  Operation& op = *ops_[k];
  if (ctx.source.data != nullptr && !op.takes_source(ctx)) {
    HISTEQ_TRY(copy_into(ctx.source, ctx.luma, stream));
    ctx.source = {};
  }
  const bool ordered = backend_ == Backend::gpu && op.stateful();
  if (ordered && state_recorded_[k]) HISTEQ_CUDA_TRY(cudaStreamWaitEvent(stream, state_ev_[k].get(), 0));
  HISTEQ_TRY(op.run(ctx, stream));
  if (!ordered) return Status::ok();
  HISTEQ_TRY(state_ev_[k].record(stream));
  state_recorded_[k] = true;
  return Status::ok();
}

Status Runner::run(const FrameInput& frame, const Settings& settings, int slot, cudaStream_t stream, TimingHook* hook) {
  if (slot < 0 || slot >= slots()) return HISTEQ_ERROR(Code::internal, "runner slot out of range");
  // No chroma planes (gray input): nothing for the colour pass to follow.
  Settings gray;
  const bool no_chroma = frame.chroma[0].data == nullptr && settings.quality.chroma == ChromaMode::follow;
  if (no_chroma) {
    gray = settings;
    gray.quality.chroma = ChromaMode::keep;
  }
  FrameContext ctx = context(frame, no_chroma ? gray : settings, slot);
  for (size_t k = 0; k < ops_.size(); ++k) active_[k] = ops_[k]->active(ctx);
  ctx.plan = plan_frame(ops_, active_, ctx);
  for (size_t k = 0; k < ops_.size(); ++k) {
    Operation& op = *ops_[k];
    const bool works = active_[k] && ctx.plan.runs(op.part());
    if (works) {
      if (hook != nullptr) HISTEQ_TRY(hook->started(k, op, stream));
      HISTEQ_TRY(turn(k, ctx, stream));
    } else {
      op.skipped(ctx);
    }
    if (hook != nullptr) HISTEQ_TRY(hook->finished(k, op, works, stream));
  }
  if (ctx.source.data != nullptr) HISTEQ_TRY(copy_into(ctx.source, ctx.luma, stream));
  return Status::ok();
}

void Runner::reset() {
  for (auto& op : ops_) op->reset();
}

}  // namespace histeq::eq
