// What the overlay shows about time and luma, computed from the frames the player presents:
//   - the frame time of each frame: the work of the busiest pipeline thread on it (decode thread:
//     decode + convert; equalizer: upload, its operations, download; display: present). The threads overlap, so
//     this, not the sum, is what must fit in the frame interval (the budget, 1/fps);
//   - rings of the last few seconds for the frame-time graph and the per-stage sparklines;
//   - dropped and late frames by cause: the thread whose work on the frame overran the budget, or
//     "scheduling" when none did (the frame waited: queues, the display, the OS);
//   - the luma histograms of the input and of the output, the output being the input's pushed
//     through the frame's LUT (exact: every sample v becomes lut[v]), so no pass over the pixels.
// No SDL, no ImGui. Thread: one (the player's).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/pipeline/stats.h"

namespace histeq::app::player {

// av_sync: with sound, the video follows the audio clock; a frame the sound has passed (no pipeline
// thread overran) is dropped for A/V sync.
enum class Cause { decode, equalize, present, scheduling, av_sync, count };
constexpr int kCauses = static_cast<int>(Cause::count);
const char* cause_name(Cause c) noexcept;

// Frame time of one frame (ms), as defined above; NaN when no stage ran.
float frame_time_ms(const pipeline::FrameTiming& t) noexcept;
// Why a frame that missed its time missed it.
Cause miss_cause(const pipeline::FrameTiming& t, double budget_ms) noexcept;

class StatsView {
 public:
  explicit StatsView(size_t capacity = 300);
  // A frame the player presented or dropped (its record as the sink completed it). `audio_clock`:
  // it was timed by the sound, so a miss that no thread explains is an A/V sync one.
  void add(const pipeline::FrameRecord& r, double budget_ms, bool audio_clock = false);
  // The picture on screen was held (repeated) while the video waited for the sound.
  void held() noexcept { ++held_; }
  int64_t held_frames() const noexcept { return held_; }

  size_t size() const noexcept { return filled_; }
  std::vector<float> frame_times() const;     // oldest first; NaN for dropped frames
  std::vector<float> series(int row) const;   // a stats row (stage or latency), oldest first; NaN: did not run
  std::vector<uint8_t> dropped_flags() const;  // oldest first
  int64_t dropped(Cause c) const noexcept { return dropped_[static_cast<int>(c)]; }
  int64_t late(Cause c) const noexcept { return late_[static_cast<int>(c)]; }

 private:
  template <class T>
  std::vector<T> ordered(const std::vector<T>& ring) const;
  size_t cap_, next_ = 0, filled_ = 0;
  std::vector<float> frame_ms_;
  std::vector<std::vector<float>> rows_;  // [row][ring]
  std::vector<uint8_t> dropped_ring_;
  std::array<int64_t, kCauses> dropped_{}, late_{};
  int64_t held_ = 0;
};

// Luma histograms for plots: `bins` display bins (the frame's bins summed in groups), as fractions
// of the counted samples, and their cumulative sums. Empty when the frame carries no histogram.
struct LumaPlots {
  std::vector<float> input, output, input_cdf, output_cdf;
};
LumaPlots luma_plots(const std::vector<uint32_t>& histogram, const std::vector<uint16_t>& lut, int bins = 256);

}  // namespace histeq::app::player
