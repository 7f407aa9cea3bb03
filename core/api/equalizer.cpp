// The public Equalizer: an eq::Runner (runner.h) with one slot, run on the caller's planes as
// core/pipeline's equalizer runs it on a frame, so that the frames are the same as `histeq
// export`'s. It is not a pipeline::Equalizer because that one keeps frames in flight and hands
// them back later (a host wait per frame to get one back), while a library call must leave the
// frame equalized, or ordered on the caller's stream.
//
// One slot: the runner's scratch and the staging planes are used on one stream of the
// equalizer's (GPU) or on the calling thread (CPU), so frame n+1's work cannot overtake frame n's.
#include <algorithm>
#include <thread>

#include "core/api/api_impl.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/equalize/equalize.h"
#include "core/equalize/lut.h"
#include "core/equalize/runner.h"
#include "core/histogram/histogram.h"
#include "core/image/fork_join.h"
#include "core/pipeline/equalizer.h"

namespace histeq::api {
namespace {

std::string cpu_name() {
  const auto threads = static_cast<unsigned>(image::usable_cores());
  return "CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

histeq::Status copy_to(const PlaneRef& src, const PlaneRef& dst, cudaStream_t s) {
  if (dst.bytes_per_sample == 1)
    return copy_plane(src, dst.as_writable<uint8_t>(), s);
  return copy_plane(src, dst.as_writable<uint16_t>(), s);
}

bool same_planes(const Image& a, const Image& b) {
  for (int i = 0; i < a.plane_count(); ++i)
    if (a.planes[i].data != b.planes[i].data || plane_ref(a, i).pitch != plane_ref(b, i).pitch) return false;
  return true;
}

}  // namespace

// Hidden although Equalizer is exported: its members are no part of the library's interface.
struct __attribute__((visibility("hidden"))) Equalizer::Impl {
  Settings settings;
  Backend backend = Backend::cpu;
  int device = -1;            // GPU: the CUDA device; CPU: -1
  std::string kernel;         // the kernel named or the backend's default (before tiles_kernel)
  uint32_t weight = eq::kWeightOne;
  EqualizerInfo info;
  // The operation list and its scratch, prepared for `format` (a frame of another format
  // prepares a new one).
  eq::Runner runner;
  video::FrameFormat format;
  bool prepared = false;
  cuda::Buffer staging;       // the planes in the work memory, when the caller's are elsewhere
  // GPU: the equalizer's stream, and the events that order it after and before the caller's.
  cuda::Stream stream;
  cuda::Event caller_ready, done;
  int64_t index = 0;
  double last_time = 0;

  ~Impl() {
    if (stream.get() == nullptr) return;
    const DeviceScope scope(device);
    (void)stream.synchronize();  // nothing of ours may still run when its buffers go
  }
  MemoryKind work_memory() const noexcept { return backend == Backend::gpu ? MemoryKind::device : MemoryKind::host; }
  histeq::Status choose(const Settings& s);
  histeq::Status apply_settings(const Settings& s);
  histeq::Status prepare(const video::FrameFormat& f);
  histeq::Status stage(const Image& im, PlaneRef* work);
  histeq::Status run_operations(const Image& in, const PlaneRef* work, const PlaneRef* source, cudaStream_t st);
  histeq::Status process(const Image& in, const Image& out, cudaStream_t caller);
};

// The backend, device and kernel, fixed at creation (the non-live controls).
histeq::Status Equalizer::Impl::choose(const Settings& s) {
  const BackendChoice c = backend_of(s.impl_->own);
  const eq::BackendChoice want = c == BackendChoice::gpu   ? eq::BackendChoice::gpu
                                 : c == BackendChoice::cpu ? eq::BackendChoice::cpu
                                                           : eq::BackendChoice::automatic;
  auto b = eq::choose_backend(want, kernel_of(s.impl_->own));
  if (!b) return b.status();
  backend = b->backend;
  const bool gpu = backend == Backend::gpu;
  info.fallback_note = b->note;
  info.backend = gpu ? "gpu" : "cpu";
  info.device = cpu_name();
  if (!gpu) return histeq::Status::ok();
  device = device_of(s.impl_->own);
  const int n = cuda::device_count();
  if (device >= n)
    return HISTEQ_ERROR(Code::invalid_argument, "device " + std::to_string(device) + ": this machine has " + std::to_string(n) +
                                                    " CUDA device" + (n == 1 ? "" : "s") + " (0.." + std::to_string(n - 1) + ")");
  auto d = cuda::device_info(device);
  if (!d) return d.status();
  info.device = d->name;
  return histeq::Status::ok();
}

// The live controls: the kernel, the strength and the quality, checked before any is taken.
histeq::Status Equalizer::Impl::apply_settings(const Settings& s) {
  HISTEQ_TRY(eq::validate(s.impl_->quality));
  auto w = eq::strength_weight(strength_of(s.impl_->own));
  if (!w) return w.status();
  std::string k = kernel_of(s.impl_->own);
  if (k.empty()) k = pipeline::default_kernel(backend);
  const hist::KernelEntry* e = hist::find_kernel(k);
  if (e == nullptr) return hist::create_kernel(k).status();
  if (e->info.backend != backend)
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + k + "' runs on the " + backend_name(e->info.backend) +
                                                    ", this equalizer on the " + backend_name(backend));
  if (prepared) HISTEQ_TRY(eq::check_kernel(k, backend, format));
  kernel = k;
  weight = *w;
  info.kernel = k;
  settings = s;
  return histeq::Status::ok();
}

// A new operation list for frames of `f` (the first frame, or one of another format): made and
// prepared aside, taken only when all of it succeeded.
histeq::Status Equalizer::Impl::prepare(const video::FrameFormat& f) {
  if (prepared && f == format) return histeq::Status::ok();
  HISTEQ_TRY(eq::check_kernel(kernel, backend, f));
  auto fresh = eq::Runner::create(backend, 1, f);
  if (!fresh) return fresh.status();
  runner = std::move(fresh.value());
  staging.reset();
  format = f;
  prepared = true;
  return histeq::Status::ok();
}

// The planes the operations work on, in the work memory: staging planes (allocated at the first
// frame that needs them) laid out back to back, each row rounded up to 256 bytes.
histeq::Status Equalizer::Impl::stage(const Image& im, PlaneRef* work) {
  size_t bytes = 0;
  for (int i = 0; i < im.plane_count(); ++i) {
    work[i] = plane_ref(im, i);
    work[i].pitch = (work[i].row_bytes() + 255) / 256 * 256;
    work[i].memory = work_memory();
    bytes += work[i].pitch * static_cast<size_t>(work[i].height);
  }
  if (staging.bytes() < bytes) {
    auto b = cuda::Buffer::allocate(work_memory(), bytes);
    if (!b) return b.status();
    staging = std::move(b.value());
  }
  auto* p = static_cast<unsigned char*>(staging.data());
  for (int i = 0; i < im.plane_count(); ++i) {
    work[i].data = p;
    p += work[i].pitch * static_cast<size_t>(work[i].height);
  }
  return histeq::Status::ok();
}

// The runner on the planes `work` (luma first). `source` (CPU, or null): the luma still to be
// copied into work[0] (the runner copies it where an operation cannot read it there).
histeq::Status Equalizer::Impl::run_operations(const Image& in, const PlaneRef* work, const PlaneRef* source, cudaStream_t st) {
  eq::Settings fs;
  fs.quality = settings.impl_->quality;
  fs.kernel = eq::tiles_kernel(kernel, fs.quality.mode, backend);
  fs.weight = weight;
  eq::FrameInput f;
  f.luma = work[0];
  if (source != nullptr) f.source = *source;
  for (int i = 1; i < in.plane_count(); ++i) f.chroma[i - 1] = work[i];  // none for gray: chroma kept
  f.index = index;
  f.time_s = in.time_s >= 0 ? in.time_s : last_time;  // unknown: no interval, so the last one is used
  f.full_range = range_tag(in.range) == 2;
  HISTEQ_TRY(runner.run(f, fs, 0, st));
  ++index;
  last_time = f.time_s;
  return histeq::Status::ok();
}

// The input's planes into the work planes, unless they are the same (`in_place`). `direct` (a host
// frame into a separate host output on the CPU): the luma is left where it is, the operations read
// it there and the apply writes the output from it (one pass fewer over the frame).
static histeq::Status copy_in(const Image& in, bool in_place, bool direct, PlaneRef* work, cudaStream_t st) {
  if (in_place) return histeq::Status::ok();
  for (int i = direct ? 1 : 0; i < in.plane_count(); ++i) HISTEQ_TRY(copy_to(plane_ref(in, i), work[i], st));
  return histeq::Status::ok();
}

histeq::Status Equalizer::Impl::process(const Image& in, const Image& out, cudaStream_t caller) {
  const bool gpu = backend == Backend::gpu;
  const bool any_host = in.memory == Memory::host || out.memory == Memory::host;
  const DeviceScope scope(device);
  HISTEQ_TRY(prepare(frame_format(in)));
  const cudaStream_t st = gpu ? stream.get() : caller;
  if (gpu) {  // after the caller's work on its stream
    HISTEQ_CUDA_TRY(cudaEventRecord(caller_ready.get(), caller));
    HISTEQ_CUDA_TRY(cudaStreamWaitEvent(st, caller_ready.get(), 0));
  }
  const bool out_is_work = (out.memory == Memory::device) == gpu;
  PlaneRef work[3];
  if (out_is_work) {
    for (int i = 0; i < out.plane_count(); ++i) work[i] = plane_ref(out, i);
  } else {
    HISTEQ_TRY(stage(out, work));
  }
  const bool direct = !gpu && out_is_work && in.memory == Memory::host && !same_planes(in, out);
  HISTEQ_TRY(copy_in(in, out_is_work && same_planes(in, out), direct, work, st));
  if (!gpu && in.memory == Memory::device) HISTEQ_CUDA_TRY(cudaStreamSynchronize(st));  // the CPU reads it next
  const PlaneRef source = plane_ref(in, 0);
  HISTEQ_TRY(run_operations(in, work, direct ? &source : nullptr, st));
  if (!out_is_work)
    for (int i = 0; i < out.plane_count(); ++i) HISTEQ_TRY(copy_to(work[i], plane_ref(out, i), st));
  if (gpu) {  // the caller's later work on its stream after this frame's
    HISTEQ_CUDA_TRY(cudaEventRecord(done.get(), st));
    HISTEQ_CUDA_TRY(cudaStreamWaitEvent(caller, done.get(), 0));
  }
  // Host memory is complete on return; so is a CPU equalizer's staging, reused by the next frame.
  if ((gpu && any_host) || (!gpu && out.memory == Memory::device)) HISTEQ_CUDA_TRY(cudaStreamSynchronize(st));
  return histeq::Status::ok();
}

Result<Equalizer> Equalizer::create(const Settings& settings) {
  try {
    Equalizer e;
    e.impl_ = std::make_unique<Impl>();
    Impl& m = *e.impl_;
    Status s = to_public(m.choose(settings));
    if (s.ok()) s = to_public(m.apply_settings(settings));
    if (s.ok() && m.backend == Backend::gpu) {
      const DeviceScope scope(m.device);
      auto st = cuda::Stream::create(true);
      auto a = cuda::Event::create(false);
      auto b = cuda::Event::create(false);
      if (!st || !a || !b) return to_public(!st ? st.status() : !a ? a.status() : b.status());
      m.stream = std::move(st.value());
      m.caller_ready = std::move(a.value());
      m.done = std::move(b.value());
    }
    if (!s) return s;
    return Result<Equalizer>(std::move(e));
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::internal, "out of host memory");
  } catch (const std::exception& x) {
    return Status(ErrorCode::internal, std::string("unexpected error: ") + x.what());
  }
}

Status Equalizer::process(const Image& in, const Image& out, Stream stream) {
  return guarded([&] {
    Impl& m = *impl_;
    const int dev = m.backend == Backend::gpu ? m.device : -1;
    if (Status s = check_image(in, "in", in.memory == Memory::device ? dev : -1); !s) return s;
    if (in.format != out.format || in.width != out.width || in.height != out.height)
      return Status(ErrorCode::invalid_argument, "in and out differ in format or size");
    if (Status s = check_image(out, "out", out.memory == Memory::device ? dev : -1); !s) return s;
    return to_public(m.process(in, out, reinterpret_cast<cudaStream_t>(stream)));
  });
}

void Equalizer::reset() { impl_->runner.reset(); }

Status Equalizer::set(const std::string& name, const std::string& value) {
  Settings s = impl_->settings;
  if (Status st = s.set(name, value); !st) return st;
  return set(s);
}

Status Equalizer::set(const std::string& name, double value) {
  Settings s = impl_->settings;
  if (Status st = s.set(name, value); !st) return st;
  return set(s);
}

Status Equalizer::set(const std::string& name, int columns, int rows) {
  Settings s = impl_->settings;
  if (Status st = s.set(name, columns, rows); !st) return st;
  return set(s);
}

Status Equalizer::set(const Settings& settings) {
  return guarded([&] {
    Impl& m = *impl_;
    if (backend_of(settings.impl_->own) != backend_of(m.settings.impl_->own) || device_of(settings.impl_->own) != device_of(m.settings.impl_->own)) {
      auto fresh = create(settings);  // another backend or device: another equalizer, its state new
      if (!fresh) return fresh.status();
      *this = std::move(fresh.value());
      return Status();
    }
    return to_public(m.apply_settings(settings));
  });
}

const Settings& Equalizer::settings() const { return impl_->settings; }
EqualizerInfo Equalizer::info() const { return impl_->info; }

Equalizer::Equalizer() = default;
Equalizer::Equalizer(Equalizer&&) noexcept = default;
Equalizer& Equalizer::operator=(Equalizer&&) noexcept = default;
Equalizer::~Equalizer() = default;

Status equalize(const Image& in, const Image& out, const Settings& settings, Stream stream) {
  auto e = Equalizer::create(settings);
  if (!e) return e.status();
  return e.value().process(in, out, stream);
}

}  // namespace histeq::api
