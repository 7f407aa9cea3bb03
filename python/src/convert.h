// The copies and conversions between a caller's array and the planes the equalizer works on: any
// strides (negative, zero, non-contiguous: read as they are; written only where rows and samples do
// not overlap), uint8/uint16/float samples, one plane or the interleaved or planar channels of a
// colour picture. On the host (loops over rows, on the calling thread) or on a CUDA device (kernels
// queued on the call's stream, which the caller owns: nothing here synchronizes it except the value
// checks, which must answer before anything is written).
//
// The formulas are convert_math.h's. Threads: any; the GIL is not needed (no Python object here).
#pragma once

#include <cstdint>
#include <vector>

#include "convert_math.h"
#include "histeq/histeq.hpp"

namespace histeq::py {

// One plane (or one channel) of a caller's array: element (row, column) at
// data + row * row_stride + column * col_stride bytes (strides may be negative or zero).
struct Strided {
  char* data = nullptr;
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 0;
  cvt::Sample sample = cvt::Sample::u8;
  int bits = 8;  // uint16: the significant bits (10..16); otherwise unused
};

// A work plane: tight rows of 8-bit (uint8 input) or 16-bit 10-bit samples.
struct WorkPlane {
  void* data = nullptr;
  size_t pitch = 0;  // bytes
  bool wide = false;  // 16-bit samples
};

// The smallest and largest values of a plane (NaN: nan is set), for the range checks.
struct ValueRange {
  double min = 0, max = 0;
  bool nan = false;
};

// All of these run on the host for Memory::host, else on `device` on `stream`.
struct Where {
  Memory memory = Memory::host;
  int device = 0;
  Stream stream = nullptr;
};

// src (uint8: to 8-bit; uint16 / float: to 10-bit) into the work plane.
Status load_plane(const Strided& src, const WorkPlane& dst, const Where& w);
// The work plane back into dst, which has src's sample type and geometry.
Status store_plane(const WorkPlane& src, const Strided& dst, const Where& w);
// Channels R, G, B (one Strided each) into Y, Cb, Cr work planes (8-bit for uint8, else 10-bit).
Status load_colour(const Strided rgb[3], const WorkPlane ycbcr[3], const Where& w);
// Y, Cb, Cr back into the channels R, G, B; alpha_in (data null: none) copied into alpha_out.
Status store_colour(const WorkPlane ycbcr[3], const Strided rgb[3], const Strided& alpha_in, const Strided& alpha_out,
                    const Where& w);
// The value range of planes together (host: at once; device: the call waits for `stream` up to
// the kernels).
Status value_range(const std::vector<Strided>& planes, const Where& w, ValueRange& out);

// Device scratch memory of one call: allocated and freed in the order of `stream` (no host wait).
class DeviceScratch {
 public:
  DeviceScratch() = default;
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  Status allocate(size_t bytes, int device, Stream stream);
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  int device_ = 0;
  Stream stream_ = nullptr;
};

}  // namespace histeq::py
