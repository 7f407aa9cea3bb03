// The runner: the one driver of the operation list (operation.h). Every front end that equalizes
// a frame (pipeline::Equalizer, the library's api::Equalizer, the lab's frame cost) hands the
// runner a frame's planes and settings; the runner makes the frame's context, plans the frame
// once (planner.h) and runs the list in order. The rules of a frame are written here only:
//
//   - the plan: one per frame, from the frame's settings and what each operation says of it
//     (active(), fusable()), passed to the operations in FrameContext::plan;
//   - which operations work: those active() on the frame whose part the plan runs; the others are
//     told skipped() (an operation that keeps state learns there that a frame went by without it);
//   - the source (FrameInput::source, CPU): copied into the luma before the first working operation
//     that does not take it (takes_source()), or at the end;
//   - a frame without chroma planes (gray input) is equalized with chroma keep;
//   - GPU: a stateful operation's run waits on the device for its run on the previous frame, on
//     whatever slot that was (CUDA events, never a host wait).
//
// Ownership: the runner owns its operation list and each slot's scratch (the counts and the LUT,
// `bins` entries each, in the work memory: device on the GPU, host on the CPU); the planes of a
// frame stay the caller's. The tile buffers (TileScratch) are allocated at the first tiled frame. Slots: a caller keeping several frames in flight (the pipeline) gives
// each its slot 0..slots-1 and must not reuse a slot before the frame on it completed; one with
// one frame at a time uses slot 0. Streams: GPU, run() enqueues the frame's work on the stream
// given and returns without waiting; CPU, the work is done when run() returns (stream null).
// Thread: one thread calls run() and reset() (the caller's submitting thread).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/backend.h"
#include "core/cuda/resources.h"
#include "core/cuda/status.h"
#include "core/equalize/operation.h"
#include "core/equalize/planner.h"
#include "core/video/frame.h"

namespace histeq::eq {

// What a front end asks for: the GPU when there is one (automatic), or one backend.
enum class BackendChoice { automatic, gpu, cpu };

struct BackendPick {
  Backend backend = Backend::cpu;
  std::string note;  // set when automatic fell back to the CPU for want of a usable device
};

// The backend that `want` and the kernel named (`kernel`, "" for none: the backend's default)
// give. Errors: an unknown kernel, a kernel of the other backend than the one asked for, the GPU
// (asked for, or the kernel's) without a usable CUDA device.
Result<BackendPick> choose_backend(BackendChoice want, const std::string& kernel);

// One frame's planes as the runner takes them (the caller's memory: device planes on the GPU,
// host planes on the CPU).
struct FrameInput {
  PlaneRef luma;       // equalized in place
  PlaneRef source;     // CPU, optional: the luma as it came, not yet in `luma` (see the header comment)
  PlaneRef chroma[2];  // planar: U, V; semi-planar: UV in chroma[0]; empty when not at hand
  int64_t index = 0;   // the source's frame number
  double time_s = 0;   // the frame's time in seconds (the temporal filters' interval)
  bool full_range = false;  // the frame's range tag says full range
};

// Told each operation's turn on a frame (the pipeline's timing rows, the lab's costs): started()
// just before an operation runs, finished() after each operation's turn, whether it ran or sat
// out (`ran`), in list order; `k` is the operation's index in operations(). GPU: both are called
// while the work is enqueued on `stream` (record CUDA events there); CPU: around the work itself
// (read the host clock). An error stops the frame.
class TimingHook {
 public:
  virtual ~TimingHook() = default;
  virtual Status started(size_t k, const Operation& op, cudaStream_t stream) {
    (void)k, (void)op, (void)stream;
    return Status::ok();
  }
  virtual Status finished(size_t k, const Operation& op, bool ran, cudaStream_t stream) = 0;
};

// A slot's buffers for tiled frames (clahe mode), owned by the runner and handed to the operations
// in FrameContext::tiles.scratch: the tile histograms and LUTs (allocated at the first tiled frame,
// sized for the largest grid, so a live change of the grid never reallocates under a frame in
// flight), the interpolation tables of the layout it last served (on the GPU uploaded from pinned
// staging on the slot's stream), and the textbook clahe's padded picture when a frame needs one.
class TileScratch {
 public:
  // The buffers made ready for `layout` on the frame of `ctx` (tables queued on `stream`), and
  // ctx.tiles set from them: the grid, the tile histograms and LUTs, the tables, padded.
  Status ensure(FrameContext& ctx, const TileLayout& layout, cudaStream_t stream);
  // `luma` padded to the layout's picture (TileLayout), in this scratch; rows 16-byte aligned, as
  // the GPU kernels' units read them best. Grown when a frame needs more, before the stream uses it.
  Result<PlaneRef> pad(const FrameContext& ctx, const PlaneRef& luma, cudaStream_t stream);

 private:
  Status allocate(MemoryKind mem, int bins, int width, int height);
  cuda::Buffer counts_, luts_, x_table_, y_table_, x_stage_, y_stage_, padded_;
  TileLayout layout_;
};

class Runner {
 public:
  // A runner of `ops` (empty: standard_operations()) for frames of `format` on `backend`, with
  // `slots` slots (>= 1): every operation prepared, every slot's scratch allocated.
  static Result<Runner> create(Backend backend, int slots, const video::FrameFormat& format, Operations ops = {});

  Runner() = default;
  Runner(Runner&&) noexcept = default;
  Runner& operator=(Runner&&) noexcept = default;

  // Equalizes one frame with `settings` on `slot` (see the header comment). `hook`: optional.
  Status run(const FrameInput& frame, const Settings& settings, int slot, cudaStream_t stream, TimingHook* hook = nullptr);
  // Forgets what earlier frames left in the operations (a seek, another source). The caller makes
  // sure no frame is in flight.
  void reset();

  // The plan a frame with `settings` gets (what run() passes in FrameContext::plan).
  Plan plan(const Settings& settings) const;

  const Operations& operations() const noexcept { return ops_; }
  Backend backend() const noexcept { return backend_; }
  const video::FrameFormat& format() const noexcept { return format_; }
  int slots() const noexcept { return static_cast<int>(slots_.size()); }
  // The slot's histogram and LUT of its last frame, `format().bins()` entries in the work memory
  // (on the GPU complete once that frame's work on its stream is).
  const uint32_t* counts(int slot) const;
  const uint16_t* lut(int slot) const;

 private:
  struct Slot {
    cuda::Buffer counts, lut;
    TileScratch tiles;
  };
  FrameContext context(const FrameInput& frame, const Settings& settings, int slot);
  Status turn(size_t k, FrameContext& ctx, cudaStream_t stream);

  Backend backend_ = Backend::cpu;
  video::FrameFormat format_{};
  Operations ops_;
  std::vector<Slot> slots_;
  std::vector<cuda::Event> state_ev_;  // GPU, per stateful operation: its last run
  std::vector<bool> state_recorded_;
  std::vector<bool> active_;           // this frame's active() of each operation
};

}  // namespace histeq::eq
