// The colour pass's device code (tone.h's chroma formula): colour_kernel, one thread per chroma
// sample and its co-sited luma samples, every load issued before the first store; and FusedColour,
// the same pass as the fused kernel's applier (ops/equalize/fused_gpu.cuh), which the temporal
// fold uses (ops/temporal/temporal_gpu.cu) for global mode's defaults on 8-bit 4:2:0. Included by
// apply_gpu.cu and temporal_gpu.cu only.
#pragma once

#include "core/cuda/check.h"
#include "core/equalize/ops/apply/apply.h"
#include "core/equalize/ops/checks.h"
#include "core/equalize/ops/equalize/fused_gpu.cuh"
#include "core/equalize/tone.h"
#include "core/histogram/policy.h"

namespace histeq::eq {

constexpr int kApplyThreads = 256;
using hist::policy::kUnitBytes;  // the 16-byte unit of every GPU plane walk (core/histogram/policy.h)
constexpr int kMaxGridRows = 65535;  // gridDim.y: one row of chroma per block row

// --- apply with colour --------------------------------------------------------------------------

struct ColourPlan {
  int cw = 0, ch = 0;  // chroma samples per row, rows
};

// The luma samples co-sited with one chroma sample: columns x0..x1 - 1 of rows y0..y1 - 1, 2 x 2
// at most (the launch checks the subsampling), as values >> sh; ok says which lie in the plane.
template <class T>
struct Cosited {
  T* rows[2];
  uint32_t in[2][2];
  bool ok[2][2];
};

template <class T>
__device__ __forceinline__ Cosited<T> load_cosited(const PlaneView<T>& y, int x0, int x1, int y0, int y1, int sh) {
  Cosited<T> q;
#pragma unroll
  for (int dy = 0; dy < 2; ++dy) {
    q.rows[dy] = y.row(min(y0 + dy, y1 - 1));
#pragma unroll
    for (int dx = 0; dx < 2; ++dx) {
      q.ok[dy][dx] = y0 + dy < y1 && x0 + dx < x1;
      q.in[dy][dx] = q.ok[dy][dx] ? static_cast<uint32_t>(q.rows[dy][x0 + dx]) >> sh : 0u;
    }
  }
  return q;
}

// Maps every co-sited sample by map(value, dx, dy), stores it (<< sh) and adds to the sums.
template <class T, class Map>
__device__ __forceinline__ void map_cosited(const Cosited<T>& q, int x0, int sh, uint32_t& sum_in, uint32_t& sum_out,
                                            uint32_t& count, Map&& map) {
#pragma unroll
  for (int dy = 0; dy < 2; ++dy)
#pragma unroll
    for (int dx = 0; dx < 2; ++dx) {
      if (!q.ok[dy][dx]) continue;
      const uint32_t out = map(q.in[dy][dx], dx, dy);
      q.rows[dy][x0 + dx] = static_cast<T>(out << sh);
      sum_in += q.in[dy][dx];
      sum_out += out;
      ++count;
    }
}

// One chroma sample (cx, cy) of the colour pass, loaded: its co-sited luma samples, U and V.
// Every load comes first, the mapping and the stores after (colour_store): loaded row by row behind
// the previous row's stores, a thread made three trips to memory in a row, and warps spent 54-58%
// of their stalls waiting on them (Nsight Compute, H200, docs/performance.md).
template <class T>
struct ColourSample {
  Cosited<T> q;
  T* pu;
  T* pv;
  uint32_t u_in, v_in;
  int x0, y0, x1, y1;
};

template <class T>
__device__ __forceinline__ ColourSample<T> colour_load(const PlaneView<T>& y, const PlaneView<T>& u, const PlaneView<T>& v,
                                                       const ChromaPlanes& c, int cx, int cy) {
  ColourSample<T> s;
  s.y0 = cy << c.shift_y;
  s.y1 = min(y.height, (cy + 1) << c.shift_y);
  s.x0 = cx << c.shift_x;
  s.x1 = min(y.width, (cx + 1) << c.shift_x);
  s.pu = c.interleaved ? u.row(cy) + 2 * cx : u.row(cy) + cx;
  s.pv = c.interleaved ? u.row(cy) + 2 * cx + 1 : v.row(cy) + cx;
  s.q = load_cosited(y, s.x0, s.x1, s.y0, s.y1, c.shift);  // P010: the values are v >> 6, stored << 6
  s.u_in = static_cast<uint32_t>(*s.pu) >> c.shift;
  s.v_in = static_cast<uint32_t>(*s.pv) >> c.shift;
  return s;
}

// The sample's luma mapped by map(value, dx, dy) and stored, U and V scaled by its gain.
template <class T, class Map>
__device__ __forceinline__ void colour_store(const ColourSample<T>& s, const ChromaPlanes& c, int bit_depth, Map&& map) {
  const int sh = c.shift;
  const uint32_t depth = static_cast<uint32_t>(bit_depth - sh);
  const uint32_t maxval = (1u << depth) - 1, neutral = 1u << (depth - 1);
  uint32_t sum_in = 0, sum_out = 0, count = 0;
  map_cosited(s.q, s.x0, sh, sum_in, sum_out, count, map);
  if (count == 0) return;
  const uint32_t g = tone::chroma_scale(sum_in, sum_out, count, c.black, c.limit_q12);
  const uint32_t c_lo = c.lo, c_hi = min(c.hi, maxval);
  *s.pu = static_cast<T>(tone::scale_chroma(s.u_in, g, neutral, c_lo, c_hi) << sh);
  *s.pv = static_cast<T>(tone::scale_chroma(s.v_in, g, neutral, c_lo, c_hi) << sh);
}

// One thread per chroma sample (cx, cy): maps its co-sited luma samples and scales its U and V.
// Global mode keeps the LUT in shared memory (as apply_kernel); tiles read theirs through L1.
template <class T, bool kTiles>
__global__ void __launch_bounds__(kApplyThreads)
    colour_kernel(PlaneView<T> y, PlaneView<T> u, PlaneView<T> v, ChromaPlanes c, const uint16_t* __restrict__ lut, TileLuts t,
                  int bins, ColourPlan plan) {
  constexpr int kTable = sizeof(T) == 1 ? 256 : kMaxBins;
  __shared__ uint16_t s_lut[kTiles ? 1 : kTable];
  if constexpr (!kTiles) {
    for (int i = threadIdx.x; i < kTable; i += kApplyThreads) s_lut[i] = static_cast<uint16_t>(i < bins ? lut[i] : i);
    __syncthreads();
  }
  // A chroma row per blockIdx.y: no 64-bit division per thread to find it.
  const int cx = static_cast<int>(blockIdx.x * kApplyThreads + threadIdx.x), cy = static_cast<int>(blockIdx.y);
  if (cx >= plan.cw) return;
  const ColourSample<T> s = colour_load(y, u, v, c, cx, cy);
  uint32_t ex[2] = {0, 0}, ey[2] = {0, 0};  // the tiles' axis entries, loaded with the rest
  if constexpr (kTiles) {
#pragma unroll
    for (int d = 0; d < 2; ++d) {
      ex[d] = __ldg(t.x_table + min(s.x0 + d, s.x1 - 1));
      ey[d] = __ldg(t.y_table + min(s.y0 + d, s.y1 - 1));
    }
  }
  const uint32_t n = static_cast<uint32_t>(bins);
  colour_store(s, c, y.bit_depth, [&](uint32_t i, int dx, int dy) -> uint32_t {
    if (sizeof(T) != 1 && i >= n) return i;
    if constexpr (kTiles) return tone::tile_map(t.luts, t.grid.cols, bins, ex[dx], ey[dy], i);
    else return s_lut[i];
  });
}

// 8-bit 4:2:0 in 16-byte units: 16 luma columns of the two luma rows of a chroma row, and their
// 8 chroma samples (planar: 8 bytes of U and of V; NV12: 16 bytes of UV), as four loads. The
// per-sample walk issued six loads of one or two bytes a chroma sample; at one fused block an SM
// (a quarter of the threads colour_kernel has in flight) that left the fold's apply latency-bound:
// 56 us at 4K against 30 + 22 for the fold and colour_kernel apart (H200, docs/performance.md).
struct Unit420 {
  uint4 y0, y1;  // luma rows 2 cy and 2 cy + 1
  uint4 c;       // planar: U in x, y and V in z, w; NV12: UV
};

// The units' walk: `cols` units a chroma row, over the chroma rows whose two luma rows both exist.
struct UnitWalk {
  int cols, rows;       // units a row, rows
  int at_r, at_c;       // the next unit
  int step_r, step_c;   // a grid-stride step
  __device__ void start(uint32_t gid, uint32_t stride) {
    at_r = static_cast<int>(gid / static_cast<uint32_t>(cols));
    at_c = static_cast<int>(gid % static_cast<uint32_t>(cols));
    step_r = static_cast<int>(stride / static_cast<uint32_t>(cols));
    step_c = static_cast<int>(stride % static_cast<uint32_t>(cols));
  }
  __device__ bool more() const { return at_r < rows; }
  __device__ void advance() {
    at_r += step_r;
    at_c += step_c;
    if (at_c >= cols) {
      at_c -= cols;
      ++at_r;
    }
  }
};

// The colour pass as the fused kernel's apply (fused_gpu.cuh's applier; temporal_fold_gpu), for
// 8-bit 4:2:0 with aligned rows (units_fit): a grid-stride over Unit420s, kAhead of them a thread
// loaded before the LUT is known, then the samples the units leave (the columns past the last
// whole unit, an odd last luma row) one by one. The same steps and values as colour_kernel in
// global mode. kAhead swept on an H200 (quality --bench, global + every control, median us;
// docs/results/fused-apply/qb_histeq*): 2 units 34.6 at 1080p and 50.5-50.9 at 4K,
// 3 units 34.8-35.0 and 52.5-52.6, 4 units 35.6-35.7 and 56.0-56.8 (registers spilled).
struct FusedColour {
  using T = uint8_t;
  static constexpr int kAhead = 2;
  PlaneView<T> y, u, v;
  ChromaPlanes c;
  ColourPlan plan;
  struct Stage {
    Unit420 w[kAhead];
    int r[kAhead], col[kAhead];
    int n;
    UnitWalk walk;
  };

  static bool units_fit(const PlaneView<T>& y, const PlaneView<T>& u, const PlaneView<T>& v, const ChromaPlanes& c) {
    auto aligned = [](const void* p, size_t pitch, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0 && pitch % a == 0; };
    if (c.shift_x != 1 || c.shift_y != 1 || c.shift != 0 || !aligned(y.data, y.pitch, 16)) return false;
    if (y.width < 16 || y.height < 2) return false;  // not one whole unit (UnitWalk divides by the units a row)
    return c.interleaved ? aligned(u.data, u.pitch, 16) : aligned(u.data, u.pitch, 8) && aligned(v.data, v.pitch, 8);
  }
  __device__ UnitWalk unit_walk() const { return UnitWalk{y.width / 16, y.height / 2}; }

  __device__ Unit420 load_unit(int r, int col) const {
    Unit420 w;
    w.y0 = __ldcg(reinterpret_cast<const uint4*>(y.row(2 * r)) + col);
    w.y1 = __ldcg(reinterpret_cast<const uint4*>(y.row(2 * r + 1)) + col);
    if (c.interleaved) {
      w.c = __ldcg(reinterpret_cast<const uint4*>(u.row(r)) + col);
    } else {
      const uint2 a = __ldcg(reinterpret_cast<const uint2*>(u.row(r)) + col), b = __ldcg(reinterpret_cast<const uint2*>(v.row(r)) + col);
      w.c = make_uint4(a.x, a.y, b.x, b.y);
    }
    return w;
  }
  __device__ void fill(Stage& st) const {
    st.n = 0;
#pragma unroll
    for (int k = 0; k < kAhead; ++k) {
      if (st.walk.more()) {
        st.w[k] = load_unit(st.walk.at_r, st.walk.at_c);
        st.r[k] = st.walk.at_r;
        st.col[k] = st.walk.at_c;
        st.n = k + 1;
        st.walk.advance();
      }
    }
  }
  // Byte i of a 16-byte word.
  __device__ static uint32_t byte_of(const uint4& q, int i) {
    const uint32_t w = i < 4 ? q.x : i < 8 ? q.y : i < 12 ? q.z : q.w;
    return (w >> (8 * (i & 3))) & 0xFFu;
  }
  __device__ void store_unit(const Unit420& w, int r, int col, const uint16_t* lut) const {
    const uint32_t neutral = 128, hi = min(c.hi, 255u);
    uint32_t ym[2][4] = {}, cm[4] = {};
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const uint32_t a = byte_of(w.y0, 2 * s), b = byte_of(w.y0, 2 * s + 1), e = byte_of(w.y1, 2 * s), f = byte_of(w.y1, 2 * s + 1);
      const uint32_t oa = lut[a], ob = lut[b], oe = lut[e], of = lut[f];
      const uint32_t g = tone::chroma_scale(a + b + e + f, oa + ob + oe + of, 4, c.black, c.limit_q12);
      ym[0][s / 2] |= (oa | ob << 8) << (16 * (s & 1));
      ym[1][s / 2] |= (oe | of << 8) << (16 * (s & 1));
      if (c.interleaved) {  // U at byte 2 s, V at 2 s + 1
        const uint32_t uo = tone::scale_chroma(byte_of(w.c, 2 * s), g, neutral, c.lo, hi);
        const uint32_t vo = tone::scale_chroma(byte_of(w.c, 2 * s + 1), g, neutral, c.lo, hi);
        cm[s / 2] |= (uo | vo << 8) << (16 * (s & 1));
      } else {  // U at byte s, V at 8 + s
        cm[s / 4] |= tone::scale_chroma(byte_of(w.c, s), g, neutral, c.lo, hi) << (8 * (s & 3));
        cm[2 + s / 4] |= tone::scale_chroma(byte_of(w.c, 8 + s), g, neutral, c.lo, hi) << (8 * (s & 3));
      }
    }
    reinterpret_cast<uint4*>(y.row(2 * r))[col] = make_uint4(ym[0][0], ym[0][1], ym[0][2], ym[0][3]);
    reinterpret_cast<uint4*>(y.row(2 * r + 1))[col] = make_uint4(ym[1][0], ym[1][1], ym[1][2], ym[1][3]);
    if (c.interleaved) {
      reinterpret_cast<uint4*>(u.row(r))[col] = make_uint4(cm[0], cm[1], cm[2], cm[3]);
    } else {
      reinterpret_cast<uint2*>(u.row(r))[col] = make_uint2(cm[0], cm[1]);
      reinterpret_cast<uint2*>(v.row(r))[col] = make_uint2(cm[2], cm[3]);
    }
  }
  // Samples (cx, cy) of the rectangle [x0, x1) x [y0, y1) one by one, a grid-stride over it.
  template <class Map>
  __device__ void samples(int x0, int x1, int y0, int y1, uint32_t gid, uint32_t stride, Map&& map) const {
    const uint32_t w = static_cast<uint32_t>(max(0, x1 - x0)), n = w * static_cast<uint32_t>(max(0, y1 - y0));
    for (uint32_t i = gid; i < n; i += stride) {
      const int cx = x0 + static_cast<int>(i % w), cy = y0 + static_cast<int>(i / w);
      colour_store(colour_load(y, u, v, c, cx, cy), c, y.bit_depth, map);
    }
  }

  __device__ void load(Stage& st, uint32_t gid, uint32_t stride) const {
    st.walk = unit_walk();
    st.walk.start(gid, stride);
    fill(st);
  }
  __device__ void apply(Stage& st, const uint16_t* lut, uint32_t, uint32_t gid, uint32_t stride) const {
    auto map = [&](uint32_t i, int, int) -> uint32_t { return lut[i]; };  // 8-bit: every value has an entry
    while (st.n > 0) {
#pragma unroll
      for (int k = 0; k < kAhead; ++k)
        if (k < st.n) store_unit(st.w[k], st.r[k], st.col[k], lut);
      fill(st);
    }
    const UnitWalk whole = unit_walk();
    samples(8 * whole.cols, plan.cw, 0, whole.rows, gid, stride, map);  // past the last whole unit
    samples(0, plan.cw, whole.rows, plan.ch, gid, stride, map);         // an odd last luma row
  }
};

// The colour pass's planes, checked: luma, U and V (V = U where interleaved) and the chroma grid;
// plan.cw 0 where there is nothing to do.
template <class T>
struct ColourPlanes {
  PlaneView<T> y, u, v;
  ColourPlan plan;
};
template <class T>
Result<ColourPlanes<T>> colour_planes(const PlaneRef& luma, const ChromaPlanes& c) {
  ColourPlanes<T> p;
  p.y = luma.as_writable<T>();
  HISTEQ_TRY(check_device_plane(p.y));
  p.u = c.planes[0].as_writable<T>();
  p.v = c.interleaved ? p.u : c.planes[1].as_writable<T>();
  for (const PlaneView<T>* q : {&p.u, &p.v}) {
    if (q->bit_depth != p.y.bit_depth && !q->empty()) return HISTEQ_ERROR(Code::invalid_argument, "chroma and luma depths differ");
    if (c.planes[0].bytes_per_sample != luma.bytes_per_sample) return HISTEQ_ERROR(Code::invalid_argument, "chroma and luma sample sizes differ");
    HISTEQ_TRY(check_device_plane(*q));
  }
  if (p.y.empty()) return p;
  if (c.shift_x < 0 || c.shift_x > 1 || c.shift_y < 0 || c.shift_y > 1)
    return HISTEQ_ERROR(Code::unsupported, "the colour pass: chroma subsampled more than 2x2");
  p.plan = ColourPlan{c.interleaved ? p.u.width / 2 : p.u.width, p.u.height};
  if (p.plan.cw <= 0 || p.plan.ch <= 0) p.plan = ColourPlan{};
  return p;
}

template <class T>
Status apply_colour_device(const PlaneRef& luma, const ChromaPlanes& c, const uint16_t* d_lut, const TileLuts* tiles, int bins,
                           cudaStream_t stream) {
  auto planes = colour_planes<T>(luma, c);
  if (!planes) return planes.status();
  const auto& [y, u, v, plan] = planes.value();
  if (plan.cw <= 0) return Status::ok();
  if (plan.ch > kMaxGridRows) return HISTEQ_ERROR(Code::unsupported, "plane too tall for apply_colour_gpu");
  const dim3 grid((static_cast<unsigned>(plan.cw) + kApplyThreads - 1) / kApplyThreads, static_cast<unsigned>(plan.ch));
  if (tiles != nullptr) {
    colour_kernel<T, true><<<grid, kApplyThreads, 0, stream>>>(y, u, v, c, nullptr, *tiles, bins, plan);
  } else {
    colour_kernel<T, false><<<grid, kApplyThreads, 0, stream>>>(y, u, v, c, d_lut, TileLuts{}, bins, plan);
  }
  HISTEQ_CUDA_TRY_LAUNCH();
  return Status::ok();
}

}  // namespace histeq::eq
