#include <cstdio>
#include <string>

#include "app/commands/commands.h"
#include "core/cuda/device.h"
#include "core/histogram/histogram.h"

namespace histeq::app {

int run_info() {
  using namespace histeq::hist;
  const bool gpu = cuda::have_device();
  if (gpu) {
    auto d = cuda::device_info();
    if (!d) return fail(d.status().to_string());
    std::printf("GPU              %s (compute capability %d.%d)\n", d->name.c_str(), d->cc_major, d->cc_minor);
    std::printf("SMs              %d\n", d->sm_count);
    std::printf("shared mem / SM  %zu KiB (%zu KiB per block opt-in)\n", d->shared_mem_per_sm / 1024,
                d->shared_mem_per_block_optin / 1024);
    std::printf("L2               %zu MiB\n", d->l2_bytes >> 20);
    std::printf("memory           %.1f GiB\n", d->global_mem_bytes / double(1ull << 30));
    std::printf("CUDA driver      %s\n", cuda::version_string(d->driver_version).c_str());
    std::printf("CUDA runtime     %s\n", cuda::version_string(d->runtime_version).c_str());
  } else {
    int rt = 0;
    (void)cudaRuntimeGetVersion(&rt);
    std::printf("GPU              none: no usable CUDA device, so only the CPU kernels can run\n");
    std::printf("CUDA runtime     %s\n", cuda::version_string(rt).c_str());
  }
  std::printf("\n%-18s %-4s %-9s %-10s %-5s %-8s %s\n", "kernel", "on", "8-bit", "16-bit", "indep", "weights",
              "description / source");
  for (const auto& e : registry()) {
    const KernelInfo& k = e.info;
    if (k.backend == Backend::gpu && !gpu) continue;
    const std::string desc = k.alias_of.empty() ? k.description : "alias of " + k.alias_of + ": " + k.description;
    std::printf("%-18s %-4s %-9s %-10s %-5s %-8s %s\n", k.name.c_str(), k.backend == Backend::gpu ? "gpu" : "cpu",
                bins_to_string(k.bins_8bit).c_str(), bins_to_string(k.bins_16bit).c_str(),
                k.data_independent ? "yes" : "no", k.weighted ? "yes" : "-", desc.c_str());
    std::printf("%-18s %-4s %-9s %-10s %-5s %-8s   %s, %s\n", "", "", "", "", "", "", k.paper.c_str(), k.section.c_str());
  }
  if (!gpu) std::printf("\n(GPU kernels are not listed: this machine has no CUDA device.)\n");
  return 0;
}

}  // namespace histeq::app
