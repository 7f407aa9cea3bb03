#include "core/video/av_util.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "core/video/log.h"

namespace histeq::video {
namespace {

std::mutex g_log_mu;
std::string g_last_error;
std::function<void(int, const std::string&)> g_forward;
int g_forward_level = AV_LOG_ERROR;

void log_callback(void* avcl, int level, const char* fmt, va_list vl) {
  if (level > AV_LOG_VERBOSE) return;  // debug/trace: never wanted, and cheap to drop early
  char line[1024];
  int print_prefix = 1;
  av_log_format_line2(avcl, level, fmt, vl, line, sizeof(line), &print_prefix);
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return;
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (level <= AV_LOG_ERROR) g_last_error = s;
  if (g_forward && level <= g_forward_level) g_forward(level, s);
}

}  // namespace

void set_log_forward(std::function<void(int, const std::string&)> forward, int max_level) {
  detail::install_log_capture();
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_forward = std::move(forward);
  g_forward_level = max_level;
  av_log_set_level(std::max(AV_LOG_WARNING, g_forward ? max_level : AV_LOG_WARNING));
}

namespace detail {

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof(buf));
  return buf;
}

void install_log_capture() {
  static std::once_flag once;
  std::call_once(once, [] {
    av_log_set_level(AV_LOG_WARNING);  // FFmpeg formats nothing above this level
    av_log_set_callback(log_callback);
  });
}

std::string last_log_error() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  // "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d0] moov atom not found" -> "moov atom not found"
  std::string s = g_last_error;
  if (!s.empty() && s[0] == '[') {
    const size_t end = s.find("] ");
    if (end != std::string::npos) s = s.substr(end + 2);
  }
  return s;
}

void clear_last_log_error() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_last_error.clear();
}

std::string describe_failure(int err) {
  std::string cause = av_error(err);
  const std::string detail = last_log_error();
  if (!detail.empty() && detail != cause) cause += " (" + detail + ")";
  return cause;
}

AVPixelFormat strip_jpeg_range(AVPixelFormat f, bool* full_range) {
  AVPixelFormat out = f;
  switch (f) {
    case AV_PIX_FMT_YUVJ420P: out = AV_PIX_FMT_YUV420P; break;
    case AV_PIX_FMT_YUVJ422P: out = AV_PIX_FMT_YUV422P; break;
    case AV_PIX_FMT_YUVJ444P: out = AV_PIX_FMT_YUV444P; break;
    case AV_PIX_FMT_YUVJ440P: out = AV_PIX_FMT_YUV440P; break;
    case AV_PIX_FMT_YUVJ411P: out = AV_PIX_FMT_YUV411P; break;
    default: break;
  }
  if (full_range != nullptr) *full_range = out != f;
  return out;
}

}  // namespace detail
}  // namespace histeq::video
