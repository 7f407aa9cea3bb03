// bench --equalize: the GPU time of a whole equalization per frame (histogram + LUT + apply), the
// fused method2_tuned path (core/equalize/ops/equalize/fused_gpu.h, one launch) against the unfused one (a
// histogram kernel, build_lut_gpu, apply_lut_gpu: three launches) with method2_tuned and with cub,
// on 8- and 10-bit planes. Same engine and method as the matrix (engine.h).
//
// Check first: on a copy of the first buffer, at strength 1, the fused result (frame, histogram,
// LUT) must equal the unfused cub path's byte for byte, or the case's rows are FAILED and nothing
// is timed. Timing runs at strength 0 (the identity LUT): the rotating inputs then keep their
// content from run to run (equalizing at strength 1 would flatten them, which changes what
// content-dependent kernels such as cub see), and the work is the same at any strength, since no
// kernel branches on the LUT's values.
//
// Thread: the engine's. Needs a GPU (create() fails with Code::no_device without one).
#pragma once

#include <memory>
#include <vector>

#include "lab/engine.h"
#include "lab/results.h"
#include "core/equalize/ops/equalize/fused_gpu.h"

namespace histeq::lab {

struct EqualizePlan {
  std::vector<SizeSpec> sizes;
  std::vector<int> depths;  // 8..10: 8 on 8-bit samples, more on 16-bit ones
  std::vector<InputSpec> inputs;
};

class EqualizeBench {
 public:
  // The fused equalizer, the two histogram kernels and the scratch histogram and LUT. `eng`
  // must outlive the bench.
  static Result<std::unique_ptr<EqualizeBench>> create(Engine& eng);
  // Every size x depth x input case in that order. Each case gives four rows (the read ceiling,
  // "fused", "method2_tuned+lut+apply", "cub+lut+apply"), or one error row when it cannot be built;
  // `sink` gets them when the case is complete. x_cub is against the unfused cub path.
  std::vector<Row> run(const EqualizePlan& plan, const RowSink& sink = {});
  // The fused path's launch shape (the last one timed).
  const eq::FusedLaunch& last_launch() const { return fused_.last_launch(); }

 private:
  EqualizeBench(Engine& eng, eq::FusedEqualizer fused) : eng_(eng), fused_(std::move(fused)) {}
  // One case's rows appended to `rows`.
  void run_case(const CaseSpec& spec, std::vector<Row>& rows);
  template <class T>
  void time_paths(const CaseData& cd, const Row& base, const std::string& status, std::vector<Row>& rows);

  Engine& eng_;
  eq::FusedEqualizer fused_;
  std::unique_ptr<hist::Kernel> m2t_, cub_;
  cuda::DeviceArray<uint32_t> d_hist_;
  cuda::DeviceArray<uint16_t> d_lut_;
};

}  // namespace histeq::lab
