#include "core/pipeline/equalizer.h"

#include <chrono>
#include <deque>
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
// CPU

class CpuEqualizer final : public Equalizer {
 public:
  CpuEqualizer(EqualizerInfo info, std::unique_ptr<hist::Kernel> kernel)
      : info_(std::move(info)), kernel_(std::move(kernel)), counts_(info_.bins), lut_(info_.bins) {}

  const EqualizerInfo& info() const override { return info_; }
  bool wants_pinned_frames() const override { return false; }

  Status submit(FramePtr frame, std::vector<FramePtr>& done) override {
    if (kernel_) {
      const PlaneRef y = frame->plane(0);
      const int64_t t0 = now_ns();
      HISTEQ_TRY(hist::compute(*kernel_, y, {counts_.data(), info_.bins, MemoryKind::host}));
      const int64_t t1 = now_ns();
      HISTEQ_TRY(eq::build_lut(counts_.data(), info_.bins, info_.weight, lut_.data()));
      const int64_t t2 = now_ns();
      if (y.bytes_per_sample == 1) HISTEQ_TRY(eq::apply_lut(frame->plane8(0), lut_.data(), info_.bins));
      else HISTEQ_TRY(eq::apply_lut(frame->plane16(0), lut_.data(), info_.bins));
      const int64_t t3 = now_ns();
      frame->timing.set(Stage::histogram, (t1 - t0) / 1e6);
      frame->timing.set(Stage::lut, (t2 - t1) / 1e6);
      frame->timing.set(Stage::apply, (t3 - t2) / 1e6);
    }
    done.push_back(std::move(frame));
    return Status::ok();
  }
  Status flush(std::vector<FramePtr>&) override { return Status::ok(); }

 private:
  EqualizerInfo info_;
  std::unique_ptr<hist::Kernel> kernel_;  // null: passthrough
  std::vector<uint32_t> counts_;
  std::vector<uint16_t> lut_;
};

// ---------------------------------------------------------------------------------------------
// GPU

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The device planes of one frame. Rows are 16-byte aligned (pitch = row rounded up to 16 bytes), so
// that a plane whose rows are already a multiple of 16 bytes (1920-wide luma) is contiguous and the
// histogram kernels take their one-long-row path.
struct PlaneSet {
  cuda::Buffer buf[3];
  Frame::DeviceView view;
};

// Device plane sets, recycled. Frames that keep their planes (Frame::device) hand them back here
// when they are destroyed, possibly after the equalizer is gone: hence shared ownership.
class PlaneStore {
 public:
  PlaneStore(const FrameFormat& f, int planes) : fmt_(f), planes_(planes) {}

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
      auto b = cuda::Buffer::allocate(MemoryKind::device, pitch * fmt_.plane_height(i));
      if (!b) return b.status();
      s->buf[i] = std::move(b.value());
      PlaneRef& r = s->view.planes[i];
      r.data = s->buf[i].data();
      r.width = fmt_.plane_width(i);
      r.height = fmt_.plane_height(i);
      r.pitch = pitch;
      r.bytes_per_sample = fmt_.bytes_per_sample();
      r.bit_depth = fmt_.bit_depth;
      r.memory = MemoryKind::device;
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

class GpuEqualizer final : public Equalizer {
 public:
  enum Ev { kStart, kUploaded, kHistogram, kLut, kApplied, kDone, kEvents };

  GpuEqualizer(EqualizerInfo info, const EqualizerOptions& opts, const FrameFormat& fmt)
      : info_(std::move(info)), opts_(opts), fmt_(fmt),
        store_(std::make_shared<PlaneStore>(fmt, opts.keep_on_device ? 3 : 1)) {}

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
      auto k = hist::create_kernel(info_.kernel);
      if (!k) return k.status();
      s.kernel = std::move(k.value());
      auto c = cuda::DeviceArray<uint32_t>::allocate(info_.bins);
      if (!c) return c.status();
      s.counts = std::move(c.value());
      auto l = cuda::DeviceArray<uint16_t>::allocate(info_.bins);
      if (!l) return l.status();
      s.lut = std::move(l.value());
    }
    return Status::ok();
  }

  ~GpuEqualizer() override {
    for (auto& s : slots_) (void)s.stream.synchronize();  // nothing may still write into a frame we drop
  }

  const EqualizerInfo& info() const override { return info_; }
  bool wants_pinned_frames() const override { return true; }

  Status submit(FramePtr frame, std::vector<FramePtr>& done) override {
    while (!inflight_.empty() && slots_[inflight_.front()].ev[kDone].ready()) HISTEQ_TRY(retire(done));
    if (inflight_.size() == slots_.size()) HISTEQ_TRY(retire(done));  // waits for the oldest frame only
    const int idx = static_cast<int>(next_++ % slots_.size());
    Slot& s = slots_[idx];
    if (!s.planes) {
      auto p = store_->acquire();
      if (!p) return p.status();
      s.planes = std::move(p.value());
    }
    const cudaStream_t st = s.stream.get();
    const PlaneRef* dev = s.planes->view.planes;
    HISTEQ_TRY(s.ev[kStart].record(st));
    HISTEQ_TRY(copy_to(frame->plane(0), dev[0], st));
    if (opts_.keep_on_device)
      for (int i = 1; i < 3; ++i) HISTEQ_TRY(copy_to(frame->plane(i), dev[i], st));
    HISTEQ_TRY(s.ev[kUploaded].record(st));
    HISTEQ_TRY(hist::compute(*s.kernel, dev[0], {s.counts.data(), info_.bins, MemoryKind::device}, st));
    HISTEQ_TRY(s.ev[kHistogram].record(st));
    HISTEQ_TRY(eq::build_lut_gpu(s.counts.data(), info_.bins, info_.weight, s.lut.data(), st));
    HISTEQ_TRY(s.ev[kLut].record(st));
    if (dev[0].bytes_per_sample == 1) HISTEQ_TRY(eq::apply_lut_gpu(mutable_view<uint8_t>(dev[0]), s.lut.data(), info_.bins, st));
    else HISTEQ_TRY(eq::apply_lut_gpu(mutable_view<uint16_t>(dev[0]), s.lut.data(), info_.bins, st));
    HISTEQ_TRY(s.ev[kApplied].record(st));
    if (opts_.download) {
      const PlaneRef host = frame->plane(0);
      if (host.bytes_per_sample == 1) HISTEQ_TRY(copy_plane(dev[0], mutable_view<uint8_t>(host), st));
      else HISTEQ_TRY(copy_plane(dev[0], mutable_view<uint16_t>(host), st));
    }
    HISTEQ_TRY(s.ev[kDone].record(st));
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
    std::unique_ptr<hist::Kernel> kernel;
    cuda::DeviceArray<uint32_t> counts;
    cuda::DeviceArray<uint16_t> lut;
    std::unique_ptr<PlaneSet> planes;
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
      PlaneSet* raw = s.planes.release();
      std::shared_ptr<PlaneStore> store = store_;
      s.frame->device = std::shared_ptr<const Frame::DeviceView>(
          &raw->view, [store, raw](const Frame::DeviceView*) { store->release(std::unique_ptr<PlaneSet>(raw)); });
    }
    done.push_back(std::move(s.frame));
    return Status::ok();
  }

  EqualizerInfo info_;
  EqualizerOptions opts_;
  FrameFormat fmt_;
  std::shared_ptr<PlaneStore> store_;
  std::vector<Slot> slots_;
  std::deque<int> inflight_;
  uint64_t next_ = 0;
};

}  // namespace

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
    return std::unique_ptr<Equalizer>(new CpuEqualizer(info, nullptr));
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
  if (!e->info.supports(format.bytes_per_sample(), info.bins)) {
    std::string ok;
    for (const auto& k : hist::registry())
      if (k.info.supports(format.bytes_per_sample(), info.bins)) ok += (ok.empty() ? "" : ", ") + k.info.name;
    return HISTEQ_ERROR(Code::unsupported, "kernel '" + name + "' has no " + std::to_string(info.bins) + "-bin mode for " +
                                               std::to_string(format.bit_depth) + "-bit video (kernels that do: " + ok + ")");
  }
  info.kernel = name;
  if (!gpu) {
    info.backend = Backend::cpu;
    info.device = cpu_name;
    auto k = hist::create_kernel(name);
    if (!k) return k.status();
    return std::unique_ptr<Equalizer>(new CpuEqualizer(info, std::move(k.value())));
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
