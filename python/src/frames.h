// The frames of a call from Python, checked before any work is queued: every shape, dtype, device,
// stride and value error is a ValueError or TypeError naming the argument, and out= is untouched.
//
// What a frame may be (docs/api.md, "Frames"):
//  - one array: a grey plane HW; a colour picture HWC (3 = BGR or RGB, 4 = with alpha, which is
//    kept) or CHW; a batch NHW, NHWC or NCHW (frames in order along the first axis); uint8,
//    uint16 (10-bit video, or 12/16-bit with bits=) or float in [0, 1];
//  - a tuple of planes: (y, u, v) 4:2:0 or 4:4:4, or (y, uv) NV12 / P010.
// Each frame goes to the equalizer as it is where the equalizer can read it (rows of contiguous
// samples, 8-bit or 10-bit), else through work planes of the call (any strides, conversions,
// colour): Plan says which.
#pragma once

#include <string>
#include <vector>

#include "arrays.h"
#include "convert.h"

namespace histeq::py {

// The keywords of a call that say what the array is.
struct FrameOptions {
  std::string layout;  // "" (from the shape) or HW, HWC, CHW, NHW, NHWC, NCHW
  bool rgb = false;    // channels="rgb" (default "bgr", OpenCV's order)
  int bits = 0;        // uint16: the samples' significant bits; 0 = not given
  ColorRange range = ColorRange::unspecified;  // full_range=: True full, False limited, None: the array's kind says
};

struct Frames {
  std::vector<ArrayView> planes;  // the array, or the tuple's planes
  bool single = true;             // one array (not a tuple)
  bool batch = false;             // the array has a frame axis
  int64_t count = 1, rows = 0, cols = 0;
  int channels = 1;  // 1 grey, 3 colour, 4 colour and alpha (single arrays)
  int64_t frame_stride = 0, row_stride = 0, col_stride = 0, channel_stride = 0;  // bytes (single arrays)
  bool rgb = false;
  int bits = 8;           // the samples' significant bits (uint16), 8 for uint8; float: 10
  bool bits_given = false;  // bits= was passed
  bool p010 = false;      // (y, uv) of uint16: the 10 bits are the high bits
  PixelFormat format = PixelFormat::gray8;  // what the equalizer sees
  ColorRange range = ColorRange::unspecified;
  bool direct = false;    // the equalizer reads / writes the caller's planes as they are

  Memory memory() const { return planes[0].memory; }
  int device() const { return planes[0].device; }
};

// `what` names the frame in errors ("frame", "out").
Frames parse_frames(nb::handle frame, const char* what, const CallStream& stream, const FrameOptions& options);

// uint16 and float samples: within their depth (never passed through); the bits of a uint16 frame
// without bits= (10 when its values fit, else an error asking for bits=). Host frames are read at
// once; device frames by a kernel that the call waits for.
void check_values(Frames& in, Stream stream);

// out= must have the frame's structure, shapes, dtype and memory, be writable, and have no
// overlapping samples (a broadcast array).
void check_output(const Frames& in, const Frames& out);

// New arrays for the result of `frame` (a single array or a tuple, as `frame` was).
nb::object new_output(nb::handle frame, const Frames& in, const CallStream& stream);

// An Image with `f`'s format, size, memory, device and range, and no planes yet.
Image image_header(const Frames& f);
// Frame k of `f` as an Image of the equalizer's (direct frames only).
Image image_of(const Frames& f, int64_t k);
// The channels and planes of frame k as convert.h sees them: colour R, G, B (then alpha); planes
// in their order; a grey array's one plane.
std::vector<Strided> strided_of(const Frames& f, int64_t k);

}  // namespace histeq::py
