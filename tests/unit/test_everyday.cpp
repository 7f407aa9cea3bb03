// Everyday use, on the CPU: times as ffmpeg takes them, trimmed exports (frame-exact),
// the player's sound source (decoded, resampled, laid on a timeline, sought to the sample) and
// its audio clock and sync rule, batch planning (folders, names, jobs) and a batch with a bad file.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "app/player/audio_clock.h"
#include "core/image/fork_join.h"
#include "core/pipeline/batch.h"
#include "core/pipeline/export.h"
#include "core/video/audio_source.h"
#include "core/video/file_source.h"
#include "core/video/media_time.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

video::SyntheticOptions clip(int frames, double fps = 30) {
  video::SyntheticOptions o;
  o.width = 64;
  o.height = 36;
  o.fps = fps;
  o.duration_s = frames / fps;
  return o;
}

// --- times -------------------------------------------------------------------------------------

TEST(MediaTime, ParsesWhatFfmpegTakes) {
  const std::pair<const char*, double> good[] = {{"90", 90},       {"12.5", 12.5},  {"1:30", 90},      {"00:01:30.250", 90.25},
                                                 {"1:00:00", 3600}, {"500ms", 0.5}, {"0", 0},          {"2.000001", 2.000001}};
  for (const auto& [text, want] : good) {
    auto t = video::parse_time(text, "--start");
    ASSERT_TRUE(t.is_ok()) << text << ": " << t.status().message();
    EXPECT_NEAR(*t, want, 1e-9) << text;
  }
  for (const char* bad : {"", "abc", "1:2:3:4", "12,5", "-3", "1:xx"}) {
    auto t = video::parse_time(bad, "--start");
    ASSERT_FALSE(t.is_ok()) << bad;
    EXPECT_EQ(t.status().message().rfind("--start: '", 0), 0u) << t.status().message();
  }
  auto r = video::parse_time_range("1:00", "30", "");
  ASSERT_TRUE(r.is_ok());
  EXPECT_DOUBLE_EQ(r->start_s, 60);
  EXPECT_DOUBLE_EQ(r->end_s, 90);
  EXPECT_DOUBLE_EQ(r->length(200), 30);
  r = video::parse_time_range("10", "", "00:00:12.5");
  ASSERT_TRUE(r.is_ok());
  EXPECT_DOUBLE_EQ(r->end_s, 12.5);
  EXPECT_DOUBLE_EQ(video::parse_time_range("10", "", "")->length(25), 15);
  EXPECT_FALSE(video::parse_time_range("", "", "").value().trimmed());
  EXPECT_FALSE(video::parse_time_range("", "5", "6").is_ok());   // both
  EXPECT_FALSE(video::parse_time_range("10", "", "9").is_ok());  // end before start
  EXPECT_FALSE(video::parse_time_range("", "0", "").is_ok());    // nothing to export
  const Status past = video::check_time_range(*video::parse_time_range("12", "", ""), 10, "in.mp4");
  EXPECT_NE(past.message().find("in.mp4: --start 12.000 s is at or past the end"), std::string::npos) << past.message();
  EXPECT_TRUE(video::check_time_range(*video::parse_time_range("12", "", ""), 0, "live").is_ok());
}

// --- trimming ----------------------------------------------------------------------------------

class Trim : public ::testing::Test {
 protected:
  void SetUp() override {
    in_ = temp_path("trim-in.mkv");
    out_ = temp_path("trim-out.mkv");
    ASSERT_TRUE(write_synthetic_clip(in_, clip(90)).is_ok());
    auto all = read_frames(in_);
    ASSERT_TRUE(all.is_ok());
    all_ = std::move(all.value());
    ASSERT_EQ(all_.size(), 90u);
  }
  void TearDown() override {
    std::remove(in_.c_str());
    std::remove(out_.c_str());
  }
  // A lossless passthrough export of the range: the output's frames are the input's, unchanged.
  std::vector<FrameCopy> cut(double start, double end) {
    pipeline::ExportOptions o;
    o.input = in_;
    o.output = out_;
    o.overwrite = true;
    o.codec = "ffv1";
    o.pipeline.equalizer.passthrough = true;
    o.range.start_s = start;
    o.range.end_s = end;
    auto x = pipeline::Exporter::open(o);
    EXPECT_TRUE(x.is_ok()) << x.status().to_string();
    if (!x.is_ok()) return {};
    std::atomic<bool> stop{false};
    auto r = (*x)->run(stop, nullptr, nullptr);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    auto got = read_frames(out_);
    EXPECT_TRUE(got.is_ok());
    return got.is_ok() ? std::move(got.value()) : std::vector<FrameCopy>{};
  }
  std::string in_, out_;
  std::vector<FrameCopy> all_;
};

TEST_F(Trim, ExportsExactlyTheFramesOfTheRangeFromZero) {
  auto got = cut(1.0, 2.0);  // frames 30..59
  ASSERT_EQ(got.size(), 30u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == all_[30 + i]) << "frame " << i;
  EXPECT_NEAR(got.front().time_s, 0.0, 1e-9);
  // Between two frames: the first one at or after the start (frame 31 at 1.0333 s), and none at
  // or after the end (frame 45 at 1.5 s is out).
  got = cut(1.01, 1.5);
  ASSERT_EQ(got.size(), 14u);
  EXPECT_TRUE(got.front() == all_[31]);
  EXPECT_TRUE(got.back() == all_[44]);
  // To the end.
  got = cut(2.5, 0);
  ASSERT_EQ(got.size(), 15u);
  EXPECT_TRUE(got.back() == all_[89]);
}

TEST_F(Trim, AStartPastTheEndIsAnError) {
  pipeline::ExportOptions o;
  o.input = in_;
  o.output = out_;
  o.codec = "ffv1";
  o.pipeline.equalizer.cpu = true;
  o.range.start_s = 4;
  auto x = pipeline::Exporter::open(o);
  ASSERT_FALSE(x.is_ok());
  EXPECT_NE(x.status().message().find("at or past the end of the input (3.000 s long)"), std::string::npos) << x.status().message();
  EXPECT_FALSE(exists(out_));
}

TEST(FileSeekExact, ATimeBetweenFramesLandsOnTheLaterOne) {
  const std::string path = temp_path("exact.mkv");
  ASSERT_TRUE(write_synthetic_clip(path, clip(30)).is_ok());
  auto src = video::FileSource::open(path);
  ASSERT_TRUE(src.is_ok());
  auto pool = video::FramePool::create((*src)->info().format, MemoryKind::host);
  for (double t : {0.34, 0.3334, 0.349, 0.5}) {
    ASSERT_TRUE((*src)->seek(t).is_ok());
    auto f = (*src)->next(**pool);
    ASSERT_TRUE(f.is_ok() && f.value());
    EXPECT_GE(f.value()->time_s + 1e-9, t) << t;
    EXPECT_LT(f.value()->time_s, t + 1 / 30.0 + 0.001) << t;  // Matroska stores milliseconds
  }
  EXPECT_NEAR((*src)->time_origin_s(), 0.0, 1e-9);
  std::remove(path.c_str());
}

// --- the player's sound ------------------------------------------------------------------------

// A 16-bit PCM WAV of `seconds` at `rate`, mono: silence with bursts of a 1 kHz tone (20 ms,
// amplitude 0.8) starting at each of `bursts` (seconds).
void write_wav(const std::string& path, int rate, double seconds, const std::vector<double>& bursts) {
  const int n = static_cast<int>(seconds * rate);
  std::vector<int16_t> s(static_cast<size_t>(n), 0);
  for (double b : bursts) {
    const int first = static_cast<int>(std::lround(b * rate));
    for (int i = 0; i < rate / 50 && first + i < n; ++i)
      s[static_cast<size_t>(first + i)] = static_cast<int16_t>(std::lround(0.8 * 32767 * std::sin(2 * M_PI * 1000.0 * i / rate + M_PI / 2)));
  }
  std::ofstream f(path, std::ios::binary);
  auto u32 = [&](uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
  f.write("RIFF", 4);
  u32(36 + 2 * static_cast<uint32_t>(n));
  f.write("WAVEfmt ", 8);
  u32(16);
  u16(1);  // PCM
  u16(1);  // mono
  u32(static_cast<uint32_t>(rate));
  u32(static_cast<uint32_t>(rate) * 2);
  u16(2);
  u16(16);
  f.write("data", 4);
  u32(2 * static_cast<uint32_t>(n));
  f.write(reinterpret_cast<const char*>(s.data()), static_cast<std::streamsize>(s.size() * 2));
}

// The times (seconds from `from`) where bursts begin in interleaved stereo samples at `rate`.
std::vector<double> onsets(const std::vector<float>& v, int rate, double from) {
  std::vector<double> out;
  int64_t last = -1000000;
  for (size_t i = 0; i < v.size() / 2; ++i) {
    if (std::fabs(v[2 * i]) < 0.4 || std::fabs(v[2 * i + 1]) < 0.4) continue;
    if (static_cast<int64_t>(i) - last > rate / 10) out.push_back(from + static_cast<double>(i) / rate);
    last = static_cast<int64_t>(i);
  }
  return out;
}

std::vector<float> read_all(video::AudioSource& a) {
  std::vector<float> v;
  for (;;) {
    auto r = a.read(v, 1000);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (!r.is_ok() || *r == 0) break;
  }
  return v;
}

TEST(AudioSource, ResamplesAndSeeksToTheSample) {
  const std::string path = temp_path("bursts.wav");
  write_wav(path, 44100, 3.0, {0.5, 1.25, 2.5});
  auto a = video::AudioSource::open(path, {48000, 2});
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  EXPECT_NE((*a)->info().description.find("pcm_s16le 44.1 kHz mono"), std::string::npos) << (*a)->info().description;
  ASSERT_TRUE((*a)->seek(0).is_ok());
  std::vector<float> v = read_all(**a);
  EXPECT_NEAR(static_cast<double>(v.size()) / 2 / 48000, 3.0, 2e-3);  // 44.1 kHz became 48 kHz, all of it
  const double tol = 4.0 / 48000;  // the resampler's filter spreads an edge over a few samples
  auto on = onsets(v, 48000, 0);
  ASSERT_EQ(on.size(), 3u);
  EXPECT_NEAR(on[0], 0.5, tol);
  EXPECT_NEAR(on[1], 1.25, tol);
  EXPECT_NEAR(on[2], 2.5, tol);
  EXPECT_TRUE((*a)->ended());
  // A seek lands on the sample: the bursts keep their times, whatever the target.
  for (double t : {1.0, 1.2, 0.49}) {
    ASSERT_TRUE((*a)->seek(t).is_ok());
    EXPECT_DOUBLE_EQ((*a)->position_s(), t);
    v = read_all(**a);
    on = onsets(v, 48000, t);
    ASSERT_FALSE(on.empty()) << t;
    EXPECT_NEAR(on.front(), t <= 0.5 ? 0.5 : t <= 1.25 ? 1.25 : 2.5, tol) << t;
    EXPECT_NEAR(static_cast<double>(v.size()) / 2 / 48000, 3.0 - t, 2e-3) << t;
  }
  // Past the end: nothing.
  ASSERT_TRUE((*a)->seek(5).is_ok());
  EXPECT_TRUE(read_all(**a).empty());
  std::remove(path.c_str());
}

TEST(AudioSource, FilesWithoutSoundSaySo) {
  const std::string path = temp_path("silent.mkv");
  ASSERT_TRUE(write_synthetic_clip(path, clip(10)).is_ok());
  auto a = video::AudioSource::open(path, {48000, 2});
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().code(), Code::not_found);
  EXPECT_NE(a.status().message().find("no audio stream"), std::string::npos);
  EXPECT_EQ(video::AudioSource::open(temp_path("nope.wav"), {48000, 2}).status().code(), Code::not_found);
  std::remove(path.c_str());
}

TEST(AudioClock, RunsOnWhatTheDeviceTookAndStandsWhenNothingCame) {
  using app::player::AudioClock;
  AudioClock c(48000, 0.010);
  EXPECT_TRUE(std::isnan(c.at(0)));
  c.on_callback(1'000'000'000, 2.0, 480);  // 10 ms of samples from 2.0 s
  EXPECT_NEAR(c.at(1'000'000'000), 1.990, 1e-9);  // less the device's latency
  EXPECT_NEAR(c.at(1'004'000'000), 1.994, 1e-9);
  EXPECT_NEAR(c.at(1'050'000'000), 2.000, 1e-9);  // never past what was handed over
  c.on_callback(1'010'000'000, 2.010, 0);           // an underrun: the clock stands
  EXPECT_NEAR(c.at(1'030'000'000), 2.000, 1e-9);
  c.on_callback(1'040'000'000, 2.010, 480);
  EXPECT_NEAR(c.at(1'045'000'000), 2.005, 1e-9);
  c.on_callback(1'050'000'000, 2.020, 0);  // paused: silence, nothing timed
  EXPECT_NEAR(c.at(1'090'000'000), 2.010, 1e-9);
  c.reset();
  EXPECT_TRUE(std::isnan(c.at(1'100'000'000)));
}

TEST(AudioClock, TheVideoFollowsTheSound) {
  using app::player::SyncAction;
  using app::player::sync_action;
  const double frame = 1 / 30.0;
  EXPECT_EQ(sync_action(1.0, 1.0, frame, 0, true), SyncAction::show);
  EXPECT_EQ(sync_action(1.0, 0.99, frame, 0, true), SyncAction::wait);       // ahead of the sound: wait
  EXPECT_EQ(sync_action(1.0, 0.99, frame, 0.02, true), SyncAction::show);    // within the slack
  EXPECT_EQ(sync_action(1.0, 1.03, frame, 0, true), SyncAction::show);       // late by less than a frame
  EXPECT_EQ(sync_action(1.0, 1.04, frame, 0, true), SyncAction::drop);       // the sound passed it by more
  // ffplay's rule: a late frame goes only when a newer one is ready to take its place; else it
  // is shown late (a slow machine shows a slower picture, not a still one).
  EXPECT_EQ(sync_action(1.0, 1.04, frame, 0, false), SyncAction::show);
  EXPECT_EQ(sync_action(1.0, 9.0, frame, 0, false), SyncAction::show);
}

TEST(AudioClock, AtAnotherSpeedASampleStandsForThatMuchMediaTime) {
  using app::player::AudioClock;
  AudioClock c(48000, 0.010);
  c.on_callback(1'000'000'000, 2.0, 480, 1.5);  // 10 ms of stretched sound: 15 ms of media
  EXPECT_NEAR(c.at(1'000'000'000), 2.0 - 0.015, 1e-9);  // the latency, in media time
  EXPECT_NEAR(c.at(1'004'000'000), 2.0 - 0.015 + 0.006, 1e-9);
  EXPECT_NEAR(c.at(1'050'000'000), 2.0, 1e-9);  // never past what was handed over
}

// --- batches -----------------------------------------------------------------------------------

class Batch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_path("batch");
    in_ = dir_ + "/in";
    out_ = dir_ + "/out";
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(in_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(out_.c_str(), 0755), 0);
  }
  void TearDown() override { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_, in_, out_;
};

TEST_F(Batch, AFolderIsItsVideosInNameOrder) {
  for (const char* n : {"b.mkv", "a.MP4", "notes.txt", ".a.mkv.X1.part", "c.mov"}) std::ofstream(in_ + "/" + n) << "x";
  ASSERT_EQ(::mkdir((in_ + "/sub.mp4").c_str(), 0755), 0);  // a folder named like a video
  auto items = pipeline::plan_batch({in_}, out_);
  ASSERT_TRUE(items.is_ok()) << items.status().to_string();
  ASSERT_EQ(items->size(), 3u);
  EXPECT_EQ((*items)[0].input, in_ + "/a.MP4");
  EXPECT_EQ((*items)[0].output, out_ + "/a.MP4");
  EXPECT_EQ((*items)[1].input, in_ + "/b.mkv");
  EXPECT_EQ((*items)[2].output, out_ + "/c.mov");
  items = pipeline::plan_batch({in_ + "/c.mov", in_}, out_, "mkv");
  ASSERT_FALSE(items.is_ok());  // c.mov twice
  EXPECT_NE(items.status().message().find("would be written here"), std::string::npos);
  items = pipeline::plan_batch({in_ + "/b.mkv"}, out_, ".mp4");
  ASSERT_TRUE(items.is_ok());
  EXPECT_EQ(items->front().output, out_ + "/b.mp4");
  // Into the inputs' own folder: the outputs would replace them.
  items = pipeline::plan_batch({in_}, in_ + "/");
  ASSERT_FALSE(items.is_ok());
  EXPECT_NE(items.status().message().find("is the input"), std::string::npos) << items.status().message();
  EXPECT_EQ(pipeline::plan_batch({out_}, dir_ + "/x").status().code(), Code::not_found);  // no videos
  items = pipeline::plan_batch({in_ + "/missing.mp4"}, out_);  // reported when its turn comes
  ASSERT_TRUE(items.is_ok());
  EXPECT_EQ(items->size(), 1u);
}

TEST(BatchJobs, OnePipelinePerDeviceOrAQuarterOfTheCoresAndTheEncodersShareThem) {
  auto p = pipeline::plan_jobs(0, true, {0, 1}, 16, 10);
  EXPECT_EQ(p.jobs, 2);
  EXPECT_EQ(p.encoder_threads, 8);
  EXPECT_EQ(p.devices, (std::vector<int>{0, 1}));
  p = pipeline::plan_jobs(0, false, {}, 16, 10);
  EXPECT_EQ(p.jobs, 4);
  EXPECT_EQ(p.encoder_threads, 4);
  EXPECT_TRUE(p.devices.empty());
  p = pipeline::plan_jobs(0, false, {}, 2, 10);
  EXPECT_EQ(p.jobs, 1);
  EXPECT_EQ(p.encoder_threads, 0);  // one job: the encoder's own choice
  p = pipeline::plan_jobs(0, false, {}, 64, 3);
  EXPECT_EQ(p.jobs, 3);  // never more jobs than files
  EXPECT_EQ(p.encoder_threads, 21);
  p = pipeline::plan_jobs(5, false, {}, 4, 10);
  EXPECT_EQ(p.jobs, 5);
  EXPECT_EQ(p.encoder_threads, 1);
  EXPECT_GE(image::usable_cores(), 1);
}

TEST(BatchJobs, EachGpuGetsAJobPerNvdecEngineInterleaved) {
  // Two GPUs of seven NVDEC engines (an H100 each), 32 cores: 14 jobs, seven on each, dealt 0,1,0,1...
  auto p = pipeline::plan_jobs(0, true, {0, 1}, 32, 100, {7, 7});
  EXPECT_EQ(p.jobs, 14);
  EXPECT_EQ(p.encoder_threads, 2);
  ASSERT_EQ(p.job_device.size(), 14u);
  EXPECT_EQ(std::count(p.job_device.begin(), p.job_device.end(), 0), 7);
  EXPECT_EQ((std::vector<int>(p.job_device.begin(), p.job_device.begin() + 4)), (std::vector<int>{0, 1, 0, 1}));
  // Few files: still spread over both GPUs.
  p = pipeline::plan_jobs(0, true, {0, 1}, 32, 2, {7, 7});
  EXPECT_EQ(p.job_device, (std::vector<int>{0, 1}));
  // Unequal GPUs (7 and 2 engines): in proportion; the listed order of --device kept.
  p = pipeline::plan_jobs(0, true, {1, 0}, 32, 100, {7, 2});
  EXPECT_EQ(p.jobs, 9);
  EXPECT_EQ(std::count(p.job_device.begin(), p.job_device.end(), 1), 7);
  EXPECT_EQ((std::vector<int>(p.job_device.begin(), p.job_device.begin() + 5)), (std::vector<int>{1, 0, 1, 0, 1}));
  // Engines unknown (software decode, or no NVDEC library): one job a GPU, as before.
  p = pipeline::plan_jobs(0, true, {0, 1, 2}, 32, 100);
  EXPECT_EQ(p.job_device, (std::vector<int>{0, 1, 2}));
  // --jobs given: that many, still dealt over the GPUs in turn.
  p = pipeline::plan_jobs(5, true, {0, 1}, 32, 100, {7, 7});
  EXPECT_EQ(p.job_device, (std::vector<int>{0, 1, 0, 1, 0}));
  // The CPU: no devices.
  EXPECT_TRUE(pipeline::plan_jobs(0, false, {}, 16, 10).job_device.empty());
}

TEST_F(Batch, ABadFileIsReportedAndTheOthersComplete) {
  ASSERT_TRUE(write_synthetic_clip(in_ + "/a.mkv", clip(12)).is_ok());
  std::ofstream(in_ + "/b.mkv") << "not a video at all\n";
  ASSERT_TRUE(write_synthetic_clip(in_ + "/c.mkv", clip(9)).is_ok());
  auto items = pipeline::plan_batch({in_}, out_);
  ASSERT_TRUE(items.is_ok());
  ASSERT_EQ(items->size(), 3u);
  pipeline::ExportOptions base;
  base.codec = "ffv1";
  base.pipeline.equalizer.cpu = true;
  const pipeline::JobPlan plan = pipeline::plan_jobs(2, false, {}, 2, items->size());
  std::set<size_t> started, finished;
  int64_t progress = 0;
  pipeline::BatchCallbacks cb;
  cb.started = [&](size_t i, const pipeline::ExportPlan&, const std::string& temp) {
    started.insert(i);
    EXPECT_TRUE(exists(temp)) << temp;
  };
  cb.progress = [&](size_t, const pipeline::ExportProgress&) { ++progress; };
  cb.finished = [&](size_t i, const pipeline::BatchFileResult&) { finished.insert(i); };
  std::atomic<bool> stop{false};
  const auto results = pipeline::run_batch(*items, base, plan, stop, cb);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].outcome, pipeline::BatchOutcome::ok);
  EXPECT_EQ(results[0].frames_out, 12);
  EXPECT_GT(results[0].output_bytes, 0);
  EXPECT_EQ(results[1].outcome, pipeline::BatchOutcome::failed);
  EXPECT_EQ(results[1].message.rfind(in_ + "/b.mkv: ", 0), 0u) << results[1].message;
  EXPECT_EQ(results[2].outcome, pipeline::BatchOutcome::ok);
  EXPECT_EQ(results[2].frames_out, 9);
  EXPECT_EQ(started, (std::set<size_t>{0, 2}));
  EXPECT_EQ(finished, (std::set<size_t>{0, 1, 2}));
  EXPECT_EQ(progress, 21);
  // No temporary file left; each output with its record of completion (pipeline::sidecar_path).
  EXPECT_EQ(listing(out_), (std::vector<std::string>{".a.mkv.histeq", ".c.mkv.histeq", "a.mkv", "c.mkv"}));
  auto frames = read_frames(out_ + "/c.mkv");
  ASSERT_TRUE(frames.is_ok());
  EXPECT_EQ(frames->size(), 9u);
}

TEST_F(Batch, AStopLeavesTheRestUnstarted) {
  ASSERT_TRUE(write_synthetic_clip(in_ + "/a.mkv", clip(6)).is_ok());
  ASSERT_TRUE(write_synthetic_clip(in_ + "/b.mkv", clip(6)).is_ok());
  auto items = pipeline::plan_batch({in_}, out_);
  ASSERT_TRUE(items.is_ok());
  pipeline::ExportOptions base;
  base.codec = "ffv1";
  base.pipeline.equalizer.cpu = true;
  std::atomic<bool> stop{true};
  const auto results = pipeline::run_batch(*items, base, pipeline::plan_jobs(1, false, {}, 2, 2), stop, {});
  for (const auto& r : results) EXPECT_EQ(r.outcome, pipeline::BatchOutcome::not_started);
  EXPECT_TRUE(listing(out_).empty());
}

}  // namespace
}  // namespace histeq::test
