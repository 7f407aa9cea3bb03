// The histogram API: the luma histogram of a pitched plane, by a kernel chosen by name.
//
//   auto k = hist::create_kernel("method2");            // Result<std::unique_ptr<Kernel>>
//   HISTEQ_TRY(hist::compute(**k, plane, {d_counts, 256, MemoryKind::device}, stream));
//
// Binning. A histogram has 2^k bins (1 <= k <= bit_depth). A sample v of a plane with bit depth d
// falls in bin v >> (d - k). Samples >= 2^d (possible only in 16-bit planes) are out of range and
// are not counted, as in cub::DeviceHistogram::HistogramEven. So 8-bit planes use 256 bins (or
// fewer), 16-bit planes holding 10-bit data up to 1024.
//
// Memory. GPU kernels read a device plane and write a device histogram, asynchronously on `stream`;
// CPU kernels read a host (pageable or pinned) plane and write a host histogram, synchronously.
// Every one of the out.bins counters is overwritten. Counters are 32-bit: planes of 2^32 samples or
// more are rejected.
//
// Weighted histograms (kernels whose KernelInfo::weighted is set; Xu et al.):
//
//   HISTEQ_TRY(hist::compute(**k, plane, weights, {d_counts, 1024, MemoryKind::device, d_sums}, stream));
//
// `weights` is a float plane of the sample plane's width and height, with its own pitch (bytes, a
// whole number of floats), in the same kind of memory as the samples. Each counted sample adds 1 to
// its bin's counter and its weight to the bin's weight sum; out.weight_sums (out.bins floats, in the
// histogram's memory) is overwritten, the counters exactly as without weights. Out-of-range samples
// add neither. Accuracy: every kernel keeps each bin's sum within 1e-5 of the exact sum of |w| over
// the bin (relative), whatever the plane size: float chains stay short and long sums are double.
// Weights must be finite. The unweighted compute() never touches out.weight_sums.
//
// Tiled histograms (kernels whose KernelInfo::tiles is set; CLAHE, core/equalize):
//
//   HISTEQ_TRY(hist::compute_tiles(**k, plane, {8, 8}, {d_counts, 256, MemoryKind::device}, stream));
//
// The plane is cut into grid.cols x grid.rows tiles; tile (c, r) is the pitched sub-plane
// tile_plane(plane, grid, c, r): columns [c * W / cols, (c + 1) * W / cols) and rows
// [r * H / rows, (r + 1) * H / rows) (integer division), so tiles differ by at most one sample in
// each direction and cover the plane exactly once. out.counts holds grid.count() histograms of
// out.bins counters, tile-major (tile t = r * cols + c at out.counts + t * out.bins); all of them
// are overwritten, in one launch on the GPU. Binning as above. A grid needs 1..kMaxTiles tiles per
// axis and at least one sample per tile (cols <= W, rows <= H).
//
// Threads. A Kernel instance keeps per-instance state (scratch buffers allocated once, a CPU thread
// pool) and must not be used by two threads at once; separate instances are independent.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuda/backend.h"
#include "core/cuda/hd.h"
#include "core/cuda/status.h"
#include "core/image/plane.h"

namespace histeq::hist {

// Bit k set = 2^k bins supported.
using BinMask = uint32_t;
constexpr BinMask bins_bit(int bins) { return static_cast<BinMask>(bins); }  // bins is a power of two
constexpr BinMask kAnyBins = 0x7FEu;                                        // 2 .. 1024

struct KernelInfo {
  std::string name;
  std::string description;  // one line
  std::string paper;        // source, e.g. "Nugteren et al. 2011"
  std::string section;      // e.g. "§7.3, mapping 3"
  BinMask bins_8bit = 0;    // bin counts supported for 8-bit planes (0: 8-bit unsupported)
  BinMask bins_16bit = 0;   // bin counts supported for 16-bit planes (0: 16-bit unsupported)
  bool data_independent = false;  // time does not depend on the picture's content
  Backend backend = Backend::gpu;
  // Empty for a real kernel. Otherwise the name of the kernel this entry is another name for (the
  // same algorithm under the name another source gives it): the entry reuses that kernel's factory
  // and traits. Benchmarks skip aliases unless asked for them by name.
  std::string alias_of = {};
  bool weighted = false;    // also computes weighted histograms (compute() with weights); set by name
  bool tiles = false;       // also computes tiled histograms (compute_tiles()), all tiles in one launch

  bool supports(int bytes_per_sample, int bins) const noexcept;
};

// The destination of a histogram: `bins` 32-bit counters, and for a weighted histogram `bins` float
// weight sums, both in `memory`.
struct HistogramView {
  uint32_t* counts = nullptr;
  int bins = 0;
  MemoryKind memory = MemoryKind::device;
  float* weight_sums = nullptr;  // written by the weighted compute() only (required there)
};

// The tiles of a tiled histogram (see the header comment).
constexpr int kMaxTiles = 32;  // per axis: a 4K frame in 32 x 32 tiles is 120 x 67 samples a tile
struct TileGrid {
  int cols = 1, rows = 1;
  int count() const noexcept { return cols * rows; }
  bool operator==(const TileGrid& o) const noexcept { return cols == o.cols && rows == o.rows; }
  bool operator!=(const TileGrid& o) const noexcept { return !(*this == o); }
};
// The first column (or row) of tile i of n over `size` samples: floor(i * size / n). Tile i spans
// [tile_start(i), tile_start(i + 1)).
HISTEQ_HD int tile_start(int i, int n, int size) {
  return static_cast<int>(static_cast<int64_t>(i) * size / n);
}
// Tile (col, row) of `in` as a pitched sub-plane (same memory, pitch and depth).
PlaneRef tile_plane(const PlaneRef& in, const TileGrid& grid, int col, int row);

// Launch overrides for tests and sweeps; zero means "the policy decides".
struct KernelOptions {
  int max_blocks = 0;  // cap on the grid size (GPU kernels) or thread count (CPU kernels)
  // Cap on the grid-stride steps (16-byte loads) a thread takes between two flushes of a kernel's
  // bounded counters. Honoured by the warp-histogram kernels (podlozhnyuk256, method1 with the tag
  // loop), whose 27-bit counts allow passes of 2^27 samples per warp that no test could reach:
  // tests shorten the passes to exercise the flush. Never needed for correctness.
  int max_pass_steps = 0;
  // The 16-byte units a lane is planned to count, which sets warps and blocks from the plane's (or
  // tile's) size: method2_tuned's plan (policy::Method2Tuned::kUnitsPerLane*; sweeps only).
  int units_per_lane = 0;
};

class Kernel {
 public:
  explicit Kernel(const KernelInfo& info, KernelOptions opts = {}) : info_(info), opts_(opts) {}
  virtual ~Kernel() = default;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  const KernelInfo& info() const noexcept { return info_; }
  const KernelOptions& options() const noexcept { return opts_; }

  // Called by compute() after validation, with a non-empty plane whose geometry the kernel supports.
  virtual Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) = 0;

  // The weighted form, called by compute() after validation (so only for kernels whose info says
  // `weighted`), with weights of the plane's size and out.weight_sums set. The default refuses.
  virtual Status run_weighted(const PlaneRef& in, const WeightsView& weights, const HistogramView& out,
                              cudaStream_t stream);

  // The tiled form, called by compute_tiles() after validation (so only for kernels whose info says
  // `tiles`), with out.counts holding grid.count() * out.bins counters. The default refuses.
  virtual Status run_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, cudaStream_t stream);

 private:
  const KernelInfo& info_;
  KernelOptions opts_;
};

using KernelFactory = std::function<Result<std::unique_ptr<Kernel>>(const KernelInfo& info, KernelOptions opts)>;

struct KernelEntry {
  KernelInfo info;
  KernelFactory make;
};

// The one way a kernel registers, with named fields. In the kernel's file:
//
//   KernelEntry entry_method2() {                  // entry_<id> for the HISTEQ_KERNEL(<id>) line
//     return KernelSpec("method2")
//         .description("thread-private 16-bit histograms, ...")
//         .source("Nugteren et al. 2011, ...", "§7.3 mapping 3")
//         .bins_8bit(bins_bit(256))
//         .bins_16bit(bins_bit(256) | bins_bit(1024))
//         .data_independent()
//         .on(Backend::gpu)
//         .make<Method2Kernel<...>>();             // K(info, opts, args...) for make<K>(args...)
//   }
//
// Fields left out keep KernelInfo's defaults (no bins, not data-independent, GPU, not weighted, no
// tiles).
class KernelSpec {
 public:
  explicit KernelSpec(std::string name) { info_.name = std::move(name); }
  KernelSpec& description(std::string d) { info_.description = std::move(d); return *this; }
  KernelSpec& source(std::string paper, std::string section) {
    info_.paper = std::move(paper);
    info_.section = std::move(section);
    return *this;
  }
  KernelSpec& bins_8bit(BinMask m) { info_.bins_8bit = m; return *this; }
  KernelSpec& bins_16bit(BinMask m) { info_.bins_16bit = m; return *this; }
  KernelSpec& data_independent(bool yes = true) { info_.data_independent = yes; return *this; }
  KernelSpec& weighted(bool yes = true) { info_.weighted = yes; return *this; }
  KernelSpec& tiles(bool yes = true) { info_.tiles = yes; return *this; }
  KernelSpec& on(Backend b) { info_.backend = b; return *this; }
  const KernelInfo& info() const noexcept { return info_; }

  // The entry, whose factory constructs K(info, opts, args...) (args are copied into the factory).
  template <class K, class... Args>
  KernelEntry make(Args... args) const {
    return {info_, [args...](const KernelInfo& i, KernelOptions o) -> Result<std::unique_ptr<Kernel>> {
              return std::unique_ptr<Kernel>(new K(i, o, args...));
            }};
  }

 private:
  KernelInfo info_;
};

// An alias entry: `target` under another name, citing the source that uses that name (`paper`,
// `section`). Same factory, bins and traits as `target`; alias_of = target's name.
KernelEntry make_alias(const KernelEntry& target, std::string name, std::string paper, std::string section);

// Every kernel, in registry order (kernels.def).
const std::vector<KernelEntry>& registry();
const KernelEntry* find_kernel(std::string_view name);
std::vector<std::string> kernel_names();

// Instantiates a kernel. Fails with not_found for an unknown name and no_device for a GPU kernel on
// a machine without a usable CUDA device.
Result<std::unique_ptr<Kernel>> create_kernel(std::string_view name, KernelOptions opts = {});

// Checks the request against the kernel's traits and the API's contract (memory kinds, bins, sizes).
Status validate(const KernelInfo& info, const PlaneRef& in, const HistogramView& out);
// The same for a weighted request: unsupported when the kernel is not `weighted`; invalid_argument
// for weights whose size, pitch, alignment or memory kind do not fit, or a null out.weight_sums.
Status validate(const KernelInfo& info, const PlaneRef& in, const WeightsView& weights, const HistogramView& out);

// The same for a tiled request: unsupported when the kernel has no tiled form; invalid_argument for
// a grid outside 1..kMaxTiles per axis or with more tiles than samples along an axis.
Status validate_tiles(const KernelInfo& info, const PlaneRef& in, const TileGrid& grid, const HistogramView& out);

// The entry point: validates, handles empty planes, then runs the kernel.
Status compute(Kernel& kernel, const PlaneRef& in, const HistogramView& out, cudaStream_t stream = nullptr);
// Weighted histogram: counts and per-bin weight sums (see the header comment).
Status compute(Kernel& kernel, const PlaneRef& in, const WeightsView& weights, const HistogramView& out,
               cudaStream_t stream = nullptr);

// Tiled histograms: grid.count() histograms of out.bins counters, one per tile (header comment).
Status compute_tiles(Kernel& kernel, const PlaneRef& in, const TileGrid& grid, const HistogramView& out,
                     cudaStream_t stream = nullptr);

// log2 of a power-of-two bin count, -1 otherwise.
int bins_log2(int bins) noexcept;

// "256" or "64,256" or "2..1024" for tables.
std::string bins_to_string(BinMask mask);

}  // namespace histeq::hist

namespace histeq::hist {

// The read-bandwidth ceiling: reads the plane's whole span (rows and padding) once as 16-byte words,
// 8 loads in flight per thread on a full-occupancy grid, and only folds them into *d_sink (device,
// one uint32). Returns the bytes it reads; bytes / time is the device's read bandwidth on this
// buffer, which no histogram kernel can beat. Asynchronous on `stream`.
Result<size_t> read_ceiling(const PlaneRef& in, uint32_t* d_sink, cudaStream_t stream = nullptr);

// Keeps the GPU busy for about `microseconds` on `stream`. Benchmarks enqueue this before a batch
// of timed launches so that host launch latency does not leak into event timings.
Status gpu_busy_wait(double microseconds, cudaStream_t stream = nullptr);

}  // namespace histeq::hist
