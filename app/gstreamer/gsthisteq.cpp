#include "gsthisteq.h"

#include <gst/video/gstvideofilter.h>
#include <gst/video/video.h>
#include <histeq/histeq.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cuda_path.h"
#include "properties.h"

GST_DEBUG_CATEGORY_STATIC(histeq_debug);
#define GST_CAT_DEFAULT histeq_debug

namespace histeq_gst {
namespace {

constexpr const char* kSystemCaps =
    "video/x-raw, format = (string) { GRAY8, I420, NV12, NV21, Y42B, Y444, I420_10LE, I422_10LE, Y444_10LE, P010_10LE }, "
    "width = (int) [ 1, max ], height = (int) [ 1, max ], framerate = (fraction) [ 0, max ]";

// What the property setters hand to the streaming thread (under the object lock).
struct Pending {
  histeq::Settings settings;  // every property's value
  bool device_auto = true;    // device -1: the CUDA memory's device, else the library's default
  std::set<std::string> changed;  // properties set since the streaming thread last took them
  bool reset = false;             // a flush, segment or new stream: the temporal state restarts
  // Refusals made before the element had a bus (gst-launch-1.0 sets properties before it builds
  // the pipeline): posted when it goes to READY.
  std::vector<std::string> unposted;
  std::set<std::string> old_names_warned;  // an old property name warns once (a controller sets it every buffer)
};

// The streaming thread's state.
struct Work {
  std::optional<histeq::Equalizer> equalizer;
  histeq::Settings settings;  // what the equalizer runs with (or will be made with)
  bool device_auto = true;
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

// A warning on the bus: a refused value (not taken; the message says what stays), or an old name
// taken (the rename's warning). An element without a bus yet keeps it for its first step to READY.
void warn_on_bus(GstHisteq* self, const std::string& message) {
  if (GstBus* bus = gst_element_get_bus(GST_ELEMENT(self))) {
    gst_object_unref(bus);
    GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS, ("%s", message.c_str()), (nullptr));
    return;
  }
  GST_OBJECT_LOCK(self);
  self->pending->unposted.push_back(message);
  GST_OBJECT_UNLOCK(self);
}

void post_unposted(GstHisteq* self) {
  GST_OBJECT_LOCK(self);
  std::vector<std::string> messages;
  messages.swap(self->pending->unposted);
  GST_OBJECT_UNLOCK(self);
  for (const std::string& m : messages) GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS, ("%s", m.c_str()), (nullptr));
}

// The property's value as the properties read it back ("-1" for the automatic device).
std::string shown(const Pending& pending, const Property& p) {
  if (p.type == "device" && pending.device_auto) return "-1";
  histeq::Result<std::string> text = pending.settings.get(p.name);
  return text.ok() ? text.value() : "";
}

// Takes `value` into the pending settings (typed, properties.h), or returns why not (under the object lock).
std::string take_value(GstHisteq* self, const Property& p, const GValue* value) {
  Pending& pending = *self->pending;
  // The backend and the device choose the equalizer, made when the stream starts.
  if (!p.live && GST_STATE(self) > GST_STATE_READY)
    return p.name + " can only change in the NULL or READY state, not in " + gst_element_state_get_name(GST_STATE(self));
  const std::string before = shown(pending, p);
  if (is_auto_device(p, value)) {
    pending.device_auto = true;
    pending.settings.set(p.name, histeq::Settings::defaults().get(p.name).value());
  } else {
    const histeq::Status st = set_from_value(pending.settings, p, value);
    if (!st.ok()) return st.message();
    if (p.type == "device") pending.device_auto = false;
  }
  // A controller sets its properties at every buffer: an unchanged value changes nothing.
  if (shown(pending, p) != before) pending.changed.insert(p.name);
  return "";
}

// The property of `id`, or nullptr (GObject warned) when there is none.
const Property* property_of(GObject* object, guint id, GParamSpec* pspec) {
  if (id != 0 && id <= g_properties->size()) return &(*g_properties)[id - 1];
  G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  return nullptr;
}

void set_property(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
  const Property* found = property_of(object, id, pspec);
  if (found == nullptr) return;
  const Property& p = *found;
  GstHisteq* self = self_of(object);
  GST_OBJECT_LOCK(self);
  std::string refused = take_value(self, p, value);
  if (!refused.empty()) refused += "; " + p.name + " stays " + shown(*self->pending, p);
  const bool first_old = refused.empty() && !p.old_name.empty() && self->pending->old_names_warned.insert(p.old_name).second;
  GST_OBJECT_UNLOCK(self);
  if (!refused.empty()) warn_on_bus(self, refused);
  if (first_old) warn_on_bus(self, histeq::control_warning(p.old_name));  // taken, with the rename's warning
}

void get_property(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
  const Property* found = property_of(object, id, pspec);
  if (found == nullptr) return;
  const Property& p = *found;
  GstHisteq* self = self_of(object);
  GST_OBJECT_LOCK(self);
  const std::string text = shown(*self->pending, p);
  GST_OBJECT_UNLOCK(self);
  value_of_text(p, text == "-1" && p.type == "device" ? "" : text, value);
}

// ---- the equalizer -----------------------------------------------------------------------------

void drop_equalizer(Work& w) {
  w.cuda.with_context([&] { w.equalizer.reset(); });
  w.cuda.release();
}

// The equalizer refused the changed properties together: each is tried alone, so that the others
// are taken; a refused one gets a bus warning, and the properties read back the value that stays
// (unless it was set again meanwhile).
void take_one_by_one(GstHisteq* self, const std::set<std::string>& names, const histeq::Settings& wanted) {
  Work& w = *self->work;
  histeq::Settings now = w.equalizer->settings();
  for (const std::string& name : names) {
    histeq::Settings trial = now;
    trial.set(name, wanted.get(name).value());
    const histeq::Status st = w.equalizer->set(trial);
    if (st.ok()) {
      now = trial;
      continue;
    }
    const std::string kept = now.get(name).value();
    GST_OBJECT_LOCK(self);
    if (self->pending->changed.count(name) == 0) self->pending->settings.set(name, kept);
    GST_OBJECT_UNLOCK(self);
    GST_ELEMENT_WARNING(self, LIBRARY, SETTINGS, ("%s; %s stays %s", st.message().c_str(), name.c_str(), kept.c_str()),
                        (nullptr));
  }
  w.settings = now;
}

// Takes the properties' changes and the resets asked for since the last frame: they apply
// between frames. (The backend and the device only change while there is no equalizer.)
void take_pending(GstHisteq* self) {
  Work& w = *self->work;
  GST_OBJECT_LOCK(self);
  Pending& pending = *self->pending;
  std::set<std::string> names;
  names.swap(pending.changed);
  const bool reset = pending.reset;
  pending.reset = false;
  const histeq::Settings wanted = pending.settings;
  w.device_auto = pending.device_auto;
  GST_OBJECT_UNLOCK(self);
  if (!w.equalizer) {
    w.settings = wanted;
    return;
  }
  if (!names.empty()) {
    histeq::Settings s = wanted;
    const histeq::Settings running = w.equalizer->settings();
    for (const char* own : {"backend", "device"}) s.set(own, running.get(own).value());
    if (w.equalizer->set(s).ok()) w.settings = s;
    else take_one_by_one(self, names, s);
  }
  if (reset) w.equalizer->reset();
}

bool make_equalizer(GstHisteq* self, bool on_device) {
  Work& w = *self->work;
  if (w.equalizer) return true;
  histeq::Settings s = w.settings;
  // CUDA memory: the equalizer runs on the frames' GPU, whatever the device property says.
  if (on_device) {
    const std::string named = s.get("device").value(), theirs = std::to_string(w.cuda.device());
    if (!w.device_auto && named != theirs)
      GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
                          ("device %s: the frames are CUDA memory of device %s, where they are equalized", named.c_str(),
                           theirs.c_str()),
                          (nullptr));
    s.set("device", theirs);
  }
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
    // NV21 is NV12 with V before U: the chroma follow scales both alike, so it goes as NV12.
    case GST_VIDEO_FORMAT_NV12:
    case GST_VIDEO_FORMAT_NV21: return histeq::PixelFormat::nv12;
    case GST_VIDEO_FORMAT_Y42B: return histeq::PixelFormat::yuv422p;
    case GST_VIDEO_FORMAT_Y444: return histeq::PixelFormat::yuv444p;
    case GST_VIDEO_FORMAT_I420_10LE: return histeq::PixelFormat::yuv420p10;
    case GST_VIDEO_FORMAT_I422_10LE: return histeq::PixelFormat::yuv422p10;
    case GST_VIDEO_FORMAT_Y444_10LE: return histeq::PixelFormat::yuv444p10;
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
  const bool done = st.ok() && (!on_device || w.cuda.finish(buf, error));
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

// A GstController's curves (properties flagged controllable): their values at the buffer's stream
// time, set before the buffer is equalized, so that they apply from this frame.
void before_transform(GstBaseTransform* trans, GstBuffer* buf) {
  const GstClockTime t = gst_segment_to_stream_time(&trans->segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
  if (GST_CLOCK_TIME_IS_VALID(t)) gst_object_sync_values(GST_OBJECT(trans), t);
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

GstStateChangeReturn change_state(GstElement* element, GstStateChange transition) {
  // In a pipeline now: the refusals of the properties set before have a bus to go to.
  if (transition == GST_STATE_CHANGE_NULL_TO_READY) post_unposted(self_of(element));
  return GST_ELEMENT_CLASS(histeq_element_parent_class)->change_state(element, transition);
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
  element->change_state = change_state;
  trans->before_transform = before_transform;
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
