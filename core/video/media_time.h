// Times as users write them on the command line, as ffmpeg's -ss/-t/-to take them: seconds
// ("90", "12.5", "500ms") or [HH:]MM:SS[.m...] ("1:30", "00:01:30.250"); parsed by FFmpeg's own
// av_parse_time, so histeq accepts exactly what ffmpeg accepts.
#pragma once

#include <string>

#include "core/cuda/status.h"

namespace histeq::video {

// Seconds (>= 0) of `text`. Errors: invalid_argument "<option>: '<text>' is not a time (...)", or
// "... must not be negative". `option` names the flag in the message ("--start").
Result<double> parse_time(const std::string& text, const std::string& option);

// "1:02:03.250" / "2:03.250" / "3.250 s" for messages.
std::string format_time(double seconds);

// The part of an input that a command works on, in media seconds (Frame::time_s): frames from
// start_s (the first one at or after it) up to, not including, end_s; end_s = 0: to the end.
struct TimeRange {
  double start_s = 0;
  double end_s = 0;
  bool trimmed() const noexcept { return start_s > 0 || end_s > 0; }
  // The length of the range in an input of `duration_s` (0: unknown): end - start, or what is left.
  double length(double duration_s) const noexcept {
    const double end = end_s > 0 ? end_s : duration_s;
    return end > start_s ? end - start_s : 0;
  }
};

// The range from --start, --duration and --end as given (empty strings: not given). Errors name
// the option: a bad time, both --duration and --end, an end at or before the start.
Result<TimeRange> parse_time_range(const std::string& start, const std::string& duration, const std::string& end);

// Checks a range against an input of `duration_s` seconds (0: unknown, nothing to check):
// a start at or past the end of `name` is an error that says how long the input is.
Status check_time_range(const TimeRange& range, double duration_s, const std::string& name);

}  // namespace histeq::video
