// The player as an A/B instrument, end to end under Xvfb, driven as a script would drive it: through
// mpv's JSON IPC (--input-ipc-server). Paused changes shown at once (the picture made again, the
// position unmoved), the OSD with the overlay hidden, mpv's keys and --input-conf, the overlay's
// layout at the default size, exit codes on signals, a bounded memory whatever a header says, a
// moving picture on one core, and headless play taking the same IPC.
#include "tests/player/harness.h"

namespace histeq::test {
namespace {

// The player in a 1280x720 window with the IPC at dir/ipc.sock, and a client connected to it.
class PlayerIpc : public PlayerWindow {
 protected:
  void start(std::vector<std::string> args, const std::vector<std::string>& env = {}, const std::vector<std::string>& prefix = {},
             const std::string& window = "1280x720") {
    sock_ = dir_ + "/ipc.sock";
    std::vector<std::string> a = {"play"};
    if (!window.empty()) a.insert(a.end(), {"--window", window});
    a.insert(a.end(), {"--screenshot-dir", dir_, "--input-ipc-server", sock_});
    a.insert(a.end(), args.begin(), args.end());
    run_ = std::make_unique<Running>(a, xvfb_->display(), dir_, env, prefix);
    ipc_.close();
    ASSERT_TRUE(ipc_.connect(sock_)) << run_->output();
  }
  // Waits until a frame is on screen (time-pos exists).
  void wait_playing() {
    for (int i = 0; i < 600 && ipc_.get("time-pos").is_null(); ++i) ::usleep(50000);
    ASSERT_FALSE(ipc_.get("time-pos").is_null()) << run_->output();
  }
  nlohmann::json ok(const nlohmann::json& args) {
    const nlohmann::json r = ipc_.command(args);
    EXPECT_TRUE(r.is_object() && r["error"] == "success") << args.dump() << " -> " << r.dump() << "\n" << run_->output();
    return r.is_object() ? r["data"] : nlohmann::json();
  }
  int quit() {
    ipc_.command({"quit"});
    return run_->wait();
  }
  std::string sock_;
  std::unique_ptr<Running> run_;
  IpcClient ipc_;
};

// The video region of a 1280x720 window left of the main panel's reach and clear of the OSD.
constexpr Rect kVideo{440, 140, 1240, 700};
// The main panel's kernel row (the combo box) at 1280x720.
constexpr Rect kKernelRow{100, 36, 405, 62};

// The test: paused on a real clip, mode, clip limit, kernel and plain are changed one at a
// time, a screenshot taken after each. Each shot differs from the one before it (the window's; the
// video's for every change of the picture: a kernel changes the numbers on screen, not the
// picture, as every kernel computes the same histogram), and the position does not move.
TEST_F(PlayerIpc, PausedChangesShowAtOnceAndThePositionStays) {
  const std::string clip = photo_clip(dir_ + "/photo.mp4", "1280x720", 30, 4);
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI or no skimage photographs to make the clip";
  start({clip});
  wait_playing();
  ok({"set_property", "pause", true});
  ASSERT_TRUE(ipc_.wait_event("pause"));
  const double t0 = ok({"get_property", "time-pos"}).get<double>();
  const int64_t f0 = ok({"get_property", "estimated-frame-number"}).get<int64_t>();
  std::vector<Png> windows, videos;
  auto shoot = [&](const std::string& name) {
    ok({"screenshot-to-file", dir_ + "/" + name + "-window.png", "window"});
    ok({"screenshot-to-file", dir_ + "/" + name + "-video.png", "video"});
    windows.push_back(load_png(dir_ + "/" + name + "-window.png"));
    videos.push_back(load_png(dir_ + "/" + name + "-video.png"));
    EXPECT_EQ(videos.back().w, 1280) << "the video at its own size";
    EXPECT_NEAR(ok({"get_property", "time-pos"}).get<double>(), t0, 1e-9) << name << ": the position moved";
    EXPECT_EQ(ok({"get_property", "estimated-frame-number"}).get<int64_t>(), f0) << name;
  };
  shoot("before");
  const std::vector<std::pair<std::string, nlohmann::json>> changes = {
      {"mode", "clahe"}, {"clip-limit", 4}, {"kernel", "cpu_reference"}, {"plain", true}};
  for (const auto& [name, value] : changes) {
    ok({"set_property", name, value});
    EXPECT_EQ(ok({"get_property", name}), value);
    shoot(name);
    const size_t n = windows.size();
    ASSERT_FALSE(windows[n - 1].rgb.empty() || videos[n - 1].rgb.empty());
    EXPECT_GT(mean_abs_diff(windows[n - 2], windows[n - 1], Rect{0, 0, kW, kH}), 0.05) << name << ": the window shot did not change";
    const Rect whole{0, 0, videos[n - 1].w, videos[n - 1].h};
    if (name == "kernel") {
      EXPECT_LT(mean_abs_diff(videos[n - 2], videos[n - 1], whole), 0.01) << "kernels compute the same histogram";
      EXPECT_GT(mean_abs_diff(windows[n - 2], windows[n - 1], kKernelRow), 1.0) << "the kernel on screen did not change";
    } else {
      EXPECT_GT(mean_abs_diff(videos[n - 2], videos[n - 1], whole), 1.0) << name << ": the picture did not change while paused";
      EXPECT_GT(mean_abs_diff(windows[n - 2], windows[n - 1], kVideo), 1.0) << name;
    }
  }
  EXPECT_TRUE(ok({"get_property", "pause"}).get<bool>());
  // A step after the changes: the next frame, made with them.
  ok({"frame-step"});
  for (int i = 0; i < 100 && ok({"get_property", "estimated-frame-number"}) == f0; ++i) ::usleep(20000);
  EXPECT_EQ(ok({"get_property", "estimated-frame-number"}).get<int64_t>(), f0 + 1);
  EXPECT_EQ(quit(), 0) << run_->output();
  const std::string out = run_->output();
  // The player's log: each change on screen, while paused.
  EXPECT_NE(out.find("histeq play: kernel cpu_reference from frame "), std::string::npos) << out;
  EXPECT_NE(out.find(": plain from frame "), std::string::npos) << out;
}

// mpv's IPC: request ids, error strings, observed properties, events.
TEST_F(PlayerIpc, SpeaksMpvsJsonIpc) {
  start({"--size", "320x180", "--duration", "30"});
  wait_playing();
  nlohmann::json r = ipc_.command({"get_property", "no-such-property"});
  EXPECT_EQ(r["error"], "property not found");
  r = ipc_.command({"set_property", "mode", "sideways"});
  EXPECT_EQ(r["error"], "invalid parameter");
  EXPECT_EQ(ok({"get_property", "mode"}), "global") << "a bad value changes nothing";
  r = ipc_.command({"no-such-command"});
  EXPECT_EQ(r["error"], "invalid parameter");
  ipc_.send_line("{not json");
  r = ipc_.next_message(Clock::now() + std::chrono::seconds(30));
  EXPECT_EQ(r["error"], "invalid parameter");
  ok({"observe_property", 7, "pause"});
  ok({"observe_property", 8, "time-pos"});
  ok({"cycle", "pause"});
  bool saw_pause = false, saw_time = false, saw_pause_event = false;
  auto look = [&](const nlohmann::json& m) {
    if (m.value("event", "") == "property-change" && m["id"] == 7 && m["data"] == true) saw_pause = true;
    if (m.value("event", "") == "property-change" && m["id"] == 8 && m["data"].is_number()) saw_time = true;
    if (m.value("event", "") == "pause") saw_pause_event = true;
  };
  for (const auto& m : ipc_.events) look(m);
  ipc_.events.clear();
  for (int i = 0; i < 200 && !(saw_pause && saw_time && saw_pause_event); ++i) {
    const nlohmann::json m = ipc_.next_message(Clock::now() + std::chrono::seconds(5));
    if (m.is_null()) break;
    look(m);
  }
  EXPECT_TRUE(saw_pause && saw_time && saw_pause_event);
  ok({"seek", 10, "absolute"});
  EXPECT_TRUE(ipc_.wait_event("seek"));
  EXPECT_TRUE(ipc_.wait_event("playback-restart"));
  EXPECT_NEAR(ok({"get_property", "time-pos"}).get<double>(), 10.0, 1e-6);
  ok({"seek", -4});  // relative
  EXPECT_TRUE(ipc_.wait_event("playback-restart"));
  EXPECT_NEAR(ok({"get_property", "time-pos"}).get<double>(), 6.0, 1e-6);
  ok({"frame-back-step"});
  EXPECT_TRUE(ipc_.wait_event("playback-restart"));
  EXPECT_NEAR(ok({"get_property", "time-pos"}).get<double>(), 6.0 - 1 / 60.0, 1e-6);
  const nlohmann::json t = ok({"get_property", "histeq-timings"});
  ASSERT_TRUE(t.is_object());
  bool has_equalizer_stage = false;
  for (const auto& s : t["stages"]) has_equalizer_stage |= s["stage"] == "histogram" || s["stage"] == "equalize";
  EXPECT_TRUE(has_equalizer_stage) << t.dump();
  EXPECT_EQ(ipc_.command({"set_property", "histeq-timings", 1})["error"], "property unavailable");
  ok({"set_property", "pause", false});
  EXPECT_TRUE(ipc_.wait_event("unpause"));
  ok({"seek", 29.9, "absolute"});
  EXPECT_TRUE(ipc_.wait_event("end-file"));
  // A step past the last frame finds none: a screenshot after it does not wait for one.
  ok({"frame-step"});
  ok({"screenshot-to-file", dir_ + "/end.png", "window"});
  EXPECT_EQ(quit(), 0) << run_->output();
}

// The OSD: a line for each key action at the top left, also with the overlay hidden, gone after
// about a second and a half.
TEST_F(PlayerIpc, TheOsdConfirmsKeysWithTheOverlayHidden) {
  start({"--size", "1280x720", "--no-overlay", "--duration", "30"});
  wait_playing();
  ok({"set_property", "pause", true});
  const Rect osd{0, 0, 640, 90};
  ok({"screenshot-to-file", dir_ + "/none.png", "window"});
  ok({"keypress", "k"});
  ok({"screenshot-to-file", dir_ + "/kernel.png", "window"});
  const Png none = load_png(dir_ + "/none.png"), kernel = load_png(dir_ + "/kernel.png");
  ASSERT_FALSE(none.rgb.empty() || kernel.rgb.empty());
  EXPECT_GT(mean_abs_diff(none, kernel, osd), 2.0) << "no OSD line after k";
  EXPECT_LT(mean_abs_diff(none, kernel, Rect{0, 200, kW, kH}), 0.5) << "only the top left changes";
  ::usleep(2'200'000);
  ok({"screenshot-to-file", dir_ + "/later.png", "window"});
  const Png later = load_png(dir_ + "/later.png");
  EXPECT_LT(mean_abs_diff(none, later, osd), 0.5) << "the OSD line stayed";
  // show-text, mpv's command for a line of one's own.
  ok({"show-text", "hello from a script", 3000});
  ok({"screenshot-to-file", dir_ + "/text.png", "window"});
  EXPECT_GT(mean_abs_diff(none, load_png(dir_ + "/text.png"), osd), 2.0);
  EXPECT_EQ(quit(), 0) << run_->output();
}

// mpv's keys, pressed as the keyboard does (keypress runs the same bindings).
TEST_F(PlayerIpc, MpvsKeysDoWhatMpvsDo) {
  start({"--size", "320x180", "--duration", "90"});
  wait_playing();
  auto key = [&](const std::string& k) { ok({"keypress", k}); };
  key("p");
  EXPECT_TRUE(ok({"get_property", "pause"}).get<bool>()) << "p pauses";
  key("SPACE");
  EXPECT_FALSE(ok({"get_property", "pause"}).get<bool>()) << "space plays";
  key("p");
  ok({"seek", 20, "absolute"});
  ASSERT_TRUE(ipc_.wait_event("playback-restart"));
  for (const auto& [k, t] : {std::pair<const char*, double>{"RIGHT", 25}, {"LEFT", 20}, {"UP", 80}, {"DOWN", 20}}) {
    key(k);
    ASSERT_TRUE(ipc_.wait_event("playback-restart")) << k;
    EXPECT_NEAR(ok({"get_property", "time-pos"}).get<double>(), t, 1e-6) << k;
  }
  const int64_t f = ok({"get_property", "estimated-frame-number"}).get<int64_t>();
  key(".");
  for (int i = 0; i < 200 && ok({"get_property", "estimated-frame-number"}).get<int64_t>() == f; ++i) ::usleep(10000);
  EXPECT_EQ(ok({"get_property", "estimated-frame-number"}).get<int64_t>(), f + 1) << ". steps";
  key("comma");
  ASSERT_TRUE(ipc_.wait_event("playback-restart"));
  EXPECT_EQ(ok({"get_property", "estimated-frame-number"}).get<int64_t>(), f) << ", steps back";
  key("]");
  EXPECT_NEAR(ok({"get_property", "speed"}).get<double>(), 1.1, 1e-9);
  key("[");
  EXPECT_NEAR(ok({"get_property", "speed"}).get<double>(), 1.0, 1e-9);
  key("}");
  key("BS");
  EXPECT_NEAR(ok({"get_property", "speed"}).get<double>(), 1.0, 1e-9);
  key("i");
  EXPECT_TRUE(ok({"get_property", "stats"}).get<bool>()) << "i: the statistics";
  key("TAB");
  EXPECT_FALSE(ok({"get_property", "overlay"}).get<bool>()) << "Tab: the overlay";
  key("a");
  EXPECT_TRUE(ok({"get_property", "plain"}).get<bool>()) << "a: plain";
  key("C");
  EXPECT_GT(ok({"get_property", "clip-limit"}).get<double>(), 0) << "C: the clip limit back on (plain had it off)";
  EXPECT_FALSE(ok({"get_property", "plain"}).get<bool>());
  key("b");
  EXPECT_TRUE(ok({"get_property", "split"}).get<bool>());
  key("B");
  EXPECT_NE(ok({"get_property", "compare"}), "input") << "B: the split's left side";
  key("f");
  EXPECT_TRUE(ok({"get_property", "fullscreen"}).get<bool>());
  key("h");
  EXPECT_TRUE(ok({"get_property", "help"}).get<bool>());
  key("ESC");
  EXPECT_FALSE(ok({"get_property", "help"}).get<bool>()) << "Esc closes the keys panel first";
  EXPECT_TRUE(ok({"get_property", "fullscreen"}).get<bool>());
  key("ESC");
  EXPECT_FALSE(ok({"get_property", "fullscreen"}).get<bool>()) << "then leaves fullscreen";
  key("m");
  EXPECT_TRUE(ok({"get_property", "mute"}).get<bool>());
  key("9");
  EXPECT_NEAR(ok({"get_property", "volume"}).get<double>(), 95, 1e-9);
  key("j");  // subtitles: histeq shows none; the OSD says so
  key("SHARP");
  key("q");
  EXPECT_EQ(run_->wait(), 0) << "q quits\n" << run_->output();
}

// # cycles the audio tracks, then none, as mpv's does; the sound restarts with the next frame.
TEST_F(PlayerIpc, SharpCyclesTheAudioTracks) {
  const std::string clip = ffmpeg_clip(dir_ + "/two.mkv",
      "-f lavfi -i testsrc2=s=320x180:r=30:d=20 -f lavfi -i sine=f=440:d=20 -f lavfi -i sine=f=880:d=20 "
      "-map 0 -map 1 -map 2 -c:v libx264 -preset ultrafast -c:a aac");
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI to make the clip";
  start({clip});
  wait_playing();
  EXPECT_EQ(ok({"get_property", "aid"}), 1);
  for (const nlohmann::json& want : {nlohmann::json(2), nlohmann::json(false), nlohmann::json(1)}) {
    ok({"keypress", "SHARP"});
    EXPECT_EQ(ok({"get_property", "aid"}), want);
  }
  ok({"set_property", "aid", 2});
  EXPECT_EQ(ok({"get_property", "aid"}), 2);
  EXPECT_EQ(ipc_.command({"set_property", "aid", 3})["error"], "invalid parameter");
  EXPECT_EQ(quit(), 0) << run_->output();
  EXPECT_NE(run_->output().find("(stream #2)"), std::string::npos) << run_->output();
}

// --input-conf: mpv's input.conf syntax rebinds keys, binds new ones and unbinds others.
TEST_F(PlayerIpc, InputConfRebindsKeys) {
  const std::string conf = dir_ + "/input.conf";
  std::ofstream(conf) << "# mine\nk cycle plain        # plain on k\nx set pause yes; show-text paused-by-x\nq ignore\n"
                         "Ctrl+k cycle kernel\n";
  start({"--size", "320x180", "--duration", "30", "--input-conf", conf});
  wait_playing();
  const std::string kernel = ok({"get_property", "kernel"});
  ok({"keypress", "k"});
  EXPECT_TRUE(ok({"get_property", "plain"}).get<bool>());
  EXPECT_EQ(ok({"get_property", "kernel"}), kernel) << "k no longer switches kernels";
  ok({"keypress", "x"});
  EXPECT_TRUE(ok({"get_property", "pause"}).get<bool>());
  ok({"keypress", "Ctrl+k"});
  EXPECT_NE(ok({"get_property", "kernel"}), kernel);
  ok({"keypress", "q"});
  ::usleep(300000);
  EXPECT_TRUE(ok({"get_property", "pause"}).get<bool>()) << "q ignored: still running";
  EXPECT_EQ(quit(), 0) << run_->output();
  // A mistake in the file is a one-line error naming its line, before any window opens.
  std::ofstream(conf) << "k cycle plain\nnosuchkey quit\n";
  const Outcome bad = histeq({"play", "--input-conf", conf, "--frames", "3"}, xvfb_->display());
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find(conf + ":2"), std::string::npos) << bad.out;
}

// The overlay's default layout: the luma histograms whole, at 1280x720 and at the default window
// size (the video fitted to 80% of the screen: 1024x576 on this 1280x720 screen); at most a third of
// a 1280x720 window covered.
TEST_F(PlayerIpc, TheDefaultLayoutShowsTheHistogramsAndCoversAThird) {
  for (const std::string window : {"1280x720", ""}) {
    start({"--size", "1920x1080", "--duration", "30"}, {}, {}, window);
    wait_playing();
    ok({"set_property", "pause", true});
    ::usleep(300000);  // a few frames, so that the panels have their sizes
    const nlohmann::json l = ok({"get_property", "histeq-layout"});
    ASSERT_TRUE(l.is_object()) << run_->output();
    const double w = l["width"], h = l["height"];
    if (window.empty()) {
      EXPECT_EQ(w, 1024) << "the default size on a 1280x720 screen";
    }
    double area = 0;
    bool luma = false;
    for (const auto& p : l["panels"]) {
      const double x = p["x"], y = p["y"], pw = p["w"], ph = p["h"];
      EXPECT_GE(x, 0) << p.dump();
      EXPECT_GE(y, 0) << p.dump();
      EXPECT_LE(x + pw, w + 0.5) << p.dump();
      EXPECT_LE(y + ph, h + 0.5) << p.dump() << ": cut off";
      area += pw * ph;
      if (p["name"] == "luma") {
        luma = true;
        EXPECT_GE(ph, 150) << "both histograms";
      }
    }
    EXPECT_TRUE(luma) << l.dump();
    if (!window.empty()) {
      EXPECT_LE(area, w * h / 3) << l.dump();
      // What the eye sees: the pixels the overlay changes (paused: the video stands still).
      ok({"screenshot-to-file", dir_ + "/on.png", "window"});
      ok({"set_property", "overlay", false});
      ok({"screenshot-to-file", dir_ + "/off.png", "window"});
      const Png on = load_png(dir_ + "/on.png"), off = load_png(dir_ + "/off.png");
      ASSERT_FALSE(on.rgb.empty() || off.rgb.empty());
      size_t changed = 0;
      for (size_t i = 0; i + 2 < on.rgb.size(); i += 3)
        if (std::abs(on.rgb[i] - off.rgb[i]) + std::abs(on.rgb[i + 1] - off.rgb[i + 1]) + std::abs(on.rgb[i + 2] - off.rgb[i + 2]) > 6) ++changed;
      EXPECT_LE(static_cast<double>(changed), w * h / 3) << "pixels the overlay covers";
    }
    EXPECT_EQ(quit(), 0) << run_->output();
  }
}

// Stopped by a signal, play prints its summary and exits 128 + the signal (as export does), the
// window and headless alike.
TEST_F(PlayerIpc, SignalsEndPlayWithTheirExitCodes) {
  for (const bool headless : {false, true}) {
    for (const auto& [sig, code] : {std::pair{SIGINT, 130}, {SIGTERM, 143}, {SIGHUP, 129}}) {
      std::vector<std::string> a = {"play", "--size", "320x180", "--duration", "0"};
      if (headless) a.push_back("--headless");
      else a.insert(a.end(), {"--window", "640x360"});
      Running r(a, xvfb_->display(), dir_);
      ASSERT_TRUE(r.wait_for_output("histeq play:")) << r.output();
      ::usleep(500000);
      r.signal(sig);
      EXPECT_EQ(r.wait(60), code) << (headless ? "headless, " : "window, ") << "signal " << sig << "\n" << r.output();
      EXPECT_NE(r.output().find("histeq play: interrupted after"), std::string::npos) << r.output();
    }
  }
}

// A y4m whose header claims 99999999 frames a second: the statistics are sized by the frames seen,
// not by the header (it drove a 12.6 GB allocation and a 28 s stall).
TEST_F(PlayerIpc, AHeadersFrameRateSizesNothing) {
  const std::string y4m = dir_ + "/fast.y4m";
  {
    std::ofstream f(y4m, std::ios::binary);
    f << "YUV4MPEG2 W320 H240 F99999999:1 Ip A1:1 C420jpeg\n";
    std::vector<char> frame(320 * 240 * 3 / 2);
    for (int i = 0; i < 26; ++i) {  // about 3 MB
      for (size_t k = 0; k < frame.size(); ++k) frame[k] = static_cast<char>((k + i * 7) & 0xff);
      f << "FRAME\n";
      f.write(frame.data(), static_cast<std::streamsize>(frame.size()));
    }
  }
  for (const bool headless : {true, false}) {
    std::vector<std::string> a = {"play", y4m, "--max-speed", "--stats-json", dir_ + "/s.json"};
    if (headless) a.push_back("--headless");
    else a.insert(a.end(), {"--window", "640x360", "--exit-at-end"});
    const auto t0 = Clock::now();
    Running r(a, xvfb_->display(), dir_);
    EXPECT_EQ(r.wait(120), 0) << r.output();
    rusage ru{};
    ::getrusage(RUSAGE_CHILDREN, &ru);
    EXPECT_LT(ru.ru_maxrss, 1500 * 1024) << "KiB at most, of any child so far";
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 60.0) << r.output();
    EXPECT_EQ(json(dir_ + "/s.json")["frames"].size(), 26u) << r.output();
  }
}

// ffplay's drop rule on a machine that cannot keep up: the CPU equalizer on one core, a 1080p60
// clip with sound. A late frame is dropped only when a newer one is ready, so the picture moves
// (slower than the sound, the drops counted) instead of standing still: at least a fifth of the
// frames are shown, spread over the clip.
TEST_F(PlayerIpc, OneCoreShowsAMovingPicture) {
  if (find_in_path("taskset").empty()) GTEST_SKIP() << "no taskset";
  const std::string clip = photo_clip(dir_ + "/hd.mp4", "1920x1080", 60, 6);
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI or no skimage photographs to make the clip";
  const std::string js = dir_ + "/s.json";
  Running run({"play", clip, "--cpu", "--window", "1280x720", "--exit-at-end", "--stats-json", js}, xvfb_->display(), dir_, {},
              {"taskset", "-c", "0"});
  ASSERT_EQ(run.wait(240), 0) << run.output();
  const nlohmann::json j = json(js);
  const auto& frames = j["frames"];
  ASSERT_EQ(frames.size(), 360u) << "every frame of the clip reached the player";
  std::vector<double> shown;
  int64_t dropped = 0;
  for (const auto& f : frames) {
    if (f.contains("presented_ns")) shown.push_back(f["time_s"]);
    dropped += f.value("dropped", false);
  }
  const double fraction = static_cast<double>(shown.size()) / frames.size();
  double gap = 0;
  for (size_t i = 1; i < shown.size(); ++i) gap = std::max(gap, shown[i] - shown[i - 1]);
  std::string load = "?";  // the share of the core this run had depends on the machine's other work
  if (std::ifstream la("/proc/loadavg"); la) std::getline(la, load);
  std::printf("one core: %zu of %zu frames shown (%.0f%%), %lld dropped, longest gap %.2f s of media; load average %s\n", shown.size(),
              frames.size(), 100 * fraction, static_cast<long long>(dropped), gap, load.c_str());
  RecordProperty("shown_fraction", std::to_string(fraction));
  EXPECT_GE(fraction, 0.20) << run.output();
  ASSERT_FALSE(shown.empty());
  EXPECT_LE(shown.front(), 0.5);
  EXPECT_GE(shown.back(), 5.5) << "the picture reached the end of the clip";
  EXPECT_LE(gap, 0.75) << "the shown frames are spread over the clip";
  EXPECT_TRUE(j["audio"]["playing"].get<bool>()) << "the sound played (its clock led)";
}

// Headless play takes the same IPC: pause, a control, properties, quit.
TEST_F(PlayerIpc, HeadlessPlayTakesTheSameIpc) {
  sock_ = dir_ + "/headless.sock";
  run_ = std::make_unique<Running>(std::vector<std::string>{"play", "--headless", "--size", "320x180", "--duration", "60",
                                                            "--input-ipc-server", sock_},
                                   "", dir_);
  ASSERT_TRUE(ipc_.connect(sock_)) << run_->output();
  wait_playing();
  ok({"set_property", "pause", true});
  const double t = ok({"get_property", "time-pos"}).get<double>();
  ok({"set_property", "mode", "clahe"});
  EXPECT_EQ(ok({"get_property", "mode"}), "clahe");
  EXPECT_NEAR(ok({"get_property", "time-pos"}).get<double>(), t, 1e-9);
  EXPECT_EQ(ipc_.command({"get_property", "fullscreen"})["error"], "property unavailable");
  EXPECT_EQ(ipc_.command({"screenshot-to-file", dir_ + "/x.png"})["error"], "error running command");
  EXPECT_EQ(quit(), 0) << run_->output();
  EXPECT_NE(run_->output().find("histeq play: done in"), std::string::npos) << run_->output();
}

}  // namespace
}  // namespace histeq::test
