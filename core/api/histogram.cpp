// The kernel laboratory of the public API: the registry's kernels and one histogram by any of them.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/api/api_impl.h"
#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/histogram/histogram.h"
#include "core/pipeline/equalizer.h"

namespace histeq::api {
namespace {

std::vector<int> bin_counts(hist::BinMask m) {
  std::vector<int> v;
  for (int b = 1; b <= 1 << 16; b <<= 1)
    if (m & hist::bins_bit(b)) v.push_back(b);
  return v;
}

Status check_plane(const Plane& p) {
  auto bad = [](const std::string& m) { return Status(ErrorCode::invalid_argument, "plane: " + m); };
  if (p.data == nullptr) return bad("null data");
  if (p.width <= 0 || p.height <= 0) return bad("size " + std::to_string(p.width) + "x" + std::to_string(p.height) + " is not positive");
  if (p.bytes_per_sample != 1 && p.bytes_per_sample != 2) return bad("bytes_per_sample must be 1 or 2");
  if (p.bit_depth < 1 || p.bit_depth > 8 * p.bytes_per_sample)
    return bad("bit_depth " + std::to_string(p.bit_depth) + " does not fit " + std::to_string(p.bytes_per_sample) + "-byte samples");
  // In size_t: width * bytes in int wrapped (2^30 samples of 2 bytes read as a 0-byte row).
  const size_t row = static_cast<size_t>(p.width) * static_cast<size_t>(p.bytes_per_sample);
  const size_t pitch = p.pitch != 0 ? p.pitch : row;
  if (pitch < row)
    return bad("pitch " + std::to_string(p.pitch) + " bytes is less than a row (" + std::to_string(p.width) + " samples of " +
               std::to_string(p.bytes_per_sample) + " bytes = " + std::to_string(row) + " bytes): rows would overlap");
  if (static_cast<uint64_t>(p.width) * static_cast<uint64_t>(p.height) >= (uint64_t{1} << 32))
    return bad(std::to_string(p.width) + "x" + std::to_string(p.height) + " is 2^32 samples or more, beyond the 32-bit counters");
  if (pitch > (SIZE_MAX - row) / static_cast<size_t>(p.height))
    return bad("pitch " + std::to_string(pitch) + " bytes x " + std::to_string(p.height) + " rows is beyond the address space");
  if (pitch % static_cast<size_t>(p.bytes_per_sample) != 0) return bad("pitch " + std::to_string(pitch) + " is not a whole number of samples");
  if (p.memory != Memory::host && p.memory != Memory::device) return bad("unknown memory kind");
  return Status();
}

// The kernel's histogram of `in` into host `counts`; device planes through a device buffer on
// `stream`, waited for.
histeq::Status run_histogram(hist::Kernel& k, const PlaneRef& in, std::vector<uint32_t>& counts, cudaStream_t stream) {
  if (in.memory != MemoryKind::device)
    return hist::compute(k, in, {counts.data(), static_cast<int>(counts.size()), MemoryKind::host}, stream);
  auto d = cuda::DeviceArray<uint32_t>::allocate(counts.size());
  if (!d) return d.status();
  HISTEQ_TRY(hist::compute(k, in, {d->data(), static_cast<int>(counts.size()), MemoryKind::device}, stream));
  HISTEQ_CUDA_TRY(cudaMemcpyAsync(counts.data(), d->data(), d->bytes(), cudaMemcpyDeviceToHost, stream));
  HISTEQ_CUDA_TRY(cudaStreamSynchronize(stream));
  return histeq::Status::ok();
}

}  // namespace

const char* version() noexcept { return HISTEQ_VERSION_STRING; }

bool gpu_available() noexcept { return cuda::have_device(); }

std::vector<KernelInfo> kernels() {
  std::vector<KernelInfo> v;
  for (const auto& e : hist::registry()) {
    const hist::KernelInfo& k = e.info;
    KernelInfo i;
    i.name = k.name;
    i.description = k.description;
    i.paper = k.paper;
    i.section = k.section;
    i.backend = k.backend == Backend::gpu ? "gpu" : "cpu";
    i.bins_8bit = bin_counts(k.bins_8bit);
    i.bins_16bit = bin_counts(k.bins_16bit);
    i.data_independent = k.data_independent;
    i.is_default = k.name == pipeline::default_kernel(k.backend);
    i.alias_of = k.alias_of;
    v.push_back(std::move(i));
  }
  return v;
}

Result<std::vector<uint32_t>> histogram(const Plane& plane, const std::string& kernel, int bins, Stream stream) {
  try {
    if (Status s = check_plane(plane); !s) return s;
    const bool device = plane.memory == Memory::device;
    const std::string name = kernel.empty() ? pipeline::default_kernel(device ? Backend::gpu : Backend::cpu) : kernel;
    const int n = bins == 0 ? 1 << plane.bit_depth : bins;
    if (hist::bins_log2(n) < 0 || n > (1 << plane.bit_depth))
      return Status(ErrorCode::invalid_argument, "bins " + std::to_string(bins) + " is not a power of two up to 2^bit_depth");
    const DeviceScope scope(device ? plane.device : -1);
    auto k = hist::create_kernel(name);
    if (!k) return to_public(k.status());
    PlaneRef in;
    in.data = plane.data;
    in.width = plane.width;
    in.height = plane.height;
    in.bytes_per_sample = plane.bytes_per_sample;
    in.pitch = plane.pitch != 0 ? plane.pitch : in.row_bytes();
    in.bit_depth = plane.bit_depth;
    in.memory = device ? MemoryKind::device : MemoryKind::host;
    std::vector<uint32_t> counts(static_cast<size_t>(n));
    if (Status s = to_public(run_histogram(**k, in, counts, reinterpret_cast<cudaStream_t>(stream))); !s) return s;
    return counts;
  } catch (const std::bad_alloc&) {
    return Status(ErrorCode::internal, "out of host memory");
  }
}

}  // namespace histeq::api
