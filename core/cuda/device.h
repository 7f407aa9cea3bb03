// Device discovery. Queried once per device and cached; safe to call from any thread.
#pragma once

#include <string>

#include "core/cuda/status.h"

namespace histeq::cuda {

struct DeviceInfo {
  int ordinal = -1;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t shared_mem_per_sm = 0;         // bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor
  size_t shared_mem_per_block_optin = 0;  // bytes a block may get after cudaFuncSetAttribute
  size_t reserved_shared_mem_per_block = 0;  // bytes the runtime reserves per resident block
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  size_t l2_bytes = 0;
  size_t global_mem_bytes = 0;
  int memory_bus_bits = 0;
  int memory_clock_khz = 0;
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;  // e.g. 13000
};

// Number of usable CUDA devices; 0 (not an error) when there is no driver or no GPU. The first call
// also sets the device's context flags to blocking sync (before any context exists), which the
// NVDEC decoder needs to share the primary context with the CUDA runtime (video/hw_decode.h).
int device_count() noexcept;

// True when at least one usable device exists.
bool have_device() noexcept;

// Creates the CUDA context of the current device now (cudaFree(0)) when there is a device; a no-op
// without one. On a large GPU this takes a few hundred milliseconds, so commands that will use the
// GPU start it on a thread of its own while FFmpeg opens the input and the encoder. Thread-safe.
Status init_context();

// Makes `ordinal` the calling thread's current device (cudaSetDevice): what it allocates and
// launches from then on goes there. Errors: no_device without a GPU, invalid_argument for an
// ordinal this machine does not have ("--device 3: this machine has 2 CUDA devices (0..1)").
Status use_device(int ordinal);

// The calling thread's current device (cudaGetDevice); -1 without a device.
int current_device() noexcept;

// `device` made the calling thread's current device for a scope, the previous one put back at its
// end: code that works for a pipeline on device N (opening its decoder, its source, its pools) runs
// inside one, and a library never leaves the caller's current device changed. -1: no change. A
// device that cannot be made current leaves the current one (the calls inside then fail on their
// own, naming themselves). Not copyable; one thread.
class DeviceScope {
 public:
  explicit DeviceScope(int device) noexcept;
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

// Properties of `ordinal` (or the current device when -1). Cached after the first call.
Result<DeviceInfo> device_info(int ordinal = -1);

// How a device is named to the user: its name ("NVIDIA H100 80GB HBM3"), with its ordinal in front
// on a machine of several GPUs ("GPU 1, NVIDIA H100 80GB HBM3"). -1: the current device.
std::string device_label(int ordinal = -1);

// "13.0" from 13000.
std::string version_string(int cuda_version);

}  // namespace histeq::cuda
