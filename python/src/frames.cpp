#include "frames.h"

#include <string>

namespace histeq::py {

namespace {

std::string shape_text(const ArrayView& v) {
  std::string s = "(";
  for (int i = 0; i < v.ndim; ++i) s += (i ? ", " : "") + std::to_string(v.shape[i]);
  return s + (v.ndim == 1 ? ",)" : ")");
}

std::string plane_name(const char* what, size_t i, bool single) {
  return single ? std::string(what) : std::string(what) + "[" + std::to_string(i) + "]";
}

// One plane of `rows` x `samples` samples whose rows are contiguous; returns its pitch in bytes.
size_t plane_pitch(const ArrayView& v, const std::string& name, int64_t rows, int64_t samples) {
  int64_t row_bytes = samples * v.itemsize;
  bool interleaved = v.ndim == 3;  // NV12's uv as (rows, columns, 2)
  bool contiguous = interleaved ? (v.strides[2] == v.itemsize && v.strides[1] == 2 * v.itemsize)
                                : v.strides[1] == v.itemsize;
  if (!contiguous)
    value_error(name + ": the samples of a row must be contiguous (strides " + std::to_string(v.strides[0]) + ", " +
                std::to_string(v.strides[1]) + " bytes); pass a C-contiguous array or a view of whole rows");
  int64_t pitch = rows == 1 ? row_bytes : v.strides[0];
  if (pitch < row_bytes || pitch % v.itemsize != 0)
    value_error(name + ": rows " + std::to_string(v.strides[0]) + " bytes apart do not hold " + std::to_string(samples) +
                " samples (negative or overlapping strides are not supported)");
  if (reinterpret_cast<uintptr_t>(v.data) % v.itemsize != 0) value_error(name + ": the data is not aligned to its samples");
  return size_t(pitch);
}

void check_chroma(const ArrayView& v, const std::string& name, int64_t rows, int64_t cols, bool interleaved) {
  bool ok = interleaved ? ((v.ndim == 2 && v.shape[0] == rows && v.shape[1] == 2 * cols) ||
                           (v.ndim == 3 && v.shape[0] == rows && v.shape[1] == cols && v.shape[2] == 2))
                        : (v.ndim == 2 && v.shape[0] == rows && v.shape[1] == cols);
  if (!ok) {
    std::string want = interleaved ? "(" + std::to_string(rows) + ", " + std::to_string(2 * cols) + ") or (" +
                                         std::to_string(rows) + ", " + std::to_string(cols) + ", 2)"
                                   : "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
    value_error(name + ": expected the 4:2:0 chroma of the luma plane, shape " + want + ", got " + shape_text(v));
  }
}

PixelFormat format_of(size_t planes, int itemsize) {
  bool deep = itemsize == 2;
  if (planes == 1) return deep ? PixelFormat::gray10 : PixelFormat::gray8;
  if (planes == 3) return deep ? PixelFormat::yuv420p10 : PixelFormat::yuv420p;
  return deep ? PixelFormat::p010 : PixelFormat::nv12;
}

std::vector<nb::handle> items_of(nb::handle frame, const char* what, bool& single) {
  single = !(PyTuple_Check(frame.ptr()) || PyList_Check(frame.ptr()));
  if (single) return {frame};
  nb::sequence seq = nb::borrow<nb::sequence>(frame);
  size_t n = nb::len(seq);
  if (n != 2 && n != 3)
    value_error(std::string(what) + ": a frame is one plane (Y), (y, u, v) or (y, uv) for NV12/P010; got a sequence of " +
                std::to_string(n));
  std::vector<nb::handle> items;
  for (size_t i = 0; i < n; ++i) items.push_back(seq[i]);
  return items;
}

}  // namespace

Frame parse_frame(nb::handle frame, const char* what, const CallStream& stream) {
  Frame f;
  std::vector<nb::handle> items = items_of(frame, what, f.single);
  for (size_t i = 0; i < items.size(); ++i)
    f.planes.push_back(view_array(items[i], plane_name(what, i, f.single).c_str(), stream));
  const ArrayView& y = f.planes[0];
  std::string yname = plane_name(what, 0, f.single);
  if (y.ndim != 2) value_error(yname + ": expected a 2-D array (rows, columns), got shape " + shape_text(y));
  if (y.shape[0] < 1 || y.shape[1] < 1) value_error(yname + ": the plane is empty, shape " + shape_text(y));
  if (y.shape[0] > (1 << 16) || y.shape[1] > (1 << 16)) value_error(yname + ": larger than 65536 samples a side");
  int64_t rows = (y.shape[0] + 1) / 2, cols = (y.shape[1] + 1) / 2;
  for (size_t i = 1; i < f.planes.size(); ++i) {
    const ArrayView& p = f.planes[i];
    std::string name = plane_name(what, i, f.single);
    if (p.itemsize != y.itemsize) type_error(name + ": the planes must share one dtype (uint8 or uint16)");
    if (p.memory != y.memory || p.device != y.device) value_error(name + ": the planes must be on one device");
    check_chroma(p, name, rows, cols, f.planes.size() == 2);
  }
  Image& im = f.image;
  im.format = format_of(f.planes.size(), y.itemsize);
  im.width = int(y.shape[1]);
  im.height = int(y.shape[0]);
  im.memory = y.memory;
  im.device = y.device;
  for (size_t i = 0; i < f.planes.size(); ++i) {
    int64_t samples = i == 0 ? y.shape[1] : (f.planes.size() == 2 ? 2 * cols : cols);
    im.planes[i].data = f.planes[i].data;
    im.planes[i].pitch = plane_pitch(f.planes[i], plane_name(what, i, f.single), i == 0 ? y.shape[0] : rows, samples);
  }
  return f;
}

void check_output(const Frame& in, const Frame& out) {
  const Image &a = in.image, &b = out.image;
  if (b.format != a.format || b.width != a.width || b.height != a.height || in.planes.size() != out.planes.size())
    value_error("out: must have the frame's planes, shapes and dtype (" + std::to_string(a.width) + "x" +
                std::to_string(a.height) + ", " + std::to_string(in.planes.size()) + " plane(s))");
  if (b.memory != a.memory || b.device != a.device)
    value_error("out: must be on the frame's device (host or the same CUDA device)");
  for (const ArrayView& p : out.planes)
    if (p.readonly) value_error("out: the array is read-only");
}

nb::object new_output(nb::handle frame, const Frame& in, const CallStream& stream) {
  if (in.single) return empty_like(frame, in.planes[0], stream.stream);
  nb::sequence seq = nb::borrow<nb::sequence>(frame);
  nb::list outs;
  for (size_t i = 0; i < in.planes.size(); ++i) outs.append(empty_like(seq[i], in.planes[i], stream.stream));
  return nb::tuple(outs);
}

}  // namespace histeq::py
