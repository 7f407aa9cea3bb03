// FFmpeg's log messages. core/ never prints: by default they are only recorded (the last error
// becomes part of an error Status); the app may forward them, e.g. for --verbose.
#pragma once

#include <functional>
#include <string>

namespace histeq::video {

// level: FFmpeg's (AV_LOG_ERROR = 16, AV_LOG_WARNING = 24, AV_LOG_INFO = 32, ...). Messages at or
// below max_level go to `forward` (called from FFmpeg's threads; it must be thread-safe).
// An empty function stops forwarding.
void set_log_forward(std::function<void(int level, const std::string& line)> forward, int max_level);

}  // namespace histeq::video
