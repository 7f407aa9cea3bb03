// cpu_parallel: privatized per-thread histograms over all cores, merged at the end.
// Source: Wilt, The CUDA Handbook, "Privatized (per thread) histograms": M threads for M cores, the
// input cut into M chunks, one histogram per thread in that core's cache, fork/join, then a merge.
// The threads are the process's shared pool (image::shared_pool()), which the CPU equalizer's LUT
// and apply stages use too, so a video frame neither pays for thread creation nor wakes one set of
// threads per stage; chunks are ranges of samples (not rows), so a single tall or wide row still splits.
#include <algorithm>
#include <functional>
#include <thread>
#include <vector>

#include "core/histogram/cpu/cpu_common.h"
#include "core/image/fork_join.h"
#include "core/histogram/policy.h"

namespace histeq::hist {
namespace {

class CpuParallel final : public Kernel {
 public:
  CpuParallel(const KernelInfo& info, KernelOptions opts) : Kernel(info, opts), pool_(image::shared_pool()) {
    threads_ = pool_ == nullptr ? 1 : pool_->size();
    if (opts.max_blocks > 0) threads_ = std::min(threads_, opts.max_blocks);
  }

  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t) override {
    const uint64_t n = in.samples();
    const uint64_t min_chunk = std::max<uint64_t>(1, policy::CpuParallel::kMinBytesPerThread / in.bytes_per_sample);
    const int chunks = static_cast<int>(std::clamp<uint64_t>(n / min_chunk, 1, static_cast<uint64_t>(threads_)));
    const int bins = out.bins;
    const size_t per_chunk = static_cast<size_t>(cpu::kWays) * bins;
    private_.assign(chunks * per_chunk, 0u);
    run_parts(chunks, [&](int c) {
      const uint64_t first = n * c / chunks, last = n * (c + 1) / chunks;
      uint32_t* h = private_.data() + c * per_chunk;
      if (in.bytes_per_sample == 1) cpu::accumulate(in.as<uint8_t>(), bins, first, last, h);
      else cpu::accumulate(in.as<uint16_t>(), bins, first, last, h);
    });
    std::fill(out.counts, out.counts + bins, 0u);
    for (size_t c = 0; c < chunks * static_cast<size_t>(cpu::kWays); ++c) {
      const uint32_t* h = private_.data() + c * bins;
      for (int b = 0; b < bins; ++b) out.counts[b] += h[b];
    }
    return Status::ok();
  }

  // Whole tiles per thread (tile t on thread t % threads): tiles are disjoint, so each thread
  // writes its tiles' counters directly, summing its kWays copies per tile.
  Status run_tiles(const PlaneRef& in, const TileGrid& grid, const HistogramView& out, cudaStream_t) override {
    const int tiles = grid.count();
    const uint64_t min_chunk = std::max<uint64_t>(1, policy::CpuParallel::kMinBytesPerThread / in.bytes_per_sample);
    const int threads = static_cast<int>(std::clamp<uint64_t>(in.samples() / min_chunk, 1,
                                                               static_cast<uint64_t>(std::min(threads_, tiles))));
    const int bins = out.bins;
    const size_t per_thread = static_cast<size_t>(cpu::kWays) * bins;
    private_.assign(threads * per_thread, 0u);
    run_parts(threads, [&](int c) {
      uint32_t* h = private_.data() + c * per_thread;
      for (int t = c; t < tiles; t += threads) {
        std::fill(h, h + per_thread, 0u);
        const PlaneRef p = tile_plane(in, grid, t % grid.cols, t / grid.cols);
        if (p.bytes_per_sample == 1) cpu::accumulate(p.as<uint8_t>(), bins, 0, p.samples(), h);
        else cpu::accumulate(p.as<uint16_t>(), bins, 0, p.samples(), h);
        uint32_t* dst = out.counts + static_cast<size_t>(t) * bins;
        for (int b = 0; b < bins; ++b) {
          uint32_t sum = 0;
          for (int k = 0; k < cpu::kWays; ++k) sum += h[k * bins + b];
          dst[b] = sum;
        }
      }
    });
    return Status::ok();
  }

 private:
  void run_parts(int n, const std::function<void(int)>& f) {
    if (pool_ != nullptr) return pool_->run(n, f);
    for (int i = 0; i < n; ++i) f(i);
  }

  image::ForkJoin* pool_;  // the shared pool; null on one core
  int threads_ = 1;        // the most parts a run uses (KernelOptions::max_blocks)
  std::vector<uint32_t> private_;
};

}  // namespace

KernelEntry entry_cpu_parallel() {
  return KernelSpec("cpu_parallel")
      .description("per-thread privatized histograms on all cores, merged at the end (fork/join)")
      .source("Wilt, The CUDA Handbook, privatized (per thread) histograms", "multithreaded CPU version")
      .bins_8bit(kAnyBins)
      .bins_16bit(kAnyBins)
      .data_independent()
      .tiles()
      .on(Backend::cpu)
      .make<CpuParallel>();
}

}  // namespace histeq::hist
