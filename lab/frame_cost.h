// The equalization's cost per frame in each mode (`histeq quality --bench`), with the operation list
// the equalizer runs (core/equalize/operation.h), on frames already where the equalizer works on
// them (device memory on the GPU, host memory on the CPU): no upload, download or decode.
//
// Method (as the matrix, engine.h): the frames rotate over enough buffers to exceed twice the L2 (so
// no frame is served from a cache its previous run warmed); after a warm-up, GPU frames are timed
// with CUDA events around the whole list and around each operation, in batches behind a spin kernel
// so host launch latency does not leak into the events; CPU frames with the steady clock. Median and
// p99 over the runs. The frames are equalized in place, run after run (the time of these operations
// does not depend on the picture's histogram enough to matter: method2 is data-independent; the
// gathers of apply are not).
//
// Thread: one FrameCostBench per thread. Units: microseconds.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lab/engine.h"
#include "core/equalize/quality.h"

namespace histeq::lab {

// The modes timed, in order: plain, global+all, clahe 8x8, clahe 8x8+all, global+denoise.
struct FrameCostCase {
  std::string name;
  eq::Quality quality;
  bool fold = true;  // eq::Settings::fold
};
// gpu: with "global+steps" after "global+all", its steps kept apart (the fold's baseline).
std::vector<FrameCostCase> frame_cost_cases(bool gpu);

// One case at one size.
struct FrameCost {
  std::string size, name, quality;  // quality: eq::describe() of the case's settings
  Stats total;                      // the whole operation list
  std::vector<std::pair<std::string, Stats>> stages;  // each operation that ran, by its stage name
  double x_plain = 0;               // total median / the plain case's at this size
};

class FrameCostBench {
 public:
  static constexpr int kWarmup = 20;  // untimed frames before each case
  // `gpu`: on the current device, else on the CPU. `kernel` is the histogram kernel (one of that
  // backend); `real` the luma frames to tile as content (empty: a darkened synthetic picture).
  static Result<std::unique_ptr<FrameCostBench>> create(bool gpu, const std::string& kernel, int runs, std::vector<Plane8> real);
  bool gpu() const { return gpu_; }
  // The GPU's name, or "N threads" on the CPU.
  const std::string& device() const { return device_; }
  // Every case at `size`, in frame_cost_cases()'s order; `done` gets each result as it ends.
  Status run_size(const SizeSpec& size, const std::function<void(const FrameCost&)>& done = {});
  const std::vector<FrameCost>& results() const { return results_; }

 private:
  FrameCostBench() = default;

  bool gpu_ = false;
  std::string kernel_, device_;
  int runs_ = 0;
  size_t l2_ = 0;
  std::vector<Plane8> real_;
  cuda::Stream stream_;
  std::vector<FrameCost> results_;
};

// The results as JSON (per-stage medians and p99s included) and CSV (totals), through a temporary
// file renamed when complete; `command`, the device and the kernel are recorded.
Status write_frame_cost_json(const std::string& path, const std::vector<FrameCost>& results, const std::string& command,
                             const std::string& device, bool gpu, const std::string& kernel);
Status write_frame_cost_csv(const std::string& path, const std::vector<FrameCost>& results, const std::string& command,
                            const std::string& device, const std::string& kernel);

}  // namespace histeq::lab
