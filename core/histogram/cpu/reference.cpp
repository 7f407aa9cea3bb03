// cpu_reference: the plain loop, and the truth every other kernel is tested against. Deliberately
// simple: one pass over the rows, one increment per sample, no cleverness to get wrong.
#include <algorithm>

#include "core/histogram/histogram.h"

namespace histeq::hist {
namespace {

class CpuReference final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t) override {
    std::fill(out.counts, out.counts + out.bins, 0u);
    const uint32_t shift = static_cast<uint32_t>(in.bit_depth - bins_log2(out.bins));
    const uint32_t limit = 1u << in.bit_depth;
    for (int y = 0; y < in.height; ++y) {
      const unsigned char* row = static_cast<const unsigned char*>(in.data) + static_cast<size_t>(y) * in.pitch;
      for (int x = 0; x < in.width; ++x) {
        const uint32_t v = in.bytes_per_sample == 1 ? row[x] : reinterpret_cast<const uint16_t*>(row)[x];
        if (v < limit) ++out.counts[v >> shift];
      }
    }
    return Status::ok();
  }
};

}  // namespace

KernelEntry entry_cpu_reference() {
  return {{"cpu_reference", "plain single-threaded loop; the truth for every test", "-", "-", kAnyBins, kAnyBins,
           true, Backend::cpu},
          [](const KernelInfo& info, KernelOptions opts) -> Result<std::unique_ptr<Kernel>> {
            return std::unique_ptr<Kernel>(new CpuReference(info, opts));
          }};
}

}  // namespace histeq::hist
