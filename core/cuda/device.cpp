#include "core/cuda/device.h"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <map>
#include <mutex>

#include "core/cuda/check.h"

namespace histeq::cuda {

namespace {

// The primary context is shared with FFmpeg's CUDA device (NVDEC, hw_decode.h), which retains it
// only when its flags are CU_CTX_SCHED_BLOCKING_SYNC ("Primary context already active with
// incompatible flags" otherwise). The flags are set on every device's primary context at the first
// question about devices, through the driver's cuDevicePrimaryCtxSetFlags (it makes no context, and
// since CUDA 11 may change an active one's); cudaSetDeviceFlags would reach only the current device,
// and a pipeline on device 1 then found its context made with the default flags and decoded in
// software. Without the driver's entry point, the current device's flags as before.
void set_context_flags_once() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      (void)cudaGetLastError();
      return;
    }
    auto entry = [](const char* name, unsigned version) -> void* {
      void* fn = nullptr;
      cudaDriverEntryPointQueryResult found{};
      const bool ok = cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) == cudaSuccess &&
                      found == cudaDriverEntryPointSuccess;
      return ok ? fn : nullptr;
    };
    const auto get_device = reinterpret_cast<PFN_cuDeviceGet_v2000>(entry("cuDeviceGet", 2000));
    const auto set_flags = reinterpret_cast<PFN_cuDevicePrimaryCtxSetFlags_v11000>(entry("cuDevicePrimaryCtxSetFlags", 11000));
    if (get_device != nullptr && set_flags != nullptr) {  // the runtime has run cuInit (cudaGetDeviceCount)
      for (int d = 0; d < n; ++d) {
        CUdevice dev{};
        if (get_device(&dev, d) == CUDA_SUCCESS) (void)set_flags(dev, CU_CTX_SCHED_BLOCKING_SYNC);
      }
      return;
    }
    (void)cudaGetLastError();
    if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) (void)cudaGetLastError();
  });
}

}  // namespace

int device_count() noexcept {
  set_context_flags_once();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

bool have_device() noexcept { return device_count() > 0; }

Status init_context() {
  if (!have_device()) return Status::ok();
  HISTEQ_CUDA_TRY(cudaFree(nullptr));
  return Status::ok();
}

Status use_device(int ordinal) {
  const int n = device_count();
  if (n == 0) return HISTEQ_ERROR(Code::no_device, "--device " + std::to_string(ordinal) + ": no CUDA device is available");
  if (ordinal < 0 || ordinal >= n)
    return HISTEQ_ERROR(Code::invalid_argument, "--device " + std::to_string(ordinal) + ": this machine has " + std::to_string(n) +
                                                    (n == 1 ? " CUDA device (0)" : " CUDA devices (0.." + std::to_string(n - 1) + ")"));
  HISTEQ_CUDA_TRY(cudaSetDevice(ordinal));
  return Status::ok();
}

int current_device() noexcept {
  if (!have_device()) return -1;
  int d = -1;
  if (cudaGetDevice(&d) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return d;
}

DeviceScope::DeviceScope(int device) noexcept {
  if (device < 0) return;
  previous_ = current_device();
  if (previous_ == device || previous_ < 0) return;
  if (cudaSetDevice(device) == cudaSuccess) changed_ = true;
  else (void)cudaGetLastError();
}

DeviceScope::~DeviceScope() {
  if (changed_) (void)cudaSetDevice(previous_);
}

std::string device_label(int ordinal) {
  if (ordinal < 0) ordinal = current_device();
  auto info = device_info(ordinal);
  const std::string name = info ? info->name : "CUDA device " + std::to_string(ordinal);
  return device_count() > 1 ? "GPU " + std::to_string(ordinal) + ", " + name : name;
}

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

Result<DeviceInfo> device_info(int ordinal) {
  if (!have_device()) return HISTEQ_ERROR(Code::no_device, "no CUDA device is available");
  if (ordinal < 0) HISTEQ_CUDA_TRY(cudaGetDevice(&ordinal));

  static std::mutex mu;
  static std::map<int, DeviceInfo> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(ordinal); it != cache.end()) return it->second;

  cudaDeviceProp p{};
  HISTEQ_CUDA_TRY(cudaGetDeviceProperties(&p, ordinal));
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.shared_mem_per_sm = p.sharedMemPerMultiprocessor;
  d.shared_mem_per_block_optin = p.sharedMemPerBlockOptin;
  d.reserved_shared_mem_per_block = p.reservedSharedMemPerBlock;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  d.global_mem_bytes = p.totalGlobalMem;
  d.memory_bus_bits = p.memoryBusWidth;
  int clock = 0;
  if (cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess) d.memory_clock_khz = clock;
  (void)cudaGetLastError();
  HISTEQ_CUDA_TRY(cudaDriverGetVersion(&d.driver_version));
  HISTEQ_CUDA_TRY(cudaRuntimeGetVersion(&d.runtime_version));
  cache[ordinal] = d;
  return d;
}

}  // namespace histeq::cuda
