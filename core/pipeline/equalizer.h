// The equalizing stage of the pipeline: the operation list of core/equalize/operation.h
// (histogram -> lut -> temporal -> apply) run on the luma of each frame, the same list and order on
// the CPU and on the GPU; the chroma planes only with chroma follow (quality.h), then the GPU also
// uploads (and for a host sink downloads) them.
//
// GPU: a frame whose luma is in host memory goes up asynchronously on one of `frames_in_flight`
// slots (each with its stream, events and counts/LUT buffers), so that frame n+1 uploads while
// frame n computes and frame n-1 comes back; a frame already on the device (a GPU source) is
// equalized where it is, without an upload. The operations run with no host round trip; each is
// bracketed by CUDA events read only when the frame completes, frames_in_flight - 1 frames later
// (never a synchronization per stage). Operations that keep state from frame to frame are ordered
// across slots by events. CPU: the operations in turn on the host luma, timed with the host clock.
// Both use core/equalize's integer formula, so their frames are bit-identical.
//
// What a frame becomes: with keep_on_device (GPU) a device frame holding all of its planes (for a
// display that reads the device); with download (GPU) the host frame with its equalized luma; on
// the CPU the host frame. What the equalizer says about a frame for displays (the kernel, the
// input luma, the histogram and the LUT) is side data that travels beside the frame.
//
// A comparison (the player's split view): a second equalization "B" of every frame, with its own
// strength and quality settings and its own temporal state, run on a copy of the input planes and
// handed out as side data beside A's frame; with no look set, the copy is the input as it came.
// Its work is on the same stream after A's operations and is not in the stage rows.
//
// Thread: one thread calls submit/flush/reset; the live controls may be called from any thread.
// Frames come out in the order they went in.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/backend.h"
#include "core/cuda/status.h"
#include "core/equalize/operation.h"
#include "core/image/plane.h"
#include "core/video/frame.h"
#include "core/video/timing.h"

namespace histeq::pipeline {

// One way of equalizing a frame beside the kernel: the strength and the picture-quality controls.
struct Look {
  double strength = 1.0;
  eq::Quality quality;
  bool operator==(const Look& o) const noexcept { return strength == o.strength && quality == o.quality; }
};

// The comparison (see the header comment): off, the input (look empty), or a look.
struct Compare {
  bool enabled = false;
  std::optional<Look> look;
};

struct EqualizerOptions {
  std::string kernel;            // registry name; "" = default_kernel() (method2_tuned; CPU: cpu_parallel)
  bool cpu = false;              // use the CPU even when a GPU is present
  double strength = 1.0;         // 0..1: blend with the identity (lut.h)
  int frames_in_flight = 3;      // GPU: frames between upload and completion (>= 2)
  bool download = true;          // GPU: the output is the host frame with its luma equalized (export)
  bool keep_on_device = false;   // GPU: the output is a device frame with all planes (a display); excludes download
  bool passthrough = false;      // no equalization at all: a plain transcode, to measure the floor
  int device = -1;               // GPU: the CUDA device to use (Pipeline makes it current on its threads);
                                 // -1: the calling thread's current device (0 unless set)
  bool keep_input_luma = false;  // SideData::input_luma: a copy of the luma before equalizing (before/after
                                 // views); on the device with keep_on_device, else on the host
  bool keep_histogram = false;   // SideData::histogram and ::lut: the luma histogram and the LUT applied
  eq::Quality quality;           // mode, clip limit, temporal filter, chroma; plain by default (today's frames)
  Compare compare;               // the comparison at the start (set_compare); needs keep_on_device on the GPU
  // The operation list; empty: eq::standard_operations() (histogram -> LUT -> apply). A list must
  // keep the standard contract: its histogram stage fills FrameContext::counts, its LUT stage
  // FrameContext::lut (side data and displays read them).
  std::function<eq::Operations()> make_operations;
};

struct EqualizerInfo {
  Backend backend = Backend::cpu;
  std::string kernel;         // the histogram kernel chosen at creation (after set_kernel, see
                              // SideData::kernel), or "none" for passthrough
  std::string device;         // "NVIDIA H200" or "CPU, 2 threads"
  std::string fallback_note;  // set when the CPU was chosen because there is no usable GPU
  int bins = 256;
  uint32_t weight = 0;        // the strength as used (lut.h)
  eq::Quality quality;        // the quality settings at creation (see SideData::quality)
};

// What the equalizer reports about one frame, beside it (owned by the pipeline, not the frame).
struct SideData {
  std::string kernel;  // the histogram kernel that equalized the frame ("" when none did)
  // keep_input_luma: the luma as it was before equalization (device memory with keep_on_device, else
  // host memory). The shared_ptr keeps its storage alive.
  std::shared_ptr<const PlaneRef> input_luma;
  // keep_histogram: the input luma histogram (one counter per bin) and the LUT applied (one entry
  // per bin), so the output histogram is the input's pushed through it.
  std::vector<uint32_t> histogram;
  std::vector<uint16_t> lut;
  eq::Quality quality;  // the quality settings that equalized the frame
  // The comparison, when enabled: the frame as look B made it from the same input (all planes; the
  // input itself when no look is set), in the output frame's memory; `compare_look` says which.
  std::shared_ptr<const video::Frame> compare;
  std::optional<Look> compare_look;
};

// A frame and its side data, as they move from the equalizer to the sink.
struct PipelineFrame {
  video::FramePtr frame;
  SideData side;
};

// The kernel an equalizer uses when none is named: method2_tuned on the GPU (Nugteren's thread-
// private counters tuned for Hopper: no atomics and no data-dependent branch in its hot loop, a
// merge that never skips a bin, so its time does not depend on the picture (max/min across
// contents <= 1.01 on the H100, docs/performance.md), 2x method2's speed, and the fused
// one-launch equalization), cpu_parallel on the CPU.
const char* default_kernel(Backend backend) noexcept;
// Why it is the default, in one sentence, for displays.
const char* default_kernel_reason(Backend backend) noexcept;

class Equalizer {
 public:
  // Picks the backend and kernel and checks that the kernel serves this frame layout (8-bit: 256
  // bins; 10-bit: 1024 bins on 16-bit samples). Errors: unknown kernel, GPU kernel without a GPU or
  // with --cpu, a kernel that lacks the bin count, a strength outside 0..1, quality settings out of
  // range, keep_on_device with download, a comparison on the GPU without keep_on_device.
  static Result<std::unique_ptr<Equalizer>> create(const EqualizerOptions& opts, const video::FrameFormat& format);
  virtual ~Equalizer() = default;

  // Whether `kernel` can equalize frames of `format` on `backend` (eq::check_kernel).
  static Status check_kernel(const std::string& kernel, Backend backend, const video::FrameFormat& format);

  virtual const EqualizerInfo& info() const = 0;
  // The timing rows this equalizer fills, in the order a frame goes through them (upload, the
  // operations, download).
  virtual std::vector<video::StageId> stages() const = 0;

  // Live controls, from any thread, also while frames flow: they apply from the next frame that
  // submit() takes; frames already taken keep what they had (SideData::kernel names the kernel
  // that equalized a frame), so nothing waits and no frame is lost. A kernel must pass
  // check_kernel for this equalizer's backend and format. Errors leave the setting as it was.
  virtual Status set_kernel(const std::string& name) = 0;
  virtual Status set_strength(double strength) = 0;  // 0..1
  // The picture-quality controls, all at once (eq::validate; a mode or grid change restarts the
  // temporal filter at that frame).
  virtual Status set_quality(const eq::Quality& quality) = 0;
  // The comparison: on/off and its look (validated as the controls above). Errors: a GPU equalizer
  // whose frames do not stay on the device.
  virtual Status set_compare(const Compare& compare) = 0;
  // The memory the source's frames should be in: pinned host memory for a GPU equalizer
  // (asynchronous uploads), plain host memory for a CPU one.
  virtual MemoryKind input_memory() const = 0;
  // Takes a frame; appends to `done`, in order, each frame whose equalization has completed (on
  // the GPU up to frames_in_flight - 1 frames later). Sets the timings of its stages.
  virtual Status submit(video::FramePtr frame, std::vector<PipelineFrame>& done) = 0;
  // Completes every frame still in flight.
  virtual Status flush(std::vector<PipelineFrame>& done) = 0;
  // The next frame does not follow the last one (a seek, another source): every operation forgets
  // its state. Frames in flight complete first (flush before reset).
  virtual void reset() = 0;
};

}  // namespace histeq::pipeline
