// The GStreamer element `histeq`: a GstVideoFilter that equalizes each frame in place through
// histeq's public C++ API (include/histeq/histeq.hpp), on GRAY8, I420, NV12, I420_10LE and
// P010_10LE, in system memory or in CUDA memory (memory:CUDAMemory, e.g. after nvh264dec: the
// frames stay on the GPU).
//
// Properties: the controls of histeq::controls() (properties.h), changeable while playing where the
// control is live; a change is applied between two frames. A flush, a new segment (a seek) or a
// new stream restarts the temporal state, so the frames after a seek are those of a fresh start
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
