// Device-side traversal of a sample plane together with its float weight plane (weighted
// histograms, histogram.h). Internal to core/histogram; not a public header.
//
// The samples are walked exactly as common.cuh's walk() does (16-byte units in a grid-stride loop,
// several loads in flight); each unit's weights are loaded with it, as 16-byte loads where the
// weight rows are 16-byte aligned. A contiguous plane is one long row only when its weights are
// contiguous too, so that a unit's weights are always `S` consecutive floats of one weight row.
#pragma once

#include "core/histogram/kernels/common.cuh"

namespace histeq::hist::detail {

struct WeightGeometry {
  const unsigned char* base = nullptr;  // null: no weights (every sample weighs 0)
  size_t pitch = 0;                     // bytes between the weights of consecutive logical rows
  bool vector_ok = false;               // 16-byte loads: base and pitch are 16-byte aligned
};

struct WeightedGeometry {
  PlaneGeometry g;
  WeightGeometry wg;
};

inline WeightedGeometry make_weighted_geometry(const PlaneRef& in, const WeightsView* w) {
  const bool weights_contiguous = w == nullptr || w->pitch == w->row_bytes() || w->height <= 1;
  WeightedGeometry r;
  r.g = make_geometry(in, weights_contiguous);
  if (w != nullptr) {
    r.wg.base = reinterpret_cast<const unsigned char*>(w->data);
    r.wg.pitch = r.g.rows > 1 ? w->pitch : 0;
    r.wg.vector_ok = reinterpret_cast<uintptr_t>(w->data) % policy::kUnitBytes == 0 &&
                     (r.g.rows <= 1 || w->pitch % policy::kUnitBytes == 0);
  }
  return r;
}

// Samples in one unit, and float4 weight loads per unit.
template <class T>
constexpr int kUnitSamples = policy::kUnitBytes / static_cast<int>(sizeof(T));
template <class T>
constexpr int kUnitWeightVecs = kUnitSamples<T> / 4;

template <class T, bool W>
struct UnitData {
  uint4 v;
  float4 w[W ? kUnitWeightVecs<T> : 1];
};

__device__ __forceinline__ float component(const float4& q, int j) {
  return j == 0 ? q.x : j == 1 ? q.y : j == 2 ? q.z : q.w;  // j is a constant after unrolling
}

__device__ __forceinline__ const float* weights_of(const WeightGeometry& wg, UnitCursor cur, int unit_samples) {
  return reinterpret_cast<const float*>(wg.base + cur.r * wg.pitch) + static_cast<size_t>(cur.c) * unit_samples;
}

// Loads a full unit (the caller checked full_vector) and, with W, its weights.
template <class T, bool W>
__device__ __forceinline__ void load_full(const PlaneGeometry& g, const WeightGeometry& wg, UnitCursor cur,
                                          UnitData<T, W>& d) {
  d.v = load_unit(g, cur);
  if constexpr (W) {
    const float* p = weights_of(wg, cur, kUnitSamples<T>);
    if (wg.vector_ok) {
#pragma unroll
      for (int k = 0; k < kUnitWeightVecs<T>; ++k) d.w[k] = __ldg(reinterpret_cast<const float4*>(p) + k);
    } else {
#pragma unroll
      for (int k = 0; k < kUnitWeightVecs<T>; ++k)
        d.w[k] = make_float4(__ldg(p + 4 * k), __ldg(p + 4 * k + 1), __ldg(p + 4 * k + 2), __ldg(p + 4 * k + 3));
    }
  }
}

// f(sample, weight) for every sample of a unit; weight is 0 without W.
template <class T, bool W, class F>
__device__ __forceinline__ void visit_unit(const PlaneGeometry& g, const WeightGeometry& wg, UnitCursor cur,
                                           const UnitData<T, W>& d, F& f) {
  constexpr int S = kUnitSamples<T>;
  if (full_vector(g, cur)) {
    const uint32_t words[4] = {d.v.x, d.v.y, d.v.z, d.v.w};
#pragma unroll
    for (int i = 0; i < S; ++i) {
      const uint32_t word = words[i * static_cast<int>(sizeof(T)) / 4];
      const uint32_t s = sizeof(T) == 1 ? (word >> (8 * (i & 3))) & 0xFFu : (word >> (16 * (i & 1))) & 0xFFFFu;
      if constexpr (W) f(s, component(d.w[i / 4], i & 3));
      else f(s, 0.0f);
    }
    return;
  }
  // A row's tail, or any unit of a plane whose rows are not 16-byte aligned.
  const size_t off = static_cast<size_t>(cur.c) * policy::kUnitBytes;
  const size_t n = min(static_cast<size_t>(policy::kUnitBytes), g.row_bytes - off) / sizeof(T);
  const T* p = reinterpret_cast<const T*>(g.base + cur.r * g.pitch + off);
  if constexpr (W) {
    const float* wp = weights_of(wg, cur, S);
    for (size_t i = 0; i < n; ++i) f(static_cast<uint32_t>(p[i]), __ldg(wp + i));
  } else {
    for (size_t i = 0; i < n; ++i) f(static_cast<uint32_t>(p[i]), 0.0f);
  }
}

// Walks at most `steps` grid-stride steps from `cur` (which it advances): f(sample, weight) for
// every sample, and unit_done() after each unit's samples. U units (samples and weights) are loaded
// before any is consumed.
template <class T, int U, bool W, class F, class G>
__device__ __forceinline__ void walk_weighted(const PlaneGeometry& g, const WeightGeometry& wg, UnitCursor& cur,
                                              UnitStep st, uint32_t steps, F& f, G& unit_done) {
  uint32_t i = 0;
  for (; i + U <= steps && cur.r < g.rows; i += U) {
    UnitData<T, W> d[U];
    UnitCursor at[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      at[k] = cur;
      if (cur.r < g.rows && full_vector(g, cur)) load_full<T, W>(g, wg, cur, d[k]);
      advance(g, cur, st);
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (at[k].r >= g.rows) break;
      visit_unit<T, W>(g, wg, at[k], d[k], f);
      unit_done();
    }
  }
  for (; i < steps && cur.r < g.rows; ++i) {
    UnitData<T, W> d;
    if (full_vector(g, cur)) load_full<T, W>(g, wg, cur, d);
    visit_unit<T, W>(g, wg, cur, d, f);
    unit_done();
    advance(g, cur, st);
  }
}

}  // namespace histeq::hist::detail
