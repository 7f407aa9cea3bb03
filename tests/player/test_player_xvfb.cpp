// The player window end to end, under Xvfb with Mesa (no GPU needed): the test starts its own X
// server (Xvfb -displayfd picks a free display number and says which), runs `histeq play` on the
// built-in source or on clips it writes, drives it with --keys (the same path as the keyboard),
// and checks the PNG screenshots: their size, a picture that is not uniform, the overlay region
// changing when the overlay is toggled (and nothing else), the before/after halves of the split
// view; and, through --stats-json, kernels switched live with no frame lost, seeking, opening a
// file and a background export. Skipped only when Xvfb is not installed (scripts/setup.sh
// installs it, so CI runs these).
#include "tests/player/harness.h"

namespace histeq::test {
namespace {

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
  EXPECT_GT(stats(p, kLumaPanel).distinct, 50u);
}

TEST_F(PlayerWindow, TheOverlayAndTheHelpPanelChangeOnlyTheirRegions) {
  // Paused on the first frame, so that only the overlay changes between the shots (Ctrl+s: the
  // window, overlay included; the keys' OSD lines stay clear of the regions compared).
  play({"--size", "640x360", "--max-speed", "--frames", "8", "--keys", "space,3:i,4:Ctrl+s,5:TAB,6:Ctrl+s,7:h,8:Ctrl+s"});
  const Png with = png(shot(dir_, 4)), without = png(shot(dir_, 6)), help = png(shot(dir_, 8));
  ASSERT_FALSE(with.rgb.empty() || without.rgb.empty() || help.rgb.empty());
  EXPECT_GT(mean_abs_diff(with, without, kMainPanel), 15.0) << "the main panel did not go";
  EXPECT_GT(mean_abs_diff(with, without, kTimingPanel), 15.0) << "the statistics panel (i) did not go";
  EXPECT_GT(mean_abs_diff(with, without, kLumaPanel), 15.0) << "the luma panel did not go";
  EXPECT_LT(mean_abs_diff(with, without, kMiddle), 0.5) << "the video changed while paused";
  // The keys panel is in the middle, on its own (the overlay stays hidden).
  EXPECT_GT(mean_abs_diff(without, help, Rect{540, 260, 740, 460}), 15.0) << "no keys panel";
  // Left of it the picture is untouched (the panel is centred; its two columns of keys reach to
  // about x = 240 of the 1280-wide window).
  EXPECT_LT(mean_abs_diff(without, help, Rect{24, 60, 200, 300}), 0.5);
}

TEST_F(PlayerWindow, TheSplitViewShowsTheInputLeftAndTheOutputRight) {
  // Plain equalization: its contrast gain is what the halves are told apart by (the defaults limit it).
  play({"--size", "1280x720", "--max-speed", "--no-overlay", "--plain", "--frames", "6", "--keys", "space,3:s,4:b,5:s"});
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

// The picture-quality keys (g, c, t, C, a) while playing: each change is on screen from a later
// frame, in order, and no frame is lost.
TEST_F(PlayerWindow, QualityControlsApplyLiveWithNoFrameLost) {
  const std::string js = dir_ + "/q.json";
  const Outcome r = play({"--size", "320x180", "--max-speed", "--frames", "70", "--keys", "8:g,18:c,28:t,38:C,48:a,58:a", "--stats-json", js});
  // The settings on screen, in the order they came (the player prints each change once).
  std::vector<std::string> seen;
  for (size_t at = r.out.find("histeq play: "); at != std::string::npos; at = r.out.find("histeq play: ", at + 1)) {
    const size_t end = r.out.find('\n', at);
    const std::string line = r.out.substr(at, end - at);
    if (line.find(" from frame ") != std::string::npos && line.find("kernel ") == std::string::npos) seen.push_back(line);
  }
  ASSERT_EQ(seen.size(), 7u) << r.out;
  EXPECT_NE(seen[0].find("global, clip 1.1, temporal 0.35 s"), std::string::npos) << seen[0];
  EXPECT_NE(seen[1].find("clahe 8x8"), std::string::npos) << seen[1];
  EXPECT_NE(seen[2].find("chroma kept"), std::string::npos) << seen[2];
  EXPECT_NE(seen[3].find("no temporal"), std::string::npos) << seen[3];
  EXPECT_NE(seen[4].find("no clip"), std::string::npos) << seen[4];
  EXPECT_NE(seen[5].find(": plain from frame"), std::string::npos) << seen[5];
  auto desc = [](const std::string& line) { return line.substr(0, line.find(" from frame ")); };
  EXPECT_EQ(desc(seen[6]), desc(seen[4])) << "a twice: back to the settings before";
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

// --- sound (SDL's disk driver writes what the device played to a file) -----------------------------


// What the device played (float samples, interleaved) and the player's record of it.
struct Played {
  int rate = 0, channels = 0;
  std::vector<float> left;          // channel 0 of every sample frame the callback gave, in order
  struct Callback {
    int64_t ns, first, frames, timed;
    double media_s;
  };
  std::vector<Callback> callbacks;
  std::string error;                // why the file and the record do not fit, if they do not
  // The sample index's media time and the wall time the device took it (-1: not timed).
  bool locate(int64_t i, double& media_s, double& ns) const {
    size_t lo = 0, hi = callbacks.size();
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      (callbacks[mid].first <= i ? lo : hi) = mid;
    }
    const Callback& c = callbacks[lo];
    if (i < c.first || i >= c.first + c.timed) return false;
    media_s = c.media_s + static_cast<double>(i - c.first) / rate;
    ns = static_cast<double>(c.ns) + static_cast<double>(i - c.first) * 1e9 / rate;
    return true;
  }
  float peak(const Callback& c) const {
    float m = 0;
    for (int64_t k = c.first; k < c.first + c.frames && k < static_cast<int64_t>(left.size()); ++k) m = std::max(m, std::fabs(left[k]));
    return m;
  }
};

// Reads the disk driver's file against --stats-json's record. SDL may write silence before the
// first callback (while the device starts): the lead-in is the whole number of device periods
// for which every callback the record calls silent (nothing timed) is silent in the file and the
// first one that played sound is not (the clips have sound from their first sample).
Played read_played(const std::string& raw, const nlohmann::json& stats) {
  Played p;
  const auto& a = stats["audio"];
  if (!a.value("playing", false)) {
    p.error = "no sound played: " + a.value("note", std::string());
    return p;
  }
  p.rate = a["rate"];
  p.channels = a["channels"];
  for (const auto& c : a["callbacks"])
    p.callbacks.push_back({c[0].get<int64_t>(), c[1].get<int64_t>(), c[2].get<int64_t>(), c[3].get<int64_t>(), c[4].get<double>()});
  std::ifstream g(raw, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(g)), std::istreambuf_iterator<char>());
  const size_t frames = bytes.size() / (sizeof(float) * static_cast<size_t>(p.channels));
  std::vector<float> left(frames);
  for (size_t i = 0; i < frames; ++i) std::memcpy(&left[i], bytes.data() + i * sizeof(float) * p.channels, sizeof(float));
  const int64_t total = a["device_samples"];
  if (p.callbacks.empty() || static_cast<int64_t>(frames) < total) {
    p.error = "the file holds " + std::to_string(frames) + " sample frames, the record " + std::to_string(total);
    return p;
  }
  const int64_t period = p.callbacks.front().frames;
  auto silent = [&](int64_t from, int64_t n) {
    for (int64_t k = 0; k < n; ++k)
      if (left[static_cast<size_t>(from + k)] != 0.f) return false;
    return true;
  };
  const auto first_sound = std::find_if(p.callbacks.begin(), p.callbacks.end(), [](const Played::Callback& c) { return c.timed > 0; });
  for (int64_t lead = 0; lead <= static_cast<int64_t>(frames) - total; lead += period) {
    bool fits = first_sound == p.callbacks.end() || !silent(lead + first_sound->first, first_sound->frames);
    for (const auto& c : p.callbacks) {
      if (!fits) break;
      if (c.timed == 0) fits = silent(lead + c.first, c.frames);
    }
    if (fits) {
      p.left.assign(left.begin() + lead, left.begin() + lead + total);
      return p;
    }
  }
  p.error = "no lead-in makes the file fit the record of the callbacks";
  return p;
}

// Where each burst louder than `threshold` begins (sample indexes), bursts at least `gap` apart.
std::vector<int64_t> bursts(const std::vector<float>& v, float threshold, int64_t gap) {
  std::vector<int64_t> out;
  int64_t last = -gap - 1;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::fabs(v[i]) <= threshold) continue;
    if (static_cast<int64_t>(i) - last > gap) out.push_back(static_cast<int64_t>(i));
    last = static_cast<int64_t>(i);
  }
  return out;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[static_cast<size_t>(std::min<double>(v.size() - 1, std::ceil(q * v.size()) - 1))];
}

// The measurement: a clip with a flash and a beep every second, played for 60 s at its
// own pace. For every second, when the flash reached the screen (after the swap) minus when the
// device took the beep's first sample (the disk file says which sample is the beep; the
// callback record says when the device took it): the A/V offset.
TEST_F(PlayerWindow, SoundAndPictureStayWithinAFrameOverAMinute) {
  const std::string clip = ffmpeg_clip(dir_ + "/sync.mp4",
      "-f lavfi -i \"color=c=0x202020:s=320x180:r=30:d=60,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='lt(mod(t\\,1)\\,0.03)'\" "
      "-f lavfi -i \"aevalsrc='0.05*sin(2*PI*220*t)+if(lt(mod(t\\,1)\\,0.05)\\,0.8*sin(2*PI*1000*t)\\,0)':s=48000:d=60\" "
      "-c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a aac -b:a 128k -shortest");
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI to make the clip";
  const std::string raw = dir_ + "/played.raw", js = dir_ + "/s.json";
  const Outcome r = play({clip, "--no-overlay", "--exit-at-end", "--stats-json", js},
                         {"SDL_AUDIODRIVER=disk", "SDL_DISKAUDIOFILE=" + raw}, "640x360");
  const nlohmann::json j = json(js);
  const Played p = read_played(raw, j);
  ASSERT_TRUE(p.error.empty()) << p.error << "\n" << r.out;
  const double frame_ms = 1000.0 / 30;
  std::map<int, int64_t> flash_ns;  // second -> when its white frame reached the screen
  std::set<int> starved;            // seconds whose flash took more than half a frame to draw
  for (const auto& f : j["frames"]) {
    const double t = f["time_s"];
    if (std::fabs(t - std::round(t)) > 1e-6 || !f.contains("presented_ns")) continue;
    flash_ns[static_cast<int>(std::lround(t))] = f["presented_ns"];
    if (f.value("present", 0.0) > frame_ms / 2) starved.insert(static_cast<int>(std::lround(t)));
  }
  std::vector<double> offsets, abs_offsets, all;
  for (int64_t i : bursts(p.left, 0.4f, p.rate / 2)) {
    double media = 0, ns = 0;
    ASSERT_TRUE(p.locate(i, media, ns)) << "a beep in samples the record calls silent, at " << i;
    const int second = static_cast<int>(std::lround(media));
    // The first beep is the start itself (and AAC's first frame blurs its onset).
    if (second == 0) continue;
    // The beep the device played is the one of this second of the clip: the sound's timeline is right.
    EXPECT_NEAR(media, second, 0.002) << "sample " << i;
    if (!flash_ns.count(second)) continue;
    const double ms = (static_cast<double>(flash_ns[second]) - ns) / 1e6;
    all.push_back(std::fabs(ms));
    if (starved.count(second)) continue;  // the machine could not draw in time: not the sync's doing
    offsets.push_back(ms);
    abs_offsets.push_back(std::fabs(ms));
  }
  ASSERT_GE(all.size(), 50u) << "flashes shown with their beep, of 59\n" << r.out;
  ASSERT_GE(offsets.size(), 40u) << "seconds whose flash was drawn in time: the machine is too busy to measure\n" << r.out;
  const double med = percentile(offsets, 0.5), p95 = percentile(abs_offsets, 0.95), p99 = percentile(abs_offsets, 0.99);
  const double worst = *std::max_element(abs_offsets.begin(), abs_offsets.end());
  const double lo = *std::min_element(offsets.begin(), offsets.end()), hi = *std::max_element(offsets.begin(), offsets.end());
  std::string load = "?";  // the measurement depends on the machine's spare time: say how busy it was
  if (std::ifstream la("/proc/loadavg"); la) std::getline(la, load);
  std::printf("A/V offset (flash on screen - beep played) over %zu seconds: median %+.1f ms, |offset| p95 %.1f, p99 %.1f, max %.1f ms "
              "(range %+.1f .. %+.1f); %zu more seconds whose draw was starved (max with them %.1f ms); frame %.1f ms; "
              "%d dropped, %lld held; driver %s; load average %s\n",
              offsets.size(), med, p95, p99, worst, lo, hi, all.size() - offsets.size(), *std::max_element(all.begin(), all.end()),
              frame_ms, static_cast<int>(j["counters"]["dropped_behind"]),
              static_cast<long long>(j["audio"]["held_frames"].get<int64_t>()), j["audio"]["driver"].get<std::string>().c_str(),
              load.c_str());
  RecordProperty("av_offset_median_ms", std::to_string(med));
  RecordProperty("av_offset_p99_ms", std::to_string(p99));
  RecordProperty("av_offset_max_ms", std::to_string(worst));
  // Within a frame (p95; the worst second is reported): on a machine whose cores are taken by
  // others, frames also reach the player late, and are shown up to a frame late rather than dropped.
  EXPECT_LE(std::fabs(med), frame_ms / 2);
  EXPECT_LE(p95, frame_ms) << "within a frame";
}

// A 440 Hz tone whose loudness tells the second it belongs to: 0.05 in the first second, 0.10 in
// the next, ... (stereo PCM: no codec and no down- or upmix between the clip and what is played).
std::string counting_clip(const std::string& dir, double seconds, double audio_seconds = -1) {
  char a[512];
  std::snprintf(a, sizeof(a),
                "-f lavfi -i \"testsrc2=s=320x180:r=30:d=%g\" "
                "-f lavfi -i \"aevalsrc='0.05*(1+floor(t))*sin(2*PI*440*t)|0.05*(1+floor(t))*sin(2*PI*440*t)':s=48000:d=%g\" "
                "-c:v libx264 -preset ultrafast -pix_fmt yuv420p -c:a pcm_s16le",
                seconds, audio_seconds > 0 ? audio_seconds : seconds);
  return ffmpeg_clip(dir + "/count.mkv", a);
}

// Every timed run of samples holds the loudness of the second the record says it is: the sound
// played is the sound of the media time the player thinks it is, also after seeks and steps.
void expect_timeline_matches_the_sound(const Played& p, double audio_s) {
  int checked = 0;
  for (const auto& c : p.callbacks) {
    if (c.timed != c.frames || c.timed == 0) continue;
    const double end = c.media_s + static_cast<double>(c.frames) / p.rate;
    if (std::floor(c.media_s) != std::floor(end - 1e-9) || end > audio_s) continue;  // straddles a second, or past the sound
    const float want = 0.05f * static_cast<float>(1 + std::floor(c.media_s));
    EXPECT_NEAR(p.peak(c), want, 0.006) << "at media " << c.media_s;
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

TEST_F(PlayerWindow, MuteAndVolumeKeysChangeWhatIsPlayed) {
  const std::string clip = counting_clip(dir_, 8);
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI to make the clip";
  const std::string raw = dir_ + "/played.raw", js = dir_ + "/s.json";
  const Outcome r = play({clip, "--frames", "200", "--keys", "40:m,80:m,120:9,121:9,122:0,123:9,124:9,125:9", "--stats-json", js},
                         {"SDL_AUDIODRIVER=disk", "SDL_DISKAUDIOFILE=" + raw}, "640x360");
  const nlohmann::json j = json(js);
  EXPECT_NEAR(j["audio"]["volume"].get<double>(), 0.8, 1e-9);
  EXPECT_FALSE(j["audio"]["muted"].get<bool>());
  const Played p = read_played(raw, j);
  ASSERT_TRUE(p.error.empty()) << p.error << "\n" << r.out;
  // The loudness played over the loudness of the second: 1, then 0 (muted), 1 again, then 0.8.
  std::vector<double> gains;
  for (const auto& c : p.callbacks) {
    // Past the clip's 8 s the timeline runs on through silence (a loaded machine draws the 200
    // window frames slower than that): not the volume's doing.
    if (c.timed != c.frames || c.timed == 0 || c.media_s + static_cast<double>(c.frames) / p.rate > 8) continue;
    const double second = std::floor(c.media_s);
    if (second != std::floor(c.media_s + static_cast<double>(c.frames) / p.rate - 1e-9)) continue;
    const double g = p.peak(c) / (0.05 * (1 + second));
    if (gains.empty() || std::fabs(g - gains.back()) > 0.02) gains.push_back(std::round(g * 100) / 100);
  }
  ASSERT_GE(gains.size(), 4u) << r.out;
  EXPECT_NEAR(gains.front(), 1.0, 0.02);
  EXPECT_NEAR(gains[1], 0.0, 0.02) << "muted";
  EXPECT_NEAR(gains[2], 1.0, 0.02) << "unmuted";
  EXPECT_NEAR(gains.back(), 0.8, 0.02) << "9 9 0 9 9 9: five 5% steps down, one up";
  for (size_t i = 3; i < gains.size(); ++i) EXPECT_LE(gains[i], 1.05) << i;
}

TEST_F(PlayerWindow, PauseSeekAndStepKeepTheSoundWithThePicture) {
  const std::string clip = counting_clip(dir_, 10);
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI to make the clip";
  const std::string raw = dir_ + "/played.raw", js = dir_ + "/s.json";
  // Play, pause for 40 window frames, play, seek 5 s on, step three frames (paused), play. The keys
  // come at window frames, the video at its own pace: on a starved machine (the CI's 2 cores with a
  // build beside) a key can land before the frame it acts on has come, so a play whose timeline
  // misses one of the four runs of sound is played again (3 plays at most); what the last one shows
  // is asserted, and every earlier one's problem is printed.
  std::string problems;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const Outcome r = play({clip, "--frames", "260", "--keys",
                            "30:space,70:space,100:right,150:.,151:.,152:.,170:space", "--stats-json", js},
                           {"SDL_AUDIODRIVER=disk", "SDL_DISKAUDIOFILE=" + raw}, "640x360");
    const nlohmann::json j = json(js);
    const Played p = read_played(raw, j);
    ASSERT_TRUE(p.error.empty()) << p.error << "\n" << r.out;
    // The runs of sound: where each starts (media time) and the silences between them.
    struct Run {
      double from, to;
      int64_t ns;
      int silent_before;
    };
    std::vector<Run> runs;
    int silent = 0;
    for (const auto& c : p.callbacks) {
      if (c.timed == 0) {
        ++silent;
        continue;
      }
      const double end = c.media_s + static_cast<double>(c.timed) / p.rate;
      if (!runs.empty() && silent == 0 && std::fabs(c.media_s - runs.back().to) < 1e-6) runs.back().to = end;
      else runs.push_back({c.media_s, end, c.ns, silent});
      silent = 0;
    }
    // start, after the pause (the same place), after the seek, after the steps.
    std::string why;
    if (runs.size() < 4) {
      why = std::to_string(runs.size()) + " runs of sound, not 4";
    } else if (!(runs[3].from > runs[2].to)) {
      why = "after the steps the sound did not move on with the picture (" + std::to_string(runs[3].from) + " vs " +
            std::to_string(runs[2].to) + ")";
    }
    if (!why.empty() && attempt < 3) {
      problems += "play " + std::to_string(attempt) + ": " + why + "; " + r.out.substr(r.out.rfind("histeq play: window closed") == std::string::npos ? r.out.size() : r.out.rfind("histeq play: window closed")) + "\n";
      continue;
    }
    if (!problems.empty()) std::cout << "played again after: " << problems;
    expect_timeline_matches_the_sound(p, 10);
    ASSERT_GE(runs.size(), 4u) << r.out << "\n" << problems;
    EXPECT_NEAR(runs[1].from, runs[0].to, 1e-6) << "a pause resumes where the sound stopped";
    EXPECT_GE(runs[1].silent_before, 20) << "silence while paused";
    EXPECT_GT(runs[2].from - runs[1].to, 4.0) << "the seek moved the sound 5 s on";
    EXPECT_GT(runs[3].from, runs[2].to) << "after the steps the sound moved on with the picture\n" << problems;
    // The sound (re)starts at the first, after the seek and after the steps at the time of a frame
    // shown right then: sound and picture start together. (A pause resumes both where they were.)
    for (size_t k : {0, 2, 3}) {
      bool found = false;
      for (const auto& f : j["frames"]) {
        if (!f.contains("presented_ns") || std::fabs(f["time_s"].get<double>() - runs[k].from) > 1e-6) continue;
        found = true;
        EXPECT_NEAR((runs[k].ns - f["presented_ns"].get<int64_t>()) / 1e6, 0, 60) << "run " << k;
      }
      EXPECT_TRUE(found) << "no frame shown at " << runs[k].from << " (run " << k << ")";
    }
    break;
  }
}

// ] five times: 1.1^5 = 1.61x. The sound keeps its pitch (a 440 Hz tone stays 440 Hz: FFmpeg's
// atempo, not a resampling, which would raise it to 708 Hz) and runs 1.61 times as fast on the
// timeline (each device sample stands for 1.61 of media); the picture keeps to it.
TEST_F(PlayerWindow, FasterPlaybackKeepsThePitch) {
  const std::string clip = ffmpeg_clip(dir_ + "/tone.mkv",
      "-f lavfi -i \"testsrc2=s=320x180:r=30:d=12\" -f lavfi -i \"sine=f=440:sample_rate=48000:d=12\" -c:v libx264 "
      "-preset ultrafast -pix_fmt yuv420p -c:a pcm_s16le -ac 2");
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI to make the clip";
  const std::string raw = dir_ + "/played.raw", js = dir_ + "/s.json";
  const Outcome r = play({clip, "--frames", "300", "--keys", "30:],31:],32:],33:],34:]", "--stats-json", js},
                         {"SDL_AUDIODRIVER=disk", "SDL_DISKAUDIOFILE=" + raw}, "640x360");
  const nlohmann::json j = json(js);
  const Played p = read_played(raw, j);
  ASSERT_TRUE(p.error.empty()) << p.error << "\n" << r.out;
  // The callbacks after the speed change: fully timed runs whose media steps by 1.61x theirs.
  const double speed = std::pow(1.1, 5);
  int64_t crossings = 0, samples = 0;
  double media = 0;
  for (size_t i = 0; i + 1 < p.callbacks.size(); ++i) {
    const auto& c = p.callbacks[i];
    const auto& n = p.callbacks[i + 1];
    // Whole runs of the tone: not the silence past the clip's end (the timeline runs on through it).
    if (c.timed != c.frames || n.timed == 0 || c.media_s < 1.5 || c.media_s > 11.5 || p.peak(c) < 0.05) continue;
    const double step = (n.media_s - c.media_s) / (static_cast<double>(c.frames) / p.rate);
    if (std::fabs(step - speed) > 0.01) continue;  // before the change, or a restart of the sound
    for (int64_t k = c.first + 1; k < c.first + c.frames; ++k) crossings += (p.left[k - 1] < 0) != (p.left[k] < 0);
    samples += c.frames;
    media += n.media_s - c.media_s;
  }
  ASSERT_GT(samples, p.rate) << "less than a second of sound played at 1.61x\n" << r.out;
  const double hz = crossings / 2.0 / (static_cast<double>(samples) / p.rate);
  EXPECT_NEAR(hz, 440, 440 * 0.03) << "the pitch moved";
  EXPECT_NEAR(media / (static_cast<double>(samples) / p.rate), speed, 0.01);
}

TEST_F(PlayerWindow, TheSoundPlaysToItsEndAndNoAudioOrHeadlessPlayNone) {
  const std::string clip = counting_clip(dir_, 1.5, 2.5);  // the sound lasts a second longer than the picture
  if (clip.empty()) GTEST_SKIP() << "no ffmpeg CLI to make the clip";
  const std::string raw = dir_ + "/played.raw", js = dir_ + "/s.json";
  const auto t0 = Clock::now();
  Outcome r = play({clip, "--exit-at-end", "--stats-json", js}, {"SDL_AUDIODRIVER=disk", "SDL_DISKAUDIOFILE=" + raw}, "640x360");
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - t0).count(), 2.4) << "as mpv: to the end of the sound too";
  nlohmann::json j = json(js);
  Played p = read_played(raw, j);
  ASSERT_TRUE(p.error.empty()) << p.error << "\n" << r.out;
  double heard = 0;
  for (const auto& c : p.callbacks)
    if (c.timed > 0 && p.peak(c) > 0) heard = std::max(heard, c.media_s + static_cast<double>(c.timed) / p.rate);
  EXPECT_NEAR(heard, 2.5, 0.05) << r.out;
  expect_timeline_matches_the_sound(p, 2.5);
  // --no-audio: no device at all.
  std::remove(raw.c_str());
  r = play({clip, "--exit-at-end", "--no-audio", "--stats-json", js}, {"SDL_AUDIODRIVER=disk", "SDL_DISKAUDIOFILE=" + raw}, "640x360");
  j = json(js);
  EXPECT_FALSE(j["audio"]["playing"].get<bool>());
  EXPECT_NE(j["audio"]["note"].get<std::string>().find("--no-audio"), std::string::npos);
  struct stat st {};
  EXPECT_NE(::stat(raw.c_str(), &st), 0) << "--no-audio opened a sound device";
  // Headless play keeps no audio device.
  r = histeq({"play", "--headless", clip}, xvfb_->display(), 60, {"SDL_AUDIODRIVER=disk", "SDL_DISKAUDIOFILE=" + raw});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(::stat(raw.c_str(), &st), 0) << "headless play opened a sound device";
}

}  // namespace
}  // namespace histeq::test
