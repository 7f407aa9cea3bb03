// privatized8 family: one 256-bin histogram per thread, four 8-bit counters packed in a 32-bit word
// (N. Wilt, The CUDA Handbook, "Privatized (per thread) histograms": figure 6, listings 5-8).
//
// Idea. A block of 64 threads keeps 64 private histograms in a 64 x 64 array of 32-bit words
// (figure 6, "histogram per column, interleaved"): word (v >> 2) * 64 + t holds thread t's counters
// of bins v & ~3 .. v | 3, one per byte, and a sample adds 1 << 8 * (v & 3) to it (listing 5). Row
// r of the array is bins 4r..4r+3 of all 64 threads, and thread t's words are all in bank t % 32,
// so a warp's 32 increments never conflict whatever the data, with 32-bit shared accesses. The
// block reduction (listing 7): thread t sums row t, starting at column t (staggered), unpacking each
// word into two pairs of 16-bit partial sums (listing 6: & 0x00FF00FF, and >> 8 then the same
// mask), then adds bins 4t..4t+3 to the output with 4 global atomics: 256 per block.
// 8-bit counters overflow past 255. The two strategies of the text, one kernel each:
//  - privatized8_merge (listing 8, periodic merge): persistent grid; after at most 255 samples per
//    thread (15 16-byte loads = 240) the block merges into the output and clears (listing 7 with
//    bClear), then goes on;
//  - privatized8_avoid (overflow avoidance): enough blocks that no thread ever sees more than 255
//    samples (at most 15 units of 16 samples); one merge per block at the end. Its grid is fixed by
//    that bound, so it ignores KernelOptions::max_blocks (a smaller grid would overflow).
//
// Adapted for Hopper (sm_90):
//  - the text's 48 KB and 3 blocks per SM become the device's real shared memory: 16 KB per block,
//    13 blocks (832 threads) per SM on a 228 KB H100/H200, from the occupancy calculator;
//  - listing 8 calls __syncthreads inside a loop whose trip count differs between threads (deadlock
//    or undefined behaviour at the plane's end) and lets threads increment while another thread's
//    clearing merge runs (a lost update). Here passes are block-uniform and a barrier follows the
//    merge;
//  - 16-byte vector loads, several in flight (listing 8 reads 32-bit words); rows of pitched or
//    unaligned planes are handled by the common traversal;
//  - counters are thread-private, so neither independent thread scheduling nor native shared
//    atomics change the counting; the only cross-thread steps are the barriers around the merge.
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
constexpr int kT = 64;  // the interleaved layout is a square 64 x 64 array of words (figure 6)

// Listing 7: thread t adds bins 4t..4t+3 of the block's 64 private histograms to the output; with
// kClear it zeroes the words it read, for the next pass.
template <bool kClear>
__device__ __forceinline__ void merge_to_output(uint32_t* priv, uint32_t* __restrict__ hist) {
  const uint32_t t = threadIdx.x;
  uint32_t* row = priv + t * kT;
  uint32_t sum02 = 0, sum13 = 0;
#pragma unroll 8
  for (int i = 0; i < kT; ++i) {
    const int col = (i + t) & (kT - 1);
    const uint32_t w = row[col];
    if (kClear) row[col] = 0;
    sum02 += w & 0x00FF00FFu;
    sum13 += (w >> 8) & 0x00FF00FFu;
  }
  atomicAdd(&hist[t * 4 + 0], sum02 & 0xFFFFu);
  atomicAdd(&hist[t * 4 + 2], sum02 >> 16);
  atomicAdd(&hist[t * 4 + 1], sum13 & 0xFFFFu);
  atomicAdd(&hist[t * 4 + 3], sum13 >> 16);
}

// kPeriodicMerge: a persistent grid merging every kStepsPerPass steps (listing 8). Otherwise the
// grid gives every thread at most kStepsPerPass steps and the block merges once.
template <class P, bool kPeriodicMerge>
__global__ void __launch_bounds__(kT) privatized8_kernel(PlaneGeometry g, uint32_t* __restrict__ hist) {
  static_assert(P::kThreads == kT, "listing 8 requires 64 threads");
  static_assert(P::kStepsPerPass * 16 <= 255, "8-bit counters would overflow");
  __shared__ uint32_t priv[64 * kT];
  for (int i = threadIdx.x; i < 64 * kT; i += kT) priv[i] = 0;
  __syncthreads();

  uint32_t* mine = priv + threadIdx.x;
  auto add = [&](uint32_t v) { mine[(v >> 2) * kT] += 1u << ((v & 3u) << 3); };  // listing 5

  const BlockWalk bw = block_walk(g, blockIdx.x, gridDim.x, kT);
  UnitCursor cur = bw.cur;
  const UnitStep st = bw.st;
  const uint32_t block_steps = bw.steps;

  if constexpr (kPeriodicMerge) {
    for (uint32_t done = 0; done + P::kStepsPerPass < block_steps; done += P::kStepsPerPass) {
      walk<uint8_t, P::kUnroll>(g, cur, st, P::kStepsPerPass, add);
      __syncthreads();
      merge_to_output<true>(priv, hist);
      __syncthreads();  // the clearing merge is over before anyone increments again
    }
  }
  // The last (or only) pass: at most kStepsPerPass steps remain.
  walk<uint8_t, P::kUnroll>(g, cur, st, P::kStepsPerPass, add);
  __syncthreads();
  merge_to_output<false>(priv, hist);
}

template <class P, bool kPeriodicMerge>
class Privatized8 final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    if constexpr (kPeriodicMerge) {
      return launch_persistent(privatized8_kernel<P, true>, kT, 0, P::kMinUnitsPerThread, in, out, options(), stream, out.counts);
    } else {
      // Overflow avoidance: at most kStepsPerPass units (<= 240 samples) per thread, whatever the options.
      const PlaneGeometry g = make_geometry(in);
      const uint64_t per_block = uint64_t{kT} * P::kStepsPerPass;
      const int grid = static_cast<int>(std::max<uint64_t>(1, (g.total_units() + per_block - 1) / per_block));
      HISTEQ_CUDA_TRY(cudaMemsetAsync(out.counts, 0, sizeof(uint32_t) * out.bins, stream));
      privatized8_kernel<P, false><<<grid, kT, 0, stream>>>(g, out.counts);
      HISTEQ_CUDA_TRY_LAUNCH();
      return Status::ok();
    }
  }
};

template <class P, bool kPeriodicMerge>
KernelEntry privatized8_entry(const char* name, const char* description, const char* section) {
  return KernelSpec(name)
      .description(description)
      .source("Wilt, The CUDA Handbook, privatized (per thread) histograms", section)
      .bins_8bit(bins_bit(256))
      .data_independent()
      .on(Backend::gpu)
      .make<Privatized8<P, kPeriodicMerge>>();
}

}  // namespace

KernelEntry entry_privatized8_merge() {
  return privatized8_entry<policy::Privatized8Merge, true>("privatized8_merge",
                                 "per-thread histograms, 4 packed 8-bit counters a word, periodic merge every 240 samples",
                                 "figure 6, listings 5-8 (periodic merge)");
}
KernelEntry entry_privatized8_avoid() {
  return privatized8_entry<policy::Privatized8Avoid, false>("privatized8_avoid",
                                  "per-thread packed 8-bit histograms, grid sized so no thread sees > 255 samples",
                                  "figure 6, listings 5-7, overflow avoidance");
}

}  // namespace histeq::hist
