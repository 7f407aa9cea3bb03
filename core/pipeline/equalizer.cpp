#include "core/pipeline/equalizer.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/equalize.h"
#include "core/equalize/operation.h"
#include "core/histogram/histogram.h"

namespace histeq::pipeline {
namespace {

using video::Frame;
using video::FrameFormat;
using video::FramePtr;

constexpr const char* kDefaultGpuKernel = eq::kFusedKernel;  // method2_tuned: see default_kernel()
constexpr const char* kDefaultCpuKernel = "cpu_parallel";

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---------------------------------------------------------------------------------------------
// Live settings

// A kernel switch asked for by another thread, taken by the submitting thread at its next frame
// (the latest request wins), and the strength as the LUT weight.
class LiveSettings {
 public:
  explicit LiveSettings(uint32_t weight) : weight_(weight) {}
  void request_kernel(const std::string& name) {
    std::lock_guard<std::mutex> l(mu_);
    pending_ = name;
    has_pending_.store(true, std::memory_order_release);
  }
  // Submitting thread: the kernel asked for since the last call, if any. Lock-free when none was.
  bool take_kernel(std::string& name) {
    if (!has_pending_.load(std::memory_order_acquire)) return false;
    std::lock_guard<std::mutex> l(mu_);
    name = std::move(pending_);
    has_pending_.store(false, std::memory_order_relaxed);
    return true;
  }
  Status set_strength(double strength) {
    auto w = eq::strength_weight(strength);
    if (!w) return w.status();
    weight_.store(*w, std::memory_order_relaxed);
    return Status::ok();
  }
  uint32_t weight() const noexcept { return weight_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;
  std::string pending_;
  std::atomic<bool> has_pending_{false};
  std::atomic<uint32_t> weight_;
};

// ---------------------------------------------------------------------------------------------
// Copies of the input luma (side data for before/after views), recycled. A copy goes back to the
// store when the last reference to it goes, possibly after the equalizer is gone: shared ownership.

class LumaStore : public std::enable_shared_from_this<LumaStore> {
 public:
  LumaStore(const FrameFormat& f, MemoryKind kind) : fmt_(f), kind_(kind) {}

  Result<std::shared_ptr<const PlaneRef>> acquire() {
    std::unique_ptr<cuda::Buffer> buf;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!free_.empty()) {
        buf = std::move(free_.back());
        free_.pop_back();
      }
    }
    const size_t pitch = pitch_bytes();
    if (!buf) {
      auto b = cuda::Buffer::allocate(kind_, pitch * static_cast<size_t>(fmt_.height));
      if (!b) return b.status();
      buf = std::make_unique<cuda::Buffer>(std::move(b.value()));
    }
    struct Held {
      PlaneRef ref;
      std::unique_ptr<cuda::Buffer> buf;
    };
    auto* h = new Held{{}, std::move(buf)};
    h->ref.data = h->buf->data();
    h->ref.width = fmt_.width;
    h->ref.height = fmt_.height;
    h->ref.pitch = pitch;
    h->ref.bytes_per_sample = fmt_.bytes_per_sample();
    h->ref.bit_depth = fmt_.storage_depth();
    h->ref.memory = kind_;
    std::shared_ptr<LumaStore> self = shared_from_this();
    std::shared_ptr<Held> owner(h, [self](Held* p) {
      {
        std::lock_guard<std::mutex> l(self->mu_);
        self->free_.push_back(std::move(p->buf));
      }
      delete p;
    });
    return std::shared_ptr<const PlaneRef>(owner, &owner->ref);
  }

 private:
  // Rows 16-byte aligned, as the frame pools' device rows.
  size_t pitch_bytes() const { return (static_cast<size_t>(fmt_.width) * fmt_.bytes_per_sample() + 15) / 16 * 16; }

  FrameFormat fmt_;
  MemoryKind kind_;
  std::mutex mu_;
  std::vector<std::unique_ptr<cuda::Buffer>> free_;
};

template <class T>
PlaneView<T> writable(const PlaneRef& r) {
  return {static_cast<T*>(const_cast<void*>(r.data)), r.width, r.height, r.pitch, r.bit_depth, r.memory};
}

Status copy_to(const PlaneRef& src, const PlaneRef& dst, cudaStream_t s) {
  if (dst.bytes_per_sample == 1) return copy_plane(src, writable<uint8_t>(dst), s);
  return copy_plane(src, writable<uint16_t>(dst), s);
}

// ---------------------------------------------------------------------------------------------
// The equalizer: one implementation, one operation list; the backend decides where it runs.

class EqualizerImpl final : public Equalizer {
 public:
  EqualizerImpl(EqualizerInfo info, const EqualizerOptions& opts, const FrameFormat& fmt, eq::Operations ops)
      : info_(std::move(info)), opts_(opts), fmt_(fmt), ops_(std::move(ops)), live_(info_.weight), kernel_(info_.kernel) {}

  ~EqualizerImpl() override {
    for (auto& s : slots_) (void)s.stream.synchronize();  // nothing may still write into a frame we drop
  }

  Status init();

  const EqualizerInfo& info() const override { return info_; }
  std::vector<video::StageId> stages() const override {
    std::vector<video::StageId> v;
    if (gpu()) v.push_back(video::stage::upload);
    for (const auto& op : ops_) v.push_back(op->stage());
    if (gpu()) v.push_back(video::stage::download);
    return v;
  }
  MemoryKind input_memory() const override { return gpu() ? MemoryKind::pinned : MemoryKind::host; }

  Status set_kernel(const std::string& name) override {
    if (passthrough()) return HISTEQ_ERROR(Code::invalid_argument, "no equalization (passthrough): no kernel to switch");
    HISTEQ_TRY(check_kernel(name, info_.backend, fmt_));
    live_.request_kernel(name);
    return Status::ok();
  }
  Status set_strength(double strength) override { return live_.set_strength(strength); }

  Status submit(FramePtr frame, std::vector<PipelineFrame>& done) override {
    if (passthrough()) {
      if (frame->on_device() && opts_.download) {  // a device frame (NVDEC) for a host sink
        auto h = to_host(*frame);
        if (!h) return h.status();
        frame = std::move(h.value());
      }
      done.push_back({std::move(frame), {}});
      return Status::ok();
    }
    if (std::string want; live_.take_kernel(want)) kernel_ = want;
    eq::Settings settings;
    settings.kernel = kernel_;
    settings.weight = live_.weight();
    return gpu() ? submit_gpu(std::move(frame), std::move(settings), done) : submit_cpu(std::move(frame), std::move(settings), done);
  }

  Status flush(std::vector<PipelineFrame>& done) override {
    while (!inflight_.empty()) HISTEQ_TRY(retire(done));
    return Status::ok();
  }

  void reset() override {
    // Frames still in flight belong to the pictures before the discontinuity: they are dropped.
    for (int idx : inflight_) {
      Slot& s = slots_[static_cast<size_t>(idx)];
      (void)s.stream.synchronize();
      s.release();
    }
    inflight_.clear();
    for (auto& op : ops_) op->reset();
  }

 private:
  // A frame in flight (GPU; the CPU uses slot 0 synchronously) and the buffers it works with.
  struct Slot {
    cuda::Stream stream;
    std::vector<cuda::Event> ev;  // [0] start, [1] uploaded, [2 + k] after operation k, [back] done
    std::vector<bool> ran;        // operation k worked on this slot's frame (see Operation::active)
    cuda::Buffer counts, lut;     // device (GPU) or host (CPU)
    cuda::Buffer host_counts, host_lut;  // pinned, keep_histogram on the GPU
    cuda::Buffer luma;            // GPU, host input without keep_on_device: the device luma worked on
    size_t luma_pitch = 0;
    eq::Settings settings;
    FramePtr in;                  // the frame submitted
    FramePtr out;                 // the frame that comes out, when it is another one (device or host copy)
    SideData side;
    bool uploaded = false, downloaded = false;

    void release() {
      in.reset();
      out.reset();
      side = {};
    }
  };

  bool gpu() const noexcept { return info_.backend == Backend::gpu; }
  bool passthrough() const noexcept { return ops_.empty(); }
  MemoryKind work_memory() const noexcept { return gpu() ? MemoryKind::device : MemoryKind::host; }

  eq::FrameContext context(Slot& s, const PlaneRef& luma, const PlaneRef* chroma, int chroma_count, int slot) {
    eq::FrameContext c;
    c.backend = info_.backend;
    c.format = &fmt_;
    c.slot = slot;
    c.frame_index = s.in->index;
    c.settings = &s.settings;
    c.luma = luma;
    for (int i = 0; i < chroma_count && i < 2; ++i) c.chroma[i] = chroma[i];
    c.bins = info_.bins;
    c.counts = static_cast<uint32_t*>(s.counts.data());
    c.lut = static_cast<uint16_t*>(s.lut.data());
    return c;
  }

  Status submit_cpu(FramePtr frame, eq::Settings settings, std::vector<PipelineFrame>& done);
  Status submit_gpu(FramePtr frame, eq::Settings settings, std::vector<PipelineFrame>& done);
  Status retire(std::vector<PipelineFrame>& done);
  Result<FramePtr> host_frame_for_download();
  Result<FramePtr> to_host(const Frame& device_frame);

  EqualizerInfo info_;
  EqualizerOptions opts_;
  FrameFormat fmt_;
  eq::Operations ops_;
  LiveSettings live_;
  std::string kernel_;  // the kernel of the next frame
  std::vector<Slot> slots_;
  std::deque<int> inflight_;
  uint64_t next_ = 0;
  std::vector<cuda::Event> state_ev_;  // per operation: its last run (stateful operations, GPU)
  std::vector<bool> state_recorded_;
  std::shared_ptr<LumaStore> input_store_;
  std::unique_ptr<video::FramePool> device_pool_;  // keep_on_device: output frames
  std::unique_ptr<video::FramePool> host_pool_;    // download of a device input: output frames
};

Status EqualizerImpl::init() {
  if (passthrough()) return Status::ok();
  const int nslots = gpu() ? std::max(2, opts_.frames_in_flight) : 1;
  for (auto& op : ops_) HISTEQ_TRY(op->prepare(info_.backend, nslots, fmt_));
  slots_.resize(static_cast<size_t>(nslots));
  const MemoryKind mem = work_memory();
  for (auto& s : slots_) {
    auto c = cuda::Buffer::allocate(mem, sizeof(uint32_t) * info_.bins);
    if (!c) return c.status();
    s.counts = std::move(c.value());
    auto l = cuda::Buffer::allocate(mem, sizeof(uint16_t) * info_.bins);
    if (!l) return l.status();
    s.lut = std::move(l.value());
    if (!gpu()) continue;
    auto st = cuda::Stream::create();
    if (!st) return st.status();
    s.stream = std::move(st.value());
    s.ev.resize(ops_.size() + 3);
    s.ran.assign(ops_.size(), false);
    for (auto& e : s.ev) {
      auto ev = cuda::Event::create(true);
      if (!ev) return ev.status();
      e = std::move(ev.value());
    }
    if (opts_.keep_histogram) {
      auto hc = cuda::Buffer::allocate(MemoryKind::pinned, sizeof(uint32_t) * info_.bins);
      if (!hc) return hc.status();
      s.host_counts = std::move(hc.value());
      auto hl = cuda::Buffer::allocate(MemoryKind::pinned, sizeof(uint16_t) * info_.bins);
      if (!hl) return hl.status();
      s.host_lut = std::move(hl.value());
    }
  }
  if (gpu()) {
    state_ev_.resize(ops_.size());
    state_recorded_.assign(ops_.size(), false);
    for (size_t k = 0; k < ops_.size(); ++k) {
      if (!ops_[k]->stateful()) continue;
      auto ev = cuda::Event::create(false);
      if (!ev) return ev.status();
      state_ev_[k] = std::move(ev.value());
    }
    if (opts_.keep_on_device) {
      auto p = video::FramePool::create(fmt_, MemoryKind::device);
      if (!p) return p.status();
      device_pool_ = std::move(p.value());
    }
  }
  if (opts_.keep_input_luma)
    input_store_ = std::make_shared<LumaStore>(fmt_, gpu() && opts_.keep_on_device ? MemoryKind::device : MemoryKind::host);
  return Status::ok();
}

Status EqualizerImpl::submit_cpu(FramePtr frame, eq::Settings settings, std::vector<PipelineFrame>& done) {
  Slot& s = slots_[0];
  s.settings = std::move(settings);
  if (frame->on_device()) {  // a device frame on the CPU path: its planes come down first
    auto h = to_host(*frame);
    if (!h) return h.status();
    frame = std::move(h.value());
  }
  s.in = std::move(frame);
  const PlaneRef y = s.in->plane(0);
  SideData side;
  side.kernel = s.settings.kernel;
  if (opts_.keep_input_luma) {  // for displays only: outside the timed stages
    auto copy = input_store_->acquire();
    if (!copy) return copy.status();
    HISTEQ_TRY(copy_to(y, **copy, nullptr));
    side.input_luma = std::move(copy.value());
  }
  PlaneRef chroma[2] = {s.in->plane(1), s.in->plane(2)};
  eq::FrameContext ctx = context(s, y, chroma, s.in->plane_count() - 1, 0);
  for (auto& op : ops_) {
    if (!op->active(ctx)) continue;
    const int64_t a = now_ns();
    HISTEQ_TRY(op->run(ctx, nullptr));
    s.in->timing.set(op->stage(), (now_ns() - a) / 1e6);
  }
  if (opts_.keep_histogram) {
    const auto* c = static_cast<const uint32_t*>(s.counts.data());
    const auto* l = static_cast<const uint16_t*>(s.lut.data());
    side.histogram.assign(c, c + info_.bins);
    side.lut.assign(l, l + info_.bins);
  }
  done.push_back({std::move(s.in), std::move(side)});
  return Status::ok();
}

Result<FramePtr> EqualizerImpl::host_frame_for_download() {
  if (!host_pool_) {
    auto p = video::FramePool::create(fmt_, cuda::have_device() ? MemoryKind::pinned : MemoryKind::host);
    if (!p) return p.status();
    host_pool_ = std::move(p.value());
  }
  return host_pool_->get();
}

// A device frame brought down whole into a host frame, synchronously, timed as the download.
Result<FramePtr> EqualizerImpl::to_host(const Frame& d) {
  const int64_t a = now_ns();
  auto h = host_frame_for_download();
  if (!h) return h.status();
  for (int i = 0; i < d.plane_count(); ++i) HISTEQ_TRY(copy_to(d.plane(i), (*h)->plane(i), nullptr));
  HISTEQ_CUDA_TRY(cudaStreamSynchronize(nullptr));  // the copies are asynchronous into pinned memory
  (*h)->copy_props_from(d);
  (*h)->timing.set(video::stage::download, (now_ns() - a) / 1e6);
  return h;
}

Status EqualizerImpl::submit_gpu(FramePtr frame, eq::Settings settings, std::vector<PipelineFrame>& done) {
  while (!inflight_.empty() && slots_[static_cast<size_t>(inflight_.front())].ev.back().ready()) HISTEQ_TRY(retire(done));
  if (inflight_.size() == slots_.size()) HISTEQ_TRY(retire(done));  // waits for the oldest frame only
  const int idx = static_cast<int>(next_++ % slots_.size());
  Slot& s = slots_[static_cast<size_t>(idx)];
  s.settings = std::move(settings);
  s.side = {};
  s.side.kernel = s.settings.kernel;
  s.uploaded = s.downloaded = false;
  const cudaStream_t st = s.stream.get();
  s.in = std::move(frame);
  const Frame& in = *s.in;
  const int nplanes = in.plane_count();

  // Where the planes are worked on: where they already are (a device frame), in a device frame of
  // our own (keep_on_device: the display gets all planes), or in the slot's device luma.
  PlaneRef work[3];
  HISTEQ_TRY(s.ev[0].record(st));
  if (in.on_device()) {
    for (int i = 0; i < nplanes; ++i) work[i] = in.plane(i);
  } else if (opts_.keep_on_device) {
    auto d = device_pool_->get();
    if (!d) return d.status();
    s.out = std::move(d.value());
    for (int i = 0; i < nplanes; ++i) {
      work[i] = s.out->plane(i);
      HISTEQ_TRY(copy_to(in.plane(i), work[i], st));
    }
    s.uploaded = true;
  } else {
    const PlaneRef host = in.plane(0);
    if (s.luma.empty()) {
      s.luma_pitch = (host.row_bytes() + 15) / 16 * 16;  // rows that are a multiple of 16 bytes stay contiguous
      auto b = cuda::Buffer::allocate(MemoryKind::device, s.luma_pitch * static_cast<size_t>(host.height));
      if (!b) return b.status();
      s.luma = std::move(b.value());
    }
    work[0] = host;
    work[0].data = s.luma.data();
    work[0].pitch = s.luma_pitch;
    work[0].memory = MemoryKind::device;
    HISTEQ_TRY(copy_to(host, work[0], st));
    s.uploaded = true;
  }
  if (opts_.keep_input_luma) {
    // A copy of the luma as it came, ordered before the operations on this stream (counted in the
    // upload stage): on the device for a display that reads the device, else on the host.
    auto copy = input_store_->acquire();
    if (!copy) return copy.status();
    HISTEQ_TRY(copy_to(work[0], **copy, st));
    s.side.input_luma = std::move(copy.value());
  }
  HISTEQ_TRY(s.ev[1].record(st));

  eq::FrameContext ctx = context(s, work[0], work + 1, (in.on_device() || opts_.keep_on_device) ? nplanes - 1 : 0, idx);
  for (size_t k = 0; k < ops_.size(); ++k) {
    eq::Operation& op = *ops_[k];
    s.ran[k] = op.active(ctx);
    if (s.ran[k]) {
      // A stateful operation runs after its run on the previous frame, whatever stream that took.
      if (op.stateful() && state_recorded_[k]) HISTEQ_CUDA_TRY(cudaStreamWaitEvent(st, state_ev_[k].get(), 0));
      HISTEQ_TRY(op.run(ctx, st));
      if (op.stateful()) {
        HISTEQ_TRY(state_ev_[k].record(st));
        state_recorded_[k] = true;
      }
    }
    HISTEQ_TRY(s.ev[2 + k].record(st));  // also for one that sat out: the spans stay consecutive
  }
  if (opts_.keep_histogram) {  // a few KB; counted in the download stage when there is one
    HISTEQ_CUDA_TRY(cudaMemcpyAsync(s.host_counts.data(), s.counts.data(), sizeof(uint32_t) * info_.bins,
                                    cudaMemcpyDeviceToHost, st));
    HISTEQ_CUDA_TRY(cudaMemcpyAsync(s.host_lut.data(), s.lut.data(), sizeof(uint16_t) * info_.bins, cudaMemcpyDeviceToHost, st));
  }
  if (opts_.download && !opts_.keep_on_device) {
    if (s.in->on_device()) {
      // A device frame for a host sink: all of its planes come down into a host frame.
      auto h = host_frame_for_download();
      if (!h) return h.status();
      s.out = std::move(h.value());
      for (int i = 0; i < nplanes; ++i) HISTEQ_TRY(copy_to(work[i], s.out->plane(i), st));
    } else {
      HISTEQ_TRY(copy_to(work[0], s.in->plane(0), st));
    }
    s.downloaded = true;
  }
  HISTEQ_TRY(s.ev.back().record(st));
  inflight_.push_back(idx);
  return Status::ok();
}

Status EqualizerImpl::retire(std::vector<PipelineFrame>& done) {
  Slot& s = slots_[static_cast<size_t>(inflight_.front())];
  inflight_.pop_front();
  HISTEQ_TRY(s.ev.back().synchronize());
  video::FrameTiming& t = s.in->timing;
  auto span = [&](size_t a, size_t b, video::StageId stage) -> Status {
    auto ms = cuda::elapsed_ms(s.ev[a], s.ev[b]);
    if (!ms) return ms.status();
    t.set(stage, *ms);
    return Status::ok();
  };
  if (s.uploaded) HISTEQ_TRY(span(0, 1, video::stage::upload));
  for (size_t k = 0; k < ops_.size(); ++k)
    if (s.ran[k]) HISTEQ_TRY(span(k + 1, k + 2, ops_[k]->stage()));
  if (s.downloaded) HISTEQ_TRY(span(ops_.size() + 1, s.ev.size() - 1, video::stage::download));
  if (opts_.keep_histogram) {
    const auto* c = static_cast<const uint32_t*>(s.host_counts.data());
    const auto* l = static_cast<const uint16_t*>(s.host_lut.data());
    s.side.histogram.assign(c, c + info_.bins);
    s.side.lut.assign(l, l + info_.bins);
  }
  FramePtr out;
  if (s.out) {
    s.out->copy_props_from(*s.in);
    out = std::move(s.out);
    s.in.reset();  // its upload is complete: back to the source's pool
  } else {
    out = std::move(s.in);
  }
  done.push_back({std::move(out), std::move(s.side)});
  s.release();
  return Status::ok();
}

}  // namespace

const char* default_kernel(Backend backend) noexcept { return backend == Backend::gpu ? kDefaultGpuKernel : kDefaultCpuKernel; }

const char* default_kernel_reason(Backend backend) noexcept {
  return backend == Backend::gpu
             ? "the default: its time does not depend on the picture (no atomics, no data-dependent branch, a merge that never "
               "skips a bin: within 1% across contents), and the whole equalization runs in one fused launch"
             : "the default on the CPU: privatized histograms on every core, merged at the end";
}

Status Equalizer::check_kernel(const std::string& name, Backend backend, const FrameFormat& format) {
  return eq::check_kernel(name, backend, format);
}

Result<std::unique_ptr<Equalizer>> Equalizer::create(const EqualizerOptions& opts, const FrameFormat& format) {
  HISTEQ_TRY(video::validate(format));
  EqualizerInfo info;
  info.bins = format.bins();
  auto w = eq::strength_weight(opts.strength);
  if (!w) return w.status();
  info.weight = *w;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::string cpu_name = "CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  if (opts.passthrough) {
    info.kernel = "none";
    info.device = cpu_name;
    auto e = std::make_unique<EqualizerImpl>(info, opts, format, eq::Operations{});
    HISTEQ_TRY(e->init());
    return std::unique_ptr<Equalizer>(std::move(e));
  }

  std::string name = opts.kernel;
  if (name.empty()) {
    if (!opts.cpu && cuda::have_device()) {
      name = kDefaultGpuKernel;
    } else {
      name = kDefaultCpuKernel;
      if (!opts.cpu) info.fallback_note = "no CUDA device: equalizing on the CPU (" + name + ")";
    }
  }
  const hist::KernelEntry* e = hist::find_kernel(name);
  if (e == nullptr) return hist::create_kernel(name).status();  // the registry's "unknown kernel (known: ...)"
  const bool gpu = e->info.backend == Backend::gpu;
  if (gpu && opts.cpu)
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + name + "' runs on the GPU, but --cpu was given (CPU kernels: cpu_parallel, cpu_reference)");
  if (gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "kernel '" + name + "' needs a CUDA device and none is available (use --cpu)");
  if (gpu && opts.keep_on_device && opts.download)
    return HISTEQ_ERROR(Code::invalid_argument, "keep_on_device and download are exclusive: a frame comes out in one memory");
  info.backend = gpu ? Backend::gpu : Backend::cpu;
  HISTEQ_TRY(check_kernel(name, info.backend, format));
  info.kernel = name;
  if (gpu) {
    auto dev = cuda::device_info();
    if (!dev) return dev.status();
    info.device = dev->name;
  } else {
    info.device = cpu_name;
  }
  eq::Operations ops = opts.make_operations ? opts.make_operations() : eq::standard_operations();
  if (ops.empty()) return HISTEQ_ERROR(Code::invalid_argument, "an equalizer needs at least one operation (or passthrough)");
  auto q = std::make_unique<EqualizerImpl>(info, opts, format, std::move(ops));
  HISTEQ_TRY(q->init());
  return std::unique_ptr<Equalizer>(std::move(q));
}

}  // namespace histeq::pipeline
