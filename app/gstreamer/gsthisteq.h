// The GStreamer element `histeq`: a GstVideoFilter that equalizes each frame in place through
// histeq's public C++ API (include/histeq/histeq.hpp), on GRAY8, 8-bit I420, NV12, NV21, Y42B and
// Y444, and 10-bit I420_10LE, I422_10LE, Y444_10LE and P010_10LE, in system memory or in CUDA
// memory (memory:CUDAMemory, e.g. after nvh264dec: the frames stay on the GPU).
//
// Properties: the controls of histeq::controls() (properties.h), changeable while playing where the
// control is live, the numbers among them controllable (GstController); a change is applied between
// two frames. The backend and the device (READY-only) are refused in PAUSED and PLAYING. A refused
// value (out of the control's range, or one the running equalizer cannot take) has one path: a
// warning on the bus naming what stays, and the property reads back the old value (set before the
// element has a bus, the warning waits for its step to READY). A flush, a new segment (a seek) or
// a new stream restarts the temporal state, so the frames after a seek are those of a fresh start
// there. The frame's colorimetry range is the image's range tag (range "auto" reads it).
//
// Threads: properties may be set from any thread (under the object lock); the equalizer belongs to
// the streaming thread.
#pragma once

#include <gst/gst.h>

namespace histeq_gst {

// The element's GType (registered on first use).
GType element_type();

}  // namespace histeq_gst
