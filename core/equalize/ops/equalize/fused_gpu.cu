// FusedEqualizer: the scratch, and the plain-builder entry points (fused_gpu.h). The kernel and its
// launch are templates in fused_gpu.cuh, instantiated here for PlainLutBuilder.
#include "core/equalize/ops/equalize/fused_gpu.cuh"

#include <algorithm>
#include <utility>

namespace histeq::eq {
namespace {

// The levels against the plane's depth (its own checks, run_with's, come after).
Status check_levels(int bit_depth, const Levels& levels) {
  if (bit_depth < 1 || bit_depth > 10) return Status::ok();  // run_with says why
  if (levels.lo > levels.hi || levels.hi >= (1u << bit_depth))
    return HISTEQ_ERROR(Code::invalid_argument, "levels outside the plane's range");
  return Status::ok();
}

}  // namespace

Result<FusedEqualizer> FusedEqualizer::create() {
  if (!cuda::have_device()) return HISTEQ_ERROR(Code::no_device, "the fused equalizer needs a CUDA device and none is available");
  const size_t acc_words = size_t{kMaxBins} * hist::policy::Method2Tuned::kAccStride;
  // acc | ticket | gen | (pad to 16 bytes) | lut
  const size_t words = acc_words + 4;
  const size_t bytes = words * 4 + size_t{kMaxBins} * 2;
  auto b = cuda::Buffer::allocate(MemoryKind::device, bytes);
  if (!b) return b.status();
  // Zero before any stream can use it: a legacy-stream memset is not ordered with non-blocking
  // streams, so wait for it here (once per instance).
  HISTEQ_CUDA_TRY(cudaMemset(b->data(), 0, bytes));
  HISTEQ_CUDA_TRY(cudaDeviceSynchronize());
  FusedEqualizer f;
  f.buf_ = std::move(b.value());
  uint32_t* w = static_cast<uint32_t*>(f.buf_.data());
  f.s_.acc = w;
  f.s_.ticket = w + acc_words;
  f.s_.gen = w + acc_words + 1;
  f.s_.lut = reinterpret_cast<uint16_t*>(w + words);
  return Result<FusedEqualizer>(std::move(f));
}

Status FusedEqualizer::run(const PlaneView<uint8_t>& plane, uint32_t weight, const Levels& levels, cudaStream_t stream,
                           const FusedOutputs& out) {
  HISTEQ_TRY(check_levels(plane.bit_depth, levels));
  return run_with(plane, weight, PlainLutBuilder{levels}, stream, out);
}

Status FusedEqualizer::run(const PlaneView<uint16_t>& plane, uint32_t weight, const Levels& levels, cudaStream_t stream,
                           const FusedOutputs& out) {
  HISTEQ_TRY(check_levels(plane.bit_depth, levels));
  return run_with(plane, weight, PlainLutBuilder{levels}, stream, out);
}

Status FusedEqualizer::run(const PlaneView<uint8_t>& plane, uint32_t weight, cudaStream_t stream, const FusedOutputs& out) {
  return run(plane, weight, textbook_levels(255), stream, out);
}

Status FusedEqualizer::run(const PlaneView<uint16_t>& plane, uint32_t weight, cudaStream_t stream, const FusedOutputs& out) {
  return run(plane, weight, textbook_levels((1u << std::clamp(plane.bit_depth, 1, 10)) - 1u), stream, out);
}

}  // namespace histeq::eq
