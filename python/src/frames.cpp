#include "frames.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace histeq::py {

namespace {

constexpr int64_t kMaxSide = 1 << 16;

std::string plane_name(const char* what, size_t i, bool single) {
  return single ? std::string(what) : std::string(what) + "[" + std::to_string(i) + "]";
}

bool channels_axis(int64_t n) { return n == 1 || n == 3 || n == 4; }

// The layout of a single array from its shape, or as the caller named it.
std::string layout_of(const ArrayView& v, const std::string& given, const char* what) {
  static const char* const known[] = {"HW", "HWC", "CHW", "NHW", "NHWC", "NCHW"};
  if (!given.empty()) {
    if (std::find(std::begin(known), std::end(known), given) == std::end(known))
      value_error(std::string(what) + ": layout must be HW, HWC, CHW, NHW, NHWC or NCHW, not '" + given + "'");
    if (int(given.size()) != v.ndim)
      value_error(std::string(what) + ": layout '" + given + "' needs a " + std::to_string(given.size()) + "-D array, got shape " +
                  v.shape_text());
    return given;
  }
  if (v.ndim == 2) return "HW";
  if (v.ndim == 3) return channels_axis(v.shape[2]) ? "HWC" : "NHW";  // H x W x 1: grey, as OpenCV's 1-channel Mat
  if (v.ndim == 4) {
    const bool last = channels_axis(v.shape[3]), second = channels_axis(v.shape[1]);
    if (last && !second) return "NHWC";
    if (second && !last) return "NCHW";
    value_error(std::string(what) + ": a 4-D array of shape " + v.shape_text() +
                " could be NHWC or NCHW: pass layout='NHWC' or layout='NCHW'");
  }
  value_error(std::string(what) + ": expected a 2-D plane, a 3-D colour picture or batch, or a 4-D batch, got shape " +
              v.shape_text());
}

// The axes of a single array into Frames (frames, rows, columns, channels and their strides).
void set_axes(Frames& f, const ArrayView& v, const std::string& layout, const char* what) {
  auto axis = [&](char name) -> int {
    const size_t i = layout.find(name);
    return i == std::string::npos ? -1 : int(i);
  };
  const int n = axis('N'), h = axis('H'), w = axis('W'), c = axis('C');
  f.batch = n >= 0;
  f.count = f.batch ? v.shape[n] : 1;
  f.frame_stride = f.batch ? v.strides[n] : 0;
  f.rows = v.shape[h];
  f.cols = v.shape[w];
  f.row_stride = v.strides[h];
  f.col_stride = v.strides[w];
  f.channels = c >= 0 ? int(v.shape[c]) : 1;
  f.channel_stride = c >= 0 ? v.strides[c] : 0;
  if (c >= 0 && !channels_axis(v.shape[c]))
    value_error(std::string(what) + ": " + std::to_string(v.shape[c]) + " channels in a " + layout + " array of shape " +
                v.shape_text() + " (1 grey, 3 BGR/RGB, 4 with alpha)");
  if (f.count < 1) value_error(std::string(what) + ": the batch is empty, shape " + v.shape_text());
}

void check_side(int64_t rows, int64_t cols, const std::string& name, const ArrayView& v) {
  if (rows < 1 || cols < 1) value_error(name + ": the plane is empty, shape " + v.shape_text());
  if (rows > kMaxSide || cols > kMaxSide) value_error(name + ": larger than 65536 samples a side, shape " + v.shape_text());
}

// PyAV's VideoFrame.to_ndarray() of yuv420p is one (1.5 H) x W array: Y, then U and V, each row of
// the lower third holding two chroma rows side by side. Read as grey, its chroma would be
// equalized as picture. Three signs of it, two needed (a noise or gradient picture shows none):
// a seam in the middle of the lower third's rows (the right edge of one chroma row beside the left
// edge of the next), each row's halves alike (adjacent chroma rows), and a step at row H (luma to
// chroma); a uniform 128 lower third under a picture is a grey video's chroma.
bool looks_like_packed_yuv420p(const ArrayView& v) {
  const int64_t rows = v.shape[0], cols = v.shape[1], h = rows * 2 / 3;
  if (rows % 3 != 0 || cols % 2 != 0 || h < 4 || cols < 8 || v.strides[1] != 1) return false;
  auto px = [&](int64_t r, int64_t c) { return int(static_cast<const uint8_t*>(v.data)[r * v.strides[0] + c]); };
  const int64_t half = cols / 2, rstep = std::max<int64_t>(1, (rows - h) / 32), cstep = std::max<int64_t>(1, half / 32);
  double seam = 0, across = 0, halves = 0, down = 0, jump = 0, luma_down = 0;
  int64_t n_seam = 0, n = 0, n_top = 0;
  bool uniform = true, top_uniform = true;
  for (int64_t r = h; r + 1 < rows; r += rstep, ++n_seam) {
    seam += std::abs(px(r, half - 1) - px(r, half));
    for (int64_t c = 0; c + 1 < half; c += cstep, ++n) {
      across += std::abs(px(r, c) - px(r, c + 1));
      halves += std::abs(px(r, c) - px(r, c + half));
      down += std::abs(px(r, c) - px(r + 1, c));
      uniform = uniform && px(r, c) == 128 && px(r, c + half) == 128;
    }
  }
  for (int64_t c = 0; c < cols; c += cstep, ++n_top) {
    jump += std::abs(px(h - 1, c) - px(h, c));
    luma_down += std::abs(px(h - 2, c) - px(h - 1, c));
    top_uniform = top_uniform && px(h - 1, c) == px(0, 0);
  }
  if (n == 0 || n_seam == 0) return false;
  if (uniform) return !top_uniform;
  seam /= double(n_seam), across /= double(n), halves /= double(n), down /= double(n);
  jump /= double(n_top), luma_down /= double(n_top);
  const int signs = (seam > 2 * across + 2) + (halves < 0.75 * down) + (jump > 3 * luma_down + 4);
  return signs >= 2;
}

// One plane of a tuple: 2-D (rows, samples), or NV12's uv as (rows, columns, 2) with its pairs adjacent.
Strided plane_strided(const ArrayView& v, const std::string& name) {
  Strided s;
  s.data = static_cast<char*>(v.data);
  s.rows = v.shape[0];
  s.row_stride = v.strides[0];
  s.sample = v.sample;
  if (v.ndim == 3) {
    if (v.strides[2] != v.itemsize || v.strides[1] != 2 * v.itemsize)
      value_error(name + ": the U, V pairs of an interleaved plane must be adjacent (strides " + std::to_string(v.strides[1]) + ", " +
                  std::to_string(v.strides[2]) + ")");
    s.cols = 2 * v.shape[1];
    s.col_stride = v.itemsize;
  } else {
    s.cols = v.shape[1];
    s.col_stride = v.strides[1];
  }
  return s;
}

// Rows of contiguous samples, a pitch the equalizer takes (>= a row, whole samples, aligned).
bool readable_as_is(const Strided& s, int itemsize, const void* data) {
  const int64_t row = s.cols * itemsize;
  return s.col_stride == itemsize && (s.rows == 1 || (s.row_stride >= row && s.row_stride % itemsize == 0)) &&
         reinterpret_cast<uintptr_t>(data) % uintptr_t(itemsize) == 0;
}

void parse_single(Frames& f, nb::handle frame, const char* what, const CallStream& stream, const FrameOptions& o) {
  f.planes.push_back(view_array(frame, what, stream));
  const ArrayView& v = f.planes[0];
  const std::string layout = layout_of(v, o.layout, what);
  set_axes(f, v, layout, what);
  check_side(f.rows, f.cols, what, v);
  const bool input = std::string(what) == "frame";  // out= holds no picture yet
  if (input && o.layout.empty() && layout == "HW" && v.sample == cvt::Sample::u8 && v.memory == Memory::host &&
      looks_like_packed_yuv420p(v))
    value_error(std::string(what) + ": a " + v.shape_text() + " uint8 array that holds yuv420p (PyAV's VideoFrame.to_ndarray(): " +
                std::to_string(v.shape[0] * 2 / 3) + " rows of Y, then U and V) is not a grey picture: pass "
                "histeq.yuv420p_planes(a) (or the VideoFrame itself); layout='HW' reads it as grey");
  if (f.channels == 1) f.format = v.sample == cvt::Sample::u8 ? PixelFormat::gray8 : PixelFormat::gray10;
  else f.format = v.sample == cvt::Sample::u8 ? PixelFormat::yuv444p : PixelFormat::yuv444p10;
}

// Chroma plane i of a tuple: the 4:2:0 (or, with three planes, 4:4:4) chroma of the luma.
void check_chroma(const Frames& f, size_t i, bool full, const char* what) {
  const ArrayView &y = f.planes[0], &p = f.planes[i];
  const size_t n = f.planes.size();
  const std::string name = plane_name(what, i, false);
  if (p.sample != y.sample) type_error(name + ": the planes must share one dtype (" + y.dtype_name() + " and " + p.dtype_name() + ")");
  if (p.memory != y.memory || p.device != y.device) value_error(name + ": the planes must be on one device");
  const int64_t rows = (f.rows + 1) / 2, cols = (f.cols + 1) / 2;
  const int64_t r = full ? f.rows : rows, c = full ? f.cols : cols;
  const bool two = p.ndim == 2 && p.shape[0] == r && p.shape[1] == (n == 2 ? 2 * c : c);
  const bool three = n == 2 && p.ndim == 3 && p.shape[0] == r && p.shape[1] == c && p.shape[2] == 2;
  if (two || three) return;
  const std::string half = "(" + std::to_string(rows) + ", " + std::to_string(cols);
  value_error(name + ": expected the 4:2:0 chroma of the luma plane, " +
              (n == 2 ? half + ", 2) or (" + std::to_string(rows) + ", " + std::to_string(2 * cols) + ")"
                      : half + ") or its 4:4:4 chroma (" + std::to_string(f.rows) + ", " + std::to_string(f.cols) + ")") +
              ", got shape " + p.shape_text());
}

PixelFormat tuple_format(size_t planes, bool wide, bool full) {
  if (planes == 2) return wide ? PixelFormat::p010 : PixelFormat::nv12;
  if (full) return wide ? PixelFormat::yuv444p10 : PixelFormat::yuv444p;
  return wide ? PixelFormat::yuv420p10 : PixelFormat::yuv420p;
}

void parse_tuple(Frames& f, nb::handle frame, const char* what, const CallStream& stream) {
  nb::sequence seq = nb::borrow<nb::sequence>(frame);
  const size_t n = nb::len(seq);
  if (n != 2 && n != 3)
    value_error(std::string(what) + ": a frame is one array, (y, u, v) or (y, uv) for NV12/P010; got a sequence of " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) f.planes.push_back(view_array(seq[i], plane_name(what, i, false).c_str(), stream));
  const ArrayView& y = f.planes[0];
  const std::string yname = plane_name(what, 0, false);
  if (y.ndim != 2) value_error(yname + ": expected a 2-D array (rows, columns), got shape " + y.shape_text());
  f.rows = y.shape[0];
  f.cols = y.shape[1];
  check_side(f.rows, f.cols, yname, y);
  const bool full = n == 3 && f.planes[1].ndim == 2 && f.planes[1].shape[0] == f.rows && f.planes[1].shape[1] == f.cols;
  for (size_t i = 1; i < n; ++i) check_chroma(f, i, full, what);
  const bool wide = y.sample != cvt::Sample::u8;
  if (n == 2 && y.is_float()) type_error(what + std::string(": (y, uv) is NV12 (uint8) or P010 (uint16), not ") + y.dtype_name());
  f.p010 = n == 2 && wide;
  f.format = tuple_format(n, wide, full);
}

void set_bits(Frames& f, const FrameOptions& o, const char* what) {
  const ArrayView& v = f.planes[0];
  if (o.bits != 0 && (v.sample != cvt::Sample::u16 || f.p010))
    value_error(std::string(what) + ": bits= is for uint16 planar samples (10, 12 or 16), not " +
                (f.p010 ? std::string("P010 (10 bits, high)") : v.dtype_name()));
  if (o.bits != 0 && (o.bits < 9 || o.bits > 16)) value_error("bits: must be 9..16 (10, 12 or 16), not " + std::to_string(o.bits));
  f.bits_given = o.bits != 0;
  f.bits = v.sample == cvt::Sample::u8 ? 8 : v.sample == cvt::Sample::u16 ? (o.bits != 0 ? o.bits : 10) : 10;
  f.bits = f.p010 ? 16 : f.bits;
  // Pictures rather than video: RGB, float and deeper than 10 bits are full range.
  if (f.channels > 1 || v.is_float() || (v.sample == cvt::Sample::u16 && f.bits > 10 && !f.p010)) f.range = ColorRange::full;
  if (o.range != ColorRange::unspecified) f.range = o.range;
}

// Whether the equalizer takes the caller's planes as they are (every frame has frame 0's strides).
bool direct(const Frames& f) {
  const ArrayView& v = f.planes[0];
  if (f.channels > 1 || v.is_float() || (v.sample == cvt::Sample::u16 && f.bits != 10 && !f.p010)) return false;
  if (f.count > 1 && f.frame_stride % v.itemsize != 0) return false;
  for (const Strided& s : strided_of(f, 0))
    if (!readable_as_is(s, v.itemsize, s.data)) return false;
  return true;
}

// Whether writing `v` writes any sample twice: a zero stride on an axis of more than one sample, or
// axes that interleave (sorted by stride, each must step over all of the axes below it).
bool overlaps(const ArrayView& v) {
  std::vector<std::pair<int64_t, int64_t>> axes;  // |stride|, extent
  for (int i = 0; i < v.ndim; ++i)
    if (v.shape[i] > 1) axes.push_back({std::llabs(v.strides[i]), v.shape[i]});
  std::sort(axes.begin(), axes.end());
  int64_t span = v.itemsize;
  for (const auto& [stride, extent] : axes) {
    if (stride < span) return true;
    span = stride * extent;
  }
  return false;
}

}  // namespace

Frames parse_frames(nb::handle frame, const char* what, const CallStream& stream, const FrameOptions& o) {
  Frames f;
  f.single = !(PyTuple_Check(frame.ptr()) || PyList_Check(frame.ptr()));
  f.rgb = o.rgb;
  if (f.single) parse_single(f, frame, what, stream, o);
  else parse_tuple(f, frame, what, stream);
  if (!f.single && !o.layout.empty()) value_error(std::string(what) + ": layout= is for single arrays, not a tuple of planes");
  set_bits(f, o, what);
  f.direct = direct(f);
  return f;
}

std::vector<Strided> strided_of(const Frames& f, int64_t k) {
  std::vector<Strided> out;
  const ArrayView& v = f.planes[0];
  if (!f.single) {
    for (size_t i = 0; i < f.planes.size(); ++i) out.push_back(plane_strided(f.planes[i], "plane"));
    for (Strided& s : out) s.bits = f.p010 ? 10 : f.bits;  // P010 copies as it is (10 bits: unchanged)
    return out;
  }
  const Strided s{static_cast<char*>(v.data) + k * f.frame_stride, f.rows, f.cols, f.row_stride, f.col_stride, v.sample, f.bits};
  if (f.channels == 1) return {s};
  // BGR (OpenCV's order) has R third; RGB first. Alpha is the fourth either way.
  for (int c : f.rgb ? std::vector<int>{0, 1, 2} : std::vector<int>{2, 1, 0}) {
    Strided ch = s;
    ch.data += c * f.channel_stride;
    out.push_back(ch);
  }
  if (f.channels == 4) {
    Strided a = s;
    a.data += 3 * f.channel_stride;
    out.push_back(a);
  }
  return out;
}

Image image_header(const Frames& f) {
  Image im;
  im.format = f.format;
  im.width = int(f.cols);
  im.height = int(f.rows);
  im.memory = f.memory();
  im.device = f.device();
  im.range = f.range;
  return im;
}

Image image_of(const Frames& f, int64_t k) {
  Image im = image_header(f);
  const std::vector<Strided> s = strided_of(f, k);
  for (size_t i = 0; i < s.size() && i < 3; ++i)
    im.planes[i] = {s[i].data, s[i].rows == 1 ? size_t(s[i].cols * s[i].col_stride) : size_t(s[i].row_stride)};
  return im;
}

// %g in the C locale whatever the program's (std::to_string would print "1,5" under de_DE).
static std::string number_text(double v) {
  char b[64];
  const auto r = std::to_chars(b, b + sizeof(b), v, std::chars_format::general, 6);
  return std::string(b, r.ec == std::errc() ? r.ptr : b);
}

void check_values(Frames& in, Stream stream) {
  const ArrayView& v = in.planes[0];
  if (v.sample == cvt::Sample::u8 || in.p010) return;
  std::vector<Strided> all;
  for (int64_t k = 0; k < in.count; ++k)
    for (const Strided& s : strided_of(in, k)) all.push_back(s);
  ValueRange r;
  if (Status s = value_range(all, {v.memory, v.device, stream}, r); !s.ok()) throw std::runtime_error(s.message());
  if (v.is_float()) {
    if (r.nan) value_error("frame: NaN in a float frame (float samples must be in [0, 1])");
    if (r.min < 0 || r.max > 1)
      value_error("frame: float samples must be in [0, 1]; these span " + number_text(r.min) + " .. " + number_text(r.max));
    return;
  }
  const int64_t top = (int64_t(1) << in.bits) - 1;
  if (r.max <= double(top)) return;
  if (!in.bits_given)
    value_error("frame: uint16 samples up to " + std::to_string(int64_t(r.max)) +
                " do not fit 10 bits (uint16 is 10-bit video unless bits= says otherwise): pass bits=12 or bits=16");
  value_error("frame: uint16 samples up to " + std::to_string(int64_t(r.max)) + " exceed bits=" + std::to_string(in.bits) +
              " (0.." + std::to_string(top) + ")");
}

void check_output(const Frames& in, const Frames& out) {
  if (in.single != out.single || in.planes.size() != out.planes.size())
    value_error("out: must have the frame's structure (" + std::string(in.single ? "one array" : std::to_string(in.planes.size()) + " planes") + ")");
  for (size_t i = 0; i < in.planes.size(); ++i) {
    const ArrayView &a = in.planes[i], &b = out.planes[i];
    const std::string name = plane_name("out", i, out.single);
    bool same = a.ndim == b.ndim && a.sample == b.sample;
    for (int d = 0; same && d < a.ndim; ++d) same = a.shape[d] == b.shape[d];
    if (!same) value_error(name + ": must have the frame's shape and dtype " + a.shape_text() + " " + a.dtype_name() + ", got " + b.shape_text() + " " + b.dtype_name());
    if (b.memory != a.memory || b.device != a.device) value_error(name + ": must be on the frame's device (host or the same CUDA device)");
    if (overlaps(b)) value_error(name + ": its samples overlap (a broadcast or overlapping view): it cannot be written");
    if (b.readonly) value_error(name + ": the array is read-only");
  }
}

nb::object new_output(nb::handle frame, const Frames& in, const CallStream& stream) {
  if (in.single) return empty_like(frame, in.planes[0], stream.stream);
  nb::sequence seq = nb::borrow<nb::sequence>(frame);
  nb::list outs;
  for (size_t i = 0; i < in.planes.size(); ++i) outs.append(empty_like(seq[i], in.planes[i], stream.stream));
  return nb::tuple(outs);
}

}  // namespace histeq::py
