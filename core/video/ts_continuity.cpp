#include "core/video/ts_continuity.h"

#include <limits>

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/mathematics.h>
}

namespace histeq::video {
namespace {
constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();
const AVRational kMicro{1, 1000000};
}  // namespace

TimestampContinuity::TimestampContinuity(const AVFormatContext* fmt) : fmt_(fmt) {
  enabled_ = fmt != nullptr && fmt->iformat != nullptr && (fmt->iformat->flags & AVFMT_TS_DISCONT) != 0;
  if (fmt != nullptr) next_us_.assign(fmt->nb_streams, kUnset);
}

void TimestampContinuity::reset() {
  offset_us_ = 0;
  next_us_.assign(next_us_.size(), kUnset);
}

void TimestampContinuity::fix(AVPacket* pkt) {
  if (!enabled_ || pkt->stream_index < 0) return;
  const auto index = static_cast<size_t>(pkt->stream_index);
  if (index >= next_us_.size()) next_us_.resize(index + 1, kUnset);  // a stream that appeared after the open
  const AVRational tb = fmt_->streams[index]->time_base;
  const int64_t ts = pkt->dts != AV_NOPTS_VALUE ? pkt->dts : pkt->pts;
  if (ts == AV_NOPTS_VALUE) return;
  const int64_t at_us = av_rescale_q(ts, tb, kMicro) + offset_us_;
  const int64_t expected = next_us_[index];
  // Decode timestamps never go back within a part; the tolerance covers rounding to microseconds.
  const int64_t gap_us = static_cast<int64_t>(kMaxGapS * 1e6);
  if (expected != kUnset && (at_us < expected - 1000 || at_us > expected + gap_us)) {
    offset_us_ += expected - at_us;  // this packet now starts where the stream's last one ended
    ++discontinuities_;
    // The other streams take the same offset unchecked: their first packets of the new part may
    // sit a little before their own last end (parts rarely end all streams together), which is
    // not another discontinuity.
    for (size_t i = 0; i < next_us_.size(); ++i)
      if (i != index) next_us_[i] = kUnset;
  }
  const int64_t shift = av_rescale_q(offset_us_, kMicro, tb);
  if (pkt->dts != AV_NOPTS_VALUE) pkt->dts += shift;
  if (pkt->pts != AV_NOPTS_VALUE) pkt->pts += shift;
  const int64_t start_us = av_rescale_q(pkt->dts != AV_NOPTS_VALUE ? pkt->dts : pkt->pts, tb, kMicro);
  const int64_t duration_us = pkt->duration > 0 ? av_rescale_q(pkt->duration, tb, kMicro) : 0;
  next_us_[index] = start_us + duration_us;
}

}  // namespace histeq::video
