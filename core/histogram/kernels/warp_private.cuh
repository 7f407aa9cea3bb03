// Device helpers for warp-private histograms (podlozhnyuk256, method1): a warp-synchronous plane
// traversal, Podlozhnyuk's tagged "virtual atomic" increment made safe under independent thread
// scheduling, and the block's flush of its warp histograms. Internal to core/histogram.
//
// Why a warp-synchronous traversal. The tag loop resolves collisions between the lanes of ONE warp
// only if every lane that may touch the warp's histogram takes part in the same round: read, write,
// re-read. Since Volta a warp's lanes are independently scheduled, so "all lanes execute the same
// instruction" is no longer true by itself; it has to be made true with __syncwarp. That needs a
// known set of lanes, so here all 32 lanes always run the same number of steps and the same sample
// slots, with a per-slot `valid` flag for samples that do not exist (row tails, the end of the
// plane), and the update is called with the full warp.
#pragma once

#include "core/histogram/kernels/common.cuh"

namespace histeq::hist::detail {

constexpr unsigned kFullWarp = 0xFFFFFFFFu;

// Sample i (0-based, in memory order) of a 16-byte unit. With a constant i (unrolled loops) this is
// one shift and mask; with a variable i it is selects, never a local-memory array.
template <class T>
__device__ __forceinline__ uint32_t sample_of(const uint4& v, int i) {
  constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));
  constexpr uint32_t kMask = sizeof(T) == 1 ? 0xFFu : 0xFFFFu;
  const int wi = i / kPerWord;
  const uint32_t w = wi == 0 ? v.x : wi == 1 ? v.y : wi == 2 ? v.z : v.w;
  return (w >> (8 * static_cast<int>(sizeof(T)) * (i % kPerWord))) & kMask;
}

template <class T>
constexpr int samples_per_unit() {
  return policy::kUnitBytes / static_cast<int>(sizeof(T));
}

// Reads the unit at `cur` into `v` and returns how many of its samples exist: all of them for a full
// 16-byte vector, fewer for a row tail or a unit of an unaligned plane (read sample by sample and
// zero-padded), none past the end of the plane.
template <class T>
__device__ __forceinline__ uint32_t fetch_unit(const PlaneGeometry& g, UnitCursor cur, uint4& v) {
  constexpr int kPer = samples_per_unit<T>();
  if (cur.r >= g.rows) {
    v = make_uint4(0, 0, 0, 0);
    return 0;
  }
  if (full_vector(g, cur)) {
    v = load_unit(g, cur);
    return kPer;
  }
  const size_t off = static_cast<size_t>(cur.c) * policy::kUnitBytes;
  const uint32_t n = static_cast<uint32_t>(min(static_cast<size_t>(policy::kUnitBytes), g.row_bytes - off) / sizeof(T));
  const T* p = reinterpret_cast<const T*>(g.base + cur.r * g.pitch + off);
  constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));
  uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < kPer; ++i)
    if (i < static_cast<int>(n)) w[i / kPerWord] |= static_cast<uint32_t>(p[i]) << (8 * sizeof(T) * (i % kPerWord));
  v = make_uint4(w[0], w[1], w[2], w[3]);
  return n;
}

// Fetches U units from `cur` on, `st` apart (advancing `cur`), all loads issued before any is used.
// Returns whether all U are full.
template <class T, int U>
__device__ __forceinline__ bool fetch_units(const PlaneGeometry& g, UnitCursor& cur, UnitStep st, uint4 (&v)[U], uint32_t (&n)[U]) {
  bool full = true;
#pragma unroll
  for (int k = 0; k < U; ++k) {
    n[k] = fetch_unit<T>(g, cur, v[k]);
    full &= n[k] == static_cast<uint32_t>(samples_per_unit<T>());
    advance(g, cur, st);
  }
  return full;
}

// Calls f(sample, valid) for every sample slot of a unit holding `n` samples; `all_full` must be
// warp-uniform (the fast path passes a constant `true`, which the inlined update folds away).
template <class T, class F>
__device__ __forceinline__ void visit_slots(const uint4& v, uint32_t n, bool all_full, F& f) {
  constexpr int kPer = samples_per_unit<T>();
  if (all_full) {
#pragma unroll
    for (int i = 0; i < kPer; ++i) f(sample_of<T>(v, i), true);
  } else {
    // Row tails and unaligned planes only: kept rolled to keep the hot loop's code small.
#pragma unroll 1
    for (int i = 0; i < kPer; ++i) f(sample_of<T>(v, i), i < static_cast<int>(n));
  }
}

// Warp-synchronous walk: `steps` (warp-uniform) steps of `st` from `cur` (advanced), U loads in
// flight, f(sample, valid) called by all 32 lanes for every slot. Lanes past the end see invalid
// slots. Must be called by whole warps with no lane exited.
template <class T, int U, class F>
__device__ __forceinline__ void walk_warp_sync(const PlaneGeometry& g, UnitCursor& cur, UnitStep st, uint32_t steps, F& f) {
  constexpr uint32_t kPer = samples_per_unit<T>();
  uint32_t i = 0;
  for (; i + U <= steps; i += U) {
    uint4 v[U];
    uint32_t n[U];
    const bool all_full = __all_sync(kFullWarp, fetch_units<T, U>(g, cur, st, v, n));
#pragma unroll
    for (int k = 0; k < U; ++k) visit_slots<T>(v[k], n[k], all_full, f);
  }
  for (; i < steps; ++i) {
    uint4 v;
    const uint32_t n = fetch_unit<T>(g, cur, v);
    advance(g, cur, st);
    visit_slots<T>(v, n, __all_sync(kFullWarp, n == kPer), f);
  }
}

// Podlozhnyuk's tagged increment (whitepaper listing 3; Nugteren et al. figure 4) of the counter
// `*p` of a warp histogram, for the lanes with `valid`. The word holds the lane tag of its last
// writer in the top bits and the count below `kCountMask`. Each round every pending lane reads the
// count, then (after a __syncwarp) writes count+1 with its own tag, then (after another) re-reads:
// the one lane whose tagged word survived is done, the others retry with the new count.
//
// Independent thread scheduling: the original relied on the lanes running in lockstep, so that all
// reads of a round happened before all writes and all writes before all re-reads. Without that, a
// lane could write a count read before another lane's successful round and both would leave the
// loop: a lost increment. The two __syncwarp calls restore exactly that ordering (and order the
// shared-memory accesses), and the loop condition is a full-warp vote, so every lane runs every
// round. Must be called by all 32 lanes (see walk_warp_sync).
template <uint32_t kCountMask>
__device__ __forceinline__ void tagged_increment(volatile uint32_t* p, bool valid, uint32_t tag) {
  bool pending = valid;
  do {
    uint32_t tagged = 0;
    if (pending) tagged = tag | ((*p & kCountMask) + 1u);
    __syncwarp();
    if (pending) *p = tagged;
    __syncwarp();
    if (pending) pending = *p != tagged;
  } while (__any_sync(kFullWarp, pending));
}

// Warp histograms of one block: `warps` arrays of `bins` 32-bit counters, warp w's at w * bins.
// Sums bin b over the warps (masking off tags) for the bins this thread owns in the block's
// merge, b = threadIdx.x + k * blockDim.x, calling out(b, sum).
template <int BINS, class Out>
__device__ __forceinline__ void sum_warp_histograms(const uint32_t* wh, int warps, uint32_t count_mask, Out&& out) {
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
    uint32_t sum = 0;
    for (int w = 0; w < warps; ++w) sum += wh[w * BINS + b] & count_mask;
    out(b, sum);
  }
}

// Steps per pass: the policy's bound, or less when KernelOptions::max_pass_steps asks for it.
inline uint32_t pass_steps(const KernelOptions& opts, int policy_steps) {
  const int s = opts.max_pass_steps > 0 ? std::min(opts.max_pass_steps, policy_steps) : policy_steps;
  return static_cast<uint32_t>(s);
}

// Zeroes `words` 32-bit words of shared memory with the whole block (caller synchronizes).
__device__ __forceinline__ void clear_shared(uint32_t* p, int words) {
  for (int i = threadIdx.x; i < words; i += blockDim.x) p[i] = 0;
}

}  // namespace histeq::hist::detail
