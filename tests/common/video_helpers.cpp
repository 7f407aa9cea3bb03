#include "tests/common/video_helpers.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/cuda/check.h"
#include "core/equalize/equalize.h"
#include "core/histogram/histogram.h"
#include "core/video/file_source.h"
#include "core/video/writer.h"

namespace histeq::test {

FrameCopy copy_frame(const video::Frame& f) {
  FrameCopy c;
  c.format = f.format();
  c.pts = f.pts;
  c.time_s = f.time_s;
  c.full_range = f.color.range == 2;  // AVCOL_RANGE_JPEG
  for (int i = 0; i < f.plane_count(); ++i) {
    const PlaneRef p = f.plane(i);
    std::vector<uint8_t> bytes(p.row_bytes() * p.height);
    if (p.on_device()) {
      // Device frames come down whole (tests only: a synchronous copy).
      if (cudaMemcpy2D(bytes.data(), p.row_bytes(), p.data, p.pitch, p.row_bytes(), p.height, cudaMemcpyDeviceToHost) != cudaSuccess)
        bytes.clear();
    } else {
      for (int y = 0; y < p.height; ++y)
        std::memcpy(bytes.data() + y * p.row_bytes(), static_cast<const uint8_t*>(p.data) + y * p.pitch, p.row_bytes());
    }
    c.planes.push_back(std::move(bytes));
  }
  return c;
}

eq::Levels reference_levels(const FrameCopy& f, bool textbook) {
  return eq::nominal_levels(f.format.bit_depth, f.full_range, textbook);
}

void reference_equalize(FrameCopy& f, uint32_t weight, bool textbook) {
  const eq::Levels levels = reference_levels(f, textbook);
  const int bins = f.format.bins();
  auto k = hist::create_kernel("cpu_reference");
  std::vector<uint32_t> h(bins);
  std::vector<uint16_t> lut(bins);
  const int w = f.format.width, hgt = f.format.height;
  if (f.format.bit_depth == 8) {
    PlaneView<uint8_t> y{f.planes[0].data(), w, hgt, static_cast<size_t>(w), 8, MemoryKind::host};
    (void)hist::compute(**k, y, {h.data(), bins, MemoryKind::host});
    (void)eq::build_lut(h.data(), bins, weight, levels, lut.data());
    (void)eq::apply_lut(y, lut.data(), bins);
  } else {
    PlaneView<uint16_t> y{reinterpret_cast<uint16_t*>(f.planes[0].data()), w, hgt, static_cast<size_t>(w) * 2,
                          f.format.bit_depth, MemoryKind::host};
    (void)hist::compute(**k, y, {h.data(), bins, MemoryKind::host});
    (void)eq::build_lut(h.data(), bins, weight, levels, lut.data());
    (void)eq::apply_lut(y, lut.data(), bins);
  }
}

double ks_to_uniform(const FrameCopy& f) {
  const int bins = f.format.bins();
  std::vector<double> h(bins, 0.0);
  const size_t n = static_cast<size_t>(f.format.width) * f.format.height;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = f.format.bit_depth == 8 ? f.planes[0][i] : reinterpret_cast<const uint16_t*>(f.planes[0].data())[i];
    if (v < static_cast<uint32_t>(bins)) h[v] += 1;
  }
  double cdf = 0, worst = 0;
  for (int v = 0; v < bins; ++v) {
    cdf += h[v] / n;
    worst = std::max(worst, std::abs(cdf - (v + 1.0) / bins));
  }
  return worst;
}

Status write_synthetic_clip(const std::string& path, const video::SyntheticOptions& opts, const std::string& codec,
                            const video::FrameFormat* as) {
  auto src = video::open_synthetic(opts);
  if (!src) return src.status();
  const video::SourceInfo& info = (*src)->info();
  auto pool = video::FramePool::create(info.format, MemoryKind::host);
  if (!pool) return pool.status();
  video::VideoInput in;
  in.time_base = info.time_base;
  in.frame_rate = info.frame_rate;
  in.color = info.color;
  video::WriterOptions wo;
  wo.path = path;
  wo.temp_path = path;
  wo.codec = codec;
  std::vector<std::string> notes;
  auto w = video::VideoWriter::open(wo, in, as != nullptr ? *as : info.format, notes);
  if (!w) return w.status();
  for (;;) {
    auto f = (*src)->next(**pool);
    if (!f) return f.status();
    if (!f.value()) break;
    HISTEQ_TRY((*w)->encode(*f.value()));
  }
  return (*w)->finish();
}

Result<std::vector<FrameCopy>> read_frames(const std::string& path) {
  auto src = video::FileSource::open(path);
  if (!src) return src.status();
  auto pool = video::FramePool::create((*src)->info().format, MemoryKind::host);
  if (!pool) return pool.status();
  std::vector<FrameCopy> out;
  for (;;) {
    auto f = (*src)->next(**pool);
    if (!f) return f.status();
    if (!f.value()) break;
    out.push_back(copy_frame(*f.value()));
  }
  return out;
}

namespace {

class CollectSink final : public pipeline::Sink {
 public:
  explicit CollectSink(PipelineRun& run) : run_(run) {}
  Status consume(pipeline::PipelineFrame f, pipeline::FrameRecord& rec) override {
    run_.frames.push_back(copy_frame(*f.frame));
    if (f.frame->on_device()) run_.device_frames.push_back(run_.frames.back());
    run_.side.push_back(std::move(f.side));
    rec.timing.set(video::stage::present, 0.0);
    run_.records.push_back(rec);
    return Status::ok();
  }

 private:
  PipelineRun& run_;
};

}  // namespace

Result<PipelineRun> run_pipeline(video::Source& source, const pipeline::PipelineOptions& opts) {
  auto p = pipeline::Pipeline::create(opts, source.info());
  if (!p) return p.status();
  PipelineRun run;
  run.equalizer = (*p)->equalizer();
  CollectSink sink(run);
  std::atomic<bool> stop{false};
  HISTEQ_TRY((*p)->run(source, sink, stop));
  run.stages = (*p)->stages();
  run.counters = (*p)->counters();
  return run;
}

video::SyntheticOptions synthetic_clip(int width, int height, int frames) {
  video::SyntheticOptions o;
  o.width = width;
  o.height = height;
  o.fps = 30;
  o.duration_s = frames / 30.0;
  return o;
}

std::string temp_path(const std::string& name) {
  static std::atomic<int> counter{0};
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/histeq-test-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++) + "-" + name;
}

}  // namespace histeq::test
