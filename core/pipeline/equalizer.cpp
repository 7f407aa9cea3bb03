#include "core/pipeline/equalizer.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/equalize.h"
#include "core/histogram/histogram.h"

namespace histeq::pipeline {
namespace {

using video::Frame;
using video::FrameFormat;
using video::FramePtr;

constexpr const char* kDefaultGpuKernel = "method2";
constexpr const char* kDefaultCpuKernel = "cpu_parallel";

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---------------------------------------------------------------------------------------------
// Live settings, shared by both backends

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

// Kernel instances by name, made on first use and kept, so that switching back costs nothing.
// Constructors allocate nothing (scratch memory comes at a kernel's first run).
using KernelSet = std::map<std::string, std::unique_ptr<hist::Kernel>>;

Result<hist::Kernel*> instance(KernelSet& set, const std::string& name) {
  auto it = set.find(name);
  if (it == set.end()) {
    auto k = hist::create_kernel(name);
    if (!k) return k.status();
    it = set.emplace(name, std::move(k.value())).first;
  }
  return it->second.get();
}

// ---------------------------------------------------------------------------------------------
// Plane sets (GPU planes; copies of the input luma)

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The planes of one frame. Rows are 16-byte aligned (pitch = row rounded up to 16 bytes), so
// that a plane whose rows are already a multiple of 16 bytes (1920-wide luma) is contiguous and the
// histogram kernels take their one-long-row path.
struct PlaneSet {
  cuda::Buffer buf[3];
  Frame::DeviceView view;
};

// Plane sets (device memory, or host memory for copies of the input luma), recycled. Frames that
// keep planes (Frame::device, Frame::input_luma) hand them back here when they are destroyed,
// possibly after the equalizer is gone: hence shared ownership.
class PlaneStore {
 public:
  PlaneStore(const FrameFormat& f, int planes, MemoryKind kind = MemoryKind::device) : fmt_(f), planes_(planes), kind_(kind) {}

  Result<std::unique_ptr<PlaneSet>> acquire() {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!free_.empty()) {
        auto s = std::move(free_.back());
        free_.pop_back();
        return s;
      }
    }
    auto s = std::make_unique<PlaneSet>();
    for (int i = 0; i < planes_; ++i) {
      const size_t pitch = align_up(static_cast<size_t>(fmt_.plane_width(i)) * fmt_.bytes_per_sample(), 16);
      auto b = cuda::Buffer::allocate(kind_, pitch * fmt_.plane_height(i));
      if (!b) return b.status();
      s->buf[i] = std::move(b.value());
      PlaneRef& r = s->view.planes[i];
      r.data = s->buf[i].data();
      r.width = fmt_.plane_width(i);
      r.height = fmt_.plane_height(i);
      r.pitch = pitch;
      r.bytes_per_sample = fmt_.bytes_per_sample();
      r.bit_depth = fmt_.bit_depth;
      r.memory = kind_;
    }
    s->view.count = planes_;
    return s;
  }
  void release(std::unique_ptr<PlaneSet> s) {
    std::lock_guard<std::mutex> l(mu_);
    free_.push_back(std::move(s));
  }

 private:
  FrameFormat fmt_;
  int planes_;
  MemoryKind kind_;
  std::mutex mu_;
  std::vector<std::unique_ptr<PlaneSet>> free_;
};

template <class T>
PlaneView<T> mutable_view(const PlaneRef& r) {
  return {static_cast<T*>(const_cast<void*>(r.data)), r.width, r.height, r.pitch, r.bit_depth, r.memory};
}

Status copy_to(const PlaneRef& src, const PlaneRef& dst, cudaStream_t s) {
  if (dst.bytes_per_sample == 1) return copy_plane(src, mutable_view<uint8_t>(dst), s);
  return copy_plane(src, mutable_view<uint16_t>(dst), s);
}

// Hands a plane set to a frame: the set goes back to `store` when the frame's last reference to
// it goes (aliasing shared_ptrs to its members share this owner).
std::shared_ptr<PlaneSet> lend(const std::shared_ptr<PlaneStore>& store, std::unique_ptr<PlaneSet> set) {
  return std::shared_ptr<PlaneSet>(set.release(), [store](PlaneSet* p) { store->release(std::unique_ptr<PlaneSet>(p)); });
}

// The input luma of a frame: a plane set of one plane, lent.
std::shared_ptr<const PlaneRef> lend_luma(const std::shared_ptr<PlaneStore>& store, std::unique_ptr<PlaneSet> set) {
  std::shared_ptr<PlaneSet> owner = lend(store, std::move(set));
  return std::shared_ptr<const PlaneRef>(owner, &owner->view.planes[0]);
}

Status check_bins(const hist::KernelEntry& e, const FrameFormat& format) {
  const int bins = format.bins();
  if (e.info.supports(format.bytes_per_sample(), bins)) return Status::ok();
  std::string ok;
  for (const auto& k : hist::registry())
    if (k.info.supports(format.bytes_per_sample(), bins)) ok += (ok.empty() ? "" : ", ") + k.info.name;
  return HISTEQ_ERROR(Code::unsupported, "kernel '" + e.info.name + "' has no " + std::to_string(bins) + "-bin mode for " +
                                             std::to_string(format.bit_depth) + "-bit video (kernels that do: " + ok + ")");
}


// ---------------------------------------------------------------------------------------------
// CPU

class CpuEqualizer final : public Equalizer {
 public:
  // kernel == nullptr: passthrough.
  CpuEqualizer(EqualizerInfo info, const EqualizerOptions& opts, const FrameFormat& fmt, std::unique_ptr<hist::Kernel> kernel)
      : info_(std::move(info)), opts_(opts), fmt_(fmt), live_(info_.weight), counts_(info_.bins), lut_(info_.bins),
        input_store_(std::make_shared<PlaneStore>(fmt, 1, MemoryKind::host)) {
    if (kernel) {
      current_ = kernel.get();
      current_name_ = info_.kernel;
      kernels_.emplace(info_.kernel, std::move(kernel));
    }
  }

  const EqualizerInfo& info() const override { return info_; }
  bool wants_pinned_frames() const override { return false; }

  Status set_kernel(const std::string& name) override {
    if (current_ == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "no equalization (passthrough): no kernel to switch");
    HISTEQ_TRY(check_kernel(name, Backend::cpu, fmt_));
    live_.request_kernel(name);
    return Status::ok();
  }
  Status set_strength(double strength) override { return live_.set_strength(strength); }

  Status submit(FramePtr frame, std::vector<FramePtr>& done) override {
    if (current_ != nullptr) {
      if (std::string want; live_.take_kernel(want) && want != current_name_) {
        auto k = instance(kernels_, want);
        if (!k) return k.status();
        current_ = *k;
        current_name_ = want;
      }
      const uint32_t weight = live_.weight();
      const PlaneRef y = frame->plane(0);
      std::unique_ptr<PlaneSet> input;
      if (opts_.keep_input_luma) {  // for displays only: outside the timed stages
        auto in = input_store_->acquire();
        if (!in) return in.status();
        input = std::move(in.value());
        HISTEQ_TRY(copy_to(y, input->view.planes[0], nullptr));
      }
      const int64_t t0 = now_ns();
      HISTEQ_TRY(hist::compute(*current_, y, {counts_.data(), info_.bins, MemoryKind::host}));
      const int64_t t1 = now_ns();
      HISTEQ_TRY(eq::build_lut(counts_.data(), info_.bins, weight, lut_.data()));
      const int64_t t2 = now_ns();
      if (y.bytes_per_sample == 1) HISTEQ_TRY(eq::apply_lut(frame->plane8(0), lut_.data(), info_.bins));
      else HISTEQ_TRY(eq::apply_lut(frame->plane16(0), lut_.data(), info_.bins));
      const int64_t t3 = now_ns();
      frame->timing.set(Stage::histogram, (t1 - t0) / 1e6);
      frame->timing.set(Stage::lut, (t2 - t1) / 1e6);
      frame->timing.set(Stage::apply, (t3 - t2) / 1e6);
      frame->kernel = current_name_;
      if (input) frame->input_luma = lend_luma(input_store_, std::move(input));
      if (opts_.keep_histogram) {
        frame->histogram = counts_;
        frame->lut = lut_;
      }
    }
    done.push_back(std::move(frame));
    return Status::ok();
  }
  Status flush(std::vector<FramePtr>&) override { return Status::ok(); }

 private:
  EqualizerInfo info_;
  EqualizerOptions opts_;
  FrameFormat fmt_;
  LiveSettings live_;
  KernelSet kernels_;
  hist::Kernel* current_ = nullptr;  // null: passthrough
  std::string current_name_;
  std::vector<uint32_t> counts_;
  std::vector<uint16_t> lut_;
  std::shared_ptr<PlaneStore> input_store_;
};

// ---------------------------------------------------------------------------------------------
// GPU

class GpuEqualizer final : public Equalizer {
 public:
  enum Ev { kStart, kUploaded, kHistogram, kLut, kApplied, kDone, kEvents };

  GpuEqualizer(EqualizerInfo info, const EqualizerOptions& opts, const FrameFormat& fmt)
      : info_(std::move(info)), opts_(opts), fmt_(fmt), live_(info_.weight),
        store_(std::make_shared<PlaneStore>(fmt, opts.keep_on_device ? 3 : 1)),
        input_store_(std::make_shared<PlaneStore>(fmt, 1, opts.keep_on_device ? MemoryKind::device : MemoryKind::host)),
        current_(info_.kernel) {}

  Status init() {
    const int n = std::max(2, opts_.frames_in_flight);
    slots_.resize(n);
    for (auto& s : slots_) {
      auto st = cuda::Stream::create();
      if (!st) return st.status();
      s.stream = std::move(st.value());
      for (auto& e : s.ev) {
        auto ev = cuda::Event::create(true);
        if (!ev) return ev.status();
        e = std::move(ev.value());
      }
      // One kernel instance per stream: instances may keep scratch memory (cub's temp storage).
      auto k = instance(s.kernels, current_);
      if (!k) return k.status();
      auto c = cuda::DeviceArray<uint32_t>::allocate(info_.bins);
      if (!c) return c.status();
      s.counts = std::move(c.value());
      auto l = cuda::DeviceArray<uint16_t>::allocate(info_.bins);
      if (!l) return l.status();
      s.lut = std::move(l.value());
      if (opts_.keep_histogram) {
        auto hc = cuda::Buffer::allocate(MemoryKind::pinned, sizeof(uint32_t) * info_.bins);
        if (!hc) return hc.status();
        s.host_counts = std::move(hc.value());
        auto hl = cuda::Buffer::allocate(MemoryKind::pinned, sizeof(uint16_t) * info_.bins);
        if (!hl) return hl.status();
        s.host_lut = std::move(hl.value());
      }
    }
    return Status::ok();
  }

  ~GpuEqualizer() override {
    for (auto& s : slots_) (void)s.stream.synchronize();  // nothing may still write into a frame we drop
  }

  const EqualizerInfo& info() const override { return info_; }
  bool wants_pinned_frames() const override { return true; }

  Status set_kernel(const std::string& name) override {
    HISTEQ_TRY(check_kernel(name, Backend::gpu, fmt_));
    live_.request_kernel(name);
    return Status::ok();
  }
  Status set_strength(double strength) override { return live_.set_strength(strength); }

  Status submit(FramePtr frame, std::vector<FramePtr>& done) override {
    if (std::string want; live_.take_kernel(want) && want != current_) {
      // Every slot gets its instance now; slots with a frame in flight keep the old instance
      // alive (it stays in the set), so the switch waits for nothing.
      for (auto& sl : slots_) {
        auto k = instance(sl.kernels, want);
        if (!k) return k.status();
      }
      current_ = want;
    }
    const uint32_t weight = live_.weight();
    while (!inflight_.empty() && slots_[inflight_.front()].ev[kDone].ready()) HISTEQ_TRY(retire(done));
    if (inflight_.size() == slots_.size()) HISTEQ_TRY(retire(done));  // waits for the oldest frame only
    const int idx = static_cast<int>(next_++ % slots_.size());
    Slot& s = slots_[idx];
    if (!s.planes) {
      auto p = store_->acquire();
      if (!p) return p.status();
      s.planes = std::move(p.value());
    }
    if (opts_.keep_input_luma && !s.input) {
      auto p = input_store_->acquire();
      if (!p) return p.status();
      s.input = std::move(p.value());
    }
    const cudaStream_t st = s.stream.get();
    const PlaneRef* dev = s.planes->view.planes;
    HISTEQ_TRY(s.ev[kStart].record(st));
    HISTEQ_TRY(copy_to(frame->plane(0), dev[0], st));
    if (opts_.keep_on_device)
      for (int i = 1; i < 3; ++i) HISTEQ_TRY(copy_to(frame->plane(i), dev[i], st));
    if (s.input) {
      // On the device: a copy of the uploaded luma, ordered before the apply on this stream (counted
      // in the upload stage). On the host: a plain copy now, before any download overwrites it.
      const PlaneRef& src = opts_.keep_on_device ? dev[0] : frame->plane(0);
      HISTEQ_TRY(copy_to(src, s.input->view.planes[0], st));
    }
    HISTEQ_TRY(s.ev[kUploaded].record(st));
    HISTEQ_TRY(hist::compute(*s.kernels.at(current_), dev[0], {s.counts.data(), info_.bins, MemoryKind::device}, st));
    HISTEQ_TRY(s.ev[kHistogram].record(st));
    HISTEQ_TRY(eq::build_lut_gpu(s.counts.data(), info_.bins, weight, s.lut.data(), st));
    HISTEQ_TRY(s.ev[kLut].record(st));
    if (dev[0].bytes_per_sample == 1) HISTEQ_TRY(eq::apply_lut_gpu(mutable_view<uint8_t>(dev[0]), s.lut.data(), info_.bins, st));
    else HISTEQ_TRY(eq::apply_lut_gpu(mutable_view<uint16_t>(dev[0]), s.lut.data(), info_.bins, st));
    HISTEQ_TRY(s.ev[kApplied].record(st));
    if (opts_.keep_histogram) {  // a few KB; counted in the download stage when there is one
      HISTEQ_CUDA_TRY(cudaMemcpyAsync(s.host_counts.data(), s.counts.data(), sizeof(uint32_t) * info_.bins,
                                      cudaMemcpyDeviceToHost, st));
      HISTEQ_CUDA_TRY(cudaMemcpyAsync(s.host_lut.data(), s.lut.data(), sizeof(uint16_t) * info_.bins, cudaMemcpyDeviceToHost, st));
    }
    if (opts_.download) {
      const PlaneRef host = frame->plane(0);
      if (host.bytes_per_sample == 1) HISTEQ_TRY(copy_plane(dev[0], mutable_view<uint8_t>(host), st));
      else HISTEQ_TRY(copy_plane(dev[0], mutable_view<uint16_t>(host), st));
    }
    HISTEQ_TRY(s.ev[kDone].record(st));
    frame->kernel = current_;
    s.frame = std::move(frame);
    inflight_.push_back(idx);
    return Status::ok();
  }

  Status flush(std::vector<FramePtr>& done) override {
    while (!inflight_.empty()) HISTEQ_TRY(retire(done));
    return Status::ok();
  }

 private:
  struct Slot {
    cuda::Stream stream;
    cuda::Event ev[kEvents];
    KernelSet kernels;  // this stream's instances (the current one and those switched away from)
    cuda::DeviceArray<uint32_t> counts;
    cuda::DeviceArray<uint16_t> lut;
    cuda::Buffer host_counts, host_lut;  // pinned (keep_histogram)
    std::unique_ptr<PlaneSet> planes;
    std::unique_ptr<PlaneSet> input;     // keep_input_luma
    FramePtr frame;
  };

  Status retire(std::vector<FramePtr>& done) {
    Slot& s = slots_[inflight_.front()];
    inflight_.pop_front();
    HISTEQ_TRY(s.ev[kDone].synchronize());
    auto span = [&](Ev a, Ev b, Stage stage) -> Status {
      auto ms = cuda::elapsed_ms(s.ev[a], s.ev[b]);
      if (!ms) return ms.status();
      s.frame->timing.set(stage, *ms);
      return Status::ok();
    };
    HISTEQ_TRY(span(kStart, kUploaded, Stage::upload));
    HISTEQ_TRY(span(kUploaded, kHistogram, Stage::histogram));
    HISTEQ_TRY(span(kHistogram, kLut, Stage::lut));
    HISTEQ_TRY(span(kLut, kApplied, Stage::apply));
    if (opts_.download) HISTEQ_TRY(span(kApplied, kDone, Stage::download));
    if (opts_.keep_on_device) {
      std::shared_ptr<PlaneSet> owner = lend(store_, std::move(s.planes));
      s.frame->device = std::shared_ptr<const Frame::DeviceView>(owner, &owner->view);
    }
    if (s.input) s.frame->input_luma = lend_luma(input_store_, std::move(s.input));
    if (opts_.keep_histogram) {
      const auto* c = static_cast<const uint32_t*>(s.host_counts.data());
      const auto* l = static_cast<const uint16_t*>(s.host_lut.data());
      s.frame->histogram.assign(c, c + info_.bins);
      s.frame->lut.assign(l, l + info_.bins);
    }
    done.push_back(std::move(s.frame));
    return Status::ok();
  }

  EqualizerInfo info_;
  EqualizerOptions opts_;
  FrameFormat fmt_;
  LiveSettings live_;
  std::shared_ptr<PlaneStore> store_;
  std::shared_ptr<PlaneStore> input_store_;
  std::string current_;  // the kernel of the next frame
  std::vector<Slot> slots_;
  std::deque<int> inflight_;
  uint64_t next_ = 0;
};

}  // namespace

Status Equalizer::check_kernel(const std::string& name, Backend backend, const FrameFormat& format) {
  const hist::KernelEntry* e = hist::find_kernel(name);
  if (e == nullptr) return hist::create_kernel(name).status();  // the registry's "unknown kernel (known: ...)"
  const bool gpu = e->info.backend == hist::Backend::gpu;
  if (gpu != (backend == Backend::gpu))
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + name + "' runs on the " + (gpu ? "GPU" : "CPU") +
                                                    ", but this equalizer runs on the " + (gpu ? "CPU" : "GPU"));
  if (gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "kernel '" + name + "' needs a CUDA device and none is available");
  return check_bins(*e, format);
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
    return std::unique_ptr<Equalizer>(new CpuEqualizer(info, opts, format, nullptr));
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
  const bool gpu = e->info.backend == hist::Backend::gpu;
  if (gpu && opts.cpu)
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + name + "' runs on the GPU, but --cpu was given (CPU kernels: cpu_parallel, cpu_reference)");
  if (gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "kernel '" + name + "' needs a CUDA device and none is available (use --cpu)");
  HISTEQ_TRY(check_bins(*e, format));
  info.kernel = name;
  if (!gpu) {
    info.backend = Backend::cpu;
    info.device = cpu_name;
    auto k = hist::create_kernel(name);
    if (!k) return k.status();
    return std::unique_ptr<Equalizer>(new CpuEqualizer(info, opts, format, std::move(k.value())));
  }
  info.backend = Backend::gpu;
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  info.device = dev->name;
  auto g = std::make_unique<GpuEqualizer>(info, opts, format);
  HISTEQ_TRY(g->init());
  return std::unique_ptr<Equalizer>(std::move(g));
}

}  // namespace histeq::pipeline
