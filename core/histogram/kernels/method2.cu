// method2: thread-private histograms (Nugteren, van den Braak, Corporaal, Mesman, "High performance
// predictable histogramming on GPUs", GPGPU-4 2011, §7, mapping 3 = §7.3, table 3, figure 12).
//
// Idea. Every thread owns a whole histogram of 16-bit counters in shared memory, so the hot loop
// has no atomics and no collisions: its cost does not depend on the picture ("data-independent").
// Layout 2 with 32 threads (mapping 3): the block is one warp and thread t's counters all live in
// bank t. Two 16-bit counters share a 32-bit word: word (b/2)*32 + t holds bins b&~1 (low half)
// and b|1 (high half) of thread t, so a warp's 32 increments hit 32 distinct banks whatever the data.
// After its work the block sums the 32 private histograms (staggered column start so the 32 readers
// hit 32 banks) and adds each non-zero bin to the output with one global atomic.
//
// Adapted for today's GPUs:
//  - shared memory per SM comes from the device: the occupancy calculator places as many 32-thread
//    blocks per SM as the real shared memory allows (13 on Hopper's 228 KB, vs 3 on the GTX470);
//  - 16-byte vector loads, several in flight (the paper grouped data as 32-bit elements);
//  - the increment is one 32-bit add of 1 << 16*(b&1) rather than a 16-bit read-modify-write;
//  - overflow: a thread handles at most 65535 samples per pass (policy::Method2::kStepsPerPass*),
//    then the block merges and clears its counters and goes on, so any plane size is exact;
//  - 16-bit planes (10-bit video) with 1024 bins: the same layout, 64 KB of shared memory per block.
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using P = policy::Method2;
static_assert(P::kThreads == 32, "mapping 3 is one warp per block: one shared-memory bank per thread");
static_assert(P::kStepsPerPass8 * 16 <= 65535 && P::kStepsPerPass16 * 8 <= 65535, "16-bit counters would overflow");

template <class T, int BINS>
__global__ void __launch_bounds__(P::kThreads) method2_kernel(PlaneGeometry g, BinMap m, uint32_t* __restrict__ hist) {
  extern __shared__ uint32_t sh[];  // [BINS/2 rows][32 threads]
  constexpr int kRows = BINS / 2;
  constexpr uint32_t kPass = sizeof(T) == 1 ? P::kStepsPerPass8 : P::kStepsPerPass16;
  const uint32_t t = threadIdx.x;
  uint32_t* mine = sh + t;  // this thread's column: bank t
#pragma unroll 8
  for (int j = 0; j < kRows; ++j) mine[j * 32] = 0;

  const uint32_t total = g.total_units();
  const uint32_t stride = gridDim.x * P::kThreads;
  const uint32_t block_first = blockIdx.x * P::kThreads;
  // Thread 0 has the most steps; all threads run the same passes so that they can merge together.
  const uint32_t block_steps = block_first < total ? (total - block_first + stride - 1) / stride : 0;

  UnitCursor cur = cursor_at(g, block_first + t);
  const UnitStep st = step_of(g, stride);
  auto add = [&](uint32_t v) {
    if (sizeof(T) == 1 || v < m.limit) {
      const uint32_t b = v >> m.shift;
      mine[(b >> 1) * 32] += 1u << ((b & 1u) << 4);
    }
  };

  for (uint32_t done = 0; done < block_steps; done += kPass) {
    walk<T, P::kUnroll>(g, cur, st, min(kPass, block_steps - done), add);
    __syncwarp();
    for (int j = t; j < kRows; j += 32) {
      uint32_t lo = 0, hi = 0;
      const uint32_t* row = sh + j * 32;
#pragma unroll 8
      for (int k = 0; k < 32; ++k) {
        const uint32_t w = row[(k + t) & 31];  // staggered: the warp reads 32 different banks
        lo += w & 0xFFFFu;
        hi += w >> 16;
      }
      if (lo) atomicAdd(&hist[2 * j], lo);
      if (hi) atomicAdd(&hist[2 * j + 1], hi);
    }
    if (done + kPass >= block_steps) break;  // nothing follows the last pass: skip the clear
    __syncwarp();
#pragma unroll 8
    for (int j = 0; j < kRows; ++j) mine[j * 32] = 0;
  }
}

template <class T, int BINS>
Status launch(const PlaneRef& in, const HistogramView& out, const KernelOptions& opts, cudaStream_t stream) {
  constexpr size_t smem = sizeof(uint32_t) * (BINS / 2) * P::kThreads;
  auto fn = method2_kernel<T, BINS>;
  HISTEQ_TRY(allow_dynamic_smem(fn, smem));
  const PlaneGeometry g = make_geometry(in);
  auto grid = grid_size(fn, P::kThreads, smem, g.total_units(), P::kMinUnitsPerThread, opts);
  if (!grid) return grid.status();
  HISTEQ_CUDA_TRY(cudaMemsetAsync(out.counts, 0, sizeof(uint32_t) * out.bins, stream));
  fn<<<*grid, P::kThreads, smem, stream>>>(g, make_binmap(in, out.bins), out.counts);
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

class Method2 final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    if (in.bytes_per_sample == 1) return launch<uint8_t, 256>(in, out, options(), stream);
    if (out.bins == 256) return launch<uint16_t, 256>(in, out, options(), stream);
    return launch<uint16_t, 1024>(in, out, options(), stream);
  }
};

}  // namespace

KernelEntry entry_method2() {
  return {{"method2", "thread-private 16-bit histograms, one bank per thread, no atomics in the hot loop (default)",
           "Nugteren et al. 2011, High performance predictable histogramming on GPUs", "§7.3 mapping 3 (layout 2, 32 threads)",
           bins_bit(256), bins_bit(256) | bins_bit(1024), true, Backend::gpu},
          [](const KernelInfo& info, KernelOptions opts) -> Result<std::unique_ptr<Kernel>> {
            return std::unique_ptr<Kernel>(new Method2(info, opts));
          }};
}

}  // namespace histeq::hist
