// The stages a frame goes through, and the per-frame timing record that travels with it.
// Plain data, no dependencies: core/video fills the source stages, core/pipeline the others.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

namespace histeq::pipeline {

enum class Stage : int {
  decode,     // demux + decode (or generate, for the synthetic source); host clock
  convert,    // swscale or plane copy into the pipeline's planar YUV frame; host clock
  upload,     // pinned host -> device (GPU); CUDA events
  histogram,  // the registry kernel (GPU: events; CPU: host clock)
  lut,        // CDF -> LUT
  apply,      // LUT applied to the luma plane
  download,   // device -> pinned host (GPU, when the sink needs host frames)
  encode,     // encoder + muxer (export)
  present,    // the sink's presentation work (play)
  count
};
constexpr int kStageCount = static_cast<int>(Stage::count);

constexpr const char* stage_name(Stage s) noexcept {
  constexpr const char* names[kStageCount] = {"decode", "convert", "upload",   "histogram", "lut",
                                              "apply",  "download", "encode", "present"};
  return names[static_cast<int>(s)];
}

struct FrameTiming {
  // Milliseconds per stage; NaN where the stage did not run for this frame.
  std::array<float, kStageCount> ms;
  int64_t start_ns = 0;                                        // steady clock when the source began on it
  float latency_ms = std::numeric_limits<float>::quiet_NaN();  // start -> end of the sink's work

  FrameTiming() { ms.fill(std::numeric_limits<float>::quiet_NaN()); }
  void set(Stage s, double milliseconds) noexcept { ms[static_cast<int>(s)] = static_cast<float>(milliseconds); }
  float get(Stage s) const noexcept { return ms[static_cast<int>(s)]; }
  bool has(Stage s) const noexcept { return get(s) == get(s); }  // not NaN
};

}  // namespace histeq::pipeline
