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
#include "core/equalize/runner.h"
#include "core/histogram/histogram.h"
#include "core/image/fork_join.h"

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

// Live controls asked for by other threads, taken by the submitting thread at its next frame (the
// latest request wins): the kernel, the quality settings and the comparison; the strength as the
// LUT weight.
class LiveSettings {
 public:
  LiveSettings(uint32_t weight, const eq::Quality& q, const Compare& c) : weight_(weight), quality_(q), compare_(c) {}
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
  void set_quality(const eq::Quality& q) {
    std::lock_guard<std::mutex> l(mu_);
    quality_ = q;
  }
  void set_compare(const Compare& c) {
    std::lock_guard<std::mutex> l(mu_);
    compare_ = c;
  }
  void snapshot(eq::Quality& q, Compare& c) {
    std::lock_guard<std::mutex> l(mu_);
    q = quality_;
    c = compare_;
  }

 private:
  std::mutex mu_;
  std::string pending_;
  std::atomic<bool> has_pending_{false};
  std::atomic<uint32_t> weight_;
  eq::Quality quality_;
  Compare compare_;
};

Status validate_look(const Look& l) {
  auto w = eq::strength_weight(l.strength);
  if (!w) return w.status();
  return eq::validate(l.quality);
}

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

Status copy_to(const PlaneRef& src, const PlaneRef& dst, cudaStream_t s) {
  if (dst.bytes_per_sample == 1) return copy_plane(src, dst.as_writable<uint8_t>(), s);
  return copy_plane(src, dst.as_writable<uint16_t>(), s);
}

// ---------------------------------------------------------------------------------------------
// The equalizer: one implementation, one operation list; the backend decides where it runs.

class EqualizerImpl final : public Equalizer {
 public:
  EqualizerImpl(EqualizerInfo info, const EqualizerOptions& opts, const FrameFormat& fmt)
      : info_(std::move(info)), opts_(opts), fmt_(fmt), live_(info_.weight, opts.quality, opts.compare), kernel_(info_.kernel) {}

  ~EqualizerImpl() override {
    // Nothing may still write into a frame we drop. The CPU's slots have no stream: synchronizing
    // the default stream there would create a CUDA context at exit (0.4 s on an H200 host, most
    // of what a CPU export took over a passthrough).
    if (gpu())
      for (auto& s : slots_) (void)s.stream.synchronize();
  }

  Status init(eq::Operations ops);

  const EqualizerInfo& info() const override { return info_; }
  std::vector<video::StageId> stages() const override {
    std::vector<video::StageId> v;
    if (gpu()) v.push_back(video::stage::upload);
    for (const auto& op : ops()) v.push_back(op->stage());
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
  Status set_quality(const eq::Quality& q) override {
    if (passthrough()) return HISTEQ_ERROR(Code::invalid_argument, "no equalization (passthrough): no quality controls");
    HISTEQ_TRY(eq::validate(q));
    live_.set_quality(q);
    return Status::ok();
  }
  Status set_compare(const Compare& c) override {
    HISTEQ_TRY(check_compare(c));
    live_.set_compare(c);
    return Status::ok();
  }
  Status check_compare(const Compare& c) const {
    if (!c.enabled) return Status::ok();
    if (passthrough()) return HISTEQ_ERROR(Code::invalid_argument, "no equalization (passthrough): nothing to compare");
    if (gpu() && !opts_.keep_on_device)
      return HISTEQ_ERROR(Code::invalid_argument, "the comparison needs a GPU equalizer that keeps its frames on the device");
    if (c.look) HISTEQ_TRY(validate_look(*c.look));
    return Status::ok();
  }

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
    FrameSettings fs;
    live_.snapshot(fs.a.quality, fs.compare);
    fs.a.kernel = eq::tiles_kernel(kernel_, fs.a.quality.mode, info_.backend);
    fs.a.weight = live_.weight();
    if (fs.compare.enabled && fs.compare.look) {
      fs.b.quality = fs.compare.look->quality;
      fs.b.kernel = eq::tiles_kernel(kernel_, fs.b.quality.mode, info_.backend);
      auto w = eq::strength_weight(fs.compare.look->strength);
      if (!w) return w.status();
      fs.b.weight = *w;
    }
    return gpu() ? submit_gpu(std::move(frame), std::move(fs), done) : submit_cpu(std::move(frame), std::move(fs), done);
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
    runner_.reset();
    if (compare_runner_) compare_runner_->reset();
  }

 private:
  // The settings a frame is equalized with: look A's, and the comparison's.
  struct FrameSettings {
    eq::Settings a, b;
    Compare compare;
  };

  // A frame in flight (GPU; the CPU uses slot 0 synchronously) and the buffers it works with.
  struct Slot {
    cuda::Stream stream;
    std::vector<cuda::Event> ev;  // [0] start, [1] uploaded, [2 + k] after operation k, [back] done
    std::vector<bool> ran;        // operation k worked on this slot's frame (the plan and Operation::active)
    cuda::Buffer host_counts, host_lut;  // pinned, keep_histogram on the GPU
    cuda::Buffer luma;            // GPU, host input without keep_on_device: the device luma worked on
    size_t luma_pitch = 0;
    cuda::Buffer chroma[2];       // GPU, host input without keep_on_device, chroma follow: the device chroma
    size_t chroma_pitch = 0;
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
  bool passthrough() const noexcept { return info_.kernel == "none"; }
  const eq::Operations& ops() const noexcept { return runner_.operations(); }

  // The frame of slot s as the runner takes it: its luma, and the chroma planes at hand.
  eq::FrameInput frame_input(const Slot& s, const PlaneRef& luma, const PlaneRef* chroma, int chroma_count) const {
    eq::FrameInput f;
    f.luma = luma;
    for (int i = 0; i < chroma_count && i < 2; ++i) f.chroma[i] = chroma[i];
    f.index = s.in->index;
    f.time_s = s.in->time_s;
    f.full_range = s.in->color.range == kRangeFull;
    return f;
  }

  // The timing rows of the output's operations: on the GPU the events between them (read at
  // retire()), on the CPU the host clock around each.
  class SlotTiming final : public eq::TimingHook {
   public:
    SlotTiming(Slot& s, bool gpu) : s_(s), gpu_(gpu) {}
    Status started(size_t, const eq::Operation&, cudaStream_t) override {
      start_ = now_ns();
      return Status::ok();
    }
    Status finished(size_t k, const eq::Operation& op, bool ran, cudaStream_t st) override {
      s_.ran[k] = ran;
      if (gpu_) return s_.ev[2 + k].record(st);  // also for one that sat out: the spans stay consecutive
      if (ran) s_.in->timing.set(op.stage(), (now_ns() - start_) / 1e6);
      return Status::ok();
    }

   private:
    Slot& s_;
    bool gpu_;
    int64_t start_ = 0;
  };

  // The comparison's frame: a copy of the input planes (`planes`, before A's operations) in the
  // output's memory; the look runs on it later (finish_compare).
  Status start_compare(Slot& s, const FrameSettings& fs, const PlaneRef* planes, int nplanes, cudaStream_t st) {
    if (!fs.compare.enabled) return Status::ok();
    if (!compare_pool_) {
      auto p = video::FramePool::create(fmt_, gpu() ? MemoryKind::device : MemoryKind::host);
      if (!p) return p.status();
      compare_pool_ = std::move(p.value());
    }
    auto f = compare_pool_->get();
    if (!f) return f.status();
    for (int i = 0; i < nplanes; ++i) HISTEQ_TRY(copy_to(planes[i], (*f)->plane(i), st));
    (*f)->copy_props_from(*s.in);
    compare_frame_ = std::move(f.value());
    return Status::ok();
  }
  Status finish_compare(Slot& s, const FrameSettings& fs, int slot) {
    if (!compare_frame_) return Status::ok();
    if (fs.compare.look) {
      if (!compare_runner_) {  // made at the comparison's first frame
        auto r = eq::Runner::create(info_.backend, static_cast<int>(slots_.size()), fmt_, make_operations());
        if (!r) return r.status();
        compare_runner_ = std::make_unique<eq::Runner>(std::move(r.value()));
      }
      Frame& f = *compare_frame_;
      const PlaneRef chroma[2] = {f.plane(1), f.plane(2)};
      HISTEQ_TRY(compare_runner_->run(frame_input(s, f.plane(0), chroma, f.plane_count() - 1), fs.b, slot, stream_of(s)));
    }
    s.side.compare = std::shared_ptr<const Frame>(std::move(compare_frame_));
    s.side.compare_look = fs.compare.look;
    return Status::ok();
  }
  eq::Operations make_operations() const { return opts_.make_operations ? opts_.make_operations() : eq::Operations{}; }
  cudaStream_t stream_of(const Slot& s) const { return gpu() ? s.stream.get() : nullptr; }

  Status submit_cpu(FramePtr frame, FrameSettings fs, std::vector<PipelineFrame>& done);
  Status submit_gpu(FramePtr frame, FrameSettings fs, std::vector<PipelineFrame>& done);
  Result<int> stage_planes_gpu(Slot& s, bool colour, PlaneRef* work, cudaStream_t st);
  Status download_gpu(Slot& s, const PlaneRef* work, bool colour, cudaStream_t st);
  Status retire(std::vector<PipelineFrame>& done);
  Result<FramePtr> host_frame_for_download();
  Result<FramePtr> to_host(const Frame& device_frame);

  static constexpr int kRangeFull = 2;  // AVCOL_RANGE_JPEG

  EqualizerInfo info_;
  EqualizerOptions opts_;
  FrameFormat fmt_;
  eq::Runner runner_;                           // the output's operations
  std::unique_ptr<eq::Runner> compare_runner_;  // the comparison's (its own state), at its first frame
  LiveSettings live_;
  std::string kernel_;  // the kernel of the next frame
  std::vector<Slot> slots_;
  std::deque<int> inflight_;
  uint64_t next_ = 0;
  std::shared_ptr<LumaStore> input_store_;
  std::unique_ptr<video::FramePool> compare_pool_;  // the comparison's frames (output memory)
  FramePtr compare_frame_;                          // the one being made, between start and finish
  std::unique_ptr<video::FramePool> device_pool_;  // keep_on_device: output frames
  std::unique_ptr<video::FramePool> host_pool_;    // download of a device input: output frames
};

Status EqualizerImpl::init(eq::Operations list) {
  if (passthrough()) return Status::ok();
  HISTEQ_TRY(check_compare(opts_.compare));
  const int nslots = gpu() ? std::max(2, opts_.frames_in_flight) : 1;
  slots_.resize(static_cast<size_t>(nslots));
  auto r = eq::Runner::create(info_.backend, nslots, fmt_, std::move(list));
  if (!r) return r.status();
  runner_ = std::move(r.value());
  for (auto& s : slots_) {
    s.ran.assign(ops().size(), false);
    if (!gpu()) continue;
    auto st = cuda::Stream::create();
    if (!st) return st.status();
    s.stream = std::move(st.value());
    s.ev.resize(ops().size() + 3);
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

Status EqualizerImpl::submit_cpu(FramePtr frame, FrameSettings fs, std::vector<PipelineFrame>& done) {
  Slot& s = slots_[0];
  s.settings = std::move(fs.a);
  if (frame->on_device()) {  // a device frame on the CPU path: its planes come down first
    auto h = to_host(*frame);
    if (!h) return h.status();
    frame = std::move(h.value());
  }
  s.in = std::move(frame);
  const PlaneRef y = s.in->plane(0);
  s.side = {};
  s.side.kernel = s.settings.kernel;
  s.side.quality = s.settings.quality;
  if (opts_.keep_input_luma) {  // for displays only: outside the timed stages
    auto copy = input_store_->acquire();
    if (!copy) return copy.status();
    HISTEQ_TRY(copy_to(y, **copy, nullptr));
    s.side.input_luma = std::move(copy.value());
  }
  PlaneRef planes[3];
  for (int i = 0; i < s.in->plane_count(); ++i) planes[i] = s.in->plane(i);
  HISTEQ_TRY(start_compare(s, fs, planes, s.in->plane_count(), nullptr));
  SlotTiming timing(s, false);
  HISTEQ_TRY(runner_.run(frame_input(s, y, planes + 1, s.in->plane_count() - 1), s.settings, 0, nullptr, &timing));
  HISTEQ_TRY(finish_compare(s, fs, 0));
  if (opts_.keep_histogram) {
    const uint32_t* c = runner_.counts(0);
    const uint16_t* l = runner_.lut(0);
    s.side.histogram.assign(c, c + info_.bins);
    s.side.lut.assign(l, l + info_.bins);
  }
  done.push_back({std::move(s.in), std::move(s.side)});
  s.release();
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

// Where a GPU slot's planes are worked on: where they already are (a device frame), in a device
// frame of our own (keep_on_device: the display gets all planes), or in the slot's device planes
// (the luma, and the chroma when chroma follow changes it). Fills work[0..planes) and returns how
// many of work[1..2] hold the chroma on the device; the uploads are queued on st.
Result<int> EqualizerImpl::stage_planes_gpu(Slot& s, bool colour, PlaneRef* work, cudaStream_t st) {
  const Frame& in = *s.in;
  const int nplanes = in.plane_count();
  if (in.on_device()) {
    for (int i = 0; i < nplanes; ++i) work[i] = in.plane(i);
    return nplanes - 1;
  }
  if (opts_.keep_on_device) {
    auto d = device_pool_->get();
    if (!d) return d.status();
    s.out = std::move(d.value());
    for (int i = 0; i < nplanes; ++i) {
      work[i] = s.out->plane(i);
      HISTEQ_TRY(copy_to(in.plane(i), work[i], st));
    }
    s.uploaded = true;
    return nplanes - 1;
  }
  // The slot's own device planes, made at the first frame: rows a multiple of 16 bytes stay contiguous.
  auto upload = [&](const PlaneRef& host, cuda::Buffer& buf, size_t& pitch, PlaneRef& to) -> Status {
    if (buf.empty()) {
      pitch = (host.row_bytes() + 15) / 16 * 16;
      auto b = cuda::Buffer::allocate(MemoryKind::device, pitch * static_cast<size_t>(host.height));
      if (!b) return b.status();
      buf = std::move(b.value());
    }
    to = host;
    to.data = buf.data();
    to.pitch = pitch;
    to.memory = MemoryKind::device;
    return copy_to(host, to, st);
  };
  HISTEQ_TRY(upload(in.plane(0), s.luma, s.luma_pitch, work[0]));
  if (colour)
    for (int i = 1; i < nplanes; ++i) HISTEQ_TRY(upload(in.plane(i), s.chroma[i - 1], s.chroma_pitch, work[i]));
  s.uploaded = true;
  return colour ? nplanes - 1 : 0;
}

// The frame's planes back to the host, queued on st: a device frame's all into a host frame, a
// host frame's luma (and the chroma the colour pass changed) into itself.
Status EqualizerImpl::download_gpu(Slot& s, const PlaneRef* work, bool colour, cudaStream_t st) {
  const int nplanes = s.in->plane_count();
  if (s.in->on_device()) {
    auto h = host_frame_for_download();
    if (!h) return h.status();
    s.out = std::move(h.value());
    for (int i = 0; i < nplanes; ++i) HISTEQ_TRY(copy_to(work[i], s.out->plane(i), st));
  } else {
    HISTEQ_TRY(copy_to(work[0], s.in->plane(0), st));
    if (colour)
      for (int i = 1; i < nplanes; ++i) HISTEQ_TRY(copy_to(work[i], s.in->plane(i), st));
  }
  s.downloaded = true;
  return Status::ok();
}

Status EqualizerImpl::submit_gpu(FramePtr frame, FrameSettings fs, std::vector<PipelineFrame>& done) {
  while (!inflight_.empty() && slots_[static_cast<size_t>(inflight_.front())].ev.back().ready()) HISTEQ_TRY(retire(done));
  if (inflight_.size() == slots_.size()) HISTEQ_TRY(retire(done));  // waits for the oldest frame only
  const int idx = static_cast<int>(next_++ % slots_.size());
  Slot& s = slots_[static_cast<size_t>(idx)];
  s.settings = std::move(fs.a);
  s.side = {};
  s.side.kernel = s.settings.kernel;
  s.side.quality = s.settings.quality;
  s.uploaded = s.downloaded = false;
  const cudaStream_t st = s.stream.get();
  s.in = std::move(frame);
  const int nplanes = s.in->plane_count();
  const bool colour = s.settings.quality.chroma == eq::ChromaMode::follow;
  PlaneRef work[3];
  HISTEQ_TRY(s.ev[0].record(st));
  auto staged = stage_planes_gpu(s, colour, work, st);
  if (!staged) return staged.status();
  const int chroma_planes = staged.value();  // how many of work[1..2] hold the chroma on the device
  if (opts_.keep_input_luma) {
    // A copy of the luma as it came, ordered before the operations on this stream (counted in the
    // upload stage): on the device for a display that reads the device, else on the host.
    auto copy = input_store_->acquire();
    if (!copy) return copy.status();
    HISTEQ_TRY(copy_to(work[0], **copy, st));
    s.side.input_luma = std::move(copy.value());
  }
  // The comparison copies the planes as they came (check_compare: they are all on the device).
  HISTEQ_TRY(start_compare(s, fs, work, nplanes, st));
  HISTEQ_TRY(s.ev[1].record(st));

  SlotTiming timing(s, true);
  HISTEQ_TRY(runner_.run(frame_input(s, work[0], work + 1, chroma_planes), s.settings, idx, st, &timing));
  if (opts_.keep_histogram) {  // a few KB; counted in the download stage when there is one
    HISTEQ_CUDA_TRY(cudaMemcpyAsync(s.host_counts.data(), runner_.counts(idx), sizeof(uint32_t) * info_.bins,
                                    cudaMemcpyDeviceToHost, st));
    HISTEQ_CUDA_TRY(cudaMemcpyAsync(s.host_lut.data(), runner_.lut(idx), sizeof(uint16_t) * info_.bins, cudaMemcpyDeviceToHost, st));
  }
  if (opts_.download && !opts_.keep_on_device) HISTEQ_TRY(download_gpu(s, work, colour, st));
  HISTEQ_TRY(finish_compare(s, fs, idx));
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
  const size_t n = ops().size();
  if (s.uploaded) HISTEQ_TRY(span(0, 1, video::stage::upload));
  for (size_t k = 0; k < n; ++k)
    if (s.ran[k]) HISTEQ_TRY(span(k + 1, k + 2, ops()[k]->stage()));
  // The download stage ends at the last event, after the comparison when there is one (it is
  // enabled only where there is no download: keep_on_device or the CPU).
  if (s.downloaded) HISTEQ_TRY(span(n + 1, s.ev.size() - 1, video::stage::download));
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
               "skips a bin: within 1% across contents); plain equalization (--plain) runs whole in one fused launch"
             : "the default on the CPU: privatized histograms on every core, merged at the end";
}

Status Equalizer::check_kernel(const std::string& name, Backend backend, const FrameFormat& format) {
  return eq::check_kernel(name, backend, format);
}

namespace {

std::string cpu_name() {
  const auto threads = static_cast<unsigned>(image::usable_cores());
  return "CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

// The backend, kernel and device of a new equalizer (eq::choose_backend decides the backend).
Status choose(const EqualizerOptions& opts, const FrameFormat& format, EqualizerInfo& info) {
  auto pick = eq::choose_backend(opts.cpu ? eq::BackendChoice::cpu : eq::BackendChoice::automatic, opts.kernel);
  if (!pick) return pick.status();
  info.backend = pick->backend;
  const bool gpu = info.backend == Backend::gpu;
  info.kernel = opts.kernel.empty() ? default_kernel(info.backend) : opts.kernel;
  if (!pick->note.empty()) info.fallback_note = pick->note + " (" + info.kernel + ")";
  if (gpu && opts.keep_on_device && opts.download)
    return HISTEQ_ERROR(Code::invalid_argument, "keep_on_device and download are exclusive: a frame comes out in one memory");
  HISTEQ_TRY(eq::check_kernel(info.kernel, info.backend, format));
  info.device = cpu_name();
  if (!gpu) return Status::ok();
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  info.device = cuda::device_label(dev->ordinal);
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Equalizer>> Equalizer::create(const EqualizerOptions& opts, const FrameFormat& format) {
  HISTEQ_TRY(video::validate(format));
  EqualizerInfo info;
  info.bins = format.bins();
  auto w = eq::strength_weight(opts.strength);
  if (!w) return w.status();
  info.weight = *w;
  HISTEQ_TRY(eq::validate(opts.quality));
  info.quality = opts.quality;
  eq::Operations ops;
  if (opts.passthrough) {
    info.kernel = "none";
    info.device = cpu_name();
  } else {
    HISTEQ_TRY(choose(opts, format, info));
    ops = opts.make_operations ? opts.make_operations() : eq::standard_operations();
    if (ops.empty()) return HISTEQ_ERROR(Code::invalid_argument, "an equalizer needs at least one operation (or passthrough)");
  }
  auto e = std::make_unique<EqualizerImpl>(info, opts, format);
  HISTEQ_TRY(e->init(std::move(ops)));
  return std::unique_ptr<Equalizer>(std::move(e));
}

}  // namespace histeq::pipeline
