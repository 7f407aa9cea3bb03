#include "tests/common/quality_cases.h"

#include <algorithm>

#include "core/cuda/device.h"
#include "core/image/synthetic.h"

namespace histeq::test {

video::FramePtr painted_frame(video::FramePool& pool, int n, double fps, const Painter& paint) {
  auto got = pool.get();
  if (!got) return nullptr;
  video::FramePtr f = std::move(got.value());
  const video::FrameFormat& fmt = f->format();
  for (int i = 0; i < f->plane_count(); ++i) {
    const PlaneRef p = f->plane(i);
    for (int y = 0; y < p.height; ++y) {
      unsigned char* row = static_cast<unsigned char*>(const_cast<void*>(p.data)) + static_cast<size_t>(y) * p.pitch;
      for (int x = 0; x < p.width; ++x) {
        const uint32_t v = paint(i, x, y, n);
        if (fmt.bytes_per_sample() == 1) row[x] = static_cast<uint8_t>(v);
        else reinterpret_cast<uint16_t*>(row)[x] = static_cast<uint16_t>(v);
      }
    }
  }
  f->index = n;
  f->time_s = n / fps;
  f->pts = n;
  f->time_base = {1, static_cast<int>(fps)};
  f->color.range = 1;  // limited
  return f;
}

Painter dim_scene(const video::FrameFormat& f, int cut, uint32_t seed) {
  const int w = f.width, h = f.height, shift = f.storage_depth() - 8;  // P010: in the high bits
  const bool nv12 = f.layout == video::PlaneLayout::semi_planar;
  return [=](int plane, int x, int y, int n) -> uint32_t {
    const bool second = n >= cut;
    const uint32_t s = second ? seed + 17 : seed;
    if (plane == 0) {
      // Texture in 24..72 (or 90..200 after the cut), grain, and a bright 1/8-wide bar moving right.
      const int64_t tex = synth::value_noise_q16(static_cast<uint32_t>(x + 2 * n), static_cast<uint32_t>(y), 16, s);
      const uint32_t grain = synth::hash_xy(static_cast<uint32_t>(x), static_cast<uint32_t>(y), s + static_cast<uint32_t>(n)) % 7;
      uint32_t v = second ? 90 + static_cast<uint32_t>(tex * 110 >> 16) : 24 + static_cast<uint32_t>(tex * 48 >> 16);
      v += grain;
      const int bar = (n * 3) % std::max(1, w);
      if (!second && x >= bar && x < bar + std::max(1, w / 8) && y < h / 2) v = 200;
      return std::min<uint32_t>(v, 255) << shift;
    }
    // A tint: blue-ish left, red-ish right, neutral in the middle; NV12 interleaves U and V.
    const int cx = nv12 ? x / 2 : x;
    const bool is_v = nv12 ? (x & 1) != 0 : plane == 2;
    const int cw = std::max(1, f.chroma_width());
    const int d = (cx * 40) / cw - 20;  // -20..20
    const uint32_t c = static_cast<uint32_t>(128 + (is_v ? d : -d));
    return c << shift;
  };
}

pipeline::EqualizerOptions cpu_options(const eq::Quality& q) {
  pipeline::EqualizerOptions o;
  o.cpu = true;
  o.quality = q;
  o.keep_histogram = true;
  return o;
}

Result<DrivenRun> drive(const pipeline::EqualizerOptions& opts, const video::FrameFormat& format, int frames, const Painter& paint,
                        const std::function<void(int, pipeline::Equalizer&)>& before, double fps) {
  auto eq = pipeline::Equalizer::create(opts, format);
  if (!eq) return eq.status();
  auto pool = video::FramePool::create(format, (*eq)->input_memory());
  if (!pool) return pool.status();
  DrivenRun run;
  std::vector<pipeline::PipelineFrame> done;
  auto take = [&] {
    for (auto& d : done) {
      run.frames.push_back(copy_frame(*d.frame));
      if (d.side.compare) run.compare.push_back(copy_frame(*d.side.compare));
      d.side.compare.reset();
      d.side.input_luma.reset();
      run.side.push_back(std::move(d.side));
    }
    done.clear();
  };
  for (int n = 0; n < frames; ++n) {
    if (before) before(n, **eq);
    video::FramePtr f = painted_frame(**pool, n, fps, paint);
    if (!f) return HISTEQ_ERROR(Code::internal, "no frame from the pool");
    HISTEQ_TRY((*eq)->submit(std::move(f), done));
    take();
  }
  HISTEQ_TRY((*eq)->flush(done));
  take();
  return run;
}

}  // namespace histeq::test
