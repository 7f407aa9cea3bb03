// podlozhnyuk64: per-thread 64-bin histograms of one-byte counters (V. Podlozhnyuk, "Histogram
// calculation in CUDA", NVIDIA whitepaper 2007, "Implementation of histogram64", figures 1-2 and
// listing 2; the CUDA SDK's histogram64).
//
// Idea. Every thread owns 64 one-byte counters in shared memory, so there are no collisions and no
// atomics while counting. The block's counters form a byte array s_hist[bin][THREAD_N]: thread t's
// counter of bin b is byte b * THREAD_N + threadPos(t). With THREAD_N a multiple of 4 x (number of
// banks), the bank of that byte does not depend on b, and the thread-position shuffle (bits of
// threadIdx.x swapped) gives the lanes of a warp 32 different banks and the same byte lane in each
// word: conflict-free, data-independent counting. A byte counter overflows past 255, so a thread
// counts at most 255 samples between merges. In the merge, thread b (< 64) sums row b; the
// threads start at staggered positions so that a warp's reads hit 32 different banks (figure 2).
// Bins are the top 6 bits of the 8-bit sample (value >> 2, as the SDK): 64 bins on 8-bit planes.
//
// Adapted for Hopper (sm_90):
//  - 32 banks of 4 bytes (G80: 16): THREAD_N is a multiple of 4 x 32 = 128 and the shuffle maps
//    lane bits [4:0] to the bank and warp bits [1:0] to the byte within the word,
//    threadPos = (t & ~127) | (t & 31) << 2 | (t >> 5) & 3 (G80: bits [3:0] and [5:4]);
//  - the SDK limits each block to THREAD_N x 255 bytes and launches as many blocks as the data needs,
//    one merge each. Here the grid is persistent (occupancy calculator, honours
//    KernelOptions::max_blocks) and a block works in passes of at most 255 samples per thread
//    (15 16-byte loads = 240 samples), merging after each pass into per-thread 32-bit totals: the
//    same counting and merge as a sequence of SDK blocks, with one global atomic per bin at the end
//    (the whitepaper's ATOMICS path, listing 2) instead of partial histograms and a merge kernel;
//  - the merge reads 32-bit words (4 counters) and adds their bytes with __dp4a, clearing them as it
//    goes (the SDK read bytes and cleared separately);
//  - 16-byte vector loads, several in flight (the SDK read 4-byte words);
//  - nothing here relies on lockstep warps (independent thread scheduling changes nothing): no two
//    threads share a counter, and the merge follows a __syncthreads. Native shared atomics are not
//    needed for the same reason; 228 KB per SM hold 8 KB blocks by the dozen, so occupancy is set
//    by registers, not by shared memory as on G80's 16 KB.
#include "core/histogram/kernels/common.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
using P = policy::Podlozhnyuk64;
constexpr int kBins = 64;
constexpr int kRowWords = P::kThreads / 4;  // one bin's counters of all threads, as 32-bit words
static_assert(P::kThreads % 128 == 0, "THREAD_N must be a multiple of 4 x 32 banks");
static_assert(P::kStepsPerPass * 16 <= 255, "one-byte counters would overflow");

// The paper's thread-position shuffle for 32 banks (see the header comment).
__device__ __forceinline__ uint32_t thread_pos(uint32_t t) { return (t & ~127u) | ((t & 31u) << 2) | ((t >> 5) & 3u); }

__global__ void __launch_bounds__(P::kThreads) p64_kernel(PlaneGeometry g, BinMap m, uint32_t* __restrict__ hist) {
  __shared__ uint32_t s_words[kBins * kRowWords];  // s_hist[bin][THREAD_N] bytes, as words
  uint8_t* s_hist = reinterpret_cast<uint8_t*>(s_words);
  for (int i = threadIdx.x; i < kBins * kRowWords; i += P::kThreads) s_words[i] = 0;
  __syncthreads();

  uint8_t* mine = s_hist + thread_pos(threadIdx.x);
  auto add = [&](uint32_t v) { ++mine[(v >> m.shift) * P::kThreads]; };

  const BlockWalk bw = block_walk(g, blockIdx.x, gridDim.x, P::kThreads);
  UnitCursor cur = bw.cur;
  const UnitStep st = bw.st;
  const uint32_t block_steps = bw.steps;

  // Thread b < 64 merges bin b: row b, read from word b % 32 on (staggered), cleared as read.
  const uint32_t b = threadIdx.x;
  uint32_t* row = s_words + b * kRowWords;
  uint32_t sum = 0;
  for (uint32_t done = 0; done < block_steps; done += P::kStepsPerPass) {
    walk<uint8_t, P::kUnroll>(g, cur, st, min(static_cast<uint32_t>(P::kStepsPerPass), block_steps - done), add);
    __syncthreads();
    if (b < kBins) {
#pragma unroll 8
      for (int k = 0; k < kRowWords; ++k) {
        const int w = (k + b) % kRowWords;
        sum = __dp4a(row[w], 0x01010101u, sum);
        row[w] = 0;
      }
    }
    __syncthreads();
  }
  if (b < kBins && sum) atomicAdd(&hist[b], sum);
}

class Podlozhnyuk64 final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return launch_persistent(p64_kernel, P::kThreads, 0, P::kMinUnitsPerThread, in, out, options(), stream,
                             make_binmap(in, out.bins), out.counts);
  }
};

}  // namespace

KernelEntry entry_podlozhnyuk64() {
  return KernelSpec("podlozhnyuk64")
      .description("per-thread 64-bin histograms of byte counters, bank-conflict-free shuffle, staggered merge")
      .source("Podlozhnyuk 2007, Histogram calculation in CUDA (histogram64)", "histogram64, figures 1-2, listing 2")
      .bins_8bit(bins_bit(64))
      .data_independent()
      .on(Backend::gpu)
      .make<Podlozhnyuk64>();
}

}  // namespace histeq::hist
