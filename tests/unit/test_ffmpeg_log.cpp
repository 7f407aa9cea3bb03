// FFmpeg's log is process-wide, but its error lines belong to the job that produced them: a player
// decoding a damaged clip while its background export fails must not lend the export its decoder's
// complaints (nor take the export's). core/video/av_util.h (LogScope) routes each line by context.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "core/pipeline/export.h"
#include "core/pipeline/pipeline.h"
#include "core/video/file_source.h"
#include "core/video/log.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

std::vector<char> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class Sink final : public pipeline::Sink {
 public:
  Status consume(pipeline::PipelineFrame, pipeline::FrameRecord&) override { return Status::ok(); }
};

class FfmpegLog : public ::testing::Test {
 protected:
  void SetUp() override {
    video::SyntheticOptions o;
    o.width = 96;
    o.height = 64;
    o.fps = 30;
    o.duration_s = 2;
    // The "playback": an MPEG-4 clip whose middle is overwritten with noise, so that its decoder
    // keeps logging errors while it plays.
    damaged_ = temp_path("damaged.avi");
    ASSERT_TRUE(write_synthetic_clip(damaged_, o, "mpeg4").is_ok());
    auto bytes = read_all(damaged_);
    ASSERT_GT(bytes.size(), 4000u);
    std::mt19937 rng(7);
    for (size_t i = bytes.size() / 4; i < bytes.size() * 3 / 4; i += 2) bytes[i] = static_cast<char>(rng());
    write_all(damaged_, bytes);
    // The export's input: an MP4 cut before its index (the muxer writes the moov atom last).
    truncated_ = temp_path("cut.mp4");
    ASSERT_TRUE(write_synthetic_clip(truncated_, o, "mpeg4").is_ok());
    auto mp4 = read_all(truncated_);
    mp4.resize(mp4.size() / 2);
    write_all(truncated_, mp4);
    good_ = temp_path("good.mkv");
    ASSERT_TRUE(write_synthetic_clip(good_, o, "ffv1").is_ok());
  }
  void TearDown() override {
    for (const auto& p : {damaged_, truncated_, good_}) ::unlink(p.c_str());
  }
  std::string damaged_, truncated_, good_;
};

TEST_F(FfmpegLog, ABackgroundExportThatFailsDuringPlaybackReportsItsOwnError) {
  // Every error line FFmpeg logs, counted by the origin of its text (the forwarder sees them all).
  std::atomic<int> decoder_lines{0};
  video::set_log_forward([&](int level, const std::string& line) {
    if (level <= 16 /* AV_LOG_ERROR */ && line.find("mpeg4") != std::string::npos) ++decoder_lines;
  }, 16);
  // Playback: the damaged clip, played over and over on its own thread, as the player does.
  std::atomic<bool> done{false};
  std::atomic<int> plays{0};
  std::atomic<int64_t> corrupt{0};
  std::vector<std::string> playback_errors;
  std::thread player([&] {
    while (!done) {
      auto src = video::FileSource::open(damaged_);
      if (!src) {
        playback_errors.push_back(src.status().to_string());
        continue;
      }
      pipeline::PipelineOptions po;
      po.equalizer.cpu = true;
      auto p = pipeline::Pipeline::create(po, (*src)->info());
      if (!p) continue;
      Sink sink;
      Status s = (*p)->run(**src, sink, done);
      if (!s && s.code() != Code::cancelled) playback_errors.push_back(s.to_string());
      corrupt += (*src)->counters().corrupt_packets + (*src)->counters().damaged_frames;
      ++plays;
    }
  });

  // Background exports that fail while it plays: each must name its own cause.
  while (decoder_lines.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  for (int i = 0; i < 40 || std::chrono::steady_clock::now() < until; ++i) {
    pipeline::ExportOptions eo;
    eo.input = truncated_;
    eo.output = temp_path("out.mkv");
    eo.pipeline.equalizer.cpu = true;
    auto x = pipeline::Exporter::open(eo);
    ASSERT_FALSE(x.is_ok());
    EXPECT_NE(x.status().message().find("moov atom) is missing"), std::string::npos)
        << "export " << i << " lost its own cause: " << x.status().to_string();

    eo.input = good_;
    eo.codec = "libx264";
    eo.preset = "no-such-preset";
    auto y = pipeline::Exporter::open(eo);
    ASSERT_FALSE(y.is_ok());
    EXPECT_NE(y.status().message().find("--preset 'no-such-preset'"), std::string::npos) << y.status().to_string();
    // x264's own line ("Error setting preset/tune ..."), not one of the playback's decoder lines.
    EXPECT_NE(y.status().message().find("Error setting preset"), std::string::npos) << y.status().to_string();
  }
  while (plays.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  done = true;
  player.join();
  video::set_log_forward(nullptr, 16);
  EXPECT_GT(corrupt.load(), 0) << "the playback's clip should be damaged";
  EXPECT_GT(decoder_lines.load(), 10) << "the playback's decoder should have logged errors throughout";
  for (const auto& e : playback_errors) {
    EXPECT_EQ(e.find("moov"), std::string::npos) << "the playback took the export's error: " << e;
    EXPECT_EQ(e.find("preset"), std::string::npos) << "the playback took the export's error: " << e;
  }
}

}  // namespace
}  // namespace histeq::test
