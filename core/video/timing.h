// Per-frame timing: which stages a frame went through and how long each took. Plain data that
// travels with the frame; core/video fills the source stages, the pipeline and the equalizer's
// operations the others.
//
// Stages are not a fixed enum: each is named by a StageId, interned once per name for the
// process (stage_id("histogram")), so that a new per-frame operation brings its own timing row
// without touching this file. The source and sink stages every pipeline has are predefined
// (stage::decode, ...). Thread-safety: stage_id() and stage_name() may be called from any thread;
// ids never change once given out. At most kMaxStages names exist in one process.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

namespace histeq::video {

using StageId = int;
constexpr int kMaxStages = 32;
constexpr StageId kNoStage = -1;

// The id of `name`, registering it at its first use. kNoStage (and no registration) when the
// table is full: timings of such a stage are dropped rather than mixed with another's.
StageId stage_id(std::string_view name);
// The name of a registered id, or "?".
const char* stage_name(StageId id) noexcept;
// Ids registered so far: 0 .. stage_count() - 1.
int stage_count() noexcept;

// The stages of every pipeline, registered first (in this order) so their ids are constants.
namespace stage {
constexpr StageId decode = 0;    // demux + decode (or draw, for the synthetic source); host clock
constexpr StageId convert = 1;   // swscale or plane copy into the pipeline's layout; host clock
constexpr StageId upload = 2;    // host -> device (GPU); CUDA events
constexpr StageId download = 3;  // device -> host (GPU, when the sink needs host frames)
constexpr StageId encode = 4;    // encoder + muxer (export)
constexpr StageId present = 5;   // the sink's presentation work (play)
constexpr StageId glass = 6;     // live sources: capture -> end of the sink's work (glass-to-glass latency)
constexpr int kPredefined = 7;
}  // namespace stage

struct FrameTiming {
  // Milliseconds per stage id; NaN where the stage did not run for this frame.
  std::array<float, kMaxStages> ms;
  int64_t start_ns = 0;                                        // steady clock when the source began on it
  int64_t capture_ns = 0;                                      // live sources: steady-clock time of capture (0: unknown)
  float latency_ms = std::numeric_limits<float>::quiet_NaN();  // start -> end of the sink's work

  FrameTiming() { ms.fill(std::numeric_limits<float>::quiet_NaN()); }
  void set(StageId s, double milliseconds) noexcept {
    if (s >= 0 && s < kMaxStages) ms[static_cast<size_t>(s)] = static_cast<float>(milliseconds);
  }
  float get(StageId s) const noexcept {
    return s >= 0 && s < kMaxStages ? ms[static_cast<size_t>(s)] : std::numeric_limits<float>::quiet_NaN();
  }
  bool has(StageId s) const noexcept { return get(s) == get(s); }  // not NaN
};

}  // namespace histeq::video
