// The fused equalization kernel (fused_gpu.h) and its LUT-builder hook. Include this header from a
// .cu file to instantiate FusedEqualizer::run_with() for a builder of your own.
//
// A LUT builder is a trivially copyable struct (it is passed to the kernel by value) with
//
//   __device__ void operator()(const LutBuildArgs& a) const;
//
// The kernel calls it once per frame, in every thread of exactly one block (the last block to finish
// counting; blockDim.x is a multiple of 32, at most 1024), after a.hist holds the frame's complete
// histogram. When all threads return, a.lut[0, a.bins) must be complete (the kernel synchronizes
// the block right after the call; a builder that reads what other threads wrote synchronizes
// itself, e.g. through block_inclusive_scan). Entries must be < a.bins. A builder may keep state
// across frames in device memory that it points to: only this one block runs it, and frames on one
// stream are ordered (the temporal smoothing and clip limits plug in here). It must not call
// grid-wide synchronization or wait on other blocks. PlainLutBuilder below is the model: lut.h's
// formula within the frame's levels, the same as build_lut_gpu.
//
//   struct MyBuilder {            // e.g. TemporalFoldBuilder, core/equalize/ops/temporal/temporal_gpu.cu
//     float* state;
//     __device__ void operator()(const eq::LutBuildArgs& a) const { ... }
//   };
//   HISTEQ_TRY(fused.run_with(plane, weight, MyBuilder{d_state}, stream));
//
// An applier (apply_with) replaces the LUT's apply on the counted plane: a trivially copyable
// struct with a type Stage and
//
//   __device__ void load(Stage& s, uint32_t gid, uint32_t stride) const;
//   __device__ void apply(Stage& s, const uint16_t* lut, uint32_t bins, uint32_t gid, uint32_t stride) const;
//
// Every thread of the grid calls load() once the block has counted, before the LUT is known (its
// loads overlap the last block's build: the data is in L2 since the counting), then apply() with
// the LUT complete in the block's shared memory (bins entries). gid: the thread's index in the
// grid, stride: the grid's threads. The colour pass is the model (ops/apply/colour_device.cuh, FusedColour).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/equalize/ops/equalize/fused_gpu.h"
#include "core/equalize/lut.h"
#include "core/histogram/agent/method2_tuned.cuh"

namespace histeq::eq {

// What a LUT builder gets; every array is in the building block's shared memory.
struct LutBuildArgs {
  uint32_t* hist;  // bins: the frame's histogram (the builder may overwrite it)
  uint16_t* lut;   // bins: the builder's output
  uint32_t* work;  // bins words of scratch
  uint32_t* vars;  // 64 words of scratch (block_inclusive_scan needs 32 of them)
  uint32_t bins;   // 2^bit_depth of the plane, 2..1024
  uint32_t weight; // the call's strength weight, 0..kWeightOne
};

// Inclusive prefix sum of data[0, n) in place, by all threads of the block (blockDim.x a multiple
// of 32). `tmp`: 32 words of shared memory. Contains barriers: call it from every thread.
__device__ inline void block_inclusive_scan(uint32_t* data, uint32_t n, uint32_t* tmp) {
  const uint32_t nt = blockDim.x, t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint32_t per = (n + nt - 1) / nt;
  const uint32_t lo = min(t * per, n), hi = min(lo + per, n);
  __syncthreads();  // data complete
  uint32_t sum = 0;
  for (uint32_t i = lo; i < hi; ++i) {
    sum += data[i];
    data[i] = sum;
  }
  uint32_t x = sum;  // inclusive scan of the threads' chunk sums, within the warp
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, x, o);
    if (lane >= static_cast<uint32_t>(o)) x += y;
  }
  if (lane == 31) tmp[warp] = x;
  __syncthreads();
  if (warp == 0) {
    const uint32_t warps = nt / 32;
    uint32_t v = lane < warps ? tmp[lane] : 0u;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const uint32_t y = __shfl_up_sync(0xFFFFFFFFu, v, o);
      if (lane >= static_cast<uint32_t>(o)) v += y;
    }
    tmp[lane] = v;  // inclusive over warps
  }
  __syncthreads();
  const uint32_t offset = (x - sum) + (warp > 0 ? tmp[warp - 1] : 0u);
  for (uint32_t i = lo; i < hi; ++i) data[i] += offset;
  __syncthreads();
}

// lut.h's formula within `levels`, as build_lut_gpu: CDF by a block scan; cdf_min = the CDF of the
// one bin lut.h's is_first_counted picks (N when none does); bins below lo take the CDF at lo.
struct PlainLutBuilder {
  Levels levels;
  __device__ void operator()(const LutBuildArgs& a) const {
    const uint32_t t = threadIdx.x, nt = blockDim.x;
    for (uint32_t v = t; v < a.bins; v += nt) a.work[v] = a.hist[v];
    if (t == 0) a.vars[33] = 0;  // no first counted bin yet
    block_inclusive_scan(a.work, a.bins, a.vars);
    for (uint32_t v = t; v < a.bins; v += nt) {
      if (is_first_counted(v, a.hist[v], a.work[v], levels)) {
        a.vars[32] = a.work[v];
        a.vars[33] = 1;
      }
    }
    __syncthreads();
    const uint32_t total = a.work[a.bins - 1], cdf_min = a.vars[33] != 0 ? a.vars[32] : total;
    for (uint32_t v = t; v < a.bins; v += nt)
      a.lut[v] = static_cast<uint16_t>(lut_entry(v, a.work[clamp_level(v, levels)], cdf_min, total, levels, a.weight));
  }
};

namespace fused_detail {

// Threads of a fused block: the counting warps (as many as the counters allow, <= this) and the
// others, which only apply. policy::Method2Tuned::kFusedThreads.
constexpr int policy_fused_threads = hist::policy::Method2Tuned::kFusedThreads;

using hist::m2t::CountersFor;
using hist::detail::PlaneGeometry;
using hist::detail::UnitCursor;
using hist::detail::UnitStep;

struct Params {
  PlaneGeometry g;             // the plane (g.base is the caller's mutable plane)
  uint32_t bins;               // 2^bit_depth
  uint32_t pass_units;         // units per lane between two counter flushes
  uint32_t counting_warps;     // the first warps of a block count; all of them apply
  uint32_t weight;
  hist::m2t::Scratch s;        // acc (stride 1), ticket
  hist::m2t::L2Prefetch pf;    // the plane's span when it fits in L2
  uint32_t* gen;               // LUT generation
  uint16_t* lut;               // the published LUT (device, kMaxBins, 16-byte aligned)
  uint32_t* out_hist;          // optional copies (count_with: the outputs)
  uint16_t* out_lut;
  bool apply;                  // false (count_with): the plane is only counted, the LUT only built
};

__device__ __forceinline__ uint32_t ld_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// The LUT replicated once per lane, lane l's copy in bank l (as method2's counters), so that the
// apply's table reads never conflict whatever the picture. 8-bit: byte v of lane l at word
// (v / 4) * 32 + l, byte v % 4; 16-bit: halfword v at word (v / 2) * 32 + l, half v % 2.
template <class T>
struct Table {
  static constexpr uint32_t bytes(uint32_t bins) { return sizeof(T) == 1 ? 256u * 32u : bins * 2u * 32u; }

  __device__ static __forceinline__ void fill(uint32_t* table, const uint16_t* lut, uint32_t bins) {
    const uint32_t words = bytes(bins) / 4;
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) {
      const uint32_t r = i / 32;
      if constexpr (sizeof(T) == 1) {
        table[i] = (lut[4 * r] & 0xFFu) | (lut[4 * r + 1] & 0xFFu) << 8 | (lut[4 * r + 2] & 0xFFu) << 16 |
                   (lut[4 * r + 3] & 0xFFu) << 24;
      } else {
        table[i] = static_cast<uint32_t>(lut[2 * r]) | static_cast<uint32_t>(lut[2 * r + 1]) << 16;
      }
    }
  }

  // 8-bit planes have bins == 256: every value has an entry. 16-bit: values >= bins stay.
  __device__ static __forceinline__ uint32_t map(const unsigned char* table, uint32_t lane4, uint32_t v, uint32_t bins) {
    if constexpr (sizeof(T) == 1) {
      return table[(v & ~3u) * 32u + lane4 + (v & 3u)];
    } else {
      const uint32_t c = min(v, bins - 1);
      const uint32_t m = *reinterpret_cast<const uint16_t*>(table + (c & ~1u) * 64u + lane4 + (c & 1u) * 2u);
      return v < bins ? m : v;
    }
  }

  __device__ static __forceinline__ uint32_t map_word(const unsigned char* table, uint32_t lane4, uint32_t w, uint32_t bins) {
    if constexpr (sizeof(T) == 1) {
      return map(table, lane4, w & 0xFFu, bins) | map(table, lane4, (w >> 8) & 0xFFu, bins) << 8 |
             map(table, lane4, (w >> 16) & 0xFFu, bins) << 16 | map(table, lane4, w >> 24, bins) << 24;
    } else {
      return map(table, lane4, w & 0xFFFFu, bins) | map(table, lane4, w >> 16, bins) << 16;
    }
  }
};

// Up to U units of a lane's apply walk: loaded before the LUT is known (they overlap the wait), then
// mapped and stored.
template <int U>
struct ApplyStage {
  uint4 v[U];
  UnitCursor at[U];
  uint32_t full, n;
};

template <int U>
__device__ __forceinline__ void apply_load(const PlaneGeometry& g, UnitCursor& cur, UnitStep st, uint32_t n,
                                           ApplyStage<U>& s) {
  s.full = 0;
  s.n = n;
#pragma unroll
  for (int k = 0; k < U; ++k) {
    if (static_cast<uint32_t>(k) < n) {
      s.at[k] = cur;
      if (hist::detail::full_vector(g, cur)) {
        s.v[k] = __ldcg(reinterpret_cast<const uint4*>(g.base + cur.r * g.pitch + static_cast<size_t>(cur.c) * 16));
        s.full |= 1u << k;
      }
      hist::detail::advance(g, cur, st);
    }
  }
}

template <class T, int U>
__device__ __forceinline__ void apply_store(const PlaneGeometry& g, const ApplyStage<U>& s, const unsigned char* table,
                                            uint32_t lane4, uint32_t bins) {
  unsigned char* base = const_cast<unsigned char*>(g.base);
#pragma unroll
  for (int k = 0; k < U; ++k) {
    if (static_cast<uint32_t>(k) < s.n) {
      const UnitCursor c = s.at[k];
      const size_t off = c.r * g.pitch + static_cast<size_t>(c.c) * 16;
      if (s.full & (1u << k)) {
        uint4 o;
        o.x = Table<T>::map_word(table, lane4, s.v[k].x, bins);
        o.y = Table<T>::map_word(table, lane4, s.v[k].y, bins);
        o.z = Table<T>::map_word(table, lane4, s.v[k].z, bins);
        o.w = Table<T>::map_word(table, lane4, s.v[k].w, bins);
        *reinterpret_cast<uint4*>(base + off) = o;
      } else {  // row tail or unaligned rows: sample by sample
        const size_t n = min(size_t{16}, g.row_bytes - static_cast<size_t>(c.c) * 16) / sizeof(T);
        T* p = reinterpret_cast<T*>(base + off);
        for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(Table<T>::map(table, lane4, p[i], bins));
      }
    }
  }
}

// Shared memory: [counter regions: counting warps x kRegionWords][block histogram: kCap words]
//                [work: kCap words][lut: kCap halfwords][vars: 64 words]
// The LUT table (Table<T>) reuses the counter regions once the counters are merged.
template <class T, int kCap, class L, class Bin>
constexpr size_t smem_bytes(int counting_warps) {
  return CountersFor<T, kCap, L, Bin>::smem_bytes(counting_warps) + size_t{kCap} * 4 + size_t{kCap} * 2 + 64 * 4;
}

// Copies `bins` halfwords (both ends 16-byte aligned) in 16-byte words; tiny LUTs one by one.
__device__ __forceinline__ void copy_lut16(uint16_t* dst, const uint16_t* src, uint32_t bins, bool from_l2) {
  if (bins % 8 != 0) {
    for (uint32_t i = threadIdx.x; i < bins; i += blockDim.x) dst[i] = from_l2 ? __ldcg(src + i) : src[i];
    return;
  }
  const uint4* s4 = reinterpret_cast<const uint4*>(src);
  uint4* d4 = reinterpret_cast<uint4*>(dst);
  for (uint32_t i = threadIdx.x; i < bins / 8; i += blockDim.x) d4[i] = from_l2 ? __ldcg(s4 + i) : s4[i];
}

// The last block's curve, every thread of it: the frame's histogram into shared memory (the
// accumulator cleared), then the builder's LUT.
template <class Builder>
__device__ __forceinline__ void build_curve(const Params& p, const Builder& builder, uint32_t* hist, uint16_t* lut, uint32_t* work,
                                            uint32_t* vars) {
  hist::m2t::finish(p.bins, p.s, hist);
  __syncthreads();
  builder(LutBuildArgs{hist, lut, work, vars, p.bins, p.weight});
  __syncthreads();
}

// The optional copies of the LUT and the histogram (FusedOutputs).
__device__ __forceinline__ void put_out(const Params& p, const uint16_t* lut, const uint32_t* hist) {
  if (p.out_lut)
    for (uint32_t v = threadIdx.x; v < p.bins; v += blockDim.x) p.out_lut[v] = lut[v];
  if (p.out_hist)
    for (uint32_t v = threadIdx.x; v < p.bins; v += blockDim.x) p.out_hist[v] = hist[v];
}

// run_with's and count_with's applier: the LUT on the counted plane, the kernel's own apply below.
struct LutApply {};

// The LUT into every block's shared memory: the last block builds and publishes it (then the
// optional copies), the others wait for its generation and copy it. Ends with a barrier.
template <class Builder>
__device__ __forceinline__ void share_lut(const Params& p, const Builder& builder, bool last, uint32_t gen_before, uint32_t* hist,
                                          uint16_t* lut, uint32_t* work, uint32_t* vars) {
  if (last) {
    build_curve(p, builder, hist, lut, work, vars);
    copy_lut16(p.lut, lut, p.bins, false);
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      st_release(p.gen, gen_before + 1);  // the LUT is out
    }
    put_out(p, lut, hist);  // for a display: off the other blocks' path
  } else {
    if (threadIdx.x == 0)
      while (ld_acquire(p.gen) == gen_before) __nanosleep(20);
    __syncthreads();
    copy_lut16(lut, p.lut, p.bins, true);
  }
  __syncthreads();
}

template <class T, int kCap, class L, int kApplyUnroll, class Bin, class Builder, class Applier>
__global__ void __launch_bounds__(policy_fused_threads) fused_kernel(Params p, Bin bin, Builder builder, Applier applier) {
  using C = CountersFor<T, kCap, L, Bin>;
  // (the LUT table fits in the counting warps' regions: launch() sees to it)
  extern __shared__ uint4 fused_smem[];
  uint32_t* sh = reinterpret_cast<uint32_t*>(fused_smem);
  uint32_t* regions = sh;
  uint32_t* hist = sh + p.counting_warps * C::kRegionWords;
  uint32_t* work = hist + kCap;
  uint16_t* lut = reinterpret_cast<uint16_t*>(work + kCap);
  uint32_t* vars = reinterpret_cast<uint32_t*>(lut + kCap);

  // The generation before this launch's LUT: read before this block's ticket, so before the last
  // block can bump it.
  __shared__ uint32_t s_gen, s_last;
  if (threadIdx.x == 0) s_gen = __ldcg(p.gen);

  hist::m2t::count_block<T, kCap, L>(p.g, bin, p.bins, p.pass_units, sh, p.counting_warps, p.pf);  // ends with a barrier
  const bool last = hist::m2t::publish(hist, p.bins, p.s, &s_last);
  if (!p.apply) {  // count_with: nobody waits for the LUT, so no generation to bump
    if (last) {
      build_curve(p, builder, hist, lut, work, vars);
      put_out(p, lut, hist);
    }
    return;
  }

  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
  if constexpr (!std::is_same_v<Applier, LutApply>) {
    typename Applier::Stage stage;
    applier.load(stage, gid, stride);
    share_lut(p, builder, last, s_gen, hist, lut, work, vars);
    applier.apply(stage, lut, p.bins, gid, stride);
    return;
  }

  // This thread's first units to apply, loaded while the LUT is built (all threads of the block
  // apply, a grid-stride over the plane; the data is in L2 since the counting).
  const uint32_t total = p.g.total_units();
  const uint32_t lane_units = gid < total ? (total - 1 - gid) / stride + 1 : 0;
  UnitCursor cur = hist::detail::cursor_at(p.g, min(gid, total));
  const UnitStep st = hist::detail::step_of(p.g, stride);
  ApplyStage<kApplyUnroll> a;
  apply_load(p.g, cur, st, min(static_cast<uint32_t>(kApplyUnroll), lane_units), a);

  share_lut(p, builder, last, s_gen, hist, lut, work, vars);
  Table<T>::fill(regions, lut, p.bins);
  __syncthreads();

  const unsigned char* table = reinterpret_cast<const unsigned char*>(regions);
  const uint32_t lane4 = (threadIdx.x % 32) * 4;
  for (uint32_t i = 0;;) {
    apply_store<T, kApplyUnroll>(p.g, a, table, lane4, p.bins);
    i += kApplyUnroll;
    if (i >= lane_units) break;
    apply_load(p.g, cur, st, min(static_cast<uint32_t>(kApplyUnroll), lane_units - i), a);
  }
}

// kernel<<<grid, block, smem, stream>>>(args...) as a cooperative launch: every block resident at
// once, or the launch fails.
template <class... KArgs, class... Args>
Status launch_cooperative(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  HISTEQ_CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, args...));
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

// What launch() asks the runtime about kKernel, once per device (per process), so that a frame's
// launch costs the host only the launch itself: its static shared memory (a builder's own, e.g. the
// temporal filter's, counts against the block's), the dynamic limit raised, and the blocks an SM
// holds at each number of counting warps. d: the device's ordinal, or -1 (nothing kept).
template <auto kKernel>
struct KernelFacts {
  static constexpr int kDevices = 16;
  static inline std::atomic<int> fixed[kDevices];          // bytes + 1; 0 = not asked yet
  static inline std::atomic<size_t> allowed[kDevices];     // the dynamic limit set so far
  static inline std::atomic<int> occupancy[kDevices][33];  // blocks per SM + 1, by counting warps; 0 = not asked yet

  static Result<size_t> static_smem(int d) {
    int v = d >= 0 ? fixed[d].load() - 1 : -1;
    if (v < 0) {
      cudaFuncAttributes fa{};
      HISTEQ_CUDA_TRY(cudaFuncGetAttributes(&fa, kKernel));
      v = static_cast<int>(fa.sharedSizeBytes);
      if (d >= 0) fixed[d].store(v + 1);
    }
    return static_cast<size_t>(v);
  }
  // Raises the dynamic limit to smem where needed; the blocks an SM holds.
  static Result<int> blocks_per_sm(int d, int warps, int threads, size_t smem) {
    if (d < 0 || allowed[d].load() < smem) {
      HISTEQ_CUDA_TRY(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      if (d >= 0) allowed[d].store(smem);
    }
    int per_sm = d >= 0 ? occupancy[d][warps].load() - 1 : -1;
    if (per_sm < 0) {
      HISTEQ_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, threads, smem));
      if (d >= 0) occupancy[d][warps].store(per_sm + 1);
    }
    return per_sm;
  }
};

// run_with's and count_with's checks of the call (their plane, their weight): ok, or why not.
template <class T>
Status check_call(const PlaneView<T>& plane, uint32_t weight) {
  static_assert(std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t>, "8- or 16-bit planes");
  if (weight > kWeightOne) return HISTEQ_ERROR(Code::invalid_argument, "strength weight above 1.0");
  if (sizeof(T) == 1 && plane.bit_depth != 8) return HISTEQ_ERROR(Code::invalid_argument, "8-bit planes must have bit depth 8");
  if (sizeof(T) == 2 && (plane.bit_depth < 1 || plane.bit_depth > 10))
    return HISTEQ_ERROR(Code::invalid_argument, "16-bit planes must have a bit depth of 1 to 10 (at most 1024 bins)");
  if (plane.width < 0 || plane.height < 0) return HISTEQ_ERROR(Code::invalid_argument, "negative plane size");
  if (plane.empty()) return Status::ok();
  if (plane.memory != MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "the fused equalizer needs a device plane");
  if (plane.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane data");
  if (plane.height > 1 && plane.pitch < plane.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  if (plane.pitch % sizeof(T) != 0) return HISTEQ_ERROR(Code::invalid_argument, "pitch is not a whole number of samples");
  if (plane.samples() >= (uint64_t{1} << 32))
    return HISTEQ_ERROR(Code::unsupported, "planes of 2^32 samples or more overflow the 32-bit counters");
  return Status::ok();
}

// Validates, plans and launches one fused equalization of `plane` with loop L and apply unroll UA.
// `units_per_lane` steers the counting plan (agent/method2_tuned.cuh, plan_for); `max_warps` caps the
// counting warps; every block has kFusedWarps warps, all resident at once (cooperative launch).
template <class T, int kCap, class L, int UA, class Bin, class Builder, class Applier = LutApply>
Status launch(FusedEqualizer::Scratch s, const PlaneView<T>& plane, Bin bin, uint32_t bins, uint32_t weight,
              const Builder& builder, const FusedOutputs& out, int units_per_lane, int max_warps, int max_blocks,
              cudaStream_t stream, FusedLaunch* record, bool apply = true, const Applier& applier = {}) {
  using C = CountersFor<T, kCap, L, Bin>;
  constexpr int kBlockWarps = policy_fused_threads / 32;
  constexpr auto kernel = fused_kernel<T, kCap, L, UA, Bin, Builder, Applier>;
  auto dev = cuda::device_info();
  if (!dev) return dev.status();
  const PlaneRef ref(plane);
  const PlaneGeometry g = hist::detail::make_geometry(ref);
  int warp_cap = C::kMaxWarps < kBlockWarps ? C::kMaxWarps : kBlockWarps;
  if (max_warps > 0 && max_warps < warp_cap) warp_cap = max_warps;
  hist::m2t::Plan plan = hist::m2t::plan_for(g.total_units(), dev->sm_count, warp_cap, units_per_lane, max_blocks);
  // The apply's LUT table reuses the counter regions: enough counting warps to hold it.
  const int table_warps = static_cast<int>((Table<T>::bytes(bins) + C::kRegionBytes - 1) / C::kRegionBytes);
  if (table_warps > kBlockWarps) return HISTEQ_ERROR(Code::internal, "fused equalizer: the LUT table does not fit");
  plan.warps = std::max(plan.warps, table_warps);
  using Facts = KernelFacts<fused_kernel<T, kCap, L, UA, Bin, Builder, Applier>>;
  const int d = dev->ordinal >= 0 && dev->ordinal < Facts::kDevices ? dev->ordinal : -1;
  auto fixed = Facts::static_smem(d);
  if (!fixed) return fixed.status();
  const size_t opt_in = dev->shared_mem_per_block_optin, room = opt_in > *fixed ? opt_in - *fixed : 0;
  // Fewer counting warps until the block fits the device's shared memory (non-Hopper GPUs have less).
  while (plan.warps > table_warps && smem_bytes<T, kCap, L, Bin>(plan.warps) > room) --plan.warps;
  const size_t smem = smem_bytes<T, kCap, L, Bin>(plan.warps);
  if (smem > room)
    return HISTEQ_ERROR(Code::unsupported, "the fused equalizer needs " + std::to_string(smem + *fixed) +
                                               " bytes of shared memory per block, the device allows " + std::to_string(opt_in));
  const int threads = kBlockWarps * 32;
  auto per_sm = Facts::blocks_per_sm(d, plan.warps, threads, smem);
  if (!per_sm) return per_sm.status();
  if (*per_sm < 1) return HISTEQ_ERROR(Code::unsupported, "the fused equalizer's block does not fit on a multiprocessor");
  // Blocks wait for the last one: all must be resident at once (the cooperative launch checks it).
  plan.blocks = std::min(plan.blocks, *per_sm * dev->sm_count);

  Params p{};
  p.g = g;
  p.bins = bins;
  p.pass_units = C::kPassUnitsMax;
  p.counting_warps = static_cast<uint32_t>(plan.warps);
  p.weight = weight;
  p.s.acc = s.acc;
  p.s.acc_stride = 1;
  p.s.ticket = s.ticket;
  p.pf = hist::m2t::l2_prefetch_for(g, dev->l2_bytes, hist::policy::Method2Tuned::kL2PrefetchFractionDen);
  p.gen = s.gen;
  p.lut = s.lut;
  p.out_hist = out.d_hist;
  p.out_lut = out.d_lut;
  p.apply = apply;
  HISTEQ_TRY(launch_cooperative(kernel, dim3(static_cast<unsigned>(plan.blocks)), dim3(static_cast<unsigned>(threads)), smem, stream,
                                p, bin, builder, applier));
  if (record) *record = {plan.blocks, plan.warps, smem};
  return Status::ok();
}

}  // namespace fused_detail

template <class Builder, class T>
Status FusedEqualizer::run_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, cudaStream_t stream,
                                const FusedOutputs& out) {
  return launch_with(plane, weight, builder, fused_detail::LutApply{}, stream, out, true);
}

template <class Builder, class T>
Status FusedEqualizer::count_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, cudaStream_t stream,
                                  const FusedOutputs& out) {
  if (out.d_lut == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "count_with without a LUT to put out");
  return launch_with(plane, weight, builder, fused_detail::LutApply{}, stream, out, false);
}

template <class Builder, class Applier, class T>
Status FusedEqualizer::apply_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, const Applier& applier,
                                  cudaStream_t stream, const FusedOutputs& out) {
  return launch_with(plane, weight, builder, applier, stream, out, true);
}

template <class Builder, class Applier, class T>
Status FusedEqualizer::launch_with(const PlaneView<T>& plane, uint32_t weight, const Builder& builder, const Applier& applier,
                                   cudaStream_t stream, const FusedOutputs& out, bool apply) {
  using P = hist::policy::Method2Tuned;
  if (buf_.empty()) return HISTEQ_ERROR(Code::invalid_argument, "FusedEqualizer used before create()");
  HISTEQ_TRY(fused_detail::check_call(plane, weight));
  if (plane.empty() && out.d_hist == nullptr && out.d_lut == nullptr) return Status::ok();
  const uint32_t bins = 1u << plane.bit_depth;
  if (bins < 2) return HISTEQ_ERROR(Code::invalid_argument, "a 1-bit plane has 2 values at least");
  namespace fd = fused_detail;
  if constexpr (sizeof(T) == 1) {
    return fd::launch<uint8_t, 256, P::Loop8, P::kFusedApplyUnroll8>(s_, plane, hist::m2t::DirectBin{}, bins, weight, builder, out,
                                                                     P::kFusedUnitsPerLane8, 0, 0, stream, &last_, apply, applier);
  } else if (bins <= 256) {
    return fd::launch<uint16_t, 256, P::Loop16, P::kFusedApplyUnroll16>(s_, plane, hist::m2t::ClampBin{0, bins}, bins, weight,
                                                                       builder, out, P::kFusedUnitsPerLane16, 0, 0, stream, &last_,
                                                                       apply, applier);
  } else {
    return fd::launch<uint16_t, 1024, P::Loop16, P::kFusedApplyUnroll16>(s_, plane, hist::m2t::ClampBin{0, bins}, bins, weight,
                                                                         builder, out, P::kFusedUnitsPerLane16, 0, 0, stream,
                                                                         &last_, apply, applier);
  }
}

}  // namespace histeq::eq
