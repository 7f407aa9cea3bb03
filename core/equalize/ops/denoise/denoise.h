// The temporal denoiser: a motion-adaptive recursive filter on the luma, run
// before the curve (denoise -> histogram -> lut -> temporal -> apply), so that a dark scene's
// noise is not stretched with its detail. The same integer formula on the CPU and the GPU
// (HISTEQ_HD), so that both give bit-identical frames.
//
// Definitions, for a luma plane of bit depth d (samples v >> shift, P010: shift 6), maxval = 2^d - 1:
//   c(x, y)   = min(v >> shift, maxval): the frame's level
//   s(x, y)   = the state: the previous denoised luma in Q4 (level * 16; uint16 planes in the
//               frame's memory), so that a small step still moves it (no dead zone of +-half a level)
//   a(x, y)   = |c * 16 - s|: the difference, Q4
//   D(x, y)   = the sum of a over the 5x5 neighbourhood (edge samples repeated at the borders): a
//               motion test whose noise is a fifth of one sample's (25 samples), so that its
//               threshold can sit just above what noise gives (3x3 measured worse on both counts:
//               more noise left and more smear, docs/quality.md)
//   sigma_q4  = round(sigma * 16 * 2^(d - 8)): the control --denoise (the noise sigma in levels of
//               255) in Q4 levels of the frame's depth
//   lo        = 25 * sigma_q4 (a mean |difference| of one sigma: noise alone gives about 0.9 sigma
//               once the state has settled); span = max(1, 25 * sigma_q4 / 4)
//   k         = kFloor when D <= lo; 256 when D >= lo + span; else kFloor + ((D - lo) * slope >> 16),
//               slope = floor((256 - kFloor) * 65536 / span) (fixed on the host, so that no sample
//               divides and the CPU's loop vectorizes): the share of the new frame, 1/256
//   s'        = s + round_half_away((c * 16 - s) * k / 256); the output level = (s' + 8) >> 4
//               (written back in the high bits for P010, the low bits kept; samples above maxval
//               are left as they are)
// So a static area converges to its mean with a recursive weight of kFloor / 256 (noise std about
// sqrt(k / (512 - k)), 0.32x), and where the frame moved by more than the noise explains
// (mean |difference| 1.25 sigma or more) the frame passes unchanged: a moving edge is not smeared.
// The constants were tuned on bench/denoise_eval.py's clips (docs/quality.md, "Denoiser").
//
// Starting over: the first frame, after reset(), after a change of the control and at a scene cut
// the state becomes the frame (k = 256 everywhere). Scene cut: the sum of a over the samples of
// every kCutRowStep-th row (y % kCutRowStep == 0), computed before the frame is filtered, above
// kCutLevels levels (8-bit scale) a sample on average: at a cut nearly every pixel would pass the
// motion test anyway; the global test keeps the areas of two shots that look alike from blending.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/cuda/hd.h"
#include "core/cuda/status.h"
#include "core/image/plane.h"

namespace histeq::eq {
namespace denoise {

constexpr uint32_t kFracBits = 4;      // the state's fraction bits (Q4)
constexpr uint32_t kFloor = 48;        // k of a static area, 1/256
constexpr uint32_t kCutLevels = 32;    // a scene cut: the mean |difference| above this (8-bit levels)
constexpr int kCutRowStep = 4;         // the cut test samples every 4th row
constexpr int kRadius = 2;             // the motion test's neighbourhood: (2 kRadius + 1)^2 samples
constexpr uint32_t kWindow = (2 * kRadius + 1) * (2 * kRadius + 1);

// The integer settings of a frame, fixed on the host by params() from the control and the format.
struct Params {
  uint32_t lo = 0, span = 1;  // the motion ramp on D (Q4 sums of kWindow)
  uint32_t slope = 0;         // (256 - kFloor) / span in Q16
  uint32_t cut_q4 = 0;        // the scene-cut threshold, Q4 levels a sample
  uint32_t maxval = 255;
  int shift = 0;              // samples in the high bits (P010: 6)
};

HISTEQ_HD uint32_t level(uint32_t v, const Params& p) {
  const uint32_t c = v >> p.shift;
  return c > p.maxval ? p.maxval : c;
}

HISTEQ_HD uint32_t diff(uint32_t c, uint32_t s) {
  const uint32_t c16 = c << kFracBits;
  return c16 > s ? c16 - s : s - c16;
}

// The new frame's share k (1/256) for a neighbourhood sum D.
HISTEQ_HD uint32_t gain(uint32_t d, const Params& p) {
  const uint32_t over = d > p.lo ? d - p.lo : 0u;
  return over >= p.span ? 256u : kFloor + ((over * p.slope) >> 16);  // over * slope < 208 << 16
}

// The new state.
HISTEQ_HD uint32_t blend(uint32_t s, uint32_t c, uint32_t k) {
  const int32_t e = (static_cast<int32_t>(c << kFracBits) - static_cast<int32_t>(s)) * static_cast<int32_t>(k);
  const int32_t m = e < 0 ? -e : e;
  const int32_t step = (m + 128) >> 8;  // round half away from zero
  return static_cast<uint32_t>(static_cast<int32_t>(s) + (e < 0 ? -step : step));
}

HISTEQ_HD uint32_t output(uint32_t s) { return (s + (1u << (kFracBits - 1))) >> kFracBits; }

// The sample written for a stored sample v and the new state s.
HISTEQ_HD uint32_t store(uint32_t v, uint32_t s, const Params& p) {
  const uint32_t out = output(s) << p.shift | (v & ((1u << p.shift) - 1u));
  return (v >> p.shift) > p.maxval ? v : out;
}

// The number of samples the cut test sums.
inline uint64_t cut_samples(int width, int height) {
  return static_cast<uint64_t>((height + kCutRowStep - 1) / kCutRowStep) * static_cast<uint64_t>(width);
}

}  // namespace denoise

// The integer settings for the control sigma (> 0, levels of 255) on a plane of bit_depth bits
// stored with `shift` (host).
denoise::Params denoise_params(double sigma, int bit_depth, int shift);

// One frame through the filter, in place. luma: the frame's luma (8- or 16-bit samples); state:
// kStatePlanes planes of width x height uint16 entries, tight rows, in the luma's memory: the frame
// reads plane `parity` and writes plane parity ^ 1 (the caller flips parity after each frame);
// plane 2 is the GPU's scratch (the differences; the CPU leaves it alone); sums: two uint64
// counters there
// (zero when allocated): the cut test adds into sums[parity] and the frame clears sums[parity ^ 1]
// for the next one, so the GPU form needs no host round trip and no memset. restart: start over
// (state = frame, the frame unchanged). Both forms give identical frames and states.
constexpr int kStatePlanes = 3;
struct DenoiseArgs {
  PlaneRef luma;
  uint16_t* state = nullptr;
  unsigned long long* sums = nullptr;
  int parity = 0;
  bool restart = true;
  denoise::Params params;
};
Status denoise_frame(const DenoiseArgs& a);
Status denoise_frame_gpu(const DenoiseArgs& a, cudaStream_t stream);
// The checks both forms make.
Status check_denoise_args(const DenoiseArgs& a);

}  // namespace histeq::eq
