#include "core/video/media_time.h"

#include <cmath>
#include <cstdio>

extern "C" {
#include <libavutil/parseutils.h>
}

namespace histeq::video {

Result<double> parse_time(const std::string& text, const std::string& option) {
  int64_t us = 0;
  if (text.empty() || av_parse_time(&us, text.c_str(), 1) < 0)
    return HISTEQ_ERROR(Code::invalid_argument,
                        option + ": '" + text + "' is not a time (seconds such as 90 or 12.5, or [HH:]MM:SS[.mmm] such as 1:30 or 00:01:30.250)");
  if (us < 0) return HISTEQ_ERROR(Code::invalid_argument, option + ": '" + text + "' must not be negative");
  return static_cast<double>(us) / 1e6;
}

std::string format_time(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long long ms = std::llround(s * 1000);
  char b[48];
  if (ms >= 3600000) std::snprintf(b, sizeof(b), "%lld:%02lld:%02lld.%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000);
  else if (ms >= 60000) std::snprintf(b, sizeof(b), "%lld:%02lld.%03lld", ms / 60000, ms / 1000 % 60, ms % 1000);
  else std::snprintf(b, sizeof(b), "%lld.%03lld s", ms / 1000, ms % 1000);
  return b;
}

Result<TimeRange> parse_time_range(const std::string& start, const std::string& duration, const std::string& end) {
  TimeRange r;
  if (!start.empty()) {
    auto s = parse_time(start, "--start");
    if (!s) return s.status();
    r.start_s = *s;
  }
  if (!duration.empty() && !end.empty())
    return HISTEQ_ERROR(Code::invalid_argument, "--duration and --end: give one of them, not both");
  if (!duration.empty()) {
    auto d = parse_time(duration, "--duration");
    if (!d) return d.status();
    if (*d <= 0) return HISTEQ_ERROR(Code::invalid_argument, "--duration: '" + duration + "' is not a length (it must be > 0)");
    r.end_s = r.start_s + *d;
  }
  if (!end.empty()) {
    auto e = parse_time(end, "--end");
    if (!e) return e.status();
    if (*e <= r.start_s)
      return HISTEQ_ERROR(Code::invalid_argument, "--end " + end + " is not after --start " + (start.empty() ? "0" : start));
    r.end_s = *e;
  }
  return r;
}

Status check_time_range(const TimeRange& range, double duration_s, const std::string& name) {
  if (duration_s > 0 && range.start_s >= duration_s)
    return HISTEQ_ERROR(Code::invalid_argument, name + ": --start " + format_time(range.start_s) + " is at or past the end of the input (" +
                                                    format_time(duration_s) + " long)");
  return Status::ok();
}

}  // namespace histeq::video
