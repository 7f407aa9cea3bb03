// The player tests' harness (tests/player): an Xvfb of the suite's own (Xvfb -displayfd picks a
// free display number and says which), `histeq` run with DISPLAY set and SDL's sound on its dummy
// driver, PNG screenshots read back with their region statistics, and clips made with the ffmpeg
// CLI. Skipped only when Xvfb is not installed (scripts/setup.sh installs it, so CI runs these).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stb_image.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/video/file_source.h"
#include "tests/common/video_helpers.h"

#ifndef HISTEQ_BIN
#error "HISTEQ_BIN: the histeq binary under test"
#endif

namespace histeq::test {

using Clock = std::chrono::steady_clock;

constexpr int kW = 1280, kH = 720;  // the window, and Xvfb's screen

inline std::string find_in_path(const std::string& exe) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = p.find(':', start);
    const std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::string full = (dir.empty() ? "." : dir) + "/" + exe;
    if (::access(full.c_str(), X_OK) == 0) return full;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

// Reads everything from `fd` until EOF, or until `deadline` (then false).
inline bool read_all(int fd, std::string& out, Clock::time_point deadline, bool stop_at_newline = false) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return true;  // EOF
    out.append(buf, static_cast<size_t>(n));
    if (stop_at_newline && out.find('\n') != std::string::npos) return true;
  }
}

// An X server of our own, for the whole suite.
class Xvfb {
 public:
  ~Xvfb() { stop(); }
  // "" on success, else why not.
  std::string start(const std::string& binary) {
    int fds[2];
    if (::pipe(fds) != 0) return "pipe failed";
    pid_ = ::fork();
    if (pid_ < 0) return "fork failed";
    if (pid_ == 0) {
      ::close(fds[0]);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
      const std::string fd = std::to_string(fds[1]);
      const std::string screen = std::to_string(kW) + "x" + std::to_string(kH) + "x24";
      ::execl(binary.c_str(), "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", screen.c_str(), "-nolisten", "tcp",
              "-noreset", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string num;
    read_all(fds[0], num, Clock::now() + std::chrono::seconds(30), true);
    ::close(fds[0]);
    while (!num.empty() && (num.back() == '\n' || num.back() == ' ')) num.pop_back();
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) return "Xvfb did not start (no display number)";
    display_ = ":" + num;
    return "";
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      ::usleep(100000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  const std::string& display() const { return display_; }

 private:
  pid_t pid_ = -1;
  std::string display_;
};

struct Outcome {
  int code = -1;
  std::string out;  // stdout and stderr
};

// In a child about to run histeq: DISPLAY = `display` ("" = none), no Wayland, SDL's sound on its
// dummy driver, then `env` ("NAME=value").
inline void child_environment(const std::string& display, const std::vector<std::string>& env) {
  if (display.empty()) ::unsetenv("DISPLAY");
  else ::setenv("DISPLAY", display.c_str(), 1);
  ::unsetenv("WAYLAND_DISPLAY");
  ::setenv("SDL_AUDIODRIVER", "dummy", 1);
  for (const auto& e : env) {
    const size_t eq = e.find('=');
    ::setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
  }
}

// Runs histeq with DISPLAY = `display` ("" = none) and no Wayland, and `env` ("NAME=value") set,
// killed after `timeout_s`. Sound goes to SDL's dummy driver unless `env` names another: this
// machine may have no sound card, and no test should play into the room.
inline Outcome histeq(const std::vector<std::string>& args, const std::string& display, int timeout_s = 180,
               const std::vector<std::string>& env = {}) {
  int fds[2];
  Outcome r;
  if (::pipe(fds) != 0) return r;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    child_environment(display, env);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(HISTEQ_BIN));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(HISTEQ_BIN, argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  const bool done = read_all(fds[0], r.out, Clock::now() + std::chrono::seconds(timeout_s));
  ::close(fds[0]);
  if (!done) {
    ::kill(pid, SIGKILL);
    r.out += "\n[killed after " + std::to_string(timeout_s) + " s]";
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

struct Png {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
  // Rec. 601 luma of a pixel.
  double gray(int x, int y) const {
    const uint8_t* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
    return 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
  }
};

inline Png load_png(const std::string& path) {
  Png p;
  int n = 0;
  unsigned char* d = stbi_load(path.c_str(), &p.w, &p.h, &n, 3);
  if (d == nullptr) return p;
  p.rgb.assign(d, d + static_cast<size_t>(p.w) * p.h * 3);
  stbi_image_free(d);
  return p;
}

struct Rect {
  int x0, y0, x1, y1;  // top-left origin, exclusive ends
};

struct RegionStats {
  double mean = 0, sd = 0;
  size_t distinct = 0;  // distinct RGB colours
};

inline RegionStats stats(const Png& p, Rect r) {
  RegionStats s;
  double sum = 0, sum2 = 0;
  std::set<uint32_t> colours;
  size_t n = 0;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x) {
      const double g = p.gray(x, y);
      sum += g;
      sum2 += g * g;
      const uint8_t* c = &p.rgb[(static_cast<size_t>(y) * p.w + x) * 3];
      colours.insert(static_cast<uint32_t>(c[0]) << 16 | static_cast<uint32_t>(c[1]) << 8 | c[2]);
      ++n;
    }
  s.mean = sum / n;
  s.sd = std::sqrt(std::max(0.0, sum2 / n - s.mean * s.mean));
  s.distinct = colours.size();
  return s;
}

// Mean absolute difference of the RGB values of two images in a region.
inline double mean_abs_diff(const Png& a, const Png& b, Rect r) {
  double sum = 0;
  size_t n = 0;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x)
      for (int c = 0; c < 3; ++c) {
        const size_t i = (static_cast<size_t>(y) * a.w + x) * 3 + c;
        sum += std::abs(static_cast<int>(a.rgb[i]) - static_cast<int>(b.rgb[i]));
        ++n;
      }
  return sum / n;
}

// The overlay's layout at 1280x720 (app/player/overlay.cpp): the main panel from (12, 12), 400
// wide, the luma histograms under it (to y = 708); the statistics panel (i) ending 12 from the
// right, 470 wide; the middle is video only.
constexpr Rect kMainPanel{24, 60, 390, 300};
constexpr Rect kLumaPanel{24, 560, 390, 690};
constexpr Rect kTimingPanel{820, 60, 1250, 300};
constexpr Rect kMiddle{440, 120, 780, 600};

inline std::string shot(const std::string& dir, int tick) {
  char b[64];
  std::snprintf(b, sizeof(b), "/histeq-shot-%06d.png", tick);
  return dir + b;
}

class PlayerWindow : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string bin = find_in_path("Xvfb");
    if (bin.empty()) {
      skip_ = "Xvfb is not installed (scripts/setup.sh installs the xvfb package)";
      return;
    }
    xvfb_ = new Xvfb();
    const std::string err = xvfb_->start(bin);
    if (!err.empty()) failure_ = err;
  }
  static void TearDownTestSuite() {
    delete xvfb_;
    xvfb_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(failure_.empty()) << failure_;
    dir_ = temp_path("player");
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  // `histeq play` in a 1280x720 window (or `window`) with `args`; asserts it exits 0.
  Outcome play(std::vector<std::string> args, const std::vector<std::string>& env = {}, const std::string& window = "") {
    std::vector<std::string> a = {"play", "--window", window.empty() ? std::to_string(kW) + "x" + std::to_string(kH) : window,
                                  "--screenshot-dir", dir_};
    a.insert(a.end(), args.begin(), args.end());
    Outcome r = histeq(a, xvfb_->display(), 180, env);
    EXPECT_EQ(r.code, 0) << r.out;
    return r;
  }
  Png png(const std::string& path) {
    Png p = load_png(path);
    EXPECT_EQ(p.w, kW) << path;
    EXPECT_EQ(p.h, kH) << path;
    return p;
  }
  nlohmann::json json(const std::string& path) {
    std::ifstream f(path);
    EXPECT_TRUE(f.good()) << path;
    nlohmann::json j;
    if (f.good()) f >> j;
    return j;
  }

  inline static Xvfb* xvfb_ = nullptr;
  inline static std::string skip_, failure_;
  std::string dir_;
};

// A clip made with the ffmpeg CLI (scripts/setup.sh installs it); "" when there is none.
inline std::string ffmpeg_clip(const std::string& path, const std::string& args) {
  if (find_in_path("ffmpeg").empty()) return "";
  const std::string cmd = "ffmpeg -nostdin -v error -y " + args + " '" + path + "'";
  return std::system(cmd.c_str()) == 0 ? path : "";
}

// `histeq ARGS` running in the background (its output into a file of `dir`), for tests that talk
// to it while it plays (the IPC) or signal it.
class Running {
 public:
  Running(const std::vector<std::string>& args, const std::string& display, const std::string& dir,
          const std::vector<std::string>& env = {}, const std::vector<std::string>& prefix = {}) {
    out_path_ = dir + "/histeq-" + std::to_string(++count()) + ".out";
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      child_environment(display, env);
      std::vector<std::string> all = prefix;
      all.push_back(HISTEQ_BIN);
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Running() {
    if (pid_ > 0 && code_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  // The exit code (128 + a signal's number when one killed it), or -1 after `timeout_s` (then killed).
  int wait(int timeout_s = 120) {
    const auto until = Clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    while (code_ < 0) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        break;
      }
      if (Clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        code_ = -1;
        pid_ = -1;
        break;
      }
      ::usleep(20000);
    }
    return code_;
  }
  std::string output() const {
    std::ifstream f(out_path_);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  // Waits until the output holds `text` (false after `timeout_s`, or when the process ended).
  bool wait_for_output(const std::string& text, int timeout_s = 60) {
    const auto until = Clock::now() + std::chrono::seconds(timeout_s);
    while (Clock::now() < until) {
      if (output().find(text) != std::string::npos) return true;
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        code_ = 0;  // reaped; the output tells the rest
        return output().find(text) != std::string::npos;
      }
      ::usleep(20000);
    }
    return false;
  }
  pid_t pid() const noexcept { return pid_; }

 private:
  static int& count() {
    static int n = 0;
    return n;
  }
  pid_t pid_ = -1;
  int code_ = -1;
  std::string out_path_;
};

// A client of mpv's JSON IPC (--input-ipc-server): one JSON object a line each way.
class IpcClient {
 public:
  // Connects to `path`, trying for `timeout_s` while the player starts.
  bool connect(const std::string& path, int timeout_s = 60) {
    const auto until = Clock::now() + std::chrono::seconds(timeout_s);
    while (Clock::now() < until) {
      fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
      if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return true;
      ::close(fd_);
      fd_ = -1;
      ::usleep(50000);
    }
    return false;
  }
  ~IpcClient() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buf_.clear();
    events.clear();
  }
  void send_line(const std::string& line) {
    const std::string l = line + "\n";
    (void)::send(fd_, l.data(), l.size(), MSG_NOSIGNAL);
  }
  // Sends a command; returns its reply (events that come first are kept in `events`). A null
  // json after `timeout_s`.
  nlohmann::json command(const nlohmann::json& args, int timeout_s = 60) {
    const int64_t id = ++next_id_;
    send_line(nlohmann::json({{"command", args}, {"request_id", id}}).dump());
    const auto until = Clock::now() + std::chrono::seconds(timeout_s);
    for (;;) {
      nlohmann::json m = next_message(until);
      if (m.is_null()) return m;
      if (m.contains("event")) events.push_back(m);
      else if (m.value("request_id", int64_t{-1}) == id) return m;
    }
  }
  // The next message (events included), or null at `until`.
  nlohmann::json next_message(Clock::time_point until) {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        const std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return nlohmann::json::parse(line, nullptr, false);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      if (left <= 0) return nullptr;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 200))) <= 0) continue;
      char b[4096];
      const ssize_t n = ::recv(fd_, b, sizeof(b), 0);
      if (n <= 0) return nullptr;
      buf_.append(b, static_cast<size_t>(n));
    }
  }
  // Waits for an event named `name` (those already seen count), up to `timeout_s`.
  bool wait_event(const std::string& name, int timeout_s = 60) {
    const auto until = Clock::now() + std::chrono::seconds(timeout_s);
    for (;;) {
      for (auto it = events.begin(); it != events.end(); ++it)
        if ((*it)["event"] == name) {
          events.erase(events.begin(), it + 1);
          return true;
        }
      nlohmann::json m = next_message(until);
      if (m.is_null()) return false;
      if (m.contains("event")) events.push_back(m);
    }
  }
  // get_property's data (null when it failed).
  nlohmann::json get(const std::string& name) {
    const nlohmann::json r = command({"get_property", name});
    return r.is_object() && r.value("error", "") == "success" ? r["data"] : nlohmann::json();
  }
  std::vector<nlohmann::json> events;

 private:
  int fd_ = -1;
  int64_t next_id_ = 0;
  std::string buf_;
};

// A clip of photographs (python3-skimage's, as bench/make_real_clip.sh uses) panned across, with
// a tone on its sound track; "" without the ffmpeg CLI or the photographs.
inline std::string photo_clip(const std::string& path, const std::string& size, int fps, double seconds, const std::string& photo = "coffee.png") {
  std::string data = "/usr/share/skimage-data";
  if (::access((data + "/" + photo).c_str(), R_OK) != 0) data = "/usr/lib/python3/dist-packages/skimage/data";
  if (::access((data + "/" + photo).c_str(), R_OK) != 0) return "";
  const size_t x = size.find('x');
  const std::string w = size.substr(0, x), h = size.substr(x + 1);
  char args[1024];
  std::snprintf(args, sizeof(args),
                "-loop 1 -framerate %d -i '%s/%s' -f lavfi -i \"sine=f=330:sample_rate=48000:d=%g\" "
                "-vf \"scale=-2:%d*1.25,crop=%s:%s:x='(iw-ow)*t/%g':y='(ih-oh)/2',format=yuv420p\" -t %g "
                "-c:v libx264 -preset ultrafast -crf 23 -g %d -c:a aac -shortest",
                fps, data.c_str(), photo.c_str(), seconds, std::stoi(h), w.c_str(), h.c_str(), seconds, seconds, fps);
  return ffmpeg_clip(path, args);
}

}  // namespace histeq::test
