// The source and sink factories (core/pipeline/source_factory.h, sink_factory.h): each kind of
// request gives the right source, bad requests give their one line, the callback sink gets every
// frame (the same frames a file sink writes), the one list of video extensions.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "core/pipeline/batch.h"
#include "core/pipeline/sink_factory.h"
#include "core/pipeline/source_factory.h"
#include "core/video/file_source.h"
#include "core/video/writer.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

using pipeline::SourceKind;
using pipeline::SourceRequest;

SourceRequest input(const std::string& path) {
  SourceRequest r;
  r.input = path;
  return r;
}

video::SyntheticOptions tiny(int frames) { return synthetic_clip(64, 36, frames); }

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

class Factories : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_path("factories");
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
    clip_ = dir_ + "/in.mkv";
    ASSERT_TRUE(write_synthetic_clip(clip_, tiny(12)).is_ok());
  }
  void TearDown() override { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_, clip_;
};

TEST(SourceFactory, EachInputIsItsKind) {
  auto kind = [](const SourceRequest& r) {
    auto k = pipeline::classify(r);
    EXPECT_TRUE(k.is_ok()) << k.status().to_string();
    return k.is_ok() ? *k : SourceKind::file;
  };
  EXPECT_EQ(kind(input("")), SourceKind::synthetic);
  EXPECT_EQ(kind(input("clip.mp4")), SourceKind::file);
  EXPECT_EQ(kind(input("file:///tmp/clip.mp4")), SourceKind::file);
  EXPECT_EQ(kind(input("-")), SourceKind::standard_input);
  EXPECT_EQ(kind(input("udp://127.0.0.1:5000")), SourceKind::network);
  EXPECT_EQ(kind(input("rtsp://camera/stream")), SourceKind::network);
  EXPECT_EQ(kind(input("/dev/video2")), SourceKind::webcam);
  SourceRequest cam;
  cam.webcam = true;
  EXPECT_EQ(kind(cam), SourceKind::webcam);
  cam.device = "/dev/video7";
  EXPECT_EQ(kind(cam), SourceKind::webcam);
  EXPECT_STREQ(pipeline::source_kind_name(SourceKind::standard_input), "standard input");
}

TEST(SourceFactory, AnInputAndTheWebcamTogetherIsOneUsageError) {
  SourceRequest r = input("clip.mp4");
  r.webcam = true;
  auto k = pipeline::classify(r);
  ASSERT_FALSE(k.is_ok());
  EXPECT_EQ(k.status().code(), Code::invalid_argument);
  EXPECT_EQ(k.status().message(), "give either an input file or --webcam, not both");
  auto s = pipeline::open_source(r);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(), k.status().message());
}

TEST(SourceFactory, TheSyntheticSourceHasTheAskedSizeRateAndLength) {
  SourceRequest r;
  r.synthetic = tiny(5);
  r.synthetic.bit_depth = 10;
  auto s = pipeline::open_source(r);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->kind, SourceKind::synthetic);
  EXPECT_EQ(s->file, nullptr);
  const video::SourceInfo& info = s->source->info();
  EXPECT_EQ(info.name, "synthetic");
  EXPECT_EQ(info.format.width, 64);
  EXPECT_EQ(info.format.height, 36);
  EXPECT_EQ(info.format.bit_depth, 10);
  EXPECT_EQ(info.frames_hint, 5);
  r.synthetic.bit_depth = 12;
  EXPECT_FALSE(pipeline::open_source(r).is_ok());
}

TEST_F(Factories, AFileIsReadThroughFFmpegWithTheDecodeChoice) {
  SourceRequest r = input(clip_);
  r.hwdec = video::HwDecode::none;
  auto s = pipeline::open_source(r);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->kind, SourceKind::file);
  ASSERT_NE(s->file, nullptr);
  EXPECT_EQ(static_cast<video::Source*>(s->file), s->source.get());
  EXPECT_EQ(s->source->info().name, clip_);
  EXPECT_EQ(s->source->info().decoder, "software");
  EXPECT_EQ(s->source->info().format.width, 64);
  EXPECT_TRUE(s->source->can_seek());
}

TEST_F(Factories, BadInputsKeepTheirLines) {
  auto s = pipeline::open_source(input(dir_ + "/missing.mp4"));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().code(), Code::not_found);
  EXPECT_EQ(s.status().message(), dir_ + "/missing.mp4: no such file");
  s = pipeline::open_source(input(dir_));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(), dir_ + ": is a directory, not a video file");
  // A V4L2 device path is the webcam, whether named by --webcam or as the input: the same line.
  SourceRequest cam;
  cam.webcam = true;
  cam.device = "/dev/video99";
  s = pipeline::open_source(cam);
  ASSERT_FALSE(s.is_ok());
  const std::string line = s.status().message();
  EXPECT_EQ(line.rfind("/dev/video99: ", 0), 0u) << line;
  EXPECT_NE(line.find("webcam"), std::string::npos) << line;
  s = pipeline::open_source(input("/dev/video99"));
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.status().message(), line);
}

// The lab's real frames come through the factory too: spread over the clip (12 frames, 4 asked:
// 0, 3, 7 and 11), each the decoded frame's luma as it is (no range conversion), and a 10-bit clip
// keeps its top 8 bits.
TEST_F(Factories, TheLabReadsLumaSpreadOverTheInput) {
  auto all = read_frames(clip_);
  ASSERT_TRUE(all.is_ok()) << all.status().to_string();
  ASSERT_EQ(all->size(), 12u);
  auto got = pipeline::read_luma_frames(input(clip_), 4);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), 4u);
  const int picks[] = {0, 3, 7, 11};
  for (int k = 0; k < 4; ++k) {
    const Plane8& p = (*got)[k];
    ASSERT_EQ(p.width(), 64);
    ASSERT_EQ(p.height(), 36);
    std::vector<uint8_t> rows;
    for (int y = 0; y < p.height(); ++y) rows.insert(rows.end(), p.view().row(y), p.view().row(y) + p.width());
    EXPECT_EQ(rows, (*all)[picks[k]].planes[0]) << "frame " << picks[k];
  }

  video::SyntheticOptions deep = tiny(3);
  deep.bit_depth = 10;
  const std::string clip10 = dir_ + "/in10.mkv";
  ASSERT_TRUE(write_synthetic_clip(clip10, deep).is_ok());
  auto all10 = read_frames(clip10);
  ASSERT_TRUE(all10.is_ok());
  auto got10 = pipeline::read_luma_frames(input(clip10), 1);
  ASSERT_TRUE(got10.is_ok()) << got10.status().to_string();
  const std::vector<uint8_t>& wide = (*all10)[0].planes[0];  // little-endian 16-bit samples
  for (int i : {0, 100, 64 * 36 - 1}) {
    const int v = wide[2 * i] | (wide[2 * i + 1] << 8);
    EXPECT_EQ((*got10)[0].view().row(i / 64)[i % 64], v >> 2) << "sample " << i;
  }

  auto missing = pipeline::read_luma_frames(input(dir_ + "/missing.mp4"), 4);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().message(), dir_ + "/missing.mp4: no such file");
}

// Runs `source` through a CPU pipeline into `sink`, then finishes the sink.
Status run_into(pipeline::OpenedSource& source, pipeline::OutputSink& sink) {
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  pipeline::want_frames(po.equalizer, sink.memory());
  auto pipe = pipeline::Pipeline::create(po, source.source->info());
  if (!pipe) return pipe.status();
  std::atomic<bool> stop{false};
  HISTEQ_TRY((*pipe)->run(*source.source, sink, stop));
  return sink.finish();
}

TEST_F(Factories, TheCallbackGetsEveryFrameInOrderAsTheFileSinkWritesThem) {
  std::vector<FrameCopy> got;
  std::vector<int64_t> indices;
  pipeline::OutputRequest cb;
  cb.callback = [&](pipeline::PipelineFrame& f) {
    EXPECT_NE(f.frame->memory(), MemoryKind::device);
    indices.push_back(f.frame->index);
    got.push_back(copy_frame(*f.frame));
    return Status::ok();
  };
  auto src = pipeline::open_source(input(clip_));
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  std::vector<std::string> notes;
  auto sink = pipeline::open_output(cb, *src, notes);
  ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
  EXPECT_EQ((*sink)->memory(), pipeline::FrameMemory::host);
  EXPECT_EQ((*sink)->description(), "callback");
  ASSERT_TRUE(run_into(*src, **sink).is_ok());
  ASSERT_EQ(got.size(), 12u);
  EXPECT_EQ((*sink)->counters().frames, 12);
  for (size_t i = 0; i < indices.size(); ++i) EXPECT_EQ(indices[i], static_cast<int64_t>(i));

  // The same input through the file sink (lossless): the same frames.
  pipeline::OutputRequest file;
  file.path = dir_ + "/out.mkv";
  file.encoder.codec = "ffv1";
  int64_t reported = 0;
  file.on_frame = [&](int64_t frames, double) { reported = frames; };
  ASSERT_TRUE(pipeline::check_output(file, clip_).is_ok());
  auto src2 = pipeline::open_source(input(clip_));
  ASSERT_TRUE(src2.is_ok());
  auto fsink = pipeline::open_output(file, *src2, notes);
  ASSERT_TRUE(fsink.is_ok()) << fsink.status().to_string();
  EXPECT_FALSE((*fsink)->partial_path().empty());
  EXPECT_FALSE(exists(file.path)) << "written under a temporary name until finished";
  ASSERT_TRUE(run_into(*src2, **fsink).is_ok());
  EXPECT_TRUE((*fsink)->partial_path().empty());
  EXPECT_EQ((*fsink)->counters().frames_out, 12);
  EXPECT_EQ(reported, 12);
  auto written = read_frames(file.path);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  ASSERT_EQ(written->size(), got.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE((*written)[i] == got[i]) << "frame " << i;
}

TEST_F(Factories, ACallbackErrorStopsThePipelineWithIt) {
  int calls = 0;
  pipeline::OutputRequest cb;
  cb.callback = [&](pipeline::PipelineFrame&) {
    return ++calls == 3 ? HISTEQ_ERROR(Code::io_error, "the consumer is full") : Status::ok();
  };
  auto src = pipeline::open_source(input(clip_));
  ASSERT_TRUE(src.is_ok());
  std::vector<std::string> notes;
  auto sink = pipeline::open_output(cb, *src, notes);
  ASSERT_TRUE(sink.is_ok());
  Status s = run_into(*src, **sink);
  EXPECT_EQ(s.message(), "the consumer is full");
  EXPECT_EQ(calls, 3);
  EXPECT_EQ((*sink)->counters().frames, 2);
}

TEST_F(Factories, BadOutputsKeepTheirLines) {
  pipeline::OutputRequest r;
  EXPECT_EQ(pipeline::check_output(r, clip_).message(), "no output file given (-o OUT)");
  r.path = dir_ + "/";
  EXPECT_EQ(pipeline::check_output(r, clip_).message(), dir_ + "/: is a folder, not a file name");
  r.path = dir_;
  EXPECT_EQ(pipeline::check_output(r, clip_).message(), dir_ + ": is a folder, not a file name");
  r.path = dir_ + "/other.mkv";
  std::ofstream(r.path) << "x";
  EXPECT_EQ(pipeline::check_output(r, clip_).message(), r.path + ": already exists (use -y to overwrite it)");
  r.overwrite = true;
  EXPECT_TRUE(pipeline::check_output(r, clip_).is_ok());
  r.path = clip_;
  EXPECT_EQ(pipeline::check_output(r, clip_).message(), clip_ + ": is the input file; choose another output name");
  r.callback = [](pipeline::PipelineFrame&) { return Status::ok(); };
  EXPECT_EQ(pipeline::check_output(r, clip_).code(), Code::invalid_argument);  // a file and a callback

  // A file needs a video input to continue; the synthetic source has none.
  pipeline::OutputRequest file;
  file.path = dir_ + "/out.mkv";
  SourceRequest synthetic;
  synthetic.synthetic = tiny(2);
  auto src = pipeline::open_source(synthetic);
  ASSERT_TRUE(src.is_ok());
  std::vector<std::string> notes;
  auto sink = pipeline::open_output(file, *src, notes);
  ASSERT_FALSE(sink.is_ok());
  EXPECT_EQ(sink.status().code(), Code::unsupported);
  // A folder that does not exist: the writer's line, and nothing left behind.
  auto src2 = pipeline::open_source(input(clip_));
  ASSERT_TRUE(src2.is_ok());
  file.path = dir_ + "/no/out.mkv";
  sink = pipeline::open_output(file, *src2, notes);
  ASSERT_FALSE(sink.is_ok());
  EXPECT_EQ(sink.status().message(), file.path + ": cannot write there: the folder " + dir_ + "/no does not exist");
}

// play --headless's sink: every frame taken, held to the source's schedule when real time.
TEST(SinkFactory, ThePresenterHoldsFramesToTheirSchedule) {
  for (bool realtime : {false, true}) {
    SourceRequest r;
    r.synthetic = synthetic_clip(32, 18, 10);
    r.synthetic.fps = 50;
    r.synthetic.duration_s = 10 / 50.0;
    auto src = pipeline::open_source(r);
    ASSERT_TRUE(src.is_ok());
    pipeline::OutputRequest present;
    present.present = true;
    present.realtime = realtime;
    present.interval_s = 1 / 50.0;
    std::vector<double> times;
    present.on_frame = [&](int64_t frames, double time_s) {
      EXPECT_EQ(frames, static_cast<int64_t>(times.size()) + 1);
      times.push_back(time_s);
    };
    std::vector<std::string> notes;
    auto sink = pipeline::open_output(present, *src, notes);
    ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
    EXPECT_EQ((*sink)->memory(), pipeline::FrameMemory::none);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(run_into(*src, **sink).is_ok());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(times.size(), 10u);
    EXPECT_NEAR(times.back(), 9 / 50.0, 1e-9);
    EXPECT_EQ((*sink)->counters().frames, 10);
    if (realtime) {
      EXPECT_GE(wall, 9 / 50.0 - 0.005) << "paced at 50 fps";
    }
  }
  pipeline::OutputRequest both;
  both.present = true;
  both.path = "out.mkv";
  EXPECT_EQ(pipeline::check_output(both, "").code(), Code::invalid_argument);
}

TEST_F(Factories, AnUnfinishedFileSinkLeavesNothing) {
  pipeline::OutputRequest file;
  file.path = dir_ + "/out.mkv";
  file.encoder.codec = "ffv1";
  std::string temp;
  {
    auto src = pipeline::open_source(input(clip_));
    ASSERT_TRUE(src.is_ok());
    std::vector<std::string> notes;
    auto sink = pipeline::open_output(file, *src, notes);
    ASSERT_TRUE(sink.is_ok()) << sink.status().to_string();
    temp = (*sink)->partial_path();
    EXPECT_TRUE(exists(temp));
  }
  EXPECT_FALSE(exists(temp));
  EXPECT_FALSE(exists(file.path));
}

TEST(VideoExtensions, OneListForTheBatchAndTheBrowser) {
  for (const char* n : {"a.mp4", "a.MKV", "x/y.z.mov", "a.ts", "a.y4m", "a.vob", "a.dv", "a.ivf", "a.h264", "a.hevc"})
    EXPECT_TRUE(pipeline::is_video_file_name(n)) << n;
  for (const char* n : {"notes.txt", "a.png", ".mp4", "mp4", "a.mp4/", "a.mkv.part", "dir.mkv/notes", ""})
    EXPECT_FALSE(pipeline::is_video_file_name(n)) << n;
}

// The batch's folder scan used a list without .ivf/.h264/.hevc (the player's file browser had
// them, and lacked .vob/.dv): a folder of elementary streams was "no video files".
TEST(VideoExtensions, ABatchFolderFindsTheElementaryStreamsTheBrowserShows) {
  const std::string dir = temp_path("extensions");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  for (const char* n : {"a.ivf", "b.h264", "c.vob", "d.txt"}) std::ofstream(dir + "/" + n) << "x";
  auto items = pipeline::plan_batch({dir}, dir + "/out");
  (void)std::system(("rm -rf '" + dir + "'").c_str());
  ASSERT_TRUE(items.is_ok()) << items.status().to_string();
  ASSERT_EQ(items->size(), 3u);
  EXPECT_EQ((*items)[0].input, dir + "/a.ivf");
  EXPECT_EQ((*items)[2].input, dir + "/c.vob");
}

// Standard input is a file read to its end unless live is asked for. The test's own
// standard input is the clip for a while (a file: read through FFmpeg's pipe protocol, not seekable).
class StandardInput {
 public:
  explicit StandardInput(const std::string& file) : saved_(::dup(0)) {
    const int fd = ::open(file.c_str(), O_RDONLY);
    ok_ = saved_ >= 0 && fd >= 0 && ::dup2(fd, 0) == 0;
    if (fd >= 0) ::close(fd);
  }
  ~StandardInput() {
    if (saved_ >= 0) ::dup2(saved_, 0);
    if (saved_ >= 0) ::close(saved_);
  }
  bool ok() const { return ok_; }
  static bool rewind() { return ::lseek(0, 0, SEEK_SET) == 0; }

 private:
  int saved_;
  bool ok_ = false;
};

TEST_F(Factories, StandardInputIsAFileReadToItsEndUnlessLiveIsAsked) {
  StandardInput in(clip_);
  ASSERT_TRUE(in.ok());
  auto src = pipeline::open_source(input("-"));
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  EXPECT_EQ(src->kind, SourceKind::standard_input);
  EXPECT_FALSE(src->source->info().live);
  EXPECT_FALSE(src->source->can_seek());
  pipeline::PipelineOptions po;
  po.equalizer.cpu = true;
  auto run = run_pipeline(*src->source, po);
  ASSERT_TRUE(run.is_ok()) << run.status().to_string();
  EXPECT_EQ(run->frames.size(), 12u);
  EXPECT_EQ(run->counters.dropped_source, 0);

  ASSERT_TRUE(StandardInput::rewind());
  SourceRequest live = input("-");
  live.live = true;
  auto lsrc = pipeline::open_source(live);
  ASSERT_TRUE(lsrc.is_ok()) << lsrc.status().to_string();
  EXPECT_TRUE(lsrc->source->info().live);
}

TEST_F(Factories, AnMp4WithItsIndexAtTheEndOnAPipeSaysSo) {
  const std::string mp4 = dir_ + "/tail.mp4";  // our writer's MP4: the index (moov) after the samples
  ASSERT_TRUE(write_synthetic_clip(mp4, tiny(6), "mpeg4").is_ok());
  ASSERT_TRUE(pipeline::open_source(input(mp4)).is_ok()) << "a file can seek to its index";
  StandardInput in(mp4);
  ASSERT_TRUE(in.ok());
  auto src = pipeline::open_source(input("-"));
  ASSERT_FALSE(src.is_ok());
  EXPECT_EQ(src.status().code(), Code::unsupported);
  EXPECT_EQ(src.status().message(),
            "-: an MP4/MOV whose index (moov atom) is at the end cannot be read from a pipe; have the producer write a "
            "streaming container (ffmpeg -f mpegts, -f nut or -f matroska), or give the file's name");
}

TEST(SinkFactory, StandardOutputTakesAContainerThatStreams) {
  pipeline::OutputRequest r;
  r.path = "-";
  EXPECT_TRUE(pipeline::check_output(r, "in.mkv").is_ok()) << "no -f: matroska";
  for (const char* ok : {"nut", "matroska", "mkv", "mpegts", "yuv4mpegpipe", "rawvideo"}) {
    r.format = ok;
    EXPECT_TRUE(pipeline::check_output(r, "in.mkv").is_ok()) << ok;
  }
  r.format = "mp4";
  Status s = pipeline::check_output(r, "in.mkv");
  EXPECT_EQ(s.code(), Code::unsupported);
  EXPECT_EQ(s.message(), "standard output: the mp4 container cannot be written to a pipe (its muxer goes back to write the "
                         "index); use a container that streams: -f nut, matroska, mpegts or yuv4mpegpipe");
  r.format = "image2";
  EXPECT_EQ(pipeline::check_output(r, "in.mkv").code(), Code::unsupported);
  r.format = "nosuch";
  EXPECT_EQ(pipeline::check_output(r, "in.mkv").message().rfind("-f nosuch: no such container in this FFmpeg", 0), 0u);
  r.path = "out.bin";  // -f names a file's container too
  EXPECT_EQ(pipeline::check_output(r, "in.mkv").code(), Code::invalid_argument);

  EXPECT_EQ(*video::container_named("mkv"), "matroska");
  EXPECT_EQ(*video::container_named("y4m"), "yuv4mpegpipe");
  EXPECT_EQ(video::raw_container_codec("yuv4mpegpipe"), "wrapped_avframe");
  EXPECT_EQ(video::raw_container_codec("rawvideo"), "rawvideo");
  EXPECT_EQ(video::raw_container_codec("nut"), "");
  EXPECT_EQ(video::raw_container_codec("matroska"), "");
}

// The sink on standard output writes what the file sink writes, with no temporary file. The test's
// standard output is a file for the while.
TEST_F(Factories, TheStandardOutputSinkWritesTheFileSinksFrames) {
  pipeline::OutputRequest file;
  file.path = dir_ + "/file.nut";
  file.encoder.codec = "ffv1";
  auto src = pipeline::open_source(input(clip_));
  ASSERT_TRUE(src.is_ok());
  std::vector<std::string> notes;
  auto fsink = pipeline::open_output(file, *src, notes);
  ASSERT_TRUE(fsink.is_ok()) << fsink.status().to_string();
  ASSERT_TRUE(run_into(*src, **fsink).is_ok());

  const std::string piped = dir_ + "/piped.nut";
  std::fflush(stdout);
  const int saved = ::dup(1);
  const int fd = ::open(piped.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_TRUE(saved >= 0 && fd >= 0 && ::dup2(fd, 1) == 1);
  ::close(fd);
  pipeline::OutputRequest out = file;
  out.path = "-";
  out.format = "nut";
  Status opened, ran;
  std::string partial = "?";
  int64_t frames_out = -1;
  {
    auto src2 = pipeline::open_source(input(clip_));
    auto sink = src2.is_ok() ? pipeline::open_output(out, *src2, notes) : Result<std::unique_ptr<pipeline::OutputSink>>(src2.status());
    opened = sink.status();
    if (sink.is_ok()) {
      partial = (*sink)->partial_path();
      ran = run_into(*src2, **sink);
      frames_out = (*sink)->counters().frames_out;
    }
  }
  ::dup2(saved, 1);
  ::close(saved);
  ASSERT_TRUE(opened.is_ok()) << opened.to_string();
  ASSERT_TRUE(ran.is_ok()) << ran.to_string();
  EXPECT_EQ(partial, "") << "no temporary file";
  EXPECT_EQ(frames_out, 12);
  auto a = read_frames(file.path);
  auto b = read_frames(piped);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_EQ(a->size(), 12u);
  ASSERT_EQ(b->size(), a->size());
  for (size_t i = 0; i < a->size(); ++i) EXPECT_TRUE((*a)[i] == (*b)[i]) << "frame " << i;
}

}  // namespace
}  // namespace histeq::test
