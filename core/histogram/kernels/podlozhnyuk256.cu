// podlozhnyuk256: warp-private 256-bin histograms with tagged counters, the reference method.
// Sources: V. Podlozhnyuk, "Histogram calculation in CUDA", NVIDIA whitepaper 2007, "Implementation
// of histogram256" (listings 3 and 4); Nugteren et al., "High performance predictable histogramming
// on GPUs", GPGPU-4 2011, §4 (figures 2-4), which takes it as the state of the art.
//
// Idea. Each warp of a 6-warp block owns a sub-histogram of 256 32-bit counters in shared memory,
// so lanes of different warps never collide. Lanes of one warp do: the collision is resolved in
// software by the tagged "virtual atomic" loop (warp_private.cuh): a lane writes count+1 with its
// 5-bit lane tag in bits 27-31 and re-reads; the lane whose write survived is done, the others
// retry. After its data the block sums its warp histograms (listing 4) into a per-block
// sub-histogram in global memory, and a second kernel sums the sub-histograms bin by bin
// (figure 2; the SDK's mergeHistogram256Kernel): no global atomics at all.
//
// Adapted for Hopper (sm_90):
//  - independent thread scheduling (Volta+) breaks the loop's premise that a warp's lanes run in
//    lockstep; a lane could then overwrite a newer count and still see its own tag (lost
//    increment). The loop now separates read, write and re-read with __syncwarp and runs the
//    whole warp through every round (full-mask vote); the traversal is warp-synchronous so that
//    every lane reaches each increment (warp_private.cuh says why);
//  - the 27-bit count of a warp counter overflows past 2^27 - 1 samples per warp: a pass is bounded
//    (policy::Podlozhnyuk256::kStepsPerPass), then the block adds its warp histograms to its
//    sub-histogram and clears them, so any plane size is exact;
//  - persistent grid (occupancy calculator, honours KernelOptions::max_blocks) instead of the SDK's
//    fixed 240 blocks; 16-byte vector loads, several in flight (the SDK read one 32-bit word);
//  - native shared atomics exist since sm_12 but are not used here on purpose: this is the
//    reference method (method1_ext3 is the variant with them).
#include "core/histogram/kernels/warp_private.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using P = policy::Podlozhnyuk256;
constexpr int kBins = 256;
constexpr int kWarps = P::kThreads / 32;
constexpr uint32_t kCountMask = (1u << P::kCountBits) - 1u;
static_assert(P::kThreads % 32 == 0, "whole warps");
static_assert(uint64_t{P::kStepsPerPass} * 32 * 16 <= kCountMask, "a warp counter would overflow its 27 bits");

// Pass 1: per-block sub-histograms, partial[blockIdx.x * 256 + bin].
__global__ void __launch_bounds__(P::kThreads) p256_kernel(PlaneGeometry g, BinMap m, uint32_t pass_steps,
                                                           uint32_t* __restrict__ partial) {
  __shared__ uint32_t s_hist[kWarps * kBins];
  clear_shared(s_hist, kWarps * kBins);
  __syncthreads();

  const uint32_t lane = threadIdx.x & 31u;
  volatile uint32_t* wh = s_hist + (threadIdx.x / 32) * kBins;
  const uint32_t tag = lane << P::kCountBits;
  auto add = [&](uint32_t v, bool valid) { tagged_increment<kCountMask>(wh + (v >> m.shift), valid, tag); };

  const BlockWalk bw = block_walk(g, blockIdx.x, gridDim.x, P::kThreads);
  UnitCursor cur = bw.cur;
  const UnitStep st = bw.st;
  const uint32_t block_steps = bw.steps;
  uint32_t* out = partial + blockIdx.x * kBins;

  // One pass when block_steps is 0 too: the block must still write its (empty) sub-histogram.
  for (uint32_t done = 0;; done += pass_steps) {
    walk_warp_sync<uint8_t, P::kUnroll>(g, cur, st, min(pass_steps, block_steps - done), add);
    __syncthreads();
    const bool first = done == 0;
    sum_warp_histograms<kBins>(s_hist, kWarps, kCountMask, [&](int b, uint32_t sum) { out[b] = first ? sum : out[b] + sum; });
    if (block_steps - done <= pass_steps) break;
    __syncthreads();
    clear_shared(s_hist, kWarps * kBins);
    __syncthreads();
  }
}

// Pass 2: out[bin] = sum of the sub-histograms (one block per bin; the SDK's merge kernel).
__global__ void __launch_bounds__(P::kMergeThreads) p256_merge_kernel(const uint32_t* __restrict__ partial, int parts,
                                                                     uint32_t* __restrict__ hist) {
  __shared__ uint32_t s_sum[P::kMergeThreads];
  uint32_t sum = 0;
  for (int i = threadIdx.x; i < parts; i += P::kMergeThreads) sum += partial[i * kBins + blockIdx.x];
  sum = block_tree_sum<P::kMergeThreads>(s_sum, sum);
  if (threadIdx.x == 0) hist[blockIdx.x] = sum;
}

class Podlozhnyuk256 final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    const PlaneGeometry g = make_geometry(in);
    auto grid = grid_size(p256_kernel, P::kThreads, 0, g.total_units(), P::kMinUnitsPerThread, options());
    if (!grid) return grid.status();
    const size_t need = sizeof(uint32_t) * kBins * static_cast<size_t>(*grid);
    if (need > partial_.bytes()) {
      // Growing must not free memory that an earlier asynchronous call may still be using.
      HISTEQ_CUDA_TRY(cudaStreamSynchronize(stream));
      auto b = cuda::Buffer::allocate(MemoryKind::device, need);
      if (!b) return b.status();
      partial_ = std::move(b.value());
    }
    uint32_t* partial = static_cast<uint32_t*>(partial_.data());
    p256_kernel<<<*grid, P::kThreads, 0, stream>>>(g, make_binmap(in, out.bins), pass_steps(options(), P::kStepsPerPass),
                                                   partial);
    HISTEQ_CUDA_TRY_LAUNCH();
    p256_merge_kernel<<<kBins, P::kMergeThreads, 0, stream>>>(partial, *grid, out.counts);
    HISTEQ_CUDA_TRY_LAUNCH();
    return Status::ok();
  }

 private:
  cuda::Buffer partial_;  // grid x 256 sub-histograms (uint32), grown on demand
};

}  // namespace

KernelEntry entry_podlozhnyuk256() {
  return KernelSpec("podlozhnyuk256")
      .description("warp-private 256-bin histograms, tagged 'virtual atomic' loop, second kernel sums blocks")
      .source("Podlozhnyuk 2007, Histogram calculation in CUDA (histogram256); Nugteren et al. 2011",
              "histogram256, listings 3-4; Nugteren §4")
      .bins_8bit(bins_bit(256))
      .on(Backend::gpu)
      .make<Podlozhnyuk256>();
}

}  // namespace histeq::hist
