// The method2_tuned sweep harness (bench/sweep/README.md): many template instances of the tuned
// kernel (core/histogram/agent/method2_tuned.cuh) and of the fused equalizer
// (core/equalize/ops/equalize/fused_gpu.cuh), timed beside cub and a read-ceiling kernel on the same buffers in
// one run. A program, not a test: it builds without FFmpeg, so it runs on a bare GPU machine.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/equalize/ops/equalize/fused_gpu.h"
#include "core/histogram/agent/method2_tuned.cuh"

namespace sweep {

using histeq::hist::detail::PlaneGeometry;
using histeq::hist::m2t::Scratch;

// One instance of the histogram kernel: 8-bit samples with 256 bins, or 16-bit with 1024 (10-bit).
struct HistVariant {
  std::string name;
  int bits = 16, ilp = 1, unroll = 4;
  bool prefetch = false;
  int bytes_per_sample = 1;
  int max_warps = 1;
  uint32_t pass_units = 0;
  size_t (*smem)(int warps) = nullptr;
  // bins: 256 (8-bit) or 1024 (16-bit, 10-bit data); pass = units between flushes
  // l2_prefetch: prefetch the plane into L2 at the start (when it fits in half the L2)
  cudaError_t (*launch)(const PlaneGeometry& g, uint32_t bins, uint32_t pass, int blocks, int warps, const Scratch& s,
                        bool l2_prefetch, uint32_t* out, cudaStream_t stream) = nullptr;
};

std::vector<HistVariant>& hist_variants();  // filled by the instance files' registrars

// One instance of the fused equalizer (plain builder).
struct FusedVariant {
  std::string name;
  int bytes_per_sample = 1;
  histeq::Status (*launch)(const histeq::eq::FusedEqualizer::Scratch& s, void* plane, int width, int height, size_t pitch,
                           int bit_depth, uint32_t weight, const histeq::eq::FusedOutputs& out, int units_per_lane,
                           int max_warps, int max_blocks, cudaStream_t stream, histeq::eq::FusedLaunch* rec) = nullptr;
};

std::vector<FusedVariant>& fused_variants();

struct Registrar {
  explicit Registrar(HistVariant v) { hist_variants().push_back(std::move(v)); }
  explicit Registrar(FusedVariant v) { fused_variants().push_back(std::move(v)); }
};

}  // namespace sweep
