// The agent of method2_tuned (a public header of core/histogram, device side): the per-block work
// of thread-private histograms (Nugteren et al. 2011, §7, "method2") re-tuned for Hopper, as
// templates so that three users share one code: kernels/method2_tuned.cu (the registry kernel),
// core/equalize/ops/equalize/fused_gpu.cuh (histogram -> LUT -> apply in one launch) and bench/sweep/ (the sweep
// that chose policy::Method2Tuned). As CUB's agents: a kernel calls count_block() (every thread of
// the block), publish() and, in the last block, finish(); plan_for() (plan_tiles() for the tiled
// form, tiles_kernel) and l2_prefetch_for() size the launch on the host. Include from .cu files only (nvcc).
//
// What stays from §7: every lane owns a whole histogram in shared memory, all its counters in one
// bank (the paper's layout 2), so the hot loop is a plain load / add / store per sample with no
// atomics, no collisions and no branch on the data: its cost is the same for every picture.
//
// What changed, and why (numbers: docs/performance.md, "method2_tuned sweep"):
//  - One region per warp, not per block: warp w's lane l keeps bin b in word (b / P) * 32 + l of
//    region w (P = counters per 32-bit word). The bank of every access is the lane, whatever the
//    data; regions are warp-private, so blocks can hold many warps (the paper's 64-thread mappings
//    lost to bank sharing between warps on the GTX470; on Hopper bank conflicts exist only inside
//    one warp's instruction).
//  - Counter width is a template (8, 16 or 32 bits per counter): the trade between occupancy (how
//    many lanes fit in 228 KB) and instructions per sample / flushes.
//  - ILP without atomics: K samples of one lane are read-modified-written together (K loads, then
//    K stores in reverse order, where a store also carries the increments of later samples of the
//    group that hit the same word). The K loads are independent, so one lane has K samples in
//    flight instead of a load->add->store chain per sample; the combine is selects, not branches.
//  - Loads: 16-byte vectors, U per stage, optionally double-buffered (the next stage is loaded
//    before the current one is counted); the first stage is issued before the counters are zeroed
//    so that zeroing hides under the first memory latency.
//  - Bounded passes: a lane counts at most kPassUnitsMax units between two flushes (so a counter
//    never exceeds 2^bits - 1); a flush is warp-local (the warp sums its 32 private histograms into
//    the block's 32-bit histogram, reading 16-byte words with staggered columns: conflict-free).
//  - The merge costs the same for every picture: every block adds ALL its bins (never skipping a
//    zero) to a 32-bit device accumulator, and the last block to finish (a ticket) copies it to the
//    output and clears it for the next call. One launch, no memset, no per-bin branch.
//  - Samples outside the bit depth (16-bit planes only) go to a trash bin past the last one
//    (b = min(v >> shift, bins)), which is never read: a min, not a branch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/histogram/agent/plane.cuh"
#include "core/histogram/policy.h"

namespace histeq::hist::m2t {

using detail::PlaneGeometry;
using detail::UnitCursor;
using detail::UnitStep;

constexpr int kWarp = 32;
// The largest dynamic shared memory a block may ask for on Hopper (227 KB; sm_90 opt-in limit).
// Only sizes the template's warp limit: launches check the device's real limit.
constexpr size_t kHopperBlockSmem = 232448;

// The hot loop's shape (counter bits, ILP group, loads per stage, double buffering): policy.h.
template <int kBits, int kIlp, int kUnroll, bool kPrefetch>
using Loop = policy::Method2TunedLoop<kBits, kIlp, kUnroll, kPrefetch>;

// Sample -> bin. Direct: 8-bit samples, 256 bins (the hot path, with its own counter layout, see
// Counters). Shift: 8-bit samples, fewer bins. Clamp: 16-bit samples; values >= 2^bit_depth land
// in the trash bin `bins`.
struct DirectBin {
  static constexpr bool kDirect = true;
  __device__ __forceinline__ uint32_t operator()(uint32_t v) const { return v; }
};
struct ShiftBin {
  static constexpr bool kDirect = false;
  uint32_t shift;
  __device__ __forceinline__ uint32_t operator()(uint32_t v) const { return v >> shift; }
};
struct ClampBin {
  static constexpr bool kDirect = false;
  uint32_t shift, bins;
  __device__ __forceinline__ uint32_t operator()(uint32_t v) const { return min(v >> shift, bins); }
};

// Where the device-wide merge goes. Every block adds its whole histogram to acc[b * acc_stride]
// with fire-and-forget atomics, or, when `partials` is set, writes it to partials[block * bins + b]
// for the last block to sum (the sweep compares both). `ticket` counts finished blocks; the last one
// resets it and `acc` to zero, so the scratch is ready for the next launch. acc is 16-byte aligned.
struct Scratch {
  uint32_t* acc = nullptr;
  uint32_t acc_stride = 1;
  uint32_t* partials = nullptr;
  uint32_t* ticket = nullptr;
};

// An L2 prefetch of the plane's span (cp.async.bulk.prefetch, Hopper's bulk copy engine), shared
// out among the blocks: 16-byte aligned, a multiple of 16 bytes; bytes = 0 for none. Used when the
// plane fits in L2 comfortably: the loads of a few warps then find their data in L2, so memory
// parallelism no longer depends on how many lanes the counters leave room for.
struct L2Prefetch {
  const unsigned char* base = nullptr;
  uint64_t bytes = 0;
};

inline L2Prefetch l2_prefetch_for(const PlaneGeometry& g, size_t l2_bytes, size_t max_fraction_den) {
  L2Prefetch p;
  const uintptr_t b = reinterpret_cast<uintptr_t>(g.base);
  const uintptr_t e = b + (g.rows ? (g.rows - 1) * g.pitch + g.row_bytes : 0);
  const uintptr_t lo = (b + 15) & ~uintptr_t{15}, hi = e & ~uintptr_t{15};
  if (hi <= lo || (hi - lo) * max_fraction_den > l2_bytes) return p;
  p.base = reinterpret_cast<const unsigned char*>(lo);
  p.bytes = hi - lo;
  return p;
}

__device__ __forceinline__ void issue_l2_prefetch(const L2Prefetch& pf) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The bulk prefetch is Hopper's (sm_90+); older devices read straight from DRAM as the other
  // kernels do, which only costs the small-plane speed-up measured on the H100.
  if (pf.bytes == 0) return;
  constexpr uint64_t kPiece = 4096;
  const uint64_t per = (((pf.bytes + gridDim.x - 1) / gridDim.x) + 15) & ~uint64_t{15};
  const uint64_t lo = static_cast<uint64_t>(blockIdx.x) * per;
  const uint64_t hi = min(lo + per, pf.bytes);
  for (uint64_t o = lo + threadIdx.x * kPiece; o < hi; o += static_cast<uint64_t>(blockDim.x) * kPiece) {
    const uint32_t n = static_cast<uint32_t>(min(kPiece, hi - o));
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(pf.base + o), "r"(n) : "memory");
  }
#else
  (void)pf;
#endif
}

// Shared-memory access by 32-bit shared-window address. The hot loop addresses its counters this
// way (an add or a LEA per sample, no generic-to-shared conversion); volatile keeps the loads and
// stores of one lane in program order, which the read-modify-writes need when two samples hit the
// same word. C++ accesses to the same memory (zeroing, flushing) are fenced off from them by
// compiler_fence() and __syncwarp().
__device__ __forceinline__ uint32_t lds(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ void sts(uint32_t addr, uint32_t v) { asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(v)); }
__device__ __forceinline__ void compiler_fence() { asm volatile("" ::: "memory"); }

// 0xFFFF if byte J of w has its top bit set, else 0: PRMT with sign replication (one instruction).
template <int J>
__device__ __forceinline__ uint32_t top_bit_mask16(uint32_t w) {
  uint32_t r;
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(r) : "r"(w), "n"(0x4400 | ((8 | J) << 4) | (8 | J)));
  return r;
}

// The counters of a block for samples T, at most kCap bins, hot loop L.
//
// Layouts. Every lane's counters live in its own bank: row r of a warp region is 32 words, word l
// belonging to lane l. P = 32 / bits counters share a word.
//  - Direct (8-bit samples, 256 bins): row r holds bins r, r + 256/P, r + 2*256/P, ... (the low
//    bits of the sample pick the row, the high bits the counter in the word), so that a sample's
//    address is (its low bits << 7) + the lane's base (a mask and a LEA), and for 16-bit counters
//    the increment 1 or 0x10000 is 1 + (top bit of the byte replicated by PRMT): per sample, mask,
//    LEA, PRMT, load, add, store.
//  - Generic (fewer bins, 16-bit samples): row b / P, counter b % P; 16-bit samples have one more
//    row for the trash bin.
template <class T, int kCap, class L, bool kDirect_>
struct Counters {
  static constexpr bool kDirect = kDirect_;
  static constexpr int kBits = L::kBits;
  static constexpr int kPerWord = 32 / kBits;
  static_assert(!kDirect || (sizeof(T) == 1 && kCap == 256), "the direct layout is for 8-bit samples, 256 bins");
  static constexpr bool kTrash = sizeof(T) == 2;
  static constexpr int kRows = kDirect ? 256 / kPerWord : kCap / kPerWord + (kTrash ? 1 : 0);
  static constexpr uint32_t kRegionWords = static_cast<uint32_t>(kRows) * kWarp;
  static constexpr size_t kRegionBytes = size_t{kRegionWords} * 4;
  static constexpr size_t kBlockAccBytes = size_t{kCap} * 4;  // the block's 32-bit histogram
  static constexpr int kSamplesPerUnit = policy::kUnitBytes / static_cast<int>(sizeof(T));
  static_assert(kSamplesPerUnit % L::kIlp == 0, "ILP groups must divide a unit");
  // Units a lane may count between two flushes: at most 2^bits - 1 samples per counter, in whole
  // stages. 32-bit counters never need a flush (planes are < 2^32 samples).
  static constexpr uint32_t kPassUnitsMax =
      kBits == 32 ? 0xFFFFFFFFu
                  : static_cast<uint32_t>((((1u << kBits) - 1u) / kSamplesPerUnit) / L::kUnroll * L::kUnroll);
  static_assert(kBits == 32 || kPassUnitsMax >= static_cast<uint32_t>(L::kUnroll), "a pass must hold one stage");
  static constexpr int kMaxWarps = static_cast<int>(
      (kHopperBlockSmem - kBlockAccBytes) / kRegionBytes > 32 ? 32 : (kHopperBlockSmem - kBlockAccBytes) / kRegionBytes);
  static_assert(kMaxWarps >= 1, "one warp's counters must fit in a block");
  static constexpr int kMaxThreads = kMaxWarps * kWarp;

  // Dynamic shared memory: the regions first, then the block's histogram.
  static constexpr size_t smem_bytes(int warps) { return static_cast<size_t>(warps) * kRegionBytes + kBlockAccBytes; }

  // The bin that counter k of row r counts.
  __device__ static __forceinline__ uint32_t bin_of(uint32_t r, uint32_t k) {
    if constexpr (kDirect) return r + k * (256u / kPerWord);
    else return r * kPerWord + k;
  }

  // Increments are written 1 + e (e = 0 for 32-bit counters, 0 or 0xFFFF for 16-bit ones), which
  // lets the add fold the 1 into a three-input add.
  // Direct layout: byte J of w -> byte offset of its word from the lane's base, and its e.
  template <int J>
  __device__ static __forceinline__ uint32_t direct_offset(uint32_t w) {
    constexpr uint32_t m = 256u / kPerWord - 1u;  // the sample's row bits
    if constexpr (J == 0) return (w & m) << 7;
    else return (w & (m << (8 * J))) >> (8 * J - 7);
  }
  template <int J>
  __device__ static __forceinline__ uint32_t direct_extra(uint32_t w) {
    if constexpr (kBits == 32) return 0u;
    else if constexpr (kBits == 16) return top_bit_mask16<J>(w);    // increment 1 or 0x10000
    else return (1u << ((w >> (8 * J + 3)) & 0x18u)) - 1u;          // byte (top two bits)
  }
  // Generic layout: bin b -> offset and e.
  __device__ static __forceinline__ uint32_t generic_offset(uint32_t b) { return (b / kPerWord) << 7; }
  __device__ static __forceinline__ uint32_t generic_extra(uint32_t b) {
    if constexpr (kBits == 32) return 0u;
    else return (1u << ((b % kPerWord) * kBits)) - 1u;
  }

  // K samples of one lane: K independent loads, then K stores from the last to the first. A store
  // carries the increments of the later samples of the group that hit the same word, so the first
  // (and final) store to a word holds every increment to it; the later stores to that word were
  // overwritten by it. Selects, not branches; bank of every access = the lane.
  template <int K>
  __device__ static __forceinline__ void rmw(const uint32_t* a, const uint32_t* e) {
    if constexpr (K == 1) {
      sts(a[0], lds(a[0]) + e[0] + 1u);
    } else if constexpr (K == 2) {
      const uint32_t x0 = lds(a[0]), x1 = lds(a[1]);
      sts(a[1], x1 + e[1] + 1u);
      sts(a[0], x0 + e[0] + (a[0] == a[1] ? e[1] + 2u : 1u));
    } else {
      uint32_t x[K];
#pragma unroll
      for (int i = 0; i < K; ++i) x[i] = lds(a[i]);
#pragma unroll
      for (int i = K - 1; i >= 0; --i) {
        uint32_t n = x[i] + e[i] + 1u;
#pragma unroll
        for (int j = i + 1; j < K; ++j) n += a[j] == a[i] ? e[j] + 1u : 0u;
        sts(a[i], n);
      }
    }
  }

  template <class Bin>
  __device__ static __forceinline__ void add_unit(uint32_t base, const uint4& v, const Bin& bin) {
    uint32_t a[kSamplesPerUnit], in[kSamplesPerUnit];
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (kDirect) {
        a[4 * k + 0] = base + direct_offset<0>(w[k]);
        a[4 * k + 1] = base + direct_offset<1>(w[k]);
        a[4 * k + 2] = base + direct_offset<2>(w[k]);
        a[4 * k + 3] = base + direct_offset<3>(w[k]);
        in[4 * k + 0] = direct_extra<0>(w[k]);
        in[4 * k + 1] = direct_extra<1>(w[k]);
        in[4 * k + 2] = direct_extra<2>(w[k]);
        in[4 * k + 3] = direct_extra<3>(w[k]);
      } else if constexpr (sizeof(T) == 1) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const uint32_t b = bin((w[k] >> (8 * j)) & 0xFFu);
          a[4 * k + j] = base + generic_offset(b);
          in[4 * k + j] = generic_extra(b);
        }
      } else {
        const uint32_t b0 = bin(w[k] & 0xFFFFu), b1 = bin(w[k] >> 16);
        a[2 * k] = base + generic_offset(b0);
        in[2 * k] = generic_extra(b0);
        a[2 * k + 1] = base + generic_offset(b1);
        in[2 * k + 1] = generic_extra(b1);
      }
    }
#pragma unroll
    for (int g = 0; g < kSamplesPerUnit; g += L::kIlp) rmw<L::kIlp>(a + g, in + g);
  }

  // A unit that is not a full aligned vector (row tail, unaligned plane): sample by sample.
  template <class Bin>
  __device__ static __forceinline__ void add_partial(uint32_t base, const PlaneGeometry& g, UnitCursor cur, const Bin& bin) {
    const size_t off = static_cast<size_t>(cur.c) * policy::kUnitBytes;
    const size_t n = min(static_cast<size_t>(policy::kUnitBytes), g.row_bytes - off) / sizeof(T);
    const T* p = reinterpret_cast<const T*>(g.base + cur.r * g.pitch + off);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t v = static_cast<uint32_t>(p[i]);
      uint32_t a, in;
      if constexpr (kDirect) {
        a = base + direct_offset<0>(v);
        in = direct_extra<0>(v);
      } else {
        const uint32_t b = bin(v);
        a = base + generic_offset(b);
        in = generic_extra(b);
      }
      rmw<1>(&a, &in);
    }
  }

  // Zeroes the warp's rows [0, rows) with 16-byte stores (contiguous: conflict-free).
  __device__ static __forceinline__ void zero_region(uint32_t* region, uint32_t rows, uint32_t lane) {
    uint4* p = reinterpret_cast<uint4*>(region);
    const uint32_t n = rows * (kWarp / 4);
    for (uint32_t i = lane; i < n; i += kWarp) p[i] = make_uint4(0, 0, 0, 0);
  }

  // A 16-byte unit through L2 only (ld.global.cg): not the read-only path, because the fused kernel
  // writes the plane later in the same launch; and L2, where the fused apply finds it again.
  __device__ static __forceinline__ uint4 load16(const PlaneGeometry& g, UnitCursor cur) {
    return __ldcg(reinterpret_cast<const uint4*>(g.base + cur.r * g.pitch + static_cast<size_t>(cur.c) * policy::kUnitBytes));
  }

  // One stage of up to U units of this lane's grid-stride walk: the vectors, which of them are full
  // aligned vectors, the cursor of the first one, and how many are valid.
  struct Stage {
    uint4 v[L::kUnroll];
    UnitCursor first;
    uint32_t full, n;
  };

  __device__ static __forceinline__ void load_stage(const PlaneGeometry& g, UnitCursor& cur, UnitStep st, uint32_t n,
                                                    Stage& s) {
    s.first = cur;
    s.full = 0;
    s.n = n;
#pragma unroll
    for (int k = 0; k < L::kUnroll; ++k) {
      if (static_cast<uint32_t>(k) < n) {
        if (detail::full_vector(g, cur)) {
          s.v[k] = load16(g, cur);
          s.full |= 1u << k;
        }
        detail::advance(g, cur, st);
      }
    }
  }

  template <class Bin>
  __device__ static __forceinline__ void count_stage(uint32_t base, const PlaneGeometry& g, UnitStep st, const Stage& s,
                                                     const Bin& bin) {
#pragma unroll
    for (int k = 0; k < L::kUnroll; ++k) {
      if (static_cast<uint32_t>(k) < s.n) {
        if (s.full & (1u << k)) {
          add_unit(base, s.v[k], bin);
        } else {  // rare: re-derive the unit's cursor
          UnitCursor c = s.first;
          for (int j = 0; j < k; ++j) detail::advance(g, c, st);
          add_partial(base, g, c, bin);
        }
      }
    }
  }

  // Counts one pass: `warp_units` stages' worth of units for the warp (warp-uniform), of which this
  // lane has `lane_units`. When `zero_rows` > 0 the region is zeroed after the first stage's loads
  // are issued (and before any counting), so zeroing overlaps the first memory latency.
  template <class Bin>
  __device__ static __forceinline__ void count_pass(uint32_t* region, uint32_t base, const PlaneGeometry& g,
                                                    UnitCursor& cur, UnitStep st, uint32_t warp_units,
                                                    uint32_t lane_units, uint32_t zero_rows, uint32_t lane,
                                                    const Bin& bin) {
    constexpr uint32_t U = L::kUnroll;
    auto lane_n = [&](uint32_t i) { return lane_units > i ? min(U, lane_units - i) : 0u; };
    auto zero = [&]() {
      zero_region(region, zero_rows, lane);
      __syncwarp();
      compiler_fence();
    };
    if constexpr (L::kPrefetch) {
      Stage a;
      load_stage(g, cur, st, lane_n(0), a);
      if (zero_rows) zero();
      for (uint32_t i = 0; i < warp_units; i += U) {
        Stage b;
        load_stage(g, cur, st, lane_n(i + U), b);  // n = 0 past the end: no load
        count_stage(base, g, st, a, bin);
        a = b;
      }
    } else {
      for (uint32_t i = 0; i < warp_units; i += U) {
        Stage a;
        load_stage(g, cur, st, lane_n(i), a);
        if (i == 0 && zero_rows) zero();
        count_stage(base, g, st, a, bin);
      }
    }
    compiler_fence();
  }

  // The warp sums its 32 lanes' counters of bins [0, bins) and adds them to the block's 32-bit
  // histogram (shared atomics: one per bin and warp whatever the data, W-way at most). Lane l takes
  // rows l, l + 32, ...; it reads a row as 8 16-byte words starting at word l % 8, so that the 8
  // lanes of a quarter-warp phase read 8 distinct bank groups. With `clear`, the rows are zeroed
  // for the next pass (the trash row is never read, and its overflow stays inside its own word).
  __device__ static __forceinline__ void flush(uint32_t* region, uint32_t* block_acc, uint32_t bins, uint32_t lane,
                                               bool clear) {
    const uint32_t rows = kDirect ? static_cast<uint32_t>(kRows) : (bins + kPerWord - 1) / kPerWord;
    for (uint32_t r = lane; r < rows; r += kWarp) {
      uint4* rowp = reinterpret_cast<uint4*>(region + r * kWarp);
      uint32_t s0 = 0, s1 = 0;
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const uint32_t k = (q + lane) & 7u;
        const uint4 v = rowp[k];
        if (clear) rowp[k] = make_uint4(0, 0, 0, 0);
        if constexpr (kBits == 32) {
          s0 += v.x + v.y + v.z + v.w;
        } else if constexpr (kBits == 16) {
          // s0: the words' sum; s1: the high halves'. The low halves' sum (< 2^21) is s0 - (s1 << 16).
          s0 += v.x + v.y + v.z + v.w;
          s1 += (v.x >> 16) + (v.y >> 16) + (v.z >> 16) + (v.w >> 16);
        } else {
          // bytes 0 and 2 in s0, 1 and 3 in s1, as 16-bit lanes (32 x 255 < 2^16: no carry)
          s0 += (v.x & 0x00FF00FFu) + (v.y & 0x00FF00FFu) + (v.z & 0x00FF00FFu) + (v.w & 0x00FF00FFu);
          s1 += ((v.x >> 8) & 0x00FF00FFu) + ((v.y >> 8) & 0x00FF00FFu) + ((v.z >> 8) & 0x00FF00FFu) +
                ((v.w >> 8) & 0x00FF00FFu);
        }
      }
      if constexpr (kBits == 32) {
        atomicAdd(&block_acc[bin_of(r, 0)], s0);
      } else if constexpr (kBits == 16) {
        atomicAdd(&block_acc[bin_of(r, 0)], s0 - (s1 << 16));
        if (bin_of(r, 1) < bins) atomicAdd(&block_acc[bin_of(r, 1)], s1);
      } else {
        const uint32_t c[4] = {s0 & 0xFFFFu, s1 & 0xFFFFu, s0 >> 16, s1 >> 16};
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (bin_of(r, i) < bins) atomicAdd(&block_acc[bin_of(r, i)], c[i]);
      }
    }
  }
};

template <class T, int kCap, class L, class Bin>
using CountersFor = Counters<T, kCap, L, Bin::kDirect>;

// Counts the block's share of the plane into block_acc (shared, `bins` words; on return complete,
// after a block barrier). `sh` is the dynamic shared memory: one region per counting warp, then
// block_acc. Only the first `counting_warps` warps of the block count (the fused kernel has more
// warps than counters); all threads must call it. Grid-stride over 16-byte units.
template <class T, int kCap, class L, class Bin>
__device__ __forceinline__ uint32_t* count_block(const PlaneGeometry& g, const Bin& bin, uint32_t bins, uint32_t pass_units,
                                                 uint32_t* sh, uint32_t counting_warps, const L2Prefetch& pf) {
  using C = CountersFor<T, kCap, L, Bin>;
  const uint32_t t = threadIdx.x, lane = t % kWarp, warp = t / kWarp;
  const uint32_t counting = counting_warps * kWarp;
  uint32_t* block_acc = sh + counting_warps * C::kRegionWords;
  uint32_t* region = sh + warp * C::kRegionWords;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(region + lane));
  issue_l2_prefetch(pf);
  for (uint32_t b = t; b < bins; b += blockDim.x) block_acc[b] = 0;
  __syncthreads();  // block_acc is zero before any warp flushes into it

  const uint32_t total = g.total_units();
  const uint32_t stride = gridDim.x * counting;
  const uint32_t gid = blockIdx.x * counting + t;
  const uint32_t lane_units = t < counting && gid < total ? (total - 1 - gid) / stride + 1 : 0;
  const uint32_t warp_units = __shfl_sync(0xFFFFFFFFu, lane_units, 0);  // lane 0 has the most
  // Rows the lanes may touch: the counted bins' rows plus the trash row of 16-bit samples.
  const uint32_t used_rows = C::kDirect ? static_cast<uint32_t>(C::kRows)
                                        : (bins + C::kPerWord - 1) / C::kPerWord + (C::kTrash ? 1 : 0);
  UnitCursor cur = detail::cursor_at(g, min(gid, total));
  const UnitStep st = detail::step_of(g, stride);
  for (uint32_t done = 0; done < warp_units; done += pass_units) {
    const uint32_t wn = min(pass_units, warp_units - done);
    const uint32_t ln = lane_units > done ? min(pass_units, lane_units - done) : 0u;
    C::count_pass(region, base, g, cur, st, wn, ln, done == 0 ? used_rows : 0u, lane, bin);
    __syncwarp();
    C::flush(region, block_acc, bins, lane, done + pass_units < warp_units);
    __syncwarp();
    compiler_fence();
  }
  __syncthreads();
  return block_acc;
}

// Adds the block's histogram to the device-wide merge, then takes a ticket. Returns true in every
// thread of the last block to finish, which then owns the complete sums (finish()).
__device__ __forceinline__ bool publish(const uint32_t* block_acc, uint32_t bins, const Scratch& s, uint32_t* flag) {
  for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x) {
    if (s.partials) s.partials[static_cast<size_t>(blockIdx.x) * bins + b] = block_acc[b];
    else atomicAdd(&s.acc[b * s.acc_stride], block_acc[b]);  // every bin, zero or not
  }
  __syncthreads();  // the block's sums are issued; thread 0's fence makes them visible (cumulative)
  if (threadIdx.x == 0) {
    __threadfence();
    *flag = atomicAdd(s.ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  const bool last = *flag != 0;
  if (last) __threadfence();  // the other blocks' sums are visible to this one
  return last;
}

// The last block: the complete histogram into dst[0, bins) (shared or global), the scratch cleared
// for the next launch. With acc_stride 1 the accumulator is read and cleared in 16-byte words.
__device__ __forceinline__ void finish(uint32_t bins, const Scratch& s, uint32_t* dst) {
  if (s.partials) {
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x) {
      const uint32_t* p = s.partials + b;
      uint32_t blk = 0;
      uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      for (; blk + 4 <= gridDim.x; blk += 4) {
        a0 += __ldcg(p + size_t{blk} * bins);
        a1 += __ldcg(p + size_t{blk + 1} * bins);
        a2 += __ldcg(p + size_t{blk + 2} * bins);
        a3 += __ldcg(p + size_t{blk + 3} * bins);
      }
      for (; blk < gridDim.x; ++blk) a0 += __ldcg(p + size_t{blk} * bins);
      dst[b] = a0 + a1 + a2 + a3;
    }
  } else if (s.acc_stride == 1 && bins % 4 == 0) {
    uint4* acc4 = reinterpret_cast<uint4*>(s.acc);
    for (uint32_t i = threadIdx.x; i < bins / 4; i += blockDim.x) {
      const uint4 v = __ldcg(acc4 + i);
      acc4[i] = make_uint4(0, 0, 0, 0);
      dst[4 * i] = v.x;
      dst[4 * i + 1] = v.y;
      dst[4 * i + 2] = v.z;
      dst[4 * i + 3] = v.w;
    }
  } else {
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x) {
      dst[b] = __ldcg(&s.acc[b * s.acc_stride]);
      s.acc[b * s.acc_stride] = 0;
    }
  }
  if (threadIdx.x == 0) *s.ticket = 0;
}

// The histogram kernel: count, publish, and the last block writes `out` (device, `bins` words).
template <class T, int kCap, class L, class Bin>
__global__ void __launch_bounds__(CountersFor<T, kCap, L, Bin>::kMaxThreads)
    histogram_kernel(PlaneGeometry g, Bin bin, uint32_t bins, uint32_t pass_units, Scratch s, L2Prefetch pf,
                     uint32_t* __restrict__ out) {
  extern __shared__ uint4 m2t_smem[];
  uint32_t* sh = reinterpret_cast<uint32_t*>(m2t_smem);
  uint32_t* block_acc = count_block<T, kCap, L>(g, bin, bins, pass_units, sh, blockDim.x / kWarp, pf);
  __shared__ uint32_t s_last;
  if (publish(block_acc, bins, s, &s_last)) finish(bins, s, out);
}

// The tiled form (CLAHE's tile histograms, one launch): tile blockIdx.y's histogram into
// out[tile * bins, +bins). The gridDim.x blocks of a tile walk its pitched sub-plane as the
// whole-plane kernel walks a plane. A tile of one block writes its sums directly; blocks that share
// a tile merge through that tile's own accumulator (bins words at s.acc + tile * bins, stride 1)
// and ticket (s.ticket[tile]), the last of them writing the output and clearing both, as above.
template <class T, int kCap, class L, class Bin>
__global__ void __launch_bounds__(CountersFor<T, kCap, L, Bin>::kMaxThreads)
    tiles_kernel(detail::TiledPlane tp, Bin bin, uint32_t bins, uint32_t pass_units, Scratch s, uint32_t* __restrict__ out) {
  extern __shared__ uint4 m2t_smem[];
  uint32_t* sh = reinterpret_cast<uint32_t*>(m2t_smem);
  const uint32_t tile = blockIdx.y;
  const PlaneGeometry g = detail::tile_geometry(tp, tile);
  uint32_t* block_acc = count_block<T, kCap, L>(g, bin, bins, pass_units, sh, blockDim.x / kWarp, L2Prefetch{});
  uint32_t* dst = out + static_cast<size_t>(tile) * bins;
  if (gridDim.x == 1) {
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x) dst[b] = block_acc[b];
    return;
  }
  s.acc += static_cast<size_t>(tile) * bins;
  s.acc_stride = 1;
  s.ticket += tile;
  __shared__ uint32_t s_last;
  if (publish(block_acc, bins, s, &s_last)) finish(bins, s, dst);
}

// Launch geometry: `blocks` blocks of `warps` warps.
struct Plan {
  int blocks = 1;
  int warps = 1;
};

// The plan for `units` 16-byte units: as many warps per SM as the counters allow (max_warps), but
// no more than give each lane `units_per_lane` units; then as few blocks (<= one per SM) as hold
// the work at that share. Small planes thus use fewer warps on every SM (less to zero and merge)
// before they use fewer SMs. `max_blocks` > 0 caps the grid (tests, sweeps).
inline Plan plan_for(uint64_t units, int sms, int max_warps, int units_per_lane, int max_blocks) {
  Plan p;
  const uint64_t per_warp = uint64_t{kWarp} * static_cast<uint64_t>(units_per_lane);
  const uint64_t warps_needed = (units + per_warp - 1) / per_warp;
  const uint64_t per_sm = (warps_needed + static_cast<uint64_t>(sms) - 1) / static_cast<uint64_t>(sms);
  p.warps = static_cast<int>(per_sm < 1 ? 1 : per_sm > static_cast<uint64_t>(max_warps) ? max_warps : per_sm);
  const uint64_t blocks = (warps_needed + static_cast<uint64_t>(p.warps) - 1) / static_cast<uint64_t>(p.warps);
  p.blocks = static_cast<int>(blocks < 1 ? 1 : blocks > static_cast<uint64_t>(sms) ? sms : blocks);
  if (max_blocks > 0 && p.blocks > max_blocks) p.blocks = max_blocks;
  return p;
}

// The plan for `tiles` tiles of at most `tile_units` units each: plan_for() on one tile with the
// SMs shared out among the tiles (at least one each), so that a frame's tiles fill the GPU once, as
// a whole plane does. With more tiles than SMs (a block a tile), fewer warps a block until every
// tile's block is resident at once (`smem_of(warps)` a block, `smem_per_sm` an SM): a second wave
// cost more than longer lanes in the sweep (docs/performance.md, "method2_tuned's tiled form").
// `blocks` is then blocks per tile; `max_blocks` > 0 caps it at max_blocks / tiles (at least one).
template <class SmemOf>
inline Plan plan_tiles(uint64_t tile_units, int tiles, int sms, int max_warps, int units_per_lane, int max_blocks,
                       SmemOf smem_of, size_t smem_per_sm) {
  const int sms_per_tile = tiles >= sms ? 1 : sms / tiles;
  Plan p = plan_for(tile_units, sms_per_tile, max_warps, units_per_lane, 0);
  if (tiles > sms) {
    const size_t per_sm = static_cast<size_t>((tiles + sms - 1) / sms);
    while (p.warps > 1 && per_sm * smem_of(p.warps) > smem_per_sm) --p.warps;
  }
  if (max_blocks > 0) {
    const int cap = max_blocks / tiles < 1 ? 1 : max_blocks / tiles;
    if (p.blocks > cap) p.blocks = cap;
  }
  return p;
}

}  // namespace histeq::hist::m2t
