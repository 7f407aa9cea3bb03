// Every GPU of the host: a pipeline on device N decodes with NVDEC on N, equalizes on N and gives
// the frames device 0 gives; a batch over several GPUs writes, file for file, what one GPU writes;
// the GPU synthetic source and the library's equalizer on another device. Skipped with fewer than
// two CUDA devices (they say how many there are), and the NVDEC cases without NVDEC.
// tools: tools/device/multi_gpu_device.sh runs these on a two-GPU machine, under compute-sanitizer too.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "core/cuda/device.h"
#include "core/pipeline/batch.h"
#include "core/pipeline/export.h"
#include "core/pipeline/source_factory.h"
#include "core/video/file_source.h"
#include "core/video/hw_decode.h"
#include "tests/common/gtest_status.h"
#include "tests/common/video_helpers.h"

namespace histeq::test {
namespace {

// The last device: the one a pipeline reaches only when the device is named, never by default.
int other_device() { return cuda::device_count() - 1; }

class MultiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const int n = cuda::device_count();
    if (n < 2) GTEST_SKIP() << "needs two CUDA devices; this machine has " << n;
  }
};

// An H.264 clip NVDEC decodes (libx264, odd width), the real clip the device script names beside it.
class MultiGpuNvdec : public MultiGpu {
 protected:
  void SetUp() override {
    MultiGpu::SetUp();
    if (IsSkipped()) return;
    clip_ = temp_path("multi.mp4");
    ASSERT_OK(write_synthetic_clip(clip_, synthetic_clip(642, 362, 45), "libx264"));
    video::FileSourceOptions fo;
    fo.hwdec = video::HwDecode::nvdec;
    fo.cuda_device = other_device();
    auto s = video::FileSource::open(clip_, fo);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    if ((*s)->info().decoder.rfind("NVDEC", 0) != 0) GTEST_SKIP() << "no NVDEC here: " << (*s)->info().decode_note;
  }
  void TearDown() override {
    for (const auto& p : cleanup_) ::unlink(p.c_str());
    for (const auto& d : dirs_) ::rmdir(d.c_str());
    if (!clip_.empty()) ::unlink(clip_.c_str());
  }
  // Exports `input` to a new ffv1 file with NVDEC and the default equalizer on `device`.
  std::string export_on(const std::string& input, int device, std::string* decoder = nullptr) {
    pipeline::ExportOptions eo;
    eo.input = input;
    eo.output = temp_path("dev" + std::to_string(device) + ".mkv");
    cleanup_.push_back(eo.output);
    eo.codec = "ffv1";
    eo.hwdec = video::HwDecode::nvdec;
    eo.pipeline.equalizer.device = device;
    auto x = pipeline::Exporter::open(eo);
    EXPECT_TRUE(x.is_ok()) << x.status().to_string();
    if (!x) return "";
    if (decoder != nullptr) *decoder = (*x)->plan().decoder;
    std::atomic<bool> stop{false};
    auto r = (*x)->run(stop, nullptr, {});
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (r) {
      EXPECT_EQ(r->frames_in, r->frames_out);
    }
    return eo.output;
  }
  std::string clip_;
  std::vector<std::string> cleanup_, dirs_;  // files, then the folders they were in
};

void expect_same_frames(const std::string& a, const std::string& b) {
  auto fa = read_frames(a);
  auto fb = read_frames(b);
  ASSERT_TRUE(fa.is_ok() && fb.is_ok()) << a << " / " << b;
  ASSERT_EQ(fa->size(), fb->size()) << a << " / " << b;
  ASSERT_FALSE(fa->empty());
  for (size_t i = 0; i < fa->size(); ++i) ASSERT_TRUE((*fa)[i] == (*fb)[i]) << a << " / " << b << ": frame " << i;
}

// The defect this guards: FFmpeg's CUDA device defaulted to ordinal 0, so a pipeline on device 1
// equalized device 0's NVDEC surfaces (cudaErrorIllegalAddress).
TEST_F(MultiGpuNvdec, AnExportOnTheLastDeviceDecodesThereAndWritesDevice0sFrames) {
  std::string decoder;
  const std::string on0 = export_on(clip_, 0);
  const std::string onN = export_on(clip_, other_device(), &decoder);
  EXPECT_NE(decoder.find("NVDEC (GPU " + std::to_string(other_device()) + ","), std::string::npos) << decoder;
  expect_same_frames(on0, onN);
  if (const char* real = std::getenv("HISTEQ_TEST_CLIP")) expect_same_frames(export_on(real, 0), export_on(real, other_device()));
}

TEST_F(MultiGpuNvdec, ABatchOverEveryGpuWritesWhatOneGpuWritesFileForFile) {
  std::vector<int> all;
  for (int d = 0; d < cuda::device_count(); ++d) all.push_back(d);
  const int files = 2 * static_cast<int>(all.size()) + 1;
  const std::string in_dir = temp_path("batch-in"), one = temp_path("batch-one"), many = temp_path("batch-many");
  for (const auto& d : {in_dir, one, many}) {
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
    dirs_.push_back(d);
  }
  std::vector<std::string> inputs;
  for (int i = 0; i < files; ++i) {
    inputs.push_back(in_dir + "/clip" + std::to_string(i) + ".mp4");
    cleanup_.push_back(inputs.back());
    ASSERT_OK(write_synthetic_clip(inputs.back(), synthetic_clip(322 + 2 * i, 182, 20 + i), "libx264"));
  }
  pipeline::ExportOptions base;
  base.codec = "ffv1";
  base.hwdec = video::HwDecode::nvdec;
  std::atomic<bool> stop{false};
  std::vector<int> sessions;
  for (int d : all) sessions.push_back(video::nvdec_engines(d));
  auto run = [&](const std::string& out, const std::vector<int>& devices, const std::vector<int>& s) {
    auto items = pipeline::plan_batch(inputs, out, "mkv");  // ffv1: Matroska
    EXPECT_TRUE(items.is_ok());
    const pipeline::JobPlan plan = pipeline::plan_jobs(0, true, devices, 8, items->size(), s);
    return pipeline::run_batch(*items, base, plan, stop, {});
  };
  const auto single = run(one, {0}, {1});
  const auto spread = run(many, all, sessions);
  for (const auto* results : {&single, &spread})
    for (const auto& r : *results) {
      cleanup_.push_back(r.item.output);
      cleanup_.push_back(pipeline::sidecar_path(r.item.output));
    }
  ASSERT_EQ(single.size(), spread.size());
  std::set<int> used;
  for (size_t i = 0; i < spread.size(); ++i) {
    ASSERT_EQ(single[i].outcome, pipeline::BatchOutcome::ok) << single[i].message;
    ASSERT_EQ(spread[i].outcome, pipeline::BatchOutcome::ok) << spread[i].message;
    EXPECT_EQ(single[i].device, 0);
    used.insert(spread[i].device);
    expect_same_frames(single[i].item.output, spread[i].item.output);
  }
  EXPECT_EQ(used.size(), all.size()) << "every GPU took files";
}

// The GPU source and the default equalizer of a pipeline on the last device: the frames of device 0.
TEST_F(MultiGpu, TheGpuSourceAndEqualizerOnTheLastDeviceGiveDevice0sFrames) {
  std::vector<FrameCopy> frames[2];
  const int devices[2] = {0, other_device()};
  for (int i = 0; i < 2; ++i) {
    pipeline::SourceRequest sr;
    sr.synthetic = synthetic_clip(1282, 722, 12);
    sr.synthetic.on_gpu = true;
    sr.cuda_device = devices[i];
    auto src = pipeline::open_source(sr);
    ASSERT_TRUE(src.is_ok()) << src.status().to_string();
    pipeline::PipelineOptions po;
    po.equalizer.device = devices[i];
    po.equalizer.keep_on_device = true;
    po.equalizer.download = false;
    auto run = run_pipeline(*src->source, po);
    ASSERT_TRUE(run.is_ok()) << run.status().to_string();
    EXPECT_EQ(run->equalizer.device, cuda::device_label(devices[i]));
    EXPECT_EQ(run->equalizer.device.rfind("GPU " + std::to_string(devices[i]) + ", ", 0), 0u) << run->equalizer.device;
    frames[i] = run->device_frames;
  }
  ASSERT_EQ(frames[0].size(), 12u);
  ASSERT_EQ(frames[0].size(), frames[1].size());
  for (size_t f = 0; f < frames[0].size(); ++f) EXPECT_TRUE(frames[0][f] == frames[1][f]) << "frame " << f;
}

// Opening a source for device N leaves the caller's current device as it was.
TEST_F(MultiGpu, OpeningASourceForAnotherDeviceLeavesTheCallersDevice) {
  ASSERT_OK(cuda::use_device(0));
  pipeline::SourceRequest sr;
  sr.synthetic = synthetic_clip(64, 64, 2);
  sr.synthetic.on_gpu = true;
  sr.cuda_device = other_device();
  auto src = pipeline::open_source(sr);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  EXPECT_EQ(cuda::current_device(), 0);
}

}  // namespace
}  // namespace histeq::test
