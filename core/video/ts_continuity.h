// Timestamps made continuous across the discontinuities of formats that allow them (MPEG-TS and
// the like, AVFMT_TS_DISCONT): streams joined end to end (`cat a.ts b.ts`), a broadcast's splice,
// an encoder restart. Without this, the second part's timestamps start over, the decoded frames
// are "repaired" one by one while the copied audio goes back in time, and the muxer refuses it.
//
// One offset for the whole input (all streams move together, so they stay in sync), changed
// when a stream's decode timestamp goes back, or forward by more than kMaxGapS: the part that
// follows is placed right after what came before. Formats without the flag are left alone (their
// timestamps are what the file says, repaired elsewhere). Single-threaded: the demuxing thread.
#pragma once

#include <cstdint>
#include <vector>

extern "C" {
struct AVFormatContext;
struct AVPacket;
}

namespace histeq::video {

class TimestampContinuity {
 public:
  // A forward jump larger than this is a discontinuity too (ffmpeg's -dts_delta_threshold).
  static constexpr double kMaxGapS = 10.0;

  // For `fmt`'s streams; does nothing for formats without discontinuities.
  explicit TimestampContinuity(const AVFormatContext* fmt);
  // Shifts `pkt`'s pts and dts by the offset (in the packet's stream's time base), first moving
  // the offset when this packet starts a new part.
  void fix(AVPacket* pkt);
  // After a seek: timestamps may go back, the offset starts over.
  void reset();
  int64_t discontinuities() const noexcept { return discontinuities_; }

 private:
  const AVFormatContext* fmt_ = nullptr;
  bool enabled_ = false;
  int64_t offset_us_ = 0;              // added to every timestamp, in microseconds
  std::vector<int64_t> next_us_;       // per stream: where its next packet should start (offset applied), or INT64_MIN
  int64_t discontinuities_ = 0;
};

}  // namespace histeq::video
