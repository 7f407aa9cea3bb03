#include "gsthisteq.h"

#include <gst/video/gstvideofilter.h>
#include <gst/video/video.h>
#include <histeq/histeq.hpp>

#include <map>
#include <optional>
#include <string>

#include "cuda_path.h"
#include "properties.h"

GST_DEBUG_CATEGORY_STATIC(histeq_debug);
#define GST_CAT_DEFAULT histeq_debug

namespace histeq_gst {
namespace {

constexpr const char* kSystemCaps =
    "video/x-raw, format = (string) { GRAY8, I420, NV12, I420_10LE, P010_10LE }, "
    "width = (int) [ 1, max ], height = (int) [ 1, max ], framerate = (fraction) [ 0, max ]";

// What the property setters hand to the streaming thread (under the object lock).
struct Pending {
  histeq::Settings settings;  // every property's value
  bool changed = false;       // settings changed since the streaming thread last took them
  bool remake = false;        // a control that is not live changed: the equalizer is made again
  bool reset = false;         // a flush, segment or new stream: the temporal state restarts
  // Values refused before the stream started, by property: the stream then fails in one line
  // (while playing, a refused value only warns and the old one stays).
  std::map<std::string, std::string> refused;
};

// The streaming thread's state.
struct Work {
  std::optional<histeq::Equalizer> equalizer;
  histeq::Settings settings;  // what the equalizer runs with
  histeq::ColorRange range = histeq::ColorRange::unspecified;  // the caps' colour range tag
  CudaWork cuda;
};

struct GstHisteq {
  GstVideoFilter parent;
  Pending* pending;
  Work* work;
  CudaContextSlot* context;  // shared with CUDA neighbours (under the object lock)
};

struct GstHisteqClass {
  GstVideoFilterClass parent_class;
};

const std::vector<Property>* g_properties = nullptr;

G_DEFINE_TYPE(GstHisteq, histeq_element, GST_TYPE_VIDEO_FILTER)

GstHisteq* self_of(gpointer p) { return reinterpret_cast<GstHisteq*>(p); }

// ---- properties ------------------------------------------------------------------------------

void set_property(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
  if (id == 0 || id > g_properties->size()) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    return;
  }
  const Property& p = (*g_properties)[id - 1];
  GstHisteq* self = self_of(object);
  const std::string text = text_of_value(p, value);
  GST_OBJECT_LOCK(self);
  const histeq::Status st = self->pending->settings.set(p.name, text);
  if (st.ok()) {
    self->pending->changed = true;
    self->pending->remake = self->pending->remake || !p.live;
    self->pending->refused.erase(p.name);
  } else if (GST_STATE(self) <= GST_STATE_READY) {
    self->pending->refused[p.name] = st.message();
  }
  GST_OBJECT_UNLOCK(self);
  // A value the range allows but the control refuses (e.g. clip-limit 0.5): the old one stays.
  if (!st.ok()) g_warning("histeq: %s", st.message().c_str());
}

void get_property(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
  if (id == 0 || id > g_properties->size()) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    return;
  }
  const Property& p = (*g_properties)[id - 1];
  GstHisteq* self = self_of(object);
  GST_OBJECT_LOCK(self);
  histeq::Result<std::string> text = self->pending->settings.get(p.name);
  GST_OBJECT_UNLOCK(self);
  if (text.ok()) value_of_text(p, text.value(), value);
}

// ---- the equalizer -----------------------------------------------------------------------------

void drop_equalizer(Work& w) {
  w.cuda.with_context([&] { w.equalizer.reset(); });
  w.cuda.release();
}

// Takes the properties' changes and the resets asked for since the last frame: they apply
// between frames. Settings the equalizer refuses (a GPU kernel on the CPU backend) leave it as it
// was, with a warning, and the properties read its settings again.
void take_pending(GstHisteq* self) {
  Work& w = *self->work;
  GST_OBJECT_LOCK(self);
  Pending& pending = *self->pending;
  const bool changed = pending.changed, remake = pending.remake, reset = pending.reset;
  if (changed) w.settings = pending.settings;
  pending.changed = pending.remake = pending.reset = false;
  GST_OBJECT_UNLOCK(self);
  if (!w.equalizer) return;
  if (remake) {
    w.cuda.with_context([&] { w.equalizer.reset(); });  // made again with the new backend or device
    return;
  }
  if (changed) {
    const histeq::Status st = w.equalizer->set(w.settings);
    if (!st.ok()) {
      GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS, ("%s", st.message().c_str()), (nullptr));
      w.settings = w.equalizer->settings();
      GST_OBJECT_LOCK(self);
      if (!pending.changed) pending.settings = w.settings;
      GST_OBJECT_UNLOCK(self);
    }
  }
  if (reset) w.equalizer->reset();
}

bool make_equalizer(GstHisteq* self, bool on_device) {
  Work& w = *self->work;
  if (w.equalizer) return true;
  GST_OBJECT_LOCK(self);
  const std::string refused = self->pending->refused.empty() ? "" : self->pending->refused.begin()->second;
  self->pending->refused.clear();
  GST_OBJECT_UNLOCK(self);
  if (!refused.empty()) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("%s", refused.c_str()), (nullptr));
    return false;
  }
  histeq::Settings s = w.settings;
  // CUDA memory: the equalizer runs on the frames' GPU.
  if (on_device) s.set("device", w.cuda.device());
  histeq::Result<histeq::Equalizer> eq = histeq::Equalizer::create(s);
  if (!eq.ok()) {
    GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("%s", eq.status().message().c_str()), (nullptr));
    return false;
  }
  const histeq::EqualizerInfo info = eq.value().info();
  GST_INFO_OBJECT(self, "equalizing on %s (%s), kernel %s", info.backend.c_str(), info.device.c_str(),
                  info.kernel.c_str());
  w.equalizer.emplace(std::move(eq).value());
  return true;
}

std::optional<histeq::PixelFormat> format_of(GstVideoFormat f) {
  switch (f) {
    case GST_VIDEO_FORMAT_GRAY8: return histeq::PixelFormat::gray8;
    case GST_VIDEO_FORMAT_I420: return histeq::PixelFormat::yuv420p;
    case GST_VIDEO_FORMAT_NV12: return histeq::PixelFormat::nv12;
    case GST_VIDEO_FORMAT_I420_10LE: return histeq::PixelFormat::yuv420p10;
    case GST_VIDEO_FORMAT_P010_10LE: return histeq::PixelFormat::p010;
    default: return std::nullopt;
  }
}

// The caps' colorimetry range as the upstream element wrote it: GstVideoInfo replaces a
// colorimetry with an unknown matrix ("1:0:0:0", avdec_h264's for a full-range H.264 stream without
// a matrix) by the format's default, limited range, and the tag would be lost.
histeq::ColorRange range_of(const GstCaps* caps, const GstVideoInfo& info) {
  GstVideoColorimetry c = GST_VIDEO_INFO_COLORIMETRY(&info);
  const char* tag = gst_structure_get_string(gst_caps_get_structure(caps, 0), "colorimetry");
  GstVideoColorimetry parsed;
  if (tag && gst_video_colorimetry_from_string(&parsed, tag)) c = parsed;
  switch (c.range) {
    case GST_VIDEO_COLOR_RANGE_0_255: return histeq::ColorRange::full;
    case GST_VIDEO_COLOR_RANGE_16_235: return histeq::ColorRange::limited;
    default: return histeq::ColorRange::unspecified;
  }
}

// The mapped frame as an image of the API (planes in place: the element works in place).
histeq::Image image_of(GstVideoFrame& frame, histeq::Memory memory, int device, histeq::ColorRange range) {
  histeq::Image img;
  img.format = *format_of(GST_VIDEO_FRAME_FORMAT(&frame));
  img.width = GST_VIDEO_FRAME_WIDTH(&frame);
  img.height = GST_VIDEO_FRAME_HEIGHT(&frame);
  img.memory = memory;
  img.device = device;
  img.range = range;
  const GstClockTime pts = GST_BUFFER_PTS(frame.buffer);
  img.time_s = GST_CLOCK_TIME_IS_VALID(pts) ? static_cast<double>(pts) / GST_SECOND : -1.0;
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&frame) && i < 3; ++i) {
    img.planes[i].data = GST_VIDEO_FRAME_PLANE_DATA(&frame, i);
    img.planes[i].pitch = static_cast<size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, i));
  }
  return img;
}

GstFlowReturn fail(GstHisteq* self, const std::string& message) {
  GST_ELEMENT_ERROR(self, STREAM, FAILED, ("%s", message.c_str()), (nullptr));
  return GST_FLOW_ERROR;
}

// Maps `buf`, equalizes it in place and unmaps it; `stream` is the CUDA stream of device work.
GstFlowReturn equalize_buffer(GstHisteq* self, GstBuffer* buf, bool on_device, histeq::Stream stream) {
  Work& w = *self->work;
  if (!make_equalizer(self, on_device)) return GST_FLOW_ERROR;
  GstVideoFrame frame;
  const auto flags = static_cast<GstMapFlags>(GST_MAP_READWRITE | (on_device ? cuda_map_flag() : 0));
  if (!gst_video_frame_map(&frame, &self->parent.in_info, buf, flags)) return fail(self, "cannot map the frame");
  const histeq::Image img =
      image_of(frame, on_device ? histeq::Memory::device : histeq::Memory::host, w.cuda.device(), w.range);
  const histeq::Status st = w.equalizer->process(img, img, stream);
  std::string error;
  const bool done = st.ok() && (!on_device || w.cuda.finish(error));
  gst_video_frame_unmap(&frame);
  if (!st.ok()) return fail(self, st.message());
  return done ? GST_FLOW_OK : fail(self, error);
}

GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buf) {
  GstHisteq* self = self_of(trans);
  Work& w = *self->work;
  take_pending(self);
  if (!CudaWork::holds_cuda(buf)) return equalize_buffer(self, buf, false, nullptr);
  if (!w.cuda.same_context(buf)) drop_equalizer(w);  // a new decoder, a new context
  std::string error;
  if (!w.cuda.enter(buf, error)) {
    w.cuda.leave();
    return fail(self, error);
  }
  const GstFlowReturn r = equalize_buffer(self, buf, true, static_cast<histeq::Stream>(w.cuda.stream()));
  w.cuda.leave();
  return r;
}

// ---- negotiation, events, queries, states ----------------------------------------------------

gboolean set_info(GstVideoFilter* filter, GstCaps* incaps, GstVideoInfo* in_info, GstCaps*, GstVideoInfo*) {
  GstHisteq* self = self_of(filter);
  if (!format_of(GST_VIDEO_INFO_FORMAT(in_info))) return FALSE;
  self->work->range = range_of(incaps, *in_info);
  GST_DEBUG_OBJECT(self, "caps %" GST_PTR_FORMAT ", colour range %d", incaps, static_cast<int>(self->work->range));
  // New geometry or format: an equalizer for it, from the first frame.
  drop_equalizer(*self->work);
  if (!caps_are_cuda(incaps)) return TRUE;
  std::string error;
  GST_OBJECT_LOCK(self);
  const bool ok = self->context->context != nullptr;
  GST_OBJECT_UNLOCK(self);
  if (ok || cuda_ensure_context(GST_ELEMENT(self), *self->context, error)) return TRUE;
  GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("%s", error.c_str()), (nullptr));
  return FALSE;
}

gboolean sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstHisteq* self = self_of(trans);
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_STOP:
    case GST_EVENT_SEGMENT:
    case GST_EVENT_STREAM_START:
      // The next frame does not follow the last one (a seek, a new stream).
      GST_OBJECT_LOCK(self);
      self->pending->reset = true;
      GST_OBJECT_UNLOCK(self);
      break;
    default:
      break;
  }
  return GST_BASE_TRANSFORM_CLASS(histeq_element_parent_class)->sink_event(trans, event);
}

gboolean query(GstBaseTransform* trans, GstPadDirection direction, GstQuery* q) {
  GstHisteq* self = self_of(trans);
  if (cuda_handle_query(GST_ELEMENT(self), q, *self->context)) return TRUE;
  return GST_BASE_TRANSFORM_CLASS(histeq_element_parent_class)->query(trans, direction, q);
}

void set_context(GstElement* element, GstContext* context) {
  cuda_set_context(element, context, *self_of(element)->context);
  GST_ELEMENT_CLASS(histeq_element_parent_class)->set_context(element, context);
}

gboolean stop(GstBaseTransform* trans) {
  drop_equalizer(*self_of(trans)->work);
  return TRUE;
}

void finalize(GObject* object) {
  GstHisteq* self = self_of(object);
  drop_equalizer(*self->work);
  cuda_context_clear(*self->context);
  delete self->work;
  delete self->pending;
  delete self->context;
  G_OBJECT_CLASS(histeq_element_parent_class)->finalize(object);
}

void histeq_element_init(GstHisteq* self) {
  self->pending = new Pending();
  self->work = new Work();
  self->context = new CudaContextSlot();
  // QoS: late frames are dropped before the work (GstBaseTransform's handling).
  gst_base_transform_set_qos_enabled(GST_BASE_TRANSFORM(self), TRUE);
}

GstCaps* template_caps() {
  std::string caps = cuda_caps();
  caps += caps.empty() ? kSystemCaps : std::string("; ") + kSystemCaps;
  return gst_caps_from_string(caps.c_str());
}

void histeq_element_class_init(GstHisteqClass* klass) {
  auto* gobject = G_OBJECT_CLASS(klass);
  auto* element = GST_ELEMENT_CLASS(klass);
  auto* trans = GST_BASE_TRANSFORM_CLASS(klass);
  gobject->set_property = set_property;
  gobject->get_property = get_property;
  gobject->finalize = finalize;
  g_properties = &install_properties(gobject);
  GstCaps* caps = template_caps();
  gst_element_class_add_pad_template(element, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template(element, gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref(caps);
  gst_element_class_set_static_metadata(
      element, "Histogram equalizer", "Filter/Effect/Video",
      "Equalizes the luma of each frame (histeq: global or CLAHE curves, temporal smoothing, chroma "
      "kept in step), on the CPU or the GPU, in system or CUDA memory",
      "histeq developers");
  element->set_context = set_context;
  trans->transform_ip = transform_ip;
  trans->sink_event = sink_event;
  trans->query = query;
  trans->stop = stop;
  trans->transform_ip_on_passthrough = FALSE;
  GST_VIDEO_FILTER_CLASS(klass)->set_info = set_info;
  GST_DEBUG_CATEGORY_INIT(histeq_debug, "histeq", 0, "histeq video equalizer");
}

}  // namespace

GType element_type() { return histeq_element_get_type(); }

}  // namespace histeq_gst
