// What several operations of ops/ share (operation.h): the frame's levels and memory, a buffer in
// that memory, the pool the CPU forms spread over, the colour pass's planes, and the maker an
// OperationInfo holds. Private to the operations' files; nothing outside core/equalize includes it.
#pragma once

#include <memory>

#include "core/cuda/resources.h"
#include "core/equalize/controls.h"
#include "core/equalize/operation.h"
#include "core/equalize/ops/apply/apply.h"
#include "core/image/fork_join.h"

namespace histeq::eq {

// The frame's levels (quality.h's frame_levels) for its settings, depth and range tag.
inline FrameLevels levels_of(const FrameContext& ctx) {
  return frame_levels(ctx.settings->quality, ctx.format->bit_depth, ctx.full_range);
}

// The memory the frame's planes and buffers live in: device on the GPU, host on the CPU.
inline MemoryKind memory_of(const FrameContext& ctx) { return ctx.backend == Backend::gpu ? MemoryKind::device : MemoryKind::host; }

inline Result<cuda::Buffer> allocate(MemoryKind kind, size_t bytes) { return cuda::Buffer::allocate(kind, bytes); }

// OperationInfo::make for an operation class with a default constructor.
template <class Op>
std::unique_ptr<Operation> make_operation() {
  return std::make_unique<Op>();
}

// An operation whose CPU form spreads over the cores: the process's shared pool (image::shared_pool(),
// the histogram kernel's too, so one set of threads serves every stage of a frame awake; none for
// the GPU or on a single core).
class PooledOp : public Operation {
 public:
  Status prepare(Backend backend, int slots, const video::FrameFormat& format) override {
    (void)slots, (void)format;
    pool_ = backend == Backend::cpu ? image::shared_pool() : nullptr;
    return Status::ok();
  }

 protected:
  image::ForkJoin* pool_ = nullptr;  // the process's pool, shared with the cpu_parallel kernel
};

// The colour pass's planes and levels for the frame (chroma follow): the apply's, or the fold's.
// An internal error where the frame has no chroma planes.
Result<ChromaPlanes> chroma_planes(const FrameContext& ctx);

}  // namespace histeq::eq
