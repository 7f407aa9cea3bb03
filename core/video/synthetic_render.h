// The built-in synthetic picture, split into what is decided once per frame on the host (tables of
// a few KB and a handful of scalars: SynthFrame) and the per-pixel work, which the CPU (rows in
// parallel) and the GPU (synthetic_gpu.cu) do with the same integer arithmetic, so that both draw
// bit-identical frames. Internal to core/video (synthetic_source.cpp is the Source).
#pragma once

#include <cstdint>
#include <vector>

#include "core/cuda/hd.h"
#include "core/cuda/status.h"
#include "core/image/plane.h"

#include <cuda_runtime_api.h>

namespace histeq::video::synth_detail {

constexpr int kTile = 256;  // noise tile rows; the tile is kTile wider than the frame so shifts stay contiguous

// Everything a frame's pixels depend on besides (x, y).
struct SynthFrame {
  int width = 0, height = 0, chroma_width = 0, chroma_height = 0;
  int shift = 0;                      // bit_depth - 8
  int fade = 256;                     // 0..256: the fade to one value
  int rx = 0, ry = 0, rw = 0, rh = 0;  // the flat one-value rectangle
  int dx = 0, dy = 0;                 // the grain tile's shift this frame
  // Per frame: ramp (width + height/2 + 1), band (height), ucol (chroma width), vrow (chroma height).
  const int16_t* ramp = nullptr;
  const int16_t* band = nullptr;
  const int16_t* ucol = nullptr;
  const int16_t* vrow = nullptr;
  // Per source: shade (width), noise (kTile rows of width + kTile).
  const int16_t* shade = nullptr;
  const int8_t* noise = nullptr;
};

// One luma sample (8-bit level before the shift), from the frame's tables.
HISTEQ_HD int luma_at(const SynthFrame& f, int x, int y) {
  const int dyr = (y + f.dy) % kTile;
  int r = 100 + f.band[y] + f.shade[x] + f.ramp[x + y / 2] + f.noise[static_cast<int64_t>(dyr) * (f.width + kTile) + f.dx + x];
  if (y >= f.ry && y < f.ry + f.rh && x >= f.rx && x < f.rx + f.rw) r = 92;
  int v = 16 + (((r - 16) * f.fade) >> 8);
  v = v < 16 ? 16 : (v > 235 ? 235 : v);
  return v << f.shift;
}

// Draws the frame into device planes (y, u, v: planar 4:2:0, 8- or 16-bit samples) on `stream`,
// with `f`'s table pointers in device memory. Asynchronous.
Status render_gpu(const SynthFrame& f, const PlaneRef& y, const PlaneRef& u, const PlaneRef& v, cudaStream_t stream);

}  // namespace histeq::video::synth_detail
