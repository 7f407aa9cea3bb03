#include "core/video/av_util.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "core/video/log.h"

namespace histeq::video {
namespace detail {
namespace {

std::mutex g_log_mu;  // the forwarder and the registry of scopes
std::function<void(int, const std::string&)> g_forward;
int g_forward_level = AV_LOG_ERROR;
std::unordered_map<const void*, LogScope*> g_owner;  // FFmpeg context -> its scope
std::unordered_set<const LogScope*> g_scopes;         // live scopes (to trust a codec context's opaque)
thread_local const LogScope* t_active = nullptr;

// "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d0] moov atom not found" -> "moov atom not found"
std::string strip_context(const std::string& s) {
  if (!s.empty() && s[0] == '[') {
    const size_t end = s.find("] ");
    if (end != std::string::npos) return s.substr(end + 2);
  }
  return s;
}

// The scope a context's line belongs to; g_log_mu held.
LogScope* owner_of(const void* avcl) {
  for (int hops = 0; avcl != nullptr && hops < 8; ++hops) {
    if (auto it = g_owner.find(avcl); it != g_owner.end()) return it->second;
    const AVClass* cls = *static_cast<const AVClass* const*>(avcl);
    if (cls == nullptr) return nullptr;
    if (cls == avcodec_get_class()) {
      // Frame-threaded decoders log through copies of their context; the copies keep `opaque`.
      auto* scope = static_cast<LogScope*>(static_cast<const AVCodecContext*>(avcl)->opaque);
      if (scope != nullptr && g_scopes.count(scope) != 0) return scope;
    }
    if (cls->parent_log_context_offset == 0) return nullptr;
    avcl = *reinterpret_cast<void* const*>(static_cast<const char*>(avcl) + cls->parent_log_context_offset);
  }
  return nullptr;
}

void log_callback(void* avcl, int level, const char* fmt, va_list vl) {
  if (level > AV_LOG_VERBOSE) return;  // debug/trace: never wanted, and cheap to drop early
  char line[1024];
  int print_prefix = 1;
  av_log_format_line2(avcl, level, fmt, vl, line, sizeof(line), &print_prefix);
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return;
  record_line(avcl, level, s);
}

}  // namespace

void record_line(const void* avcl, int level, const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (level <= AV_LOG_ERROR) {
    LogScope* scope = owner_of(avcl);
    const LogScope* target = scope != nullptr ? scope : t_active;
    if (target != nullptr) const_cast<LogScope*>(target)->record(line);
  }
  if (g_forward && level <= g_forward_level) g_forward(level, line);
}

LogScope::LogScope() {
  install_log_capture();
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_scopes.insert(this);
}

LogScope::~LogScope() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_scopes.erase(this);
  for (auto it = g_owner.begin(); it != g_owner.end();) it = it->second == this ? g_owner.erase(it) : std::next(it);
}

void LogScope::own(const void* ctx) {
  if (ctx == nullptr) return;
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_owner[ctx] = this;
}

void LogScope::disown(const void* ctx) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  if (auto it = g_owner.find(ctx); it != g_owner.end() && it->second == this) g_owner.erase(it);
}

// Called with g_log_mu held (from record_line); mu_ guards readers on other threads.
void LogScope::record(const std::string& line) {
  std::lock_guard<std::mutex> l(mu_);
  last_error_ = strip_context(line);
  if (!phrase_.empty() && line.find(phrase_) != std::string::npos) ++watched_;
}

void LogScope::watch(const std::string& phrase) {
  std::lock_guard<std::mutex> l(mu_);
  phrase_ = phrase;
  watched_ = 0;
}

int64_t LogScope::watched() const {
  std::lock_guard<std::mutex> l(mu_);
  return watched_;
}

std::string LogScope::last_error() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_error_;
}

void LogScope::clear() {
  std::lock_guard<std::mutex> l(mu_);
  last_error_.clear();
}

std::string LogScope::describe_failure(int err) const {
  std::string cause = av_error(err);
  const std::string detail = last_error();
  if (!detail.empty() && detail != cause) cause += " (" + detail + ")";
  return cause;
}

LogScope::Active::Active(const LogScope& scope) : previous_(t_active) { t_active = &scope; }
LogScope::Active::~Active() { t_active = previous_; }

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

}  // namespace detail

void set_log_forward(std::function<void(int, const std::string&)> forward, int max_level) {
  detail::install_log_capture();
  std::lock_guard<std::mutex> lock(detail::g_log_mu);
  detail::g_forward = std::move(forward);
  detail::g_forward_level = max_level;
  av_log_set_level(std::max(AV_LOG_WARNING, detail::g_forward ? max_level : AV_LOG_WARNING));
}

namespace detail {

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
