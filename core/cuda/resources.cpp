#include "core/cuda/resources.h"

#include <cstdlib>

#include "core/cuda/check.h"
#include "core/cuda/device.h"

namespace histeq::cuda {

// Whatever may create the CUDA context first sets its flags first (device.h: NVDEC shares it).
Result<Stream> Stream::create(bool non_blocking) {
  (void)device_count();
  Stream s;
  HISTEQ_CUDA_TRY(cudaStreamCreateWithFlags(&s.s_, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault));
  return s;
}

Status Stream::synchronize() const { return HISTEQ_CUDA_STATUS(cudaStreamSynchronize(s_)); }

void Stream::reset() noexcept {
  if (s_ != nullptr) (void)cudaStreamDestroy(std::exchange(s_, nullptr));
}

Result<Event> Event::create(bool timing) {
  (void)device_count();
  Event e;
  HISTEQ_CUDA_TRY(cudaEventCreateWithFlags(&e.e_, timing ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

Status Event::record(cudaStream_t stream) const { return HISTEQ_CUDA_STATUS(cudaEventRecord(e_, stream)); }
Status Event::synchronize() const { return HISTEQ_CUDA_STATUS(cudaEventSynchronize(e_)); }

bool Event::ready() const noexcept {
  const cudaError_t err = cudaEventQuery(e_);
  if (err == cudaErrorNotReady) (void)cudaGetLastError();
  return err == cudaSuccess;
}

void Event::reset() noexcept {
  if (e_ != nullptr) (void)cudaEventDestroy(std::exchange(e_, nullptr));
}

Result<float> elapsed_ms(const Event& start, const Event& stop) {
  HISTEQ_TRY(stop.synchronize());
  float ms = 0.f;
  HISTEQ_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

const char* memory_kind_name(MemoryKind k) noexcept {
  switch (k) {
    case MemoryKind::host: return "host";
    case MemoryKind::pinned: return "pinned";
    case MemoryKind::device: return "device";
  }
  return "?";
}

Result<Buffer> Buffer::allocate(MemoryKind kind, size_t bytes) {
  if (kind != MemoryKind::host) (void)device_count();
  Buffer b;
  b.kind_ = kind;
  b.bytes_ = bytes;
  if (bytes == 0) return b;
  switch (kind) {
    case MemoryKind::host: {
      const size_t rounded = (bytes + 63) / 64 * 64;
      b.p_ = std::aligned_alloc(64, rounded);
      if (b.p_ == nullptr) {
        b.bytes_ = 0;
        return HISTEQ_ERROR(Code::out_of_memory, "host allocation of " + std::to_string(bytes) + " bytes failed");
      }
      break;
    }
    case MemoryKind::pinned: HISTEQ_CUDA_TRY(cudaMallocHost(&b.p_, bytes)); break;
    case MemoryKind::device: HISTEQ_CUDA_TRY(cudaMalloc(&b.p_, bytes)); break;
  }
  return b;
}

void Buffer::reset() noexcept {
  if (p_ == nullptr) return;
  switch (kind_) {
    case MemoryKind::host: std::free(p_); break;
    case MemoryKind::pinned: (void)cudaFreeHost(p_); break;
    case MemoryKind::device: (void)cudaFree(p_); break;
  }
  p_ = nullptr;
  bytes_ = 0;
}

Result<GpuTimer> GpuTimer::create() {
  GpuTimer t;
  auto a = Event::create(true);
  if (!a) return a.status();
  auto b = Event::create(true);
  if (!b) return b.status();
  t.start_ = std::move(a.value());
  t.stop_ = std::move(b.value());
  return t;
}

Result<float> GpuTimer::elapsed_ms() const { return cuda::elapsed_ms(start_, stop_); }

}  // namespace histeq::cuda
