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

// Properties of `ordinal` (or the current device when -1). Cached after the first call.
Result<DeviceInfo> device_info(int ordinal = -1);

// "13.0" from 13000.
std::string version_string(int cuda_version);

}  // namespace histeq::cuda
