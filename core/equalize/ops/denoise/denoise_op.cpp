// The denoise operation (operation.h): the temporal denoiser of denoise.h on the frame's luma,
// before the histogram, so that the curve is built from, and applied to, the denoised picture.
#include <cstring>

#include "core/cuda/check.h"
#include "core/equalize/controls.h"
#include "core/equalize/ops/denoise/options.h"
#include "core/equalize/ops/denoise/denoise.h"
#include "core/equalize/operation.h"

namespace histeq::eq {
namespace {

// `b` set to zero bytes: at once in host memory, in order on `stream` in device memory.
Status zero(cuda::Buffer& b, cudaStream_t stream) {
  if (b.kind() != MemoryKind::device) {
    std::memset(b.data(), 0, b.bytes());
    return Status::ok();
  }
  HISTEQ_CUDA_TRY(cudaMemsetAsync(b.data(), 0, b.bytes(), stream));
  return Status::ok();
}

// Stateful: the state planes and the cut sums live in the frame's memory (device on the GPU), and
// the equalizer orders the runs of consecutive frames across slots. Starts over at the first frame,
// after reset(), after a frame without the denoiser, when its control changed (the state is the
// input's picture, so the tone controls do not touch it) and when frames were skipped (the frame
// index jumps: the comparison's list does not run while the split view is off, so it never sees
// the frames between); the scene cut is found on the device.
class DenoiseOp final : public Operation {
 public:
  bool foldable(const Settings&) const override { return true; }
  video::StageId stage() const override { return id_; }
  Part part() const override { return Part::filter; }
  bool stateful() const override { return true; }
  bool active(const FrameContext& ctx) const override { return ctx.settings->quality.denoise > 0; }
  void skipped(const FrameContext&) override { following_ = false; }
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    (void)backend, (void)slots, (void)format;
    state_ = {};
    sums_ = {};
    reset();
    return Status::ok();
  }
  Status run(FrameContext& ctx, cudaStream_t stream) override {
    const double sigma = ctx.settings->quality.denoise;
    if (sigma <= 0) {
      following_ = false;
      return Status::ok();
    }
    const MemoryKind mem = ctx.backend == Backend::gpu ? MemoryKind::device : MemoryKind::host;
    if (state_.empty()) {
      auto s = cuda::Buffer::allocate(mem, kStatePlanes * sizeof(uint16_t) * ctx.luma.samples());
      if (!s) return s.status();
      state_ = std::move(s.value());
      auto c = cuda::Buffer::allocate(mem, 2 * sizeof(unsigned long long));
      if (!c) return c.status();
      sums_ = std::move(c.value());
      following_ = false;
      // The first frame starts over and so reads a state it does not use (k = 256 takes the frame
      // alone): zeroed, so that it is not an uninitialised read (valgrind, compute-sanitizer's
      // initcheck), and the sums are zero as denoise.h promises.
      HISTEQ_TRY(zero(state_, stream));
      HISTEQ_TRY(zero(sums_, stream));
    }
    DenoiseArgs a;
    a.luma = ctx.luma;
    a.state = static_cast<uint16_t*>(state_.data());
    a.sums = static_cast<unsigned long long*>(sums_.data());
    a.parity = parity_;
    // A source that numbers no frames (the same index every time) never counts as a jump.
    const bool jump = ctx.frame_index > index_ + 1 || ctx.frame_index < index_;
    a.restart = !following_ || sigma != sigma_ || jump;
    a.params = denoise_params(sigma, ctx.format->bit_depth, ctx.format->sample_shift());
    HISTEQ_TRY(ctx.backend == Backend::gpu ? denoise_frame_gpu(a, stream) : denoise_frame(a));
    parity_ ^= 1;
    following_ = true;
    sigma_ = sigma;
    index_ = ctx.frame_index;
    return Status::ok();
  }
  void reset() override { following_ = false; }

 private:
  video::StageId id_ = video::stage_id("denoise");
  cuda::Buffer state_, sums_;
  bool following_ = false;  // the previous frame went through the filter (skipped() clears it)
  double sigma_ = 0;
  int64_t index_ = 0;  // the last frame's index
  int parity_ = 0;
};

}  // namespace

std::unique_ptr<Operation> make_denoise_operation() { return std::make_unique<DenoiseOp>(); }

OperationInfo denoise_operation() { return {"denoise", denoise_controls(), make_denoise_operation}; }

}  // namespace histeq::eq
