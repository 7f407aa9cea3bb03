#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/histogram/histogram.h"

namespace histeq::hist {

#define HISTEQ_KERNEL(id) KernelEntry entry_##id();
#define HISTEQ_ALIAS(id, target, paper, section)
#include "core/histogram/kernels.def"
#undef HISTEQ_ALIAS
#undef HISTEQ_KERNEL

KernelEntry make_alias(const KernelEntry& target, std::string name, std::string paper, std::string section) {
  KernelEntry e = target;
  e.info.name = std::move(name);
  e.info.paper = std::move(paper);
  e.info.section = std::move(section);
  e.info.alias_of = target.info.name;
  return e;
}

const std::vector<KernelEntry>& registry() {
  static const std::vector<KernelEntry> table = {
#define HISTEQ_KERNEL(id) entry_##id(),
#define HISTEQ_ALIAS(id, target, paper, section) make_alias(entry_##target(), #id, paper, section),
#include "core/histogram/kernels.def"
#undef HISTEQ_ALIAS
#undef HISTEQ_KERNEL
  };
  return table;
}

const KernelEntry* find_kernel(std::string_view name) {
  for (const auto& e : registry())
    if (e.info.name == name) return &e;
  return nullptr;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.info.name);
  return names;
}

Result<std::unique_ptr<Kernel>> create_kernel(std::string_view name, KernelOptions opts) {
  const KernelEntry* e = find_kernel(name);
  if (e == nullptr) {
    std::string known;
    for (const auto& n : kernel_names()) known += (known.empty() ? "" : ", ") + n;
    return HISTEQ_ERROR(Code::not_found, "unknown kernel '" + std::string(name) + "' (known: " + known + ")");
  }
  if (e->info.backend == Backend::gpu && !cuda::have_device())
    return HISTEQ_ERROR(Code::no_device, "kernel '" + e->info.name + "' needs a CUDA device and none is available");
  return e->make(e->info, opts);
}

int bins_log2(int bins) noexcept {
  if (bins <= 0 || (bins & (bins - 1)) != 0) return -1;
  int k = 0;
  while ((1 << k) < bins) ++k;
  return k;
}

bool KernelInfo::supports(int bytes_per_sample, int bins) const noexcept {
  if (bins_log2(bins) < 0 || bins > 1024) return false;
  const BinMask mask = bytes_per_sample == 1 ? bins_8bit : bytes_per_sample == 2 ? bins_16bit : 0;
  return (mask & bins_bit(bins)) != 0;
}

std::string bins_to_string(BinMask mask) {
  if (mask == 0) return "-";
  const int lo = __builtin_ctz(mask), hi = 31 - __builtin_clz(mask);
  if (hi - lo >= 2 && mask == (((2u << hi) - 1u) & ~((1u << lo) - 1u)))  // a run of 3 or more: "2..256"
    return std::to_string(1u << lo) + ".." + std::to_string(1u << hi);
  std::string s;
  for (int k = 0; k < 32; ++k)
    if (mask & (1u << k)) s += (s.empty() ? "" : ",") + std::to_string(1u << k);
  return s;
}

namespace {

// The samples and the bins: a width the kernels read, a depth the samples hold, a bin count that
// the depth fills and the kernel supports.
Status check_samples_and_bins(const KernelInfo& info, const PlaneRef& in, int bins) {
  if (in.bytes_per_sample != 1 && in.bytes_per_sample != 2)
    return HISTEQ_ERROR(Code::invalid_argument, "samples must be 8 or 16 bits wide");
  if (in.width < 0 || in.height < 0) return HISTEQ_ERROR(Code::invalid_argument, "negative plane size");
  // 8-bit planes are full 8-bit: the kernels skip the range check on byte samples, so a smaller
  // depth with larger values in it would index past the histogram.
  if (in.bytes_per_sample == 1 && in.bit_depth != 8)
    return HISTEQ_ERROR(Code::invalid_argument, "8-bit planes must have bit depth 8 (use fewer bins for coarser data)");
  if (in.bit_depth < 1 || in.bit_depth > 8 * in.bytes_per_sample)
    return HISTEQ_ERROR(Code::invalid_argument, "bit depth " + std::to_string(in.bit_depth) + " does not fit " +
                                                    std::to_string(8 * in.bytes_per_sample) + "-bit samples");
  const int k = bins_log2(bins);
  if (k < 1 || bins > 1024) return HISTEQ_ERROR(Code::invalid_argument, "bin count must be a power of two in 2..1024");
  if (k > in.bit_depth)
    return HISTEQ_ERROR(Code::invalid_argument, std::to_string(bins) + " bins exceed the " +
                                                    std::to_string(in.bit_depth) + "-bit value range");
  if (!info.supports(in.bytes_per_sample, bins))
    return HISTEQ_ERROR(Code::unsupported, "kernel '" + info.name + "' does not support " + std::to_string(bins) +
                                               " bins on " + std::to_string(8 * in.bytes_per_sample) + "-bit planes");
  return Status::ok();
}

// The pointers and the plane's layout: what a kernel reads is there, its rows do not overlap, and
// its sample count fits the 32-bit counters.
Status check_layout(const PlaneRef& in, const HistogramView& out) {
  if (out.counts == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null histogram");
  if (in.samples() > 0 && in.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane data");
  if (in.height > 1 && in.pitch < in.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  if (in.pitch % in.bytes_per_sample != 0)
    return HISTEQ_ERROR(Code::invalid_argument, "pitch is not a whole number of samples");
  if (in.samples() >= (uint64_t{1} << 32))
    return HISTEQ_ERROR(Code::unsupported, "planes of 2^32 samples or more overflow the 32-bit counters");
  return Status::ok();
}

// Where the data lives: a GPU kernel reads and writes device memory, a CPU kernel host memory (an
// empty plane has nothing to read, wherever its pointer points).
Status check_memory(const KernelInfo& info, const PlaneRef& in, const HistogramView& out) {
  const bool gpu = info.backend == Backend::gpu;
  if (gpu && in.samples() > 0 && !in.on_device())
    return HISTEQ_ERROR(Code::invalid_argument, "GPU kernel '" + info.name + "' needs a device plane");
  if (!gpu && in.on_device())
    return HISTEQ_ERROR(Code::invalid_argument, "CPU kernel '" + info.name + "' needs a host plane");
  if (gpu != (out.memory == MemoryKind::device))
    return HISTEQ_ERROR(Code::invalid_argument, std::string("the histogram must be in ") +
                                                    (gpu ? "device" : "host") + " memory for kernel '" + info.name + "'");
  return Status::ok();
}

}  // namespace

// The checks in this order: the first failure is the one reported.
Status validate(const KernelInfo& info, const PlaneRef& in, const HistogramView& out) {
  HISTEQ_TRY(check_samples_and_bins(info, in, out.bins));
  HISTEQ_TRY(check_layout(in, out));
  return check_memory(info, in, out);
}

Status validate(const KernelInfo& info, const PlaneRef& in, const WeightsView& weights, const HistogramView& out) {
  HISTEQ_TRY(validate(info, in, out));
  if (!info.weighted)
    return HISTEQ_ERROR(Code::unsupported, "kernel '" + info.name + "' does not compute weighted histograms");
  if (out.weight_sums == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null weight sums for a weighted histogram");
  if (weights.width != in.width || weights.height != in.height)
    return HISTEQ_ERROR(Code::invalid_argument, "weights are " + std::to_string(weights.width) + "x" +
                                                    std::to_string(weights.height) + ", the plane " + std::to_string(in.width) +
                                                    "x" + std::to_string(in.height));
  if (in.samples() == 0) return Status::ok();
  if (weights.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null weights");
  if (reinterpret_cast<uintptr_t>(weights.data) % alignof(float) != 0)
    return HISTEQ_ERROR(Code::invalid_argument, "weights are not aligned to a float");
  if (weights.pitch % sizeof(float) != 0)
    return HISTEQ_ERROR(Code::invalid_argument, "weight pitch is not a whole number of floats");
  if (weights.height > 1 && weights.pitch < weights.row_bytes())
    return HISTEQ_ERROR(Code::invalid_argument, "weight pitch smaller than a row");
  const bool gpu = info.backend == Backend::gpu;
  if (gpu != (weights.memory == MemoryKind::device))
    return HISTEQ_ERROR(Code::invalid_argument, std::string("the weights must be in ") + (gpu ? "device" : "host") +
                                                    " memory for kernel '" + info.name + "'");
  return Status::ok();
}

Status Kernel::run_weighted(const PlaneRef&, const WeightsView&, const HistogramView&, cudaStream_t) {
  return HISTEQ_ERROR(Code::unsupported, "kernel '" + info_.name + "' does not compute weighted histograms");
}

Status Kernel::run_tiles(const PlaneRef&, const TileGrid&, const HistogramView&, cudaStream_t) {
  return HISTEQ_ERROR(Code::unsupported, "kernel '" + info_.name + "' does not compute tiled histograms");
}

PlaneRef tile_plane(const PlaneRef& in, const TileGrid& grid, int col, int row) {
  PlaneRef t = in;
  const int x0 = tile_start(col, grid.cols, in.width), x1 = tile_start(col + 1, grid.cols, in.width);
  const int y0 = tile_start(row, grid.rows, in.height), y1 = tile_start(row + 1, grid.rows, in.height);
  t.data = static_cast<const unsigned char*>(in.data) + static_cast<size_t>(y0) * in.pitch +
           static_cast<size_t>(x0) * in.bytes_per_sample;
  t.width = x1 - x0;
  t.height = y1 - y0;
  return t;
}

Status validate_tiles(const KernelInfo& info, const PlaneRef& in, const TileGrid& grid, const HistogramView& out) {
  HISTEQ_TRY(validate(info, in, out));
  if (!info.tiles) return HISTEQ_ERROR(Code::unsupported, "kernel '" + info.name + "' does not compute tiled histograms");
  if (grid.cols < 1 || grid.rows < 1 || grid.cols > kMaxTiles || grid.rows > kMaxTiles)
    return HISTEQ_ERROR(Code::invalid_argument, "tiles must be 1.." + std::to_string(kMaxTiles) + " per axis, not " +
                                                    std::to_string(grid.cols) + "x" + std::to_string(grid.rows));
  if (in.samples() > 0 && (grid.cols > in.width || grid.rows > in.height))
    return HISTEQ_ERROR(Code::invalid_argument, std::to_string(grid.cols) + "x" + std::to_string(grid.rows) + " tiles on a " +
                                                    std::to_string(in.width) + "x" + std::to_string(in.height) +
                                                    " plane leave tiles without samples");
  return Status::ok();
}

namespace {

// An empty plane: every output zero, without calling the kernel.
Status zero_outputs(const HistogramView& out, bool weighted, cudaStream_t stream) {
  if (out.memory == MemoryKind::device) {
    HISTEQ_CUDA_TRY(cudaMemsetAsync(out.counts, 0, sizeof(uint32_t) * out.bins, stream));
    if (weighted) HISTEQ_CUDA_TRY(cudaMemsetAsync(out.weight_sums, 0, sizeof(float) * out.bins, stream));
  } else {
    std::fill(out.counts, out.counts + out.bins, 0u);
    if (weighted) std::fill(out.weight_sums, out.weight_sums + out.bins, 0.0f);
  }
  return Status::ok();
}

}  // namespace

Status compute(Kernel& kernel, const PlaneRef& in, const HistogramView& out, cudaStream_t stream) {
  HISTEQ_TRY(validate(kernel.info(), in, out));
  if (in.samples() == 0) return zero_outputs(out, false, stream);
  return kernel.run(in, out, stream);
}

Status compute_tiles(Kernel& kernel, const PlaneRef& in, const TileGrid& grid, const HistogramView& out,
                     cudaStream_t stream) {
  HISTEQ_TRY(validate_tiles(kernel.info(), in, grid, out));
  if (in.samples() == 0) {
    const HistogramView all{out.counts, out.bins * grid.count(), out.memory, nullptr};
    return zero_outputs(all, false, stream);
  }
  return kernel.run_tiles(in, grid, out, stream);
}

Status compute(Kernel& kernel, const PlaneRef& in, const WeightsView& weights, const HistogramView& out,
               cudaStream_t stream) {
  HISTEQ_TRY(validate(kernel.info(), in, weights, out));
  if (in.samples() == 0) return zero_outputs(out, true, stream);
  return kernel.run_weighted(in, weights, out, stream);
}

}  // namespace histeq::hist
