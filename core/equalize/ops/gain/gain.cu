// The example operation of docs/architecture.md, "Adding an operation" (built with
// -DHISTEQ_EXAMPLE_OPERATION=ON): the luma multiplied by --luma-gain and offset by --luma-offset
// levels of 255 (scaled for 10-bit) before the histogram, on the CPU and the GPU with one integer
// formula (so both give the same frames). Everything it needs is here: its controls (which the
// command line, `histeq quality`'s keys, the player's overlay and docs/controls.md pick up), the
// CPU loop, the kernel and its operation-list entry; its line is in operations.def.
#include <cuda_runtime.h>

#include <cmath>
#include <memory>

#include "core/cuda/check.h"
#include "core/cuda/hd.h"
#include "core/equalize/controls.h"
#include "core/equalize/operation.h"

namespace histeq::eq {
namespace {

struct GainArgs {
  uint32_t gain_q8 = 256;  // round(gain * 256)
  int32_t offset = 0;      // levels of the frame's depth
  int32_t maxval = 255;
  int shift = 0;           // P010: the samples' place in the 16 bits
};

// v' = clamp(round(v * gain) + offset, 0, max), in Q8.
HISTEQ_HD uint32_t gained(uint32_t v, const GainArgs& a) {
  const int32_t s = static_cast<int32_t>(((v >> a.shift) * a.gain_q8 + 128u) >> 8) + a.offset;
  return static_cast<uint32_t>(s < 0 ? 0 : s > a.maxval ? a.maxval : s) << a.shift;
}

template <class T>
__global__ void gain_kernel(T* luma, int width, int height, size_t pitch, GainArgs a) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x), y = static_cast<int>(blockIdx.y);
  if (x >= width || y >= height) return;
  T* row = reinterpret_cast<T*>(reinterpret_cast<char*>(luma) + static_cast<size_t>(y) * pitch);
  row[x] = static_cast<T>(gained(row[x], a));
}

template <class T>
Status gain_plane(const PlaneRef& p, const GainArgs& a, bool gpu, cudaStream_t stream) {
  T* data = static_cast<T*>(const_cast<void*>(p.data));
  if (gpu) {
    const dim3 block(256), grid(static_cast<unsigned>((p.width + 255) / 256), static_cast<unsigned>(p.height));
    gain_kernel<T><<<grid, block, 0, stream>>>(data, p.width, p.height, p.pitch, a);
    HISTEQ_CUDA_TRY_LAUNCH();
    return Status::ok();
  }
  for (int y = 0; y < p.height; ++y) {
    T* row = reinterpret_cast<T*>(reinterpret_cast<char*>(data) + static_cast<size_t>(y) * p.pitch);
    for (int x = 0; x < p.width; ++x) row[x] = static_cast<T>(gained(row[x], a));
  }
  return Status::ok();
}

// A filter: it runs before the equalization on either path of the plan (planner.h).
class GainOp final : public Operation {
 public:
  bool fusable(const Settings&) const override { return true; }
  bool foldable(const Settings&) const override { return true; }
  video::StageId stage() const override { return id_; }
  Part part() const override { return Part::filter; }
  bool active(const FrameContext& ctx) const override {
    const Quality& q = ctx.settings->quality;
    return q.param("luma-gain", 1) != 1 || q.param("luma-offset", 0) != 0;
  }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    const Quality& q = ctx.settings->quality;
    GainArgs a;
    const int depth = ctx.format->bit_depth;
    a.gain_q8 = static_cast<uint32_t>(std::lround(q.param("luma-gain", 1) * 256));
    a.offset = static_cast<int32_t>(std::lround(q.param("luma-offset", 0) * (1 << (depth - 8))));
    a.maxval = (1 << depth) - 1;
    a.shift = ctx.format->sample_shift();
    const bool gpu = ctx.backend == Backend::gpu;
    if (ctx.luma.bytes_per_sample == 1) return gain_plane<uint8_t>(ctx.luma, a, gpu, stream);
    return gain_plane<uint16_t>(ctx.luma, a, gpu, stream);
  }

 private:
  video::StageId id_ = video::stage_id("gain");
};

}  // namespace

OperationInfo gain_operation() {
  // Its controls' specs (controls.h): name, range, default, plain value (none: the default), words, help, doc.
  return {"gain",
          {param_spec("luma-gain", {0.25, 4}, 1, std::nullopt, {"gain", "luma gain"},
                      "multiply the luma by this before the equalization (1 = off)",
                      "the luma multiplied by this before the histogram; 1 = off"),
           param_spec("luma-offset", {-64, 64}, 0, std::nullopt, {"offset", "luma offset", "levels"},
                      "add this many levels of 255 to the luma before the equalization (0 = off)",
                      "levels of 255 added to the luma before the histogram (after the gain); 0 = off")},
          [] { return std::unique_ptr<Operation>(new GainOp()); }};
}

}  // namespace histeq::eq
