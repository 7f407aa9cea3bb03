// The plane walk of the GPU histogram kernels (a public header of core/histogram, device side):
// a pitched plane cut into 16-byte units, the grid-stride cursor over them, binning, the loads of a
// walk with several units in flight, and the tiles of a tiled histogram. The kernels under kernels/
// and the agents beside this file (agent/*.cuh) are built on it; so are other modules' fused
// kernels (core/equalize/ops/equalize/fused_gpu.cuh), which include the agents, never kernels/.
//
// Include from .cu files only (nvcc). Everything here is __device__ code or a host helper that
// describes a plane for it; nothing allocates, launches or synchronizes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/histogram/histogram.h"
#include "core/histogram/policy.h"

namespace histeq::hist::detail {

// A plane seen as `rows` logical rows of `row_bytes` valid bytes, `pitch` apart, each cut into
// 16-byte units. A contiguous plane (tight pitch) is one logical row, so it needs no per-row tail.
struct PlaneGeometry {
  const unsigned char* base = nullptr;
  size_t pitch = 0;
  size_t row_bytes = 0;
  uint32_t rows = 0;
  uint32_t units_per_row = 0;
  bool vector_ok = false;  // every row starts 16-byte aligned, so full units can use 16-byte loads

  __host__ __device__ uint32_t total_units() const { return rows * units_per_row; }
};

// allow_flatten = false keeps a contiguous plane's rows (for a companion plane that is padded).
inline PlaneGeometry make_geometry(const PlaneRef& in, bool allow_flatten = true) {
  PlaneGeometry g;
  g.base = static_cast<const unsigned char*>(in.data);
  const bool contiguous = in.height <= 1 || (allow_flatten && in.pitch == in.row_bytes());
  g.rows = contiguous ? 1u : static_cast<uint32_t>(in.height);
  g.row_bytes = contiguous ? in.row_bytes() * static_cast<size_t>(in.height) : in.row_bytes();
  g.pitch = contiguous ? g.row_bytes : in.pitch;
  g.units_per_row = static_cast<uint32_t>((g.row_bytes + policy::kUnitBytes - 1) / policy::kUnitBytes);
  const bool base_aligned = (reinterpret_cast<uintptr_t>(g.base) % policy::kUnitBytes) == 0;
  g.vector_ok = base_aligned && (contiguous || g.pitch % policy::kUnitBytes == 0);
  return g;
}

// A plane cut into tiles (compute_tiles): what a block needs to find its tile's geometry.
struct TiledPlane {
  const unsigned char* base = nullptr;
  size_t pitch = 0;
  int width = 0, height = 0;
  int bytes_per_sample = 1;
  int cols = 1, rows = 1;
};

inline TiledPlane make_tiled(const PlaneRef& in, const TileGrid& grid) {
  return {static_cast<const unsigned char*>(in.data), in.pitch, in.width, in.height, in.bytes_per_sample, grid.cols, grid.rows};
}

// Tile t (= row * cols + col) as a PlaneGeometry: the pitched sub-plane of tile_plane(), never
// flattened (its rows are not contiguous), 16-byte loads only when the tile's rows start aligned.
__device__ __forceinline__ PlaneGeometry tile_geometry(const TiledPlane& p, uint32_t t) {
  const int col = static_cast<int>(t % static_cast<uint32_t>(p.cols)), row = static_cast<int>(t / static_cast<uint32_t>(p.cols));
  const int x0 = tile_start(col, p.cols, p.width), x1 = tile_start(col + 1, p.cols, p.width);
  const int y0 = tile_start(row, p.rows, p.height), y1 = tile_start(row + 1, p.rows, p.height);
  PlaneGeometry g;
  g.base = p.base + static_cast<size_t>(y0) * p.pitch + static_cast<size_t>(x0) * p.bytes_per_sample;
  g.pitch = p.pitch;
  g.row_bytes = static_cast<size_t>(x1 - x0) * p.bytes_per_sample;
  g.rows = static_cast<uint32_t>(y1 - y0);
  g.units_per_row = static_cast<uint32_t>((g.row_bytes + policy::kUnitBytes - 1) / policy::kUnitBytes);
  g.vector_ok = reinterpret_cast<uintptr_t>(g.base) % policy::kUnitBytes == 0 && (g.rows <= 1 || g.pitch % policy::kUnitBytes == 0);
  return g;
}

// Sample -> bin. Samples at or above `limit` (2^bit_depth) are not counted.
struct BinMap {
  uint32_t shift = 0;
  uint32_t limit = 256;
};

inline BinMap make_binmap(const PlaneRef& in, int bins) {
  return {static_cast<uint32_t>(in.bit_depth - bins_log2(bins)), 1u << in.bit_depth};
}

// Position in the unit grid of one thread's grid-stride walk. The stride is split once into whole
// rows and a column remainder so that stepping costs an add and a compare, not a division.
struct UnitCursor {
  uint32_t r, c;
};
struct UnitStep {
  uint32_t dr, dc;
};

__device__ __forceinline__ UnitCursor cursor_at(const PlaneGeometry& g, uint32_t unit) {
  return {unit / g.units_per_row, unit % g.units_per_row};
}
__device__ __forceinline__ UnitStep step_of(const PlaneGeometry& g, uint32_t stride) {
  return {stride / g.units_per_row, stride % g.units_per_row};
}
__device__ __forceinline__ void advance(const PlaneGeometry& g, UnitCursor& cur, UnitStep st) {
  cur.c += st.dc;
  cur.r += st.dr;
  if (cur.c >= g.units_per_row) {
    cur.c -= g.units_per_row;
    ++cur.r;
  }
}

template <class T, class F>
__device__ __forceinline__ void visit_word(uint32_t w, F& f) {
  if constexpr (sizeof(T) == 1) {
    f(w & 0xFFu);
    f((w >> 8) & 0xFFu);
    f((w >> 16) & 0xFFu);
    f(w >> 24);
  } else {
    f(w & 0xFFFFu);
    f(w >> 16);
  }
}

template <class T, class F>
__device__ __forceinline__ void visit_vec(const uint4& v, F& f) {
  visit_word<T>(v.x, f);
  visit_word<T>(v.y, f);
  visit_word<T>(v.z, f);
  visit_word<T>(v.w, f);
}

// The samples of a unit that is not a full aligned vector: a row's tail, or any unit of a plane
// whose rows are not 16-byte aligned.
template <class T, class F>
__device__ __forceinline__ void visit_partial(const PlaneGeometry& g, UnitCursor cur, F& f) {
  const size_t off = static_cast<size_t>(cur.c) * policy::kUnitBytes;
  const size_t n = min(static_cast<size_t>(policy::kUnitBytes), g.row_bytes - off) / sizeof(T);
  const T* p = reinterpret_cast<const T*>(g.base + cur.r * g.pitch + off);
  for (size_t i = 0; i < n; ++i) f(static_cast<uint32_t>(p[i]));
}

__device__ __forceinline__ bool full_vector(const PlaneGeometry& g, UnitCursor cur) {
  return g.vector_ok && (static_cast<size_t>(cur.c) + 1) * policy::kUnitBytes <= g.row_bytes;
}

__device__ __forceinline__ uint4 load_unit(const PlaneGeometry& g, UnitCursor cur) {
  return __ldg(reinterpret_cast<const uint4*>(g.base + cur.r * g.pitch + static_cast<size_t>(cur.c) * policy::kUnitBytes));
}

// This thread's place in the grid stride of block `block` of `blocks`, each of `threads` threads:
// its first unit, the stride's step, and the steps of the block's thread 0, the most that any of its
// threads takes (kernels whose threads merge together run that many steps in every thread).
struct BlockWalk {
  UnitCursor cur;
  UnitStep st;
  uint32_t steps;
};
__device__ __forceinline__ BlockWalk block_walk(const PlaneGeometry& g, uint32_t block, uint32_t blocks, uint32_t threads) {
  const uint32_t total = g.total_units();
  const uint32_t stride = blocks * threads;
  const uint32_t block_first = block * threads;
  const uint32_t block_steps = block_first < total ? (total - block_first + stride - 1) / stride : 0;
  return {cursor_at(g, block_first + threadIdx.x), step_of(g, stride), block_steps};
}

// Walks at most `steps` grid-stride steps from `cur` (which it advances), calling f(sample) for every
// sample. U vector loads are issued before any is consumed, to keep memory busy.
template <class T, int U, class F>
__device__ __forceinline__ void walk(const PlaneGeometry& g, UnitCursor& cur, UnitStep st, uint32_t steps, F& f) {
  uint32_t i = 0;
  for (; i + U <= steps && cur.r < g.rows; i += U) {
    uint4 v[U];
    UnitCursor at[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      at[k] = cur;
      if (cur.r < g.rows && full_vector(g, cur)) v[k] = load_unit(g, cur);
      advance(g, cur, st);
    }
#pragma unroll
    for (int k = 0; k < U; ++k) {
      if (at[k].r >= g.rows) break;
      if (full_vector(g, at[k])) visit_vec<T>(v[k], f);
      else visit_partial<T>(g, at[k], f);
    }
  }
  for (; i < steps && cur.r < g.rows; ++i) {
    if (full_vector(g, cur)) visit_vec<T>(load_unit(g, cur), f);
    else visit_partial<T>(g, cur, f);
    advance(g, cur, st);
  }
}

}  // namespace histeq::hist::detail

namespace histeq::hist::detail {

// Sum of one value per thread over a block of kThreads threads (a power of two), by the classic
// tree in shared memory `s` (kThreads words): log2(kThreads) halving steps, each after a barrier.
// The result is valid in thread 0 only; the caller synchronizes before reusing `s`.
template <int kThreads>
__device__ __forceinline__ uint32_t block_tree_sum(uint32_t* s, uint32_t v) {
  static_assert(kThreads > 0 && (kThreads & (kThreads - 1)) == 0, "the tree needs a power of two");
  s[threadIdx.x] = v;
  for (int half = kThreads / 2; half > 0; half /= 2) {
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < half) s[threadIdx.x] += s[threadIdx.x + half];
  }
  return s[0];
}

}  // namespace histeq::hist::detail
