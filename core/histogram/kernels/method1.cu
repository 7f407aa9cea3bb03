// method1 family: warp-private histograms with Nugteren's three extensions (Nugteren, van den Braak,
// Corporaal, Mesman, "High performance predictable histogramming on GPUs", GPGPU-4 2011, §6,
// figures 6-8, table 2).
//
// Idea. Podlozhnyuk's two-level scheme (§4): each warp of a block owns a 256-bin histogram of
// 32-bit counters in shared memory; after its data the block sums its warp histograms and adds them
// to the output. The variants differ in how lanes meet their samples and how collisions between
// the lanes of a warp are resolved:
//  - method1_base: coalesced reads (a warp reads consecutive data), tagged "virtual atomic" loop;
//  - method1_ext1 (§6.1, data shuffling): coalesced loads, transposed through shared memory so that
//    each lane then histograms its own run of neighbouring samples while the 32 lanes of a warp
//    hold samples far apart (fewer collisions on correlated pictures);
//  - method1_ext2 (§6.2, giving up coalescing; the paper's chosen "method1"): each thread reads its
//    own distant, contiguous stretch of the plane, so a warp's lanes read 32 far-apart places;
//  - method1_ext3 (§6.3): hardware shared-memory atomics instead of the tag loop, coalesced reads;
//  - method1_ext2_ext3: both.
//
// Adapted for Hopper (sm_90):
//  - the tag loop is made correct under independent thread scheduling with __syncwarp between its
//    read, write and re-read and a full-warp vote, over a warp-synchronous traversal
//    (warp_private.cuh explains why the original lockstep assumption no longer holds);
//  - 27-bit counts: a tag-loop pass is bounded (kStepsPerPass of policy::Method1Base etc.), then the block
//    flushes and clears its warp histograms; with hardware atomics the counters are full 32-bit
//    words and a plane (< 2^32 samples) cannot overflow them, so there is one pass;
//  - ext1 in the paper is a separate pre-processing kernel that writes the rearranged picture back
//    to global memory (coalesced) before the baseline histograms it. Here the same rearrangement is
//    done in shared memory inside the histogram kernel: a warp loads 32 x kShuffleUnits
//    consecutive 16-byte units coalesced, then lane i takes units i*kShuffleUnits... So each warp
//    sees the same sample order as the paper's histogram pass, without the extra write and read of
//    the whole frame (the paper's figures include that round trip; ours do not);
//  - ext2: a thread's stretch is total/threads units of the persistent grid, read with 16-byte
//    loads (the paper's threads read 32-bit words);
//  - persistent grid from the occupancy calculator (honours KernelOptions::max_blocks), 16-byte
//    loads, block flush with one global atomic per non-zero bin (Fermi's global atomics; the
//    paper's figure 2 alternative is a second kernel, which podlozhnyuk256 keeps).
#include "core/histogram/kernels/warp_private.cuh"

namespace histeq::hist {
namespace {

using namespace detail;
constexpr int kBins = 256;

enum class Reads { coalesced, shuffled, strided };  // baseline and ext3 / ext1 / ext2
enum class Update { tagged, atomic };               // baseline / ext3

// The constants of one variant, from its policy struct (policy::Method1Base, ...Ext1, ...).
template <class P, Reads R>
struct Shape {
  static constexpr int kWarps = P::kThreads / 32;
  static constexpr uint32_t kCountMask = (1u << P::kCountBits) - 1u;
  static constexpr int K = [] {
    if constexpr (R == Reads::shuffled) return P::kShuffleUnits;  // ext1: units per lane and tile
    else return 1;
  }();
  static constexpr int kTileUnits = 32 * K;  // ext1: units a warp stages per tile
  // [ext1 staging: kWarps x kTileUnits uint4][warp histograms: kWarps x 256 uint32][ext1 counts: kWarps x kTileUnits bytes]
  static constexpr size_t kSmem =
      sizeof(uint32_t) * kWarps * kBins + (R == Reads::shuffled ? (sizeof(uint4) + 1) * kWarps * kTileUnits : 0);
  static_assert(P::kThreads % 32 == 0, "whole warps");
  static_assert(uint64_t{P::kStepsPerPass} * 32 * 16 <= kCountMask, "a warp counter would overflow its 27 bits");
  static_assert(K % 2 == 1, "odd run length: conflict-free transposed reads");
  static_assert(P::kStepsPerPass >= K, "a pass holds at least one tile");
};

// ext1: `n` tiles of this warp, from `tile` (advanced by `tile_stride` each). Lane l loads units
// tile*32K + k*32 + l (coalesced), stores them in the warp's staging area, then histograms units
// l*K .. l*K + K-1 of it (K = kShuffleUnits): a contiguous run of neighbouring samples.
template <int K, class F>
__device__ __forceinline__ void walk_shuffled(const PlaneGeometry& g, uint32_t& tile, uint32_t tile_stride, uint32_t n,
                                              uint4* stage, uint8_t* stage_n, F& f) {
  constexpr uint32_t kTileUnits = 32 * K;
  const uint32_t lane = threadIdx.x & 31u;
  const UnitStep st32 = step_of(g, 32);
  for (uint32_t i = 0; i < n; ++i, tile += tile_stride) {
    UnitCursor c = cursor_at(g, tile * kTileUnits + lane);
    uint4 v[K];
    uint32_t cnt[K];
    const bool full = fetch_units<uint8_t, K>(g, c, st32, v, cnt);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      stage[k * 32 + lane] = v[k];
      stage_n[k * 32 + lane] = static_cast<uint8_t>(cnt[k]);
    }
    const bool all_full = __all_sync(kFullWarp, full);
    __syncwarp();  // the staging area is written before any lane reads another lane's units
#pragma unroll
    for (int j = 0; j < K; ++j) {
      // Copies, not references: the update's __syncwarp calls would make the compiler re-read them.
      const uint4 v_j = stage[lane * K + j];
      const uint32_t n_j = all_full ? 16u : stage_n[lane * K + j];
      visit_slots<uint8_t>(v_j, n_j, all_full, f);
    }
    __syncwarp();  // read before the next tile overwrites it
  }
}

template <class P, Reads R, Update U>
__global__ void __launch_bounds__(P::kThreads) method1_kernel(PlaneGeometry g, BinMap m, uint32_t pass_steps,
                                                              uint32_t* __restrict__ hist) {
  using S = Shape<P, R>;
  constexpr int kWarps = S::kWarps, kTileUnits = S::kTileUnits;
  constexpr uint32_t kCountMask = S::kCountMask;
  extern __shared__ uint4 smem[];  // the layout of Shape::kSmem
  constexpr bool kShuffled = R == Reads::shuffled;
  uint4* stage = smem + (threadIdx.x / 32) * kTileUnits;
  uint32_t* s_hist = reinterpret_cast<uint32_t*>(smem + (kShuffled ? kWarps * kTileUnits : 0));
  uint8_t* stage_n = reinterpret_cast<uint8_t*>(s_hist + kWarps * kBins) + (threadIdx.x / 32) * kTileUnits;
  clear_shared(s_hist, kWarps * kBins);
  __syncthreads();

  const uint32_t lane = threadIdx.x & 31u;
  uint32_t* wh = s_hist + (threadIdx.x / 32) * kBins;
  auto add = [&](uint32_t v, bool valid) {
    if constexpr (U == Update::tagged) tagged_increment<kCountMask>(wh + (v >> m.shift), valid, lane << P::kCountBits);
    else if (valid) atomicAdd(wh + (v >> m.shift), 1u);
  };

  // What one lane walks: `items` steps (coalesced, strided) or tiles (shuffled), block-uniform.
  const uint32_t total = g.total_units();
  const uint32_t threads = gridDim.x * P::kThreads;
  uint32_t items = 0;
  UnitCursor cur{0, 0};
  UnitStep st{0, 0};
  uint32_t tile = 0, tile_stride = 0;
  if constexpr (R == Reads::coalesced) {
    const uint32_t block_first = blockIdx.x * P::kThreads;
    items = block_first < total ? (total - block_first + threads - 1) / threads : 0;
    cur = cursor_at(g, block_first + threadIdx.x);
    st = step_of(g, threads);
  } else if constexpr (R == Reads::strided) {
    const uint32_t chunk = (total + threads - 1) / threads;  // units per thread, contiguous
    const uint64_t first = uint64_t{blockIdx.x * P::kThreads + threadIdx.x} * chunk;
    items = uint64_t{blockIdx.x} * P::kThreads * chunk < total ? chunk : 0;
    cur = cursor_at(g, first < total ? static_cast<uint32_t>(first) : total);
    st = step_of(g, 1);
  } else {
    const uint32_t tiles = (total + kTileUnits - 1) / kTileUnits;
    const uint32_t warps = gridDim.x * kWarps, block_warp0 = blockIdx.x * kWarps;
    items = block_warp0 < tiles ? (tiles - block_warp0 + warps - 1) / warps : 0;
    tile = block_warp0 + threadIdx.x / 32;
    tile_stride = warps;
  }
  // Items per pass: all with hardware atomics (full 32-bit counters), else pass_steps steps (at most
  // the 27-bit bound), counted in whole tiles for ext1.
  const uint32_t pass = U == Update::atomic ? 0xFFFFFFFFu : kShuffled ? max(1u, pass_steps / S::K) : pass_steps;
  constexpr uint32_t kMask = U == Update::tagged ? kCountMask : 0xFFFFFFFFu;

  for (uint32_t done = 0; done < items; done += pass) {
    const uint32_t n = min(pass, items - done);
    if constexpr (kShuffled) walk_shuffled<S::K>(g, tile, tile_stride, n, stage, stage_n, add);
    else walk_warp_sync<uint8_t, P::kUnroll>(g, cur, st, n, add);
    __syncthreads();
    sum_warp_histograms<kBins>(s_hist, kWarps, kMask, [&](int b, uint32_t sum) {
      if (sum) atomicAdd(&hist[b], sum);
    });
    if (items - done <= pass) break;
    __syncthreads();
    clear_shared(s_hist, kWarps * kBins);
    __syncthreads();
  }
}

template <class P, Reads R, Update U>
class Method1 final : public Kernel {
 public:
  using Kernel::Kernel;
  Status run(const PlaneRef& in, const HistogramView& out, cudaStream_t stream) override {
    return launch_persistent(method1_kernel<P, R, U>, P::kThreads, Shape<P, R>::kSmem, P::kMinUnitsPerThread, in, out,
                             options(), stream, make_binmap(in, out.bins), pass_steps(options(), P::kStepsPerPass),
                             out.counts);
  }
};

template <class P, Reads R, Update U>
KernelEntry method1_entry(const char* name, const char* description, const char* section) {
  return KernelSpec(name)
      .description(description)
      .source("Nugteren et al. 2011, High performance predictable histogramming on GPUs", section)
      .bins_8bit(bins_bit(256))
      .on(Backend::gpu)
      .make<Method1<P, R, U>>();
}

}  // namespace

KernelEntry entry_method1_base() {
  return method1_entry<policy::Method1Base, Reads::coalesced, Update::tagged>(
      "method1_base", "warp-private histograms, tagged loop (ITS-safe), coalesced reads", "§6 baseline");
}
KernelEntry entry_method1_ext1() {
  return method1_entry<policy::Method1Ext1, Reads::shuffled, Update::tagged>(
      "method1_ext1", "method1 + data shuffling: coalesced loads transposed in shared memory, a run per lane",
      "§6.1 extension 1");
}
KernelEntry entry_method1_ext2() {
  return method1_entry<policy::Method1Ext2, Reads::strided, Update::tagged>(
      "method1_ext2", "method1 + uncoalesced reads: each thread a distant contiguous stretch (the paper's method1)",
      "§6.2 extension 2");
}
KernelEntry entry_method1_ext3() {
  return method1_entry<policy::Method1Ext3, Reads::coalesced, Update::atomic>(
      "method1_ext3", "method1 + hardware shared atomics instead of the tag loop, coalesced reads", "§6.3 extension 3");
}
KernelEntry entry_method1_ext2_ext3() {
  return method1_entry<policy::Method1Ext2Ext3, Reads::strided, Update::atomic>(
      "method1_ext2_ext3", "method1 + uncoalesced stretches + hardware shared atomics", "§6.4 extensions 2+3");
}

}  // namespace histeq::hist
