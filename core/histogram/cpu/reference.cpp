// cpu_reference: the plain loop, and the truth every other kernel is tested against. Deliberately
// simple: one pass over the rows, one increment per sample, no cleverness to get wrong. Weighted
// histograms accumulate each bin's weights in double and round once to float at the end, so the
// result is the exact sum to within float rounding. Tiled histograms: the same loop on each tile.
#include <algorithm>
#include <vector>

#include "core/histogram/histogram.h"

namespace histeq::hist {
namespace {

class CpuReference final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t) override {
    accumulate(in, nullptr, out);
    return Status::ok();
  }
  Status run_weighted(const PlaneRef& in, const WeightsView& weights, const HistogramView& out, cudaStream_t) override {
    accumulate(in, &weights, out);
    return Status::ok();
  }
  // Each tile as a plane of its own: the same loop, so the tiled truth is the plain truth per tile.
  Status run_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, cudaStream_t) override {
    for (int r = 0; r < grid.rows; ++r)
      for (int c = 0; c < grid.cols; ++c) {
        HistogramView one = out;
        one.counts = out.counts + static_cast<size_t>(r * grid.cols + c) * out.bins;
        accumulate(tile_plane(in, grid, c, r), nullptr, one);
      }
    return Status::ok();
  }

 private:
  void accumulate(const PlaneRef& in, const WeightsView* weights, const HistogramView& out) {
    std::fill(out.counts, out.counts + out.bins, 0u);
    sums_.assign(weights ? out.bins : 0, 0.0);
    const uint32_t shift = static_cast<uint32_t>(in.bit_depth - bins_log2(out.bins));
    const uint32_t limit = 1u << in.bit_depth;
    for (int y = 0; y < in.height; ++y) {
      const unsigned char* row = static_cast<const unsigned char*>(in.data) + static_cast<size_t>(y) * in.pitch;
      const float* wrow = weights ? weights->row(y) : nullptr;
      for (int x = 0; x < in.width; ++x) {
        const uint32_t v = in.bytes_per_sample == 1 ? row[x] : reinterpret_cast<const uint16_t*>(row)[x];
        if (v >= limit) continue;
        ++out.counts[v >> shift];
        if (wrow) sums_[v >> shift] += wrow[x];
      }
    }
    if (weights)
      for (int b = 0; b < out.bins; ++b) out.weight_sums[b] = static_cast<float>(sums_[b]);
  }

  std::vector<double> sums_;
};

}  // namespace

KernelEntry entry_cpu_reference() {
  return KernelSpec("cpu_reference")
      .description("plain single-threaded loop; the truth for every test (weights: double sums)")
      .source("-", "-")
      .bins_8bit(kAnyBins)
      .bins_16bit(kAnyBins)
      .data_independent()
      .weighted()
      .tiles()
      .on(Backend::cpu)
      .make<CpuReference>();
}

}  // namespace histeq::hist
