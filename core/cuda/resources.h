// RAII wrappers for CUDA streams, events and memory. All are movable, not copyable, and release
// what they own in their destructor (errors at release are ignored: there is nobody to tell).
//
// Creation goes through static create() functions returning Result<>, so that a failure becomes a
// Status and never an exception or an abort.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "core/cuda/status.h"

namespace histeq::cuda {

class Stream {
 public:
  Stream() = default;
  static Result<Stream> create(bool non_blocking = true);
  ~Stream() { reset(); }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) { reset(); s_ = std::exchange(o.s_, nullptr); }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return s_; }
  Status synchronize() const;
  void reset() noexcept;

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() = default;
  // timing=false creates a lighter event for synchronization only.
  static Result<Event> create(bool timing = true);
  ~Event() { reset(); }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) { reset(); e_ = std::exchange(o.e_, nullptr); }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return e_; }
  Status record(cudaStream_t stream) const;
  Status synchronize() const;
  // True once all work captured by the last record() has completed; does not block.
  bool ready() const noexcept;
  void reset() noexcept;

 private:
  cudaEvent_t e_ = nullptr;
};

// Milliseconds between two completed events.
Result<float> elapsed_ms(const Event& start, const Event& stop);

enum class MemoryKind { host, pinned, device };
const char* memory_kind_name(MemoryKind k) noexcept;

// An owned, untyped allocation of `bytes` in host (pageable), pinned host or device memory.
// Device allocations are at least 256-byte aligned (cudaMalloc); host ones 64-byte aligned.
class Buffer {
 public:
  Buffer() = default;
  static Result<Buffer> allocate(MemoryKind kind, size_t bytes);
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), kind_(o.kind_) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      kind_ = o.kind_;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const noexcept { return p_; }
  size_t bytes() const noexcept { return bytes_; }
  MemoryKind kind() const noexcept { return kind_; }
  bool empty() const noexcept { return p_ == nullptr; }
  void reset() noexcept;

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
  MemoryKind kind_ = MemoryKind::host;
};

// A typed device array, for small scratch arrays such as histograms.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  static Result<DeviceArray> allocate(size_t count) {
    auto b = Buffer::allocate(MemoryKind::device, count * sizeof(T));
    if (!b) return b.status();
    DeviceArray a;
    a.buf_ = std::move(b.value());
    a.count_ = count;
    return Result<DeviceArray>(std::move(a));
  }
  T* data() const noexcept { return static_cast<T*>(buf_.data()); }
  size_t size() const noexcept { return count_; }
  size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  Buffer buf_;
  size_t count_ = 0;
};

// Times GPU work on one stream with a pair of events: start(); ...work...; stop(); then
// elapsed_ms() blocks until the stop event completes.
class GpuTimer {
 public:
  static Result<GpuTimer> create();
  Status start(cudaStream_t s) { return start_.record(s); }
  Status stop(cudaStream_t s) { return stop_.record(s); }
  bool ready() const noexcept { return stop_.ready(); }
  Result<float> elapsed_ms() const;

 private:
  Event start_, stop_;
};

}  // namespace histeq::cuda
