// A curve operation, the example of docs/architecture.md's "Adding a curve operation": a gamma on
// the equalization's curve, between the LUT (and the temporal filter) and the apply, with its own
// control `gamma` (1 = off). Everything it needs is in this file; the tests add it with one line,
// register_operation(gamma_operation(), "apply"), as a plug-in would (in the product it would be
// this file under core/equalize/ops/gamma/ and its line in operations.def, before apply).
//
// It is a step (Part::step): it runs wherever the curve is built step by step. It says neither
// fusable() nor foldable() (the defaults), so while it is active the planner keeps the fused path
// and the fold off, and the frames equalized on the GPU are the CPU's on every path.
//
// The curve v -> table[v] is computed on the host (one table per gamma and depth) and applied to
// the frame's LUT (global) or tile LUTs (clahe) by the same integer lookup on the CPU and the GPU,
// so both give the same frames bit for bit.
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/resources.h"
#include "core/equalize/controls.h"
#include "core/equalize/operation.h"

namespace histeq::test {
namespace {

__global__ void map_curve(uint16_t* lut, int n, const uint16_t* table, int top) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) lut[i] = table[min(static_cast<int>(lut[i]), top)];
}

class GammaOp final : public eq::Operation {
 public:
  video::StageId stage() const override { return id_; }
  bool active(const eq::FrameContext& ctx) const override { return gamma_of(ctx) != 1; }
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    slots_.clear();
    slots_.resize(static_cast<size_t>(slots));
    bins_ = format.bins();
    if (backend != Backend::gpu) return Status::ok();
    for (auto& s : slots_) {
      auto d = cuda::Buffer::allocate(MemoryKind::device, sizeof(uint16_t) * bins_);
      if (!d) return d.status();
      auto p = cuda::Buffer::allocate(MemoryKind::pinned, sizeof(uint16_t) * bins_);
      if (!p) return p.status();
      s.device = std::move(d.value());
      s.staging = std::move(p.value());
    }
    return Status::ok();
  }
  Status run(eq::FrameContext& ctx, cudaStream_t stream) override {
    Slot& s = slots_.at(static_cast<size_t>(ctx.slot));
    const double gamma = gamma_of(ctx);
    if (gamma != s.gamma) table(gamma, s.table);
    const bool clahe = ctx.settings->quality.mode == eq::Mode::clahe;
    uint16_t* luts[2] = {ctx.curve.lut, clahe ? ctx.tiles.luts : nullptr};  // clahe: the mean LUT is for displays
    const int counts[2] = {bins_, clahe ? ctx.tiles.grid.count() * bins_ : 0};
    if (ctx.backend != Backend::gpu) {
      for (int k = 0; k < 2; ++k)
        for (int i = 0; i < counts[k]; ++i) luts[k][i] = s.table[std::min<int>(luts[k][i], bins_ - 1)];
      s.gamma = gamma;
      return Status::ok();
    }
    if (gamma != s.gamma) {  // the slot's previous frame is complete: its staging is free
      std::copy(s.table.begin(), s.table.end(), static_cast<uint16_t*>(s.staging.data()));
      HISTEQ_CUDA_TRY(cudaMemcpyAsync(s.device.data(), s.staging.data(), s.staging.bytes(), cudaMemcpyHostToDevice, stream));
      s.gamma = gamma;
    }
    for (int k = 0; k < 2; ++k) {
      if (counts[k] == 0) continue;
      map_curve<<<(counts[k] + 255) / 256, 256, 0, stream>>>(luts[k], counts[k], static_cast<const uint16_t*>(s.device.data()), bins_ - 1);
      HISTEQ_CUDA_TRY_LAUNCH();
    }
    return Status::ok();
  }

 private:
  struct Slot {
    cuda::Buffer device, staging;  // GPU: the table, and its pinned upload
    std::vector<uint16_t> table;
    double gamma = 0;              // the table's gamma (0: none yet)
  };
  static double gamma_of(const eq::FrameContext& ctx) { return ctx.settings->quality.param("gamma", 1); }
  // v -> round(max * (v / max)^(1 / gamma)): gamma > 1 brightens the mid-tones.
  void table(double gamma, std::vector<uint16_t>& t) const {
    const double top = bins_ - 1;
    t.resize(static_cast<size_t>(bins_));
    for (int v = 0; v < bins_; ++v) t[static_cast<size_t>(v)] = static_cast<uint16_t>(std::lround(top * std::pow(v / top, 1 / gamma)));
  }

  video::StageId id_ = video::stage_id("gamma");
  std::vector<Slot> slots_;
  int bins_ = 256;
};

}  // namespace

eq::OperationInfo gamma_operation() {
  eq::Control gamma = eq::param_control("gamma", 1, 0.2, 5);
  gamma.what = "gamma";
  gamma.help = "a gamma on the equalization's curve: above 1 brightens the mid-tones (1 = off)";
  gamma.doc = "the curve raised to the power 1/gamma before it is applied; 1 = off";
  return {"gamma", {gamma}, [] { return std::unique_ptr<eq::Operation>(new GammaOp()); }};
}

}  // namespace histeq::test
