#include "tests/common/api_cases.h"

#include <cstring>
#include <memory>

#include "core/equalize/controls.h"
#include "core/equalize/quality.h"
#include "core/pipeline/equalizer.h"
#include "core/video/frame.h"

namespace histeq::test {
namespace {

bool gray(api::PixelFormat f) { return f == api::PixelFormat::gray8 || f == api::PixelFormat::gray10; }
bool semi(api::PixelFormat f) { return f == api::PixelFormat::nv12 || f == api::PixelFormat::p010; }
bool full_chroma(api::PixelFormat f) { return f == api::PixelFormat::yuv444p || f == api::PixelFormat::yuv444p10; }
int depth(api::PixelFormat f) {
  return f == api::PixelFormat::gray10 || f == api::PixelFormat::yuv420p10 || f == api::PixelFormat::p010 ||
                 f == api::PixelFormat::yuv444p10
             ? 10
             : 8;
}

// A small deterministic generator (the same frames on every machine).
uint32_t hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

// The 8-bit value of luma (x, y) of frame n: a mid-grey gradient of low contrast (so the curve has
// work to do), a bright block moving right, noise; after the cut at n = 4 a darker picture.
int luma8(int x, int y, int w, int h, int n) {
  const bool after_cut = n >= 4;
  int v = (after_cut ? 30 : 90) + 60 * x / w + 30 * y / h;
  const int bx = (n * 5) % w;
  if (x >= bx && x < bx + w / 4 && y >= h / 3 && y < h / 3 + h / 4) v += after_cut ? 40 : 70;
  v += static_cast<int>(hash(static_cast<uint32_t>((n * 131 + y) * 4099 + x)) % 9) - 4;
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

void put(std::vector<uint8_t>& row, int i, int bytes, uint32_t v) {
  if (bytes == 1) row[static_cast<size_t>(i)] = static_cast<uint8_t>(v);
  else std::memcpy(&row[2 * static_cast<size_t>(i)], &v, 2);  // little endian, as FFmpeg's 16-bit formats
}

video::FrameFormat engine_format(const ApiFrame& f) {
  video::FrameFormat v;
  v.width = f.width;
  v.height = f.height;
  v.bit_depth = depth(f.format);
  v.layout = semi(f.format) ? video::PlaneLayout::semi_planar : video::PlaneLayout::planar;
  if (full_chroma(f.format)) v.chroma_shift_x = v.chroma_shift_y = 0;
  return v;
}

// The settings as the command line resolves them: the defaults (or --plain), then each control.
Result<pipeline::EqualizerOptions> engine_options(const EngineSettings& s) {
  pipeline::EqualizerOptions o;
  o.cpu = true;
  o.quality = eq::default_quality();
  const std::vector<eq::Control> table = eq::controls();
  if (s.plain)
    for (const auto& c : table)
      if (c.has_plain() && !c.plain_free) eq::copy_control(c, eq::plain_quality(), o.quality);
  for (const auto& [name, value] : s.controls) {
    if (name == "strength") o.strength = std::stod(value);
    else if (name == "kernel") o.kernel = value;
    else if (const eq::Control* c = eq::find_control(table, name)) HISTEQ_TRY(eq::set_control_text(*c, o.quality, value));
    else return HISTEQ_ERROR(Code::invalid_argument, "test: unknown control " + name);
  }
  return o;
}

// The frame as core/pipeline takes it: its planes copied into a host pool frame (gray: 4:2:0 with
// neutral chroma).
Result<video::FramePtr> engine_frame(video::FramePool& pool, const ApiFrame& f, int64_t index) {
  auto fr = pool.get();
  if (!fr) return fr.status();
  video::Frame& out = **fr;
  for (int i = 0; i < out.plane_count(); ++i) {
    const PlaneRef p = out.plane(i);
    for (int y = 0; y < p.height; ++y) {
      auto* row = static_cast<uint8_t*>(const_cast<void*>(p.data)) + static_cast<size_t>(y) * p.pitch;
      if (i < static_cast<int>(f.planes.size())) {
        std::memcpy(row, f.planes[i].data() + static_cast<size_t>(y) * f.pitch[i], p.row_bytes());
      } else {
        for (int x = 0; x < p.width; ++x) {
          const uint32_t neutral = 1u << (depth(f.format) - 1);
          if (p.bytes_per_sample == 1) row[x] = static_cast<uint8_t>(neutral);
          else std::memcpy(row + 2 * x, &neutral, 2);
        }
      }
    }
  }
  out.time_s = f.time_s;
  out.index = index;
  out.color.range = f.range == api::ColorRange::full ? 2 : f.range == api::ColorRange::limited ? 1 : 0;
  return fr;
}

std::vector<std::vector<uint8_t>> packed_planes(const video::Frame& f, int count) {
  std::vector<std::vector<uint8_t>> v;
  for (int i = 0; i < count; ++i) {
    const PlaneRef p = f.plane(i);
    std::vector<uint8_t> b;
    for (int y = 0; y < p.height; ++y) {
      const auto* row = static_cast<const uint8_t*>(p.data) + static_cast<size_t>(y) * p.pitch;
      b.insert(b.end(), row, row + p.row_bytes());
    }
    v.push_back(std::move(b));
  }
  return v;
}

}  // namespace

const char* format_name(api::PixelFormat f) {
  switch (f) {
    case api::PixelFormat::gray8: return "gray8";
    case api::PixelFormat::gray10: return "gray10";
    case api::PixelFormat::yuv420p: return "yuv420p";
    case api::PixelFormat::yuv420p10: return "yuv420p10";
    case api::PixelFormat::nv12: return "nv12";
    case api::PixelFormat::p010: return "p010";
    case api::PixelFormat::yuv444p: return "yuv444p";
    case api::PixelFormat::yuv444p10: return "yuv444p10";
    case api::PixelFormat::yuv422p: return "yuv422p";
    case api::PixelFormat::yuv422p10: return "yuv422p10";
  }
  return "?";
}

std::vector<api::PixelFormat> all_formats() {
  return {api::PixelFormat::gray8, api::PixelFormat::gray10, api::PixelFormat::yuv420p,
          api::PixelFormat::yuv420p10, api::PixelFormat::nv12, api::PixelFormat::p010,
          api::PixelFormat::yuv444p, api::PixelFormat::yuv444p10};
}

int ApiFrame::rows(int i) const { return i == 0 || full_chroma(format) ? height : (height + 1) / 2; }
size_t ApiFrame::row_bytes(int i) const {
  const int bytes = depth(format) > 8 ? 2 : 1;
  const int cw = full_chroma(format) ? width : (width + 1) / 2;
  const int samples = i == 0 ? width : semi(format) ? 2 * cw : cw;
  return static_cast<size_t>(samples) * static_cast<size_t>(bytes);
}

api::Image ApiFrame::image() {
  api::Image im;
  im.format = format;
  im.width = width;
  im.height = height;
  im.range = range;
  im.time_s = time_s;
  for (size_t i = 0; i < planes.size(); ++i) im.planes[i] = {planes[i].data(), pitch[i]};
  return im;
}

std::vector<uint8_t> ApiFrame::packed(int i) const {
  std::vector<uint8_t> b;
  for (int y = 0; y < rows(i); ++y) {
    const uint8_t* row = planes[static_cast<size_t>(i)].data() + static_cast<size_t>(y) * pitch[static_cast<size_t>(i)];
    b.insert(b.end(), row, row + row_bytes(i));
  }
  return b;
}

ApiFrame make_frame(api::PixelFormat format, int width, int height, int n, size_t padding) {
  ApiFrame f;
  f.format = format;
  f.width = width;
  f.height = height;
  f.time_s = n / 30.0;
  const int count = gray(format) ? 1 : semi(format) ? 2 : 3;
  const int bytes = depth(format) > 8 ? 2 : 1;
  for (int i = 0; i < count; ++i) {
    const size_t pitch = f.row_bytes(i) + padding * static_cast<size_t>(bytes);
    std::vector<uint8_t> plane(pitch * static_cast<size_t>(f.rows(i)), 0xA5);
    for (int y = 0; y < f.rows(i); ++y) {
      std::vector<uint8_t> row(f.row_bytes(i));
      const int samples = static_cast<int>(f.row_bytes(i)) / bytes;
      for (int x = 0; x < samples; ++x) {
        const uint32_t v8 = i == 0 ? static_cast<uint32_t>(luma8(x, y, width, height, n))
                                   : 128u + (hash(static_cast<uint32_t>(x * 7 + y * 13 + i)) % 41) - 20;
        const uint32_t v10 = depth(format) > 8 ? (v8 << 2) | (v8 & 3u) : v8;        // every level of 10 bits used
        const uint32_t v = format == api::PixelFormat::p010 ? v10 << 6 : v10;      // P010: the high bits
        put(row, x, bytes, v);
      }
      std::memcpy(plane.data() + static_cast<size_t>(y) * pitch, row.data(), row.size());
    }
    f.planes.push_back(std::move(plane));
    f.pitch.push_back(pitch);
  }
  return f;
}

api::Settings EngineSettings::api() const {
  api::Settings s = plain ? api::Settings::plain() : api::Settings();
  (void)s.set("backend", "cpu");
  for (const auto& [name, value] : controls) (void)s.set(name, value);
  return s;
}

Result<std::vector<std::vector<std::vector<uint8_t>>>> pipeline_reference(const std::vector<ApiFrame>& frames,
                                                                          const EngineSettings& s,
                                                                          const std::vector<Change>& changes) {
  if (frames.empty()) return std::vector<std::vector<std::vector<uint8_t>>>{};
  auto o = engine_options(s);
  if (!o) return o.status();
  const video::FrameFormat fmt = engine_format(frames[0]);
  auto e = pipeline::Equalizer::create(*o, fmt);
  if (!e) return e.status();
  auto pool = video::FramePool::create(fmt, MemoryKind::host);
  if (!pool) return pool.status();
  std::vector<std::vector<std::vector<uint8_t>>> out;
  EngineSettings live = s;
  for (size_t n = 0; n < frames.size(); ++n) {
    for (const auto& c : changes) {
      if (c.first != static_cast<int>(n)) continue;
      live.controls.push_back(c.second);
      auto lo = engine_options(live);
      if (!lo) return lo.status();
      HISTEQ_TRY((*e)->set_quality(lo->quality));
      HISTEQ_TRY((*e)->set_strength(lo->strength));
    }
    auto f = engine_frame(**pool, frames[n], static_cast<int64_t>(n));
    if (!f) return f.status();
    std::vector<pipeline::PipelineFrame> done;
    HISTEQ_TRY((*e)->submit(std::move(f.value()), done));
    HISTEQ_TRY((*e)->flush(done));
    for (auto& d : done) out.push_back(packed_planes(*d.frame, static_cast<int>(frames[n].planes.size())));
  }
  return out;
}

}  // namespace histeq::test
