#include "process.h"

#include <memory>

namespace histeq::py {

namespace {

struct Geometry {
  int count = 1;         // planes
  int64_t samples[3]{};  // per row
  int64_t rows[3]{};
  bool wide = false;     // 16-bit samples
};

Geometry geometry(PixelFormat format, int64_t rows, int64_t cols) {
  Geometry g;
  g.wide = !(format == PixelFormat::gray8 || format == PixelFormat::yuv444p || format == PixelFormat::yuv420p ||
             format == PixelFormat::nv12);
  const bool full = format == PixelFormat::yuv444p || format == PixelFormat::yuv444p10;
  const bool semi = format == PixelFormat::nv12 || format == PixelFormat::p010;
  g.count = format == PixelFormat::gray8 || format == PixelFormat::gray10 ? 1 : semi ? 2 : 3;
  const int64_t cw = full ? cols : (cols + 1) / 2, ch = full ? rows : (rows + 1) / 2;
  for (int i = 0; i < g.count; ++i) {
    g.samples[i] = i == 0 ? cols : semi ? 2 * cw : cw;
    g.rows[i] = i == 0 ? rows : ch;
  }
  return g;
}

// The work planes of one frame: the equalizer's format, tight rows, in the frames' memory.
class Work {
 public:
  Status allocate(const Frames& f, Stream stream) {
    const Geometry g = geometry(f.format, f.rows, f.cols);
    count_ = g.count;
    size_t offset = 0, at[3] = {0, 0, 0};
    for (int i = 0; i < count_; ++i) {
      at[i] = offset;
      planes_[i].pitch = size_t(g.samples[i]) * (g.wide ? 2 : 1);
      planes_[i].wide = g.wide;
      offset += planes_[i].pitch * size_t(g.rows[i]);
    }
    char* base = nullptr;
    if (f.memory() == Memory::device) {
      if (Status s = device_.allocate(offset, f.device(), stream); !s.ok()) return s;
      base = static_cast<char*>(device_.data());
    } else {
      host_.reset(new uint8_t[offset == 0 ? 1 : offset]);  // not zeroed: every sample is written
      base = reinterpret_cast<char*>(host_.get());
    }
    image_ = image_header(f);
    for (int i = 0; i < count_; ++i) {
      planes_[i].data = base + at[i];
      image_.planes[i] = {planes_[i].data, planes_[i].pitch};
    }
    return Status();
  }
  const WorkPlane* planes() const { return planes_; }
  Image image(double time) const {
    Image im = image_;
    im.time_s = time;
    return im;
  }

 private:
  WorkPlane planes_[3];
  int count_ = 0;
  Image image_;
  DeviceScratch device_;
  std::unique_ptr<uint8_t[]> host_;
};

Status load(const Frames& f, int64_t k, const Work& w, const Where& where) {
  const std::vector<Strided> s = strided_of(f, k);
  if (f.channels > 1) return load_colour(s.data(), w.planes(), where);
  for (size_t i = 0; i < s.size(); ++i)
    if (Status st = load_plane(s[i], w.planes()[i], where); !st.ok()) return st;
  return Status();
}

Status store(const Work& w, const Frames& in, const Frames& out, int64_t k, const Where& where) {
  const std::vector<Strided> d = strided_of(out, k);
  if (out.channels == 1) {
    for (size_t i = 0; i < d.size(); ++i)
      if (Status st = store_plane(w.planes()[i], d[i], where); !st.ok()) return st;
    return Status();
  }
  const std::vector<Strided> s = strided_of(in, k);
  const Strided none;
  return store_colour(w.planes(), d.data(), out.channels == 4 ? s[3] : none, out.channels == 4 ? d[3] : none, where);
}

}  // namespace

Status run_frames(const Frames& in, const Frames& out, const std::vector<double>& times, Stream stream,
                  const ProcessFrame& process) {
  const Where where{in.memory(), in.device(), stream};
  Work work;
  if (!in.direct || !out.direct)
    if (Status s = work.allocate(in, stream); !s.ok()) return s;
  for (int64_t k = 0; k < in.count; ++k) {
    const double t = times.empty() ? -1 : times[size_t(k)];
    Image a = in.direct ? image_of(in, k) : work.image(t);
    a.time_s = t;
    if (!in.direct)
      if (Status s = load(in, k, work, where); !s.ok()) return s;
    const Image b = out.direct ? image_of(out, k) : work.image(t);
    if (Status s = process(a, b, stream); !s.ok()) return s;
    if (!out.direct)
      if (Status s = store(work, in, out, k, where); !s.ok()) return s;
  }
  return Status();
}

}  // namespace histeq::py
