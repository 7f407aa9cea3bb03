// The player window end to end, under Xvfb with Mesa (no GPU needed): the test starts its own X
// server (Xvfb -displayfd picks a free display number and says which), runs `histeq play` on the
// built-in source or on clips it writes, drives it with --keys (the same path as the keyboard),
// and checks the PNG screenshots: their size, a picture that is not uniform, the overlay region
// changing when the overlay is toggled (and nothing else), the before/after halves of the split
// view; and, through --stats-json, kernels switched live with no frame lost, seeking, opening a
// file and a background export. Skipped only when Xvfb is not installed (scripts/setup.sh
// installs it, so CI runs these).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stb_image.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/video/file_source.h"
#include "tests/common/video_helpers.h"

#ifndef HISTEQ_BIN
#error "HISTEQ_BIN: the histeq binary under test"
#endif

namespace histeq::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kW = 1280, kH = 720;  // the window, and Xvfb's screen

std::string find_in_path(const std::string& exe) {
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
bool read_all(int fd, std::string& out, Clock::time_point deadline, bool stop_at_newline = false) {
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

// Runs histeq with DISPLAY = `display` ("" = none) and no Wayland, killed after `timeout_s`.
Outcome histeq(const std::vector<std::string>& args, const std::string& display, int timeout_s = 180) {
  int fds[2];
  Outcome r;
  if (::pipe(fds) != 0) return r;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    if (display.empty()) ::unsetenv("DISPLAY");
    else ::setenv("DISPLAY", display.c_str(), 1);
    ::unsetenv("WAYLAND_DISPLAY");
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

Png load_png(const std::string& path) {
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

RegionStats stats(const Png& p, Rect r) {
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
double mean_abs_diff(const Png& a, const Png& b, Rect r) {
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
// wide; the timing panel ending 12 from the right, 470 wide; the middle is video only.
constexpr Rect kMainPanel{24, 60, 390, 300};
constexpr Rect kTimingPanel{820, 60, 1250, 300};
constexpr Rect kMiddle{440, 120, 780, 600};

std::string shot(const std::string& dir, int tick) {
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
  // `histeq play` in a 1280x720 window with `args`; asserts it exits 0.
  Outcome play(std::vector<std::string> args) {
    std::vector<std::string> a = {"play", "--window", std::to_string(kW) + "x" + std::to_string(kH), "--screenshot-dir", dir_};
    a.insert(a.end(), args.begin(), args.end());
    Outcome r = histeq(a, xvfb_->display());
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

  static Xvfb* xvfb_;
  static std::string skip_, failure_;
  std::string dir_;
};
Xvfb* PlayerWindow::xvfb_ = nullptr;
std::string PlayerWindow::skip_;
std::string PlayerWindow::failure_;

TEST_F(PlayerWindow, ScreenshotIsTheWindowWithAMovingPicture) {
  const std::string a = dir_ + "/a.png";
  const Outcome r = play({"--size", "640x360", "--max-speed", "--frames", "12", "--screenshot", a});
  EXPECT_NE(r.out.find("histeq play: screenshot " + a), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("window 1280x720"), std::string::npos) << r.out;
  const Png p = png(a);
  ASSERT_FALSE(p.rgb.empty());
  const RegionStats mid = stats(p, kMiddle);
  EXPECT_GT(mid.sd, 10.0) << "the video region is uniform";
  EXPECT_GT(mid.distinct, 200u);
  // The panels are there: dark, semi-transparent backgrounds with text.
  EXPECT_GT(stats(p, kMainPanel).distinct, 50u);
  EXPECT_GT(stats(p, kTimingPanel).distinct, 50u);
}

TEST_F(PlayerWindow, TheOverlayAndTheHelpPanelChangeOnlyTheirRegions) {
  // Paused on the first frame, so that only the overlay changes between the shots.
  play({"--size", "640x360", "--max-speed", "--frames", "8", "--keys", "space,3:s,4:o,5:s,6:h,7:s"});
  const Png with = png(shot(dir_, 3)), without = png(shot(dir_, 5)), help = png(shot(dir_, 7));
  ASSERT_FALSE(with.rgb.empty() || without.rgb.empty() || help.rgb.empty());
  EXPECT_GT(mean_abs_diff(with, without, kMainPanel), 15.0) << "the main panel did not go";
  EXPECT_GT(mean_abs_diff(with, without, kTimingPanel), 15.0) << "the timing panel did not go";
  EXPECT_LT(mean_abs_diff(with, without, kMiddle), 0.5) << "the video changed while paused";
  // The help panel is in the middle, on its own (the overlay stays hidden).
  EXPECT_GT(mean_abs_diff(without, help, Rect{540, 260, 740, 460}), 15.0) << "no help panel";
  EXPECT_LT(mean_abs_diff(without, help, kMainPanel), 0.5);
}

TEST_F(PlayerWindow, TheSplitViewShowsTheInputLeftAndTheOutputRight) {
  play({"--size", "1280x720", "--max-speed", "--no-overlay", "--frames", "6", "--keys", "space,3:s,4:b,5:s"});
  const Png after = png(shot(dir_, 3)), split = png(shot(dir_, 5));
  ASSERT_FALSE(after.rgb.empty() || split.rgb.empty());
  const Rect left{40, 80, 600, 700}, right{680, 80, 1240, 700};  // clear of the divider and the labels
  // Left of the divider: the input now; right: the same output as before.
  EXPECT_GT(mean_abs_diff(after, split, left), 10.0);
  EXPECT_LT(mean_abs_diff(after, split, right), 0.5);
  // The before half is the low-contrast source, the after half its equalized version.
  const RegionStats before_half = stats(split, left), after_half = stats(split, right);
  EXPECT_LT(before_half.sd * 2.0, after_half.sd) << before_half.sd << " vs " << after_half.sd;
  // The divider: a bright yellow column at the middle.
  const uint8_t* d = &split.rgb[(static_cast<size_t>(400) * kW + 640) * 3];
  EXPECT_GT(d[0], 200);
  EXPECT_GT(d[1], 170);
  EXPECT_LT(d[2], 120);
}

TEST_F(PlayerWindow, KernelsSwitchLiveWithNoFrameLost) {
  const std::string js = dir_ + "/s.json";
  const Outcome r = play({"--size", "320x180", "--max-speed", "--frames", "60", "--keys", "10:k,30:K", "--stats-json", js});
  EXPECT_NE(r.out.find("kernel cpu_reference from frame"), std::string::npos) << r.out;
  const nlohmann::json j = json(js);
  const auto& frames = j["frames"];
  ASSERT_GE(frames.size(), 60u);
  std::vector<std::string> runs;  // the kernels, run-length collapsed
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_FALSE(frames[i].value("dropped", false)) << i;
    EXPECT_EQ(frames[i]["index"].get<int64_t>(), static_cast<int64_t>(i)) << "a frame is missing";
    const std::string k = frames[i]["kernel"];
    if (runs.empty() || runs.back() != k) runs.push_back(k);
  }
  EXPECT_EQ(runs, (std::vector<std::string>{"cpu_parallel", "cpu_reference", "cpu_parallel"}));

  // --kernel and --kernel-sequence: the same switches, from the command line.
  const Outcome seq = play({"--size", "320x180", "--max-speed", "--frames", "40", "--kernel", "cpu_parallel", "--kernel-sequence",
                        "cpu_reference,cpu_parallel", "--switch-every", "8", "--stats-json", js});
  const nlohmann::json j2 = json(js);
  ASSERT_GE(j2["frames"].size(), 40u);
  EXPECT_EQ(j2["frames"][0]["kernel"], "cpu_reference");  // the sequence's first, from the first frame
  std::set<std::string> seen;
  for (const auto& f : j2["frames"]) seen.insert(f["kernel"].get<std::string>());
  EXPECT_EQ(seen, (std::set<std::string>{"cpu_parallel", "cpu_reference"})) << seq.out;
}

// The picture-quality keys (m, c, t, l, p) while playing: each change is on screen from a later
// frame, in order, and no frame is lost.
TEST_F(PlayerWindow, QualityControlsApplyLiveWithNoFrameLost) {
  const std::string js = dir_ + "/q.json";
  const Outcome r = play({"--size", "320x180", "--max-speed", "--frames", "70", "--keys", "8:m,18:c,28:t,38:l,48:p,58:p", "--stats-json", js});
  // The settings on screen, in the order they came (the player prints each change once).
  std::vector<std::string> seen;
  for (size_t at = r.out.find("histeq play: "); at != std::string::npos; at = r.out.find("histeq play: ", at + 1)) {
    const size_t end = r.out.find('\n', at);
    const std::string line = r.out.substr(at, end - at);
    if (line.find(" from frame ") != std::string::npos && line.find("kernel ") == std::string::npos) seen.push_back(line);
  }
  ASSERT_EQ(seen.size(), 7u) << r.out;
  EXPECT_NE(seen[0].find("global, clip 1.1, temporal 0.5 s"), std::string::npos) << seen[0];
  EXPECT_NE(seen[1].find("clahe 8x8"), std::string::npos) << seen[1];
  EXPECT_NE(seen[2].find("chroma kept"), std::string::npos) << seen[2];
  EXPECT_NE(seen[3].find("no temporal"), std::string::npos) << seen[3];
  EXPECT_NE(seen[4].find("no clip"), std::string::npos) << seen[4];
  EXPECT_NE(seen[5].find(": plain from frame"), std::string::npos) << seen[5];
  auto desc = [](const std::string& line) { return line.substr(0, line.find(" from frame ")); };
  EXPECT_EQ(desc(seen[6]), desc(seen[4])) << "p twice: back to the settings before";
  const nlohmann::json j = json(js);
  const auto& frames = j["frames"];
  ASSERT_GE(frames.size(), 70u);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_FALSE(frames[i].value("dropped", false)) << i;
    EXPECT_EQ(frames[i]["index"].get<int64_t>(), static_cast<int64_t>(i)) << "a frame is missing";
  }
}

// The split view compares any two settings: left the input or settings B (--compare), right the
// output. Paused on the first frame, so every run shows the same picture.
TEST_F(PlayerWindow, TheSplitViewComparesTwoSettings) {
  const Rect left{40, 80, 600, 700}, right{680, 80, 1240, 700};
  auto run = [&](std::vector<std::string> extra, const std::string& name) {
    std::vector<std::string> a = {"--size", "1280x720", "--max-speed", "--no-overlay", "--frames", "4", "--split", "0.5",
                                  "--keys", "space", "--screenshot", dir_ + "/" + name + ".png"};
    a.insert(a.end(), extra.begin(), extra.end());
    play(a);
    return png(dir_ + "/" + name + ".png");
  };
  const Png input = run({"--compare", "input"}, "input"), plain = run({"--compare", "plain"}, "plain"),
            both = run({"--compare", "plain", "--plain"}, "both");
  ASSERT_FALSE(input.rgb.empty() || plain.rgb.empty() || both.rgb.empty());
  EXPECT_LT(mean_abs_diff(input, plain, right), 0.5) << "the right side (the defaults) changed with the left's settings";
  EXPECT_GT(mean_abs_diff(input, plain, left), 10.0) << "left: the input, then plain equalization";
  EXPECT_GT(stats(plain, left).sd, stats(input, left).sd * 1.5) << "plain equalization stretches the low-contrast input";
  EXPECT_LT(mean_abs_diff(plain, both, left), 0.5) << "left: plain in both runs";
  EXPECT_GT(mean_abs_diff(plain, both, right), 3.0) << "right: the defaults, then plain";
}

TEST_F(PlayerWindow, PlaysAFileSeeksAndExportsInTheBackground) {
  const std::string clip = dir_ + "/clip.mp4", out = dir_ + "/out.mp4", js = dir_ + "/s.json";
  video::SyntheticOptions o;
  o.width = 320;
  o.height = 180;
  o.fps = 30;
  o.duration_s = 3;
  ASSERT_TRUE(write_synthetic_clip(clip, o, "mpeg4").is_ok());
  const Outcome r = play({clip, "--frames", "40", "--keys", "2:export=" + out + ",4:right", "--stats-json", js});
  EXPECT_NE(r.out.find("mpeg4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("histeq play: export: wrote " + out + ": 90 frames"), std::string::npos) << r.out;
  auto frames = read_frames(out);
  ASSERT_TRUE(frames.is_ok()) << frames.status().to_string();
  EXPECT_EQ(frames->size(), 90u);
  // The seek: from the first frames to the last second, and nothing after the jump is late work
  // from before it.
  const nlohmann::json j = json(js);
  double prev = -1, jump = 0;
  for (const auto& f : j["frames"]) {
    const double t = f["time_s"];
    if (prev >= 0) jump = std::max(jump, t - prev);
    prev = t;
  }
  EXPECT_GT(jump, 1.5) << "no seek in the played frames";
  EXPECT_GT(prev, 2.5) << "the seek did not reach the end";
}

TEST_F(PlayerWindow, OpensAnotherFileWhilePlaying) {
  const std::string clip = dir_ + "/other.mkv";
  video::SyntheticOptions o;
  o.width = 256;
  o.height = 144;
  o.fps = 25;
  o.duration_s = 1;
  ASSERT_TRUE(write_synthetic_clip(clip, o).is_ok());
  const std::string a = dir_ + "/after-open.png";
  const Outcome r = play({"--size", "320x180", "--max-speed", "--frames", "30", "--keys", "3:open=" + clip, "--screenshot", a});
  EXPECT_NE(r.out.find("ffv1"), std::string::npos) << r.out;  // the second source's description
  const Png p = png(a);
  ASSERT_FALSE(p.rgb.empty());
  EXPECT_GT(stats(p, kMiddle).sd, 5.0);
}

TEST_F(PlayerWindow, CommandLineMistakesAreOneLineErrors) {
  Outcome r = histeq({"play", "--keys", "3:x", "--frames", "5"}, xvfb_->display());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--keys: '3:x'"), std::string::npos) << r.out;
  r = histeq({"play", "--screenshot", dir_ + "/x.png"}, xvfb_->display());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--screenshot needs --frames"), std::string::npos) << r.out;
  r = histeq({"play", "--headless", "--frames", "3"}, xvfb_->display());
  EXPECT_EQ(r.code, 2) << r.out;
  r = histeq({"play", "--kernel-sequence", "cpu_parallel,method2", "--frames", "3"}, xvfb_->display());
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("method2"), std::string::npos) << r.out;
}

// Without a display: the window's options fail clearly; plain play falls back to headless, saying so.
TEST_F(PlayerWindow, WithoutADisplayPlayFallsBackToHeadless) {
  Outcome r = histeq({"play", "--frames", "3"}, "");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("need the player window: no display"), std::string::npos) << r.out;
  r = histeq({"play", "--size", "160x90", "--duration", "0.5", "--max-speed", "-q"}, "");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("histeq: note: no player window (no display"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("30 frames"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace histeq::test
