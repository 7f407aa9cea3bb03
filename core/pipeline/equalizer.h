// The equalizing stage of the pipeline: histogram (a registry kernel) -> CDF -> LUT -> apply, on
// the luma plane of each frame; chroma is never touched.
//
// GPU: the frame's luma goes from pinned host memory to the device asynchronously on one of
// `frames_in_flight` streams, so that frame n+1 uploads while frame n computes and frame n-1 comes
// back; histogram, LUT and apply run there with no host round trip. Each stage is bracketed by CUDA
// events that are read only when the frame completes, frames_in_flight - 1 frames later (never a
// synchronization per stage). CPU: cpu_parallel (or any CPU kernel) and the CPU LUT, timed with the
// host clock. Both use core/equalize's integer formula, so their frames are bit-identical.
//
// Thread: one thread calls submit/flush. Frames come out in the order they went in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"
#include "core/video/frame.h"

namespace histeq::pipeline {

enum class Backend { cpu, gpu };

struct EqualizerOptions {
  std::string kernel;            // registry name; "" = method2 with a GPU, cpu_parallel without
  bool cpu = false;              // use the CPU even when a GPU is present
  double strength = 1.0;         // 0..1: blend with the identity (lut.h)
  int frames_in_flight = 3;      // GPU: frames between upload and completion (>= 2)
  bool download = true;          // GPU: copy the equalized luma back into the host frame (export)
  bool keep_on_device = false;   // GPU: leave all three planes on the device for the sink (Frame::device)
  bool passthrough = false;      // no equalization at all: a plain transcode, to measure the floor
  bool keep_input_luma = false;  // Frame::input_luma: a copy of the luma before equalizing (before/after
                                 // views); on the device with keep_on_device, else on the host
  bool keep_histogram = false;   // Frame::histogram and Frame::lut: the luma histogram and the LUT applied
};

struct EqualizerInfo {
  Backend backend = Backend::cpu;
  std::string kernel;         // the histogram kernel chosen at creation (after set_kernel, see
                              // Frame::kernel), or "none" for passthrough
  std::string device;         // "NVIDIA H200" or "CPU, 2 threads"
  std::string fallback_note;  // set when the CPU was chosen because there is no usable GPU
  int bins = 256;
  uint32_t weight = 0;        // the strength as used (lut.h)
};

class Equalizer {
 public:
  // Picks the backend and kernel and checks that the kernel serves this frame layout (8-bit: 256
  // bins; 10-bit: 1024 bins on 16-bit samples). Errors: unknown kernel, GPU kernel without a GPU or
  // with --cpu, a kernel that lacks the bin count, a strength outside 0..1.
  static Result<std::unique_ptr<Equalizer>> create(const EqualizerOptions& opts, const video::FrameFormat& format);
  virtual ~Equalizer() = default;

  // Whether `kernel` can equalize frames of `format` on `backend`: ok, or the reason it cannot
  // (unknown kernel, a kernel of the other backend, no CUDA device, no mode for the format's bins).
  static Status check_kernel(const std::string& kernel, Backend backend, const video::FrameFormat& format);

  virtual const EqualizerInfo& info() const = 0;

  // Live controls, from any thread, also while frames flow: they apply from the next frame that
  // submit() takes; frames already taken keep what they had (Frame::kernel names the kernel that
  // equalized a frame), so nothing waits and no frame is lost. A kernel must pass check_kernel
  // for this equalizer's backend and format; its instances are made on the submitting thread at
  // the switch and kept for later switches back. Errors leave the setting as it was.
  virtual Status set_kernel(const std::string& name) = 0;
  virtual Status set_strength(double strength) = 0;  // 0..1
  // Frames should come from a pinned pool (asynchronous uploads).
  virtual bool wants_pinned_frames() const = 0;
  // Takes a frame; appends to `done`, in order, each frame whose equalization has completed (on
  // the GPU up to frames_in_flight - 1 frames later). Sets the upload..download stage timings.
  virtual Status submit(video::FramePtr frame, std::vector<video::FramePtr>& done) = 0;
  // Completes every frame still in flight.
  virtual Status flush(std::vector<video::FramePtr>& done) = 0;
};

}  // namespace histeq::pipeline
