// The operation list's glue (operation.h): the standard list made from operations.def's lines, and
// the kernel checks the equalizer makes before a frame. The operations themselves live in
// core/equalize/ops/<name>/.
#include <string>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/equalize/controls.h"
#include "core/equalize/operation.h"
#include "core/equalize/ops/equalize/fused_gpu.h"
#include "core/histogram/histogram.h"

namespace histeq::eq {

Operations standard_operations() {
  Operations ops;
  for (const OperationInfo& o : operation_list()) ops.push_back(o.make());
  return ops;
}

std::string tiles_kernel(const std::string& kernel, Mode mode, Backend backend) {
  if (mode != Mode::clahe) return kernel;
  const hist::KernelEntry* e = hist::find_kernel(kernel);
  if (e != nullptr && e->info.tiles) return kernel;
  return backend == Backend::gpu ? kFusedKernel : "cpu_parallel";
}

Status check_kernel(const std::string& name, Backend backend, const video::FrameFormat& format) {
  const hist::KernelEntry* e = hist::find_kernel(name);
  if (e == nullptr) return hist::create_kernel(name).status();  // the registry's "unknown kernel (known: ...)"
  const bool gpu = e->info.backend == Backend::gpu;
  if (gpu != (backend == Backend::gpu))
    return HISTEQ_ERROR(Code::invalid_argument, "kernel '" + name + "' runs on the " + (gpu ? "GPU" : "CPU") +
                                                    ", but this equalizer runs on the " + (gpu ? "CPU" : "GPU"));
  if (gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "kernel '" + name + "' needs a CUDA device and none is available");
  const int bins = format.bins();
  if (e->info.supports(format.bytes_per_sample(), bins)) return Status::ok();
  std::string ok;
  for (const auto& k : hist::registry())
    if (k.info.supports(format.bytes_per_sample(), bins)) ok += (ok.empty() ? "" : ", ") + k.info.name;
  return HISTEQ_ERROR(Code::unsupported, "kernel '" + e->info.name + "' has no " + std::to_string(bins) + "-bin mode for " +
                                             std::to_string(format.bit_depth) + "-bit video (kernels that do: " + ok + ")");
}

}  // namespace histeq::eq
