// The equalizer's per-frame operations. An equalizer is a list of operations run in order on each
// frame, the same list and order on the CPU and on the GPU:
//
//   histogram -> [what picture-quality work adds: temporal filter, clip limit, tile LUTs, colour]
//             -> lut -> apply
//
// Each operation has a stage id (its timing row, core/video/timing.h), run(context, stream) and
// reset(). The runner (runner.h) owns the list, makes each frame's context and plan, runs the
// operations in turn and tells a timing hook; the front ends (core/pipeline/equalizer.h, the
// library, the lab) move frames between memories, time the operations through the hook (CUDA
// events read late on the GPU, the host clock on the CPU), and call reset() when the pictures stop
// following each other (a seek, another source).
//
// Memory and threads. On the GPU the pipeline keeps several frames in flight, each in a "slot"
// with its own stream and the runner's counts/LUT/tile buffers of that slot; run() enqueues work on
// the slot's stream and returns without waiting. An operation that keeps state from one frame to
// the next says so (stateful()); the runner then orders its runs across slots with CUDA events
// (frame n's run waits for frame n-1's on the device, never on the host). On the CPU, run() does
// the work before it returns and `stream` is null. All calls come from the runner's one thread.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/backend.h"
#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/equalize/quality.h"
#include "core/histogram/histogram.h"
#include "core/image/plane.h"
#include "core/video/frame.h"
#include "core/video/timing.h"

namespace histeq::eq {

// The settings a frame is equalized with: a snapshot taken when the frame enters the equalizer, so
// that live controls apply from the next frame and never change a frame half-way.
struct Settings {
  std::string kernel;             // the histogram kernel (registry name); in clahe mode one with tiles (tiles_kernel())
  uint32_t weight = kWeightOne;   // the strength as a LUT weight (strength_weight())
  Quality quality;                // mode, clip limit, temporal filter, chroma (quality.h); plain by default
  bool fold = true;               // the planner may fold the curve into the temporal step (planner.h); false
                                  // keeps the steps apart (the same frames: benchmarks compare the two)
};

// Where an operation stands in a frame's plan (planner.h): a filter works on the picture before the
// equalization and runs on either path; the fused operation is the whole equalization in one launch;
// the steps (histogram, LUT, temporal, apply) are the equalization step by step; the curve steps
// (histogram, LUT, apply) sit out where the temporal step folds them into its launch. The planner picks
// the fused operation or the steps for each frame, and whether they fold.
enum class Part { filter, fused, step, curve };

// A frame's plan (planner.h): made once per frame by the runner (runner.h) and passed to the
// operations in FrameContext::plan; operations read it, never plan again.
struct Plan {
  bool fused = false;   // the fused operation equalizes the frame
  bool folded = false;  // the temporal step also counts the histogram, builds the LUT and applies it
  // Whether an operation of this part works on the frame (its own controls permitting: active()).
  bool runs(Part p) const noexcept {
    if (p == Part::filter) return true;
    if (p == Part::fused) return fused;
    return !fused && !(p == Part::curve && folded);
  }
};

class TileScratch;  // runner.h: a slot's buffers for tiled frames

// The frame's curve, `bins` entries each in the luma's memory (the runner's per-slot scratch).
struct CurveBuffers {
  uint32_t* counts = nullptr;  // the luma histogram: written by the histogram stage
  uint16_t* lut = nullptr;     // the curve: written by the LUT stage, read by apply (clahe: the mean of
                               // the tile LUTs, for displays)
};

// Tiled frames (clahe mode): the slot's tile buffers, and what the histogram stage sets in them for
// the later stages, in the luma's memory.
struct TileBundle {
  TileScratch* scratch = nullptr;  // the slot's buffers (the runner's; TileScratch::ensure, ::pad)
  hist::TileGrid grid;             // effective_tiles() of the frame
  uint32_t* counts = nullptr;      // grid.count() histograms of `bins` counters, tile-major
  // The tile histograms count the textbook clahe's padded picture (TileLayout), not the frame's:
  // they do not sum to `curve.counts`, which the histogram stage then counts on its own.
  bool padded = false;
  uint16_t* luts = nullptr;        // grid.count() LUTs of `bins` entries
  const uint32_t* x = nullptr;     // luma width entries: axis_table() of the columns
  const uint32_t* y = nullptr;     // luma height entries
};

// One frame as the operations see it, made by the runner (runner.h): the frame and its settings,
// the plan, the curve, the tiles.
struct FrameContext {
  // The frame.
  Backend backend = Backend::cpu;
  const video::FrameFormat* format = nullptr;
  int slot = 0;                   // GPU: the frame's slot in 0..slots-1 (per-slot scratch); CPU: 0
  int64_t frame_index = 0;        // the source's frame number
  double time_s = 0;              // the frame's time (the temporal filter's frame interval)
  bool full_range = false;        // the frame's colour range tag: black is 0, else 16 << (bit_depth - 8)
  int bins = 256;                 // 2^format->bit_depth
  // The luma being equalized, in place: device memory on the GPU, host memory on the CPU. Its
  // PlaneRef::bit_depth is the stored depth (format->storage_depth()).
  PlaneRef luma;
  // CPU, when set: the frame's luma as it came, not yet in `luma` (a library call with a separate
  // output). The operations that say takes_source() read it instead of `luma`, and the apply maps
  // it into `luma` (clearing it); before any other operation, the runner copies it into `luma`.
  PlaneRef source;
  // The chroma planes in the same memory, when the equalizer holds them there (planar: U, V;
  // semi-planar: the UV plane in chroma[0]); empty planes otherwise.
  PlaneRef chroma[2];
  // The settings and the plan.
  const Settings* settings = nullptr;
  Plan plan;                      // the frame's plan (planner.h), made once by the runner
  CurveBuffers curve;
  TileBundle tiles;
};

class Operation {
 public:
  virtual ~Operation() = default;
  // Its part in the plan.
  virtual Part part() const { return Part::step; }
  // The timing row of this operation.
  virtual video::StageId stage() const = 0;
  // True when run() uses state left by the previous frame's run() (see the header comment).
  virtual bool stateful() const { return false; }
  // Called once before the first run, with the backend, the number of slots and the frame format.
  virtual Status prepare(Backend backend, int slots, const video::FrameFormat& format) {
    (void)backend, (void)slots, (void)format;
    return Status::ok();
  }
  // Whether its controls ask for work on this frame (the denoiser at sigma 0 sits out, and its
  // timing row stays empty for the frame). Pure: the runner asks every operation before it plans
  // the frame (FrameContext::plan is not set yet).
  virtual bool active(const FrameContext& ctx) const {
    (void)ctx;
    return true;
  }
  // Told that the frame of `ctx` went by without its run (inactive, or its part not in the plan),
  // in its turn: an operation that keeps state from frame to frame learns here to start over.
  virtual void skipped(const FrameContext& ctx) { (void)ctx; }
  // Whether the fused path (planner.h) may take a frame with `settings` while this operation is
  // active on it: its work is done by the one launch (the standard steps with the settings the
  // launch computes), or does not depend on the launch (a filter before it). False by default, so
  // that an operation the fused kernel knows nothing of turns the fused path off rather than
  // being skipped by it.
  virtual bool fusable(const Settings& settings) const {
    (void)settings;
    return false;
  }
  // Likewise for the fold (planner.h): whether the temporal step's one launch (histogram, curve,
  // filter through time, apply) may take the frame while this operation is active on it. False by
  // default: a curve operation between the LUT and the apply (Part::step) keeps the steps apart.
  virtual bool foldable(const Settings& settings) const {
    (void)settings;
    return false;
  }
  // Whether run() can take the frame with FrameContext::source set (it reads the luma from there,
  // or not at all). False: the caller copies the source into the luma first.
  virtual bool takes_source(const FrameContext& ctx) const {
    (void)ctx;
    return false;
  }
  // Works on one frame (see the header comment for streams and memory).
  virtual Status run(FrameContext& ctx, cudaStream_t stream) = 0;
  // Forgets what earlier frames left (the next frame does not follow the last one).
  virtual void reset() {}
};

using Operations = std::vector<std::unique_ptr<Operation>>;

// The operation list (operations.def, then registered operations: controls.h), one instance each:
// [denoise] -> [equalize] -> histogram -> lut -> temporal -> apply, every operation reading its
// controls from the frame's Settings (so a live change, global <-> clahe included, takes effect at
// the next frame with the same list). Which of them work on a frame is the planner's decision
// (planner.h) and their own active():
//   equalize   the fused path (planner.h): histogram, LUT and apply in one launch (fused_gpu.h);
//              the steps below sit out (the same frames, one launch instead of three)
//   histogram  the kernel named by Settings::kernel (instances made at the first frame that asks
//              for them and kept, one per slot); clahe: all tile histograms in one call
//              (hist::compute_tiles) and their sum, the frame's histogram
//   lut        global: lut.h's formula with Settings::weight, on the clipped histogram when the
//              clip limit is on; clahe: one LUT per tile (tone.h) and their mean
//   temporal   stateful: the LUTs through the IIR filter, reset at scene cuts; nothing when off
//   apply      the LUT (or the interpolated tile LUTs) on the luma in place; with chroma follow,
//              the chroma scaled in the same pass
// With plain settings the frames are today's equalization, bit for bit; in every mode the CPU and
// the GPU give identical frames.
Operations standard_operations();

// The temporal denoiser (denoise.h) as an operation, first in standard_operations(): with
// Quality::denoise > 0 the luma is denoised in place before the histogram (denoise -> histogram ->
// lut -> temporal -> apply); stateful, on the CPU and the GPU.
std::unique_ptr<Operation> make_denoise_operation();

// The kernel whose frames the GPU equalizes in one fused launch with plain settings (the default
// GPU kernel; the planner's rule, planner.h).
constexpr const char* kFusedKernel = "method2_tuned";

// The kernel the histogram stage runs for `kernel` in `mode`: itself, or in clahe mode when it has
// no tiled form (cub, ...) the default tiled kernel of the backend (method2_tuned,
// cpu_parallel).
std::string tiles_kernel(const std::string& kernel, Mode mode, Backend backend);

// Whether `kernel` can serve the histogram stage for frames of `format` on `backend`: ok, or why
// not (unknown kernel, a kernel of the other backend, no CUDA device, no mode for the bins).
Status check_kernel(const std::string& kernel, Backend backend, const video::FrameFormat& format);

}  // namespace histeq::eq
