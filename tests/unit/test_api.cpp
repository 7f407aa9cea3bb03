// The public C++ API (include/histeq/histeq.hpp) on the CPU: its frames are core/pipeline's (the
// engine of `histeq export`) bit for bit, for every format, odd sizes, padded rows and several
// settings; its temporal state, reset() and set() behave as the pipeline's; every bad input is one
// clear error that leaves the state as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/equalize/controls.h"
#include "core/histogram/histogram.h"
#include "histeq/histeq.hpp"
#include "core/pipeline/export.h"
#include "tests/common/api_cases.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

using api::PixelFormat;

// The API's output planes for `frames` through one equalizer (in place on copies), rows packed.
std::vector<std::vector<std::vector<uint8_t>>> api_run(std::vector<ApiFrame> frames, const api::Settings& s) {
  auto e = api::Equalizer::create(s);
  EXPECT_TRUE(e.ok()) << e.status().message();
  std::vector<std::vector<std::vector<uint8_t>>> out;
  if (!e) return out;
  for (auto& f : frames) {
    const api::Status st = e.value().process(f.image());
    EXPECT_TRUE(st.ok()) << st.message();
    std::vector<std::vector<uint8_t>> planes;
    for (int i = 0; i < static_cast<int>(f.planes.size()); ++i) planes.push_back(f.packed(i));
    out.push_back(std::move(planes));
  }
  return out;
}

std::vector<ApiFrame> clip(PixelFormat f, int w, int h, int frames, size_t padding) {
  std::vector<ApiFrame> v;
  for (int n = 0; n < frames; ++n) v.push_back(make_frame(f, w, h, n, padding));
  return v;
}

// Expects the API and core/pipeline to give the same frames for `s` over a clip of each format.
void expect_like_pipeline(const EngineSettings& s, const std::vector<PixelFormat>& formats, int w, int h, size_t padding) {
  for (PixelFormat f : formats) {
    SCOPED_TRACE(std::string(format_name(f)) + " " + std::to_string(w) + "x" + std::to_string(h) + " padding " +
                 std::to_string(padding));
    const auto frames = clip(f, w, h, 7, padding);
    auto want = pipeline_reference(frames, s);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    const auto got = api_run(frames, s.api());
    ASSERT_EQ(got.size(), want->size());
    for (size_t n = 0; n < got.size(); ++n) {
      EXPECT_EQ(got[n], (*want)[n]) << "frame " << n;
      EXPECT_NE(got[n][0], frames[n].packed(0)) << "frame " << n << ": the luma was not equalized";
    }
  }
}

TEST(Api, DefaultsGiveThePipelinesFramesInEveryFormat) {
  expect_like_pipeline({}, all_formats(), 61, 37, 0);
  expect_like_pipeline({}, {PixelFormat::yuv420p, PixelFormat::p010}, 64, 48, 13);
}

TEST(Api, PlainClaheAndOtherSettingsGiveThePipelinesFrames) {
  expect_like_pipeline({{}, true}, all_formats(), 33, 17, 3);
  expect_like_pipeline({{{"mode", "clahe"}, {"tiles", "4x3"}}, false}, {PixelFormat::yuv420p, PixelFormat::nv12, PixelFormat::gray10}, 61, 37, 5);
  expect_like_pipeline({{{"strength", "0.6"}, {"clip-limit", "2"}, {"range", "full"}}, false}, {PixelFormat::yuv420p10}, 40, 30, 0);
  expect_like_pipeline({{{"denoise", "4"}, {"kernel", "cpu_reference"}}, false}, {PixelFormat::yuv420p}, 32, 24, 1);
  expect_like_pipeline({{{"textbook", "1"}}, true}, {PixelFormat::gray8}, 50, 20, 0);
}

TEST(Api, RangeTagIsTheFramesColourRange) {
  for (api::ColorRange r : {api::ColorRange::limited, api::ColorRange::full}) {
    auto frames = clip(PixelFormat::yuv420p, 48, 32, 3, 0);
    for (auto& f : frames) f.range = r;
    auto want = pipeline_reference(frames, {});
    ASSERT_TRUE(want.is_ok());
    EXPECT_EQ(api_run(frames, EngineSettings{}.api()), *want);
  }
  auto a = clip(PixelFormat::yuv420p, 48, 32, 1, 0), b = a;
  b[0].range = api::ColorRange::full;
  EXPECT_NE(api_run(a, EngineSettings{}.api()), api_run(b, EngineSettings{}.api())) << "full range must change the curve";
}

// A host output of its own: the CPU equalizer reads the input's luma where it is and the apply
// writes the output from it (no copy first) where the operations allow; the frames are the same.
void expect_out_of_place_equals_in_place(PixelFormat f, const EngineSettings& settings) {
  auto frames = clip(f, 45, 29, 3, 2);
  auto e = api::Equalizer::create(settings.api());
  ASSERT_TRUE(e.ok());
  const auto want = api_run(frames, settings.api());
  for (size_t n = 0; n < frames.size(); ++n) {
    ApiFrame out = make_frame(f, 45, 29, 9, 7);  // other content, other pitch
    std::vector<std::vector<uint8_t>> before;
    for (size_t i = 0; i < frames[n].planes.size(); ++i) before.push_back(frames[n].packed(static_cast<int>(i)));
    ASSERT_TRUE(e.value().process(frames[n].image(), out.image()).ok());
    for (size_t i = 0; i < frames[n].planes.size(); ++i) {
      EXPECT_EQ(frames[n].packed(static_cast<int>(i)), before[i]) << "the input's plane " << i << " was written";
      EXPECT_EQ(out.packed(static_cast<int>(i)), want[n][i]) << "plane " << i << ", frame " << n;
    }
  }
}

TEST(Api, OutputToOtherPlanesLeavesTheInputAndEqualsInPlace) {
  expect_out_of_place_equals_in_place(PixelFormat::nv12, {});
  expect_out_of_place_equals_in_place(PixelFormat::gray8, {{}, true});
  expect_out_of_place_equals_in_place(PixelFormat::yuv420p, {{{"chroma", "keep"}}, false});
  expect_out_of_place_equals_in_place(PixelFormat::gray8, {{{"mode", "clahe"}, {"tiles", "4x3"}}, false});
  expect_out_of_place_equals_in_place(PixelFormat::gray10, {{{"mode", "clahe"}, {"tiles", "3x2"}, {"chroma", "keep"}}, false});
  expect_out_of_place_equals_in_place(PixelFormat::p010, {{{"chroma", "keep"}}, false});
  expect_out_of_place_equals_in_place(PixelFormat::yuv420p, {{{"denoise", "4"}, {"chroma", "keep"}}, false});
}

TEST(Api, TemporalStateFollowsTheFramesAndResetRestartsIt) {
  const auto frames = clip(PixelFormat::yuv420p, 40, 24, 4, 0);
  auto e = api::Equalizer::create(EngineSettings{}.api());
  ASSERT_TRUE(e.ok());
  std::vector<std::vector<uint8_t>> got;
  for (auto f : frames) {
    ASSERT_TRUE(e.value().process(f.image()).ok());
    got.push_back(f.packed(0));
  }
  const auto fresh = api_run({frames[3]}, EngineSettings{}.api());
  EXPECT_NE(got[3], fresh[0][0]) << "frame 3 after frames 0..2 must differ from frame 3 alone (temporal filter)";
  e.value().reset();
  ApiFrame again = frames[3];
  ASSERT_TRUE(e.value().process(again.image()).ok());
  EXPECT_EQ(again.packed(0), fresh[0][0]) << "after reset() a frame is equalized as the first of a video";
}

TEST(Api, ControlsSetBetweenFramesApplyFromTheNextFrame) {
  const auto frames = clip(PixelFormat::yuv420p, 40, 24, 6, 0);
  const std::vector<Change> changes = {{2, {"clip-limit", "3"}}, {3, {"mode", "clahe"}}, {5, {"strength", "0.5"}}};
  auto want = pipeline_reference(frames, {}, changes);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto e = api::Equalizer::create(EngineSettings{}.api());
  ASSERT_TRUE(e.ok());
  for (size_t n = 0; n < frames.size(); ++n) {
    for (const auto& c : changes) {
      if (c.first == static_cast<int>(n)) {
        ASSERT_TRUE(e.value().set(c.second.first, c.second.second).ok());
      }
    }
    ApiFrame f = frames[n];
    ASSERT_TRUE(e.value().process(f.image()).ok());
    EXPECT_EQ(f.packed(0), (*want)[n][0]) << "frame " << n;
  }
  EXPECT_EQ(e.value().settings().get("mode").value(), "clahe");
}

// A bad image, its error's words, and the code.
struct BadCase {
  const char* name;
  void (*spoil)(api::Image& in, api::Image& out);
  const char* words;
};

TEST(Api, BadImagesAreOneLineErrorsAndLeaveTheTemporalStateAlone) {
  const BadCase cases[] = {
      {"null plane", [](api::Image& in, api::Image&) { in.planes[1].data = nullptr; }, "in plane 1 (yuv420p) is null"},
      {"pitch", [](api::Image& in, api::Image&) { in.planes[0].pitch = 10; }, "pitch 10 bytes is less than a row (40 bytes)"},
      {"size", [](api::Image& in, api::Image& out) { in.width = out.width = 0; }, "size 0x24 is not 1..65536"},
      {"format", [](api::Image&, api::Image& out) { out.format = PixelFormat::nv12; }, "in and out differ in format or size"},
      {"geometry", [](api::Image&, api::Image& out) { out.height = 22; }, "in and out differ in format or size"},
      {"odd pitch", [](api::Image& in, api::Image& out) { in.format = out.format = PixelFormat::gray10; in.planes[0].pitch = out.planes[0].pitch = 81; },
       "16-bit samples need an even address and pitch"},
      {"bad enum", [](api::Image& in, api::Image&) { in.format = static_cast<PixelFormat>(42); }, "unknown pixel format 42"},
  };
  const auto frames = clip(PixelFormat::yuv420p, 40, 24, 3, 0);
  const auto want = api_run(frames, EngineSettings{}.api());
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto e = api::Equalizer::create(EngineSettings{}.api());
    ASSERT_TRUE(e.ok());
    std::vector<std::vector<uint8_t>> got;
    for (size_t n = 0; n < frames.size(); ++n) {
      if (n == 1) {
        ApiFrame bad = frames[1];
        api::Image in = bad.image(), out = bad.image();
        c.spoil(in, out);
        const api::Status s = e.value().process(in, out);
        EXPECT_EQ(s.code(), api::ErrorCode::invalid_argument);
        EXPECT_NE(s.message().find(c.words), std::string::npos) << s.message();
        EXPECT_EQ(s.message().find('\n'), std::string::npos);
        EXPECT_EQ(bad.packed(0), frames[1].packed(0)) << "a refused frame was written";
      }
      ApiFrame f = frames[n];
      ASSERT_TRUE(e.value().process(f.image()).ok());
      got.push_back(f.packed(0));
    }
    for (size_t n = 0; n < frames.size(); ++n) EXPECT_EQ(got[n], want[n][0]) << "frame " << n;
  }
}

TEST(Api, DeviceImagesNeedADevice) {
  if (api::gpu_available()) GTEST_SKIP() << "a CUDA device is present: tests/gpu/test_api_gpu.cpp covers device images";
  ApiFrame f = make_frame(PixelFormat::gray8, 16, 16, 0, 0);
  api::Image im = f.image();
  im.memory = api::Memory::device;
  auto e = api::Equalizer::create();
  ASSERT_TRUE(e.ok());
  const api::Status s = e.value().process(im);
  EXPECT_EQ(s.code(), api::ErrorCode::unsupported);
  EXPECT_NE(s.message().find("no CUDA device"), std::string::npos) << s.message();
  api::Settings gpu;
  ASSERT_TRUE(gpu.set("backend", "gpu").ok());
  auto g = api::Equalizer::create(gpu);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), api::ErrorCode::unsupported);
  EXPECT_EQ(e.value().info().backend, "cpu");
  EXPECT_NE(e.value().info().fallback_note, "");
}

// The frames `histeq export` writes (its Exporter, lossless ffv1, defaults, the CPU) are the API's
// on the decoded input frames with their times and range tags, 8-bit and 10-bit.
TEST(Api, ExportWritesTheApisFrames) {
  for (int depth : {8, 10}) {
    SCOPED_TRACE(depth);
    video::SyntheticOptions so = synthetic_clip(64, 48, 12);
    so.bit_depth = depth;
    const std::string in = temp_path("api_in.mkv"), out = temp_path("api_out.mkv");
    ASSERT_TRUE(write_synthetic_clip(in, so).is_ok());
    pipeline::ExportOptions o;
    o.input = in;
    o.output = out;
    o.codec = "ffv1";
    o.pipeline.equalizer.cpu = true;
    o.pipeline.equalizer.quality = eq::default_quality();  // the command line's defaults
    auto x = pipeline::Exporter::open(o);
    ASSERT_TRUE(x.is_ok()) << x.status().to_string();
    std::atomic<bool> stop{false};
    ASSERT_TRUE((*x)->run(stop, nullptr, nullptr).is_ok());
    auto src = read_frames(in), exported = read_frames(out);
    ASSERT_TRUE(src.is_ok() && exported.is_ok());
    ASSERT_EQ(src->size(), exported->size());
    auto e = api::Equalizer::create(EngineSettings{}.api());
    ASSERT_TRUE(e.ok());
    for (size_t n = 0; n < src->size(); ++n) {
      FrameCopy& f = (*src)[n];
      EXPECT_FALSE(f == (*exported)[n]) << "frame " << n << ": the export did not change it";
      api::Image im;
      im.format = depth == 8 ? PixelFormat::yuv420p : PixelFormat::yuv420p10;
      im.width = 64;
      im.height = 48;
      im.time_s = f.time_s;
      im.range = f.full_range ? api::ColorRange::full : api::ColorRange::unspecified;
      for (int i = 0; i < 3; ++i) im.planes[i].data = f.planes[static_cast<size_t>(i)].data();
      ASSERT_TRUE(e.value().process(im).ok());
      EXPECT_TRUE(f == (*exported)[n]) << "frame " << n;
    }
    std::remove(in.c_str());
    std::remove(out.c_str());
  }
}

TEST(ApiSettings, EveryControlOfTheTableThenTheEqualizersOwn) {
  const std::vector<api::ControlInfo> got = api::controls();
  const std::vector<eq::Control> table = eq::controls();
  ASSERT_EQ(got.size(), table.size() + 4);
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(got[i].name, table[i].name);
    EXPECT_EQ(got[i].python_name, table[i].python_name());
    EXPECT_EQ(got[i].default_value, eq::control_text(table[i], eq::default_quality()));
    EXPECT_EQ(got[i].help, table[i].help);
  }
  const char* own[] = {"kernel", "strength", "backend", "device"};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(got[table.size() + i].name, own[i]);
  const auto clip = std::find_if(got.begin(), got.end(), [](const api::ControlInfo& c) { return c.name == "clip-limit"; });
  ASSERT_NE(clip, got.end());
  EXPECT_EQ(clip->plain_value, "0");
  EXPECT_EQ(clip->python_name, "clip_limit");
  EXPECT_EQ(clip->type, "number");
}

TEST(ApiSettings, EveryChoiceSaysWhatEachValueMeans) {
  // GStreamer's enum values show these beside the spellings (gst-inspect-1.0 histeq).
  for (const api::ControlInfo& c : api::controls()) {
    if (c.type != "choice") continue;
    ASSERT_EQ(c.choice_help.size(), c.choices.size()) << c.name;
    for (size_t i = 0; i < c.choices.size(); ++i) EXPECT_FALSE(c.choice_help[i].empty() || c.choice_help[i] == c.choices[i]) << c.name << " " << c.choices[i];
  }
}

TEST(ApiSettings, TextAndNumberFormsByAnyName) {
  api::Settings s;
  EXPECT_TRUE(s.set("clip_limit", 2.5).ok());       // the Python name
  EXPECT_EQ(s.get("clip-limit").value(), "2.5");
  EXPECT_TRUE(s.set("mode", 1).ok());               // a choice's index
  EXPECT_EQ(s.get("mode").value(), "clahe");
  EXPECT_TRUE(s.set("tiles", 4).ok());              // a grid's columns and rows
  EXPECT_EQ(s.get("tiles").value(), "4x4");
  EXPECT_TRUE(s.set("tiles", "6x2").ok());
  EXPECT_EQ(s.get("tiles").value(), "6x2");
  EXPECT_TRUE(s.set("textbook", "on").ok());
  EXPECT_EQ(s.get("textbook").value(), "1");
  EXPECT_TRUE(s.set("textbook", false).ok());
  EXPECT_EQ(s.get("textbook").value(), "0");
  EXPECT_TRUE(s.set("strength", "0.25").ok());
  EXPECT_EQ(s.get("strength").value(), "0.25");
  EXPECT_TRUE(s.set("kernel", "cpu_reference").ok());
  EXPECT_NE(s.describe().find("kernel cpu_reference"), std::string::npos) << s.describe();
  EXPECT_EQ(api::Settings::plain().get("temporal").value(), "0");
  EXPECT_EQ(api::Settings::defaults().get("temporal").value(), eq::control_number(eq::default_quality().temporal_s));
}

// A grid typed as columns and rows (Python's (cols, rows) comes this way): checked by the control's
// range, all or nothing, and refused for a control that is not a grid.
TEST(ApiSettings, GridByColumnsAndRows) {
  api::Settings s;
  ASSERT_TRUE(s.set("tiles", 6, 2).ok());
  EXPECT_EQ(s.get("tiles").value(), "6x2");
  const api::Status wide = s.set("tiles", 40, 2);
  EXPECT_FALSE(wide.ok());
  EXPECT_NE(wide.message().find("tiles must be 1..32 per axis, not 40x2"), std::string::npos) << wide.message();
  EXPECT_EQ(s.get("tiles").value(), "6x2");
  const api::Status not_grid = s.set("strength", 1, 2);
  EXPECT_FALSE(not_grid.ok());
  EXPECT_NE(not_grid.message().find("strength is not a grid"), std::string::npos) << not_grid.message();
  EXPECT_FALSE(s.set("no-such-control", 1, 2).ok());
  api::Settings cpu = api::Settings::plain();
  ASSERT_TRUE(cpu.set("backend", "cpu").ok());
  auto eq = api::Equalizer::create(cpu);
  ASSERT_TRUE(eq.ok()) << eq.status().message();
  ASSERT_TRUE(eq.value().set("tiles", 3, 5).ok());
  EXPECT_EQ(eq.value().settings().get("tiles").value(), "3x5");
}

// The old names a front end publishes (GStreamer: deprecated properties): by the current name only.
TEST(ApiSettings, ControlAliasesByTheCurrentName) {
  EXPECT_EQ(api::control_aliases("chroma-limit"), std::vector<std::string>{"limit"});
  EXPECT_TRUE(api::control_aliases("limit").empty());
  EXPECT_TRUE(api::control_aliases("clip-limit").empty());
  EXPECT_TRUE(api::control_aliases("no-such-control").empty());
  EXPECT_NE(api::control_warning("limit").find("use 'chroma-limit'"), std::string::npos);
}

TEST(ApiSettings, BadNamesAndValuesAreRefusedAndChangeNothing) {
  api::Settings s;
  const std::string before = s.describe();
  struct Bad {
    const char* name;
    std::string value;
    const char* words;
  };
  const Bad cases[] = {{"no-such", "1", "unknown control 'no-such' (controls: "},
                       {"clip-limit", "0.5", "clip limit must be 0 (off) or 1..64, not 0.5"},
                       {"clip-limit", "abc", "not a number"},
                       {"mode", "fancy", "mode must be global or clahe, not 'fancy'"},
                       {"tiles", "40x2", "tiles must be 1..32 per axis, not 40x2"},
                       {"strength", "1.5", "strength must be 0..1, not 1.5"},
                       {"backend", "tpu", "backend must be auto, gpu or cpu, not 'tpu'"},
                       {"device", "1.5", "device must be a whole number"},
                       {"kernel", "nope", "kernel must be auto, "},
                       {"textbook", "maybe", "textbook=maybe: 0 or 1"}};
  for (const Bad& b : cases) {
    const api::Status st = s.set(b.name, b.value);
    EXPECT_EQ(st.code(), api::ErrorCode::invalid_argument) << b.name;
    EXPECT_NE(st.message().find(b.words), std::string::npos) << st.message();
  }
  EXPECT_EQ(s.set("mode", 2.0).code(), api::ErrorCode::invalid_argument);
  EXPECT_EQ(s.set("textbook", 0.5).code(), api::ErrorCode::invalid_argument);
  EXPECT_EQ(s.describe(), before);
  EXPECT_FALSE(s.get("no-such").ok());
}

TEST(ApiKernels, TheRegistryWithItsDefaults) {
  const std::vector<api::KernelInfo> ks = api::kernels();
  ASSERT_EQ(ks.size(), hist::registry().size());
  int defaults = 0;
  for (size_t i = 0; i < ks.size(); ++i) {
    EXPECT_EQ(ks[i].name, hist::registry()[i].info.name);
    defaults += ks[i].is_default;
  }
  EXPECT_EQ(defaults, 2) << "one default per backend";
  const auto cpu = std::find_if(ks.begin(), ks.end(), [](const api::KernelInfo& k) { return k.name == "cpu_parallel"; });
  ASSERT_NE(cpu, ks.end());
  EXPECT_TRUE(cpu->is_default);
  EXPECT_EQ(cpu->backend, "cpu");
  EXPECT_NE(std::find(cpu->bins_8bit.begin(), cpu->bins_8bit.end(), 256), cpu->bins_8bit.end());
}

TEST(ApiHistogram, CountsEverySampleOfAPitchedPlane) {
  const ApiFrame f = make_frame(PixelFormat::gray10, 37, 21, 1, 5);
  api::Plane p{f.planes[0].data(), 37, 21, f.pitch[0], 2, 10};
  std::vector<uint32_t> want(1024), want64(64);
  for (int y = 0; y < 21; ++y)
    for (int x = 0; x < 37; ++x) {
      uint16_t v;
      std::memcpy(&v, f.planes[0].data() + y * f.pitch[0] + 2 * x, 2);
      ++want[v];
      ++want64[v >> 4];
    }
  for (const char* k : {"", "cpu_reference", "cpu_parallel"}) {
    auto h = api::histogram(p, k);
    ASSERT_TRUE(h.ok()) << h.status().message();
    EXPECT_EQ(h.value(), want) << k;
  }
  auto h64 = api::histogram(p, "cpu_parallel", 64);
  ASSERT_TRUE(h64.ok()) << h64.status().message();
  EXPECT_EQ(h64.value(), want64);
  EXPECT_EQ(api::histogram(p, "", 100).status().code(), api::ErrorCode::invalid_argument);
  EXPECT_EQ(api::histogram(p, "no_such").status().code(), api::ErrorCode::invalid_argument);
  p.pitch = 3;
  EXPECT_NE(api::histogram(p).status().message().find("pitch 3 bytes is less than a row"), std::string::npos);
  p.data = nullptr;
  EXPECT_NE(api::histogram(p).status().message().find("null"), std::string::npos);
}

}  // namespace
}  // namespace histeq::test
