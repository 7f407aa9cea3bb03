// The C API (include/histeq/histeq.h) over the C++ one. Every entry point runs its body inside
// `call`, which catches everything: no exception may unwind into C or a foreign runtime.
#include "histeq/histeq.h"

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/api/api_impl.h"

namespace api = histeq::api;

struct histeq_settings {
  api::Settings settings;
  std::string error;
  std::string text;  // histeq_settings_describe's
};

struct histeq_equalizer {
  explicit histeq_equalizer(api::Equalizer e) : eq(std::move(e)) {}
  api::Equalizer eq;
  std::string error;
  api::EqualizerInfo info;  // the strings histeq_equalizer_backend/device/kernel hand out
};

namespace {

thread_local std::string t_last_error;

// The C enums are the C++ ones by value (so images convert by cast; process() checks the values).
static_assert(HISTEQ_YUV444P == static_cast<int>(api::PixelFormat::yuv444p) && HISTEQ_YUV444P10 == static_cast<int>(api::PixelFormat::yuv444p10));
static_assert(HISTEQ_YUV422P == static_cast<int>(api::PixelFormat::yuv422p) && HISTEQ_YUV422P10 == static_cast<int>(api::PixelFormat::yuv422p10));
static_assert(HISTEQ_P010 == static_cast<int>(api::PixelFormat::p010) && HISTEQ_NV12 == static_cast<int>(api::PixelFormat::nv12) &&
              HISTEQ_YUV420P10 == static_cast<int>(api::PixelFormat::yuv420p10) && HISTEQ_GRAY10 == static_cast<int>(api::PixelFormat::gray10));
static_assert(HISTEQ_MEMORY_DEVICE == static_cast<int>(api::Memory::device) && HISTEQ_RANGE_FULL == static_cast<int>(api::ColorRange::full) &&
              HISTEQ_RANGE_LIMITED == static_cast<int>(api::ColorRange::limited));
static_assert(HISTEQ_INTERNAL == static_cast<int>(api::ErrorCode::internal) && HISTEQ_DEVICE_ERROR == static_cast<int>(api::ErrorCode::device_error));

histeq_status code_of(api::ErrorCode c) { return static_cast<histeq_status>(static_cast<int>(c)); }

// Records a failure for the thread and, when given, the handle.
histeq_status fail(std::string* handle_error, const api::Status& s) {
  t_last_error = s.message();
  if (handle_error != nullptr) *handle_error = s.message();
  return code_of(s.code());
}

// Runs f (returning an api::Status) with every exception caught, recording a failure.
template <class F>
histeq_status call(std::string* handle_error, F&& f) noexcept {
  api::Status s = api::guarded(std::forward<F>(f));
  if (s.ok()) return HISTEQ_OK;
  try {
    return fail(handle_error, s);
  } catch (...) {  // out of memory for the message itself: the code still tells
    return code_of(s.code());
  }
}

api::Status null_argument(const char* what) { return api::Status(api::ErrorCode::invalid_argument, std::string(what) + " is NULL"); }

api::Image image_of(const histeq_image& c) {
  api::Image im;
  im.format = static_cast<api::PixelFormat>(c.format);
  im.width = c.width;
  im.height = c.height;
  im.memory = static_cast<api::Memory>(c.memory);  // unknown values are refused by process()
  im.device = c.device;
  im.range = static_cast<api::ColorRange>(c.range);
  for (int i = 0; i < 3; ++i) im.planes[i] = {c.planes[i].data, c.planes[i].pitch};
  im.time_s = c.time_s;
  return im;
}

// The controls and kernels, made once: their strings live as long as the library.
struct Tables {
  std::vector<api::ControlInfo> controls = api::controls();
  std::vector<std::string> choices;
  std::vector<api::KernelInfo> kernels = api::kernels();
  Tables() {
    for (const auto& c : controls) {
      std::string s;
      for (const auto& ch : c.choices) s += (s.empty() ? "" : ",") + ch;
      choices.push_back(s);
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

uint32_t mask_of(const std::vector<int>& bins) {
  uint32_t m = 0;
  for (int b : bins) m |= static_cast<uint32_t>(b);  // 2^k bins is bit k
  return m;
}

// A text of the equalizer's info, kept by the handle until its next call.
const char* info_field(histeq_equalizer* e, std::string api::EqualizerInfo::*field) noexcept {
  if (e == nullptr) return "";
  const histeq_status st = call(&e->error, [&] {
    e->info = e->eq.info();
    return api::Status();
  });
  return st == HISTEQ_OK ? (e->info.*field).c_str() : "";
}

// A control set on a handle's Settings or Equalizer (`what` names the handle in a NULL error); a
// text value (const char*) or a number.
template <class Handle, class Target, class Value>
histeq_status set_control(Handle* h, Target Handle::*target, const char* what, const char* name, Value value) noexcept {
  return call(h != nullptr ? &h->error : nullptr, [&] {
    if (h == nullptr || name == nullptr) return null_argument(h == nullptr ? what : "name");
    if constexpr (std::is_same_v<Value, const char*>) {
      if (value == nullptr) return null_argument("value");
      return (h->*target).set(name, std::string(value));
    } else {
      return (h->*target).set(name, value);
    }
  });
}

template <class Make>
histeq_settings* make_settings(Make&& make) noexcept {
  histeq_settings* out = nullptr;
  (void)call(nullptr, [&] {
    out = new histeq_settings{make(), {}, {}};
    return api::Status();
  });
  return out;
}

}  // namespace

extern "C" {

const char* histeq_version(void) { return api::version(); }
int histeq_gpu_available(void) { return api::gpu_available() ? 1 : 0; }
const char* histeq_last_error(void) { return t_last_error.c_str(); }

histeq_settings* histeq_settings_create(void) { return make_settings([] { return api::Settings(); }); }
histeq_settings* histeq_settings_create_plain(void) { return make_settings([] { return api::Settings::plain(); }); }
histeq_settings* histeq_settings_copy(const histeq_settings* s) {
  if (s == nullptr) {
    (void)fail(nullptr, null_argument("settings"));
    return nullptr;
  }
  return make_settings([s] { return s->settings; });
}
void histeq_settings_destroy(histeq_settings* s) { delete s; }

histeq_status histeq_settings_set(histeq_settings* s, const char* name, const char* value) {
  return set_control(s, &histeq_settings::settings, "settings", name, value);
}
histeq_status histeq_settings_set_number(histeq_settings* s, const char* name, double value) {
  return set_control(s, &histeq_settings::settings, "settings", name, value);
}

histeq_status histeq_settings_get(const histeq_settings* s, const char* name, char* buf, size_t size, size_t* length) {
  auto* err = s != nullptr ? &const_cast<histeq_settings*>(s)->error : nullptr;  // the handle's error is not its value
  return call(err, [&] {
    if (s == nullptr || name == nullptr) return null_argument(s == nullptr ? "settings" : "name");
    auto v = s->settings.get(name);
    if (!v) return v.status();
    if (length != nullptr) *length = v.value().size();
    if (buf == nullptr || size <= v.value().size())
      return api::Status(api::ErrorCode::invalid_argument, "a buffer of " + std::to_string(size) + " bytes cannot hold '" +
                                                               v.value() + "' and its NUL");
    std::memcpy(buf, v.value().c_str(), v.value().size() + 1);
    return api::Status();
  });
}

const char* histeq_settings_describe(const histeq_settings* s) {
  if (s == nullptr) return "";
  auto* m = const_cast<histeq_settings*>(s);  // the text is a cache, not the settings
  const histeq_status st = call(&m->error, [&] {
    m->text = s->settings.describe();
    return api::Status();
  });
  return st == HISTEQ_OK ? m->text.c_str() : "";
}

const char* histeq_settings_error(const histeq_settings* s) { return s != nullptr ? s->error.c_str() : ""; }

size_t histeq_control_count(void) {
  size_t n = 0;
  (void)call(nullptr, [&] {
    n = tables().controls.size();
    return api::Status();
  });
  return n;
}

histeq_status histeq_control(size_t index, histeq_control_info* out) {
  return call(nullptr, [&] {
    if (out == nullptr) return null_argument("out");
    const Tables& t = tables();
    if (index >= t.controls.size())
      return api::Status(api::ErrorCode::invalid_argument, "control " + std::to_string(index) + ": there are " + std::to_string(t.controls.size()));
    const api::ControlInfo& c = t.controls[index];
    *out = {c.name.c_str(), c.python_name.c_str(), c.type.c_str(), t.choices[index].c_str(), c.min, c.max, c.zero_off ? 1 : 0,
            c.unit.c_str(), c.default_value.c_str(), c.plain_value.c_str(), c.help.c_str(), c.live ? 1 : 0};
    return api::Status();
  });
}

histeq_equalizer* histeq_equalizer_create(const histeq_settings* s) {
  histeq_equalizer* out = nullptr;
  (void)call(nullptr, [&] {
    auto e = api::Equalizer::create(s != nullptr ? s->settings : api::Settings());
    if (!e) return e.status();
    out = new histeq_equalizer(std::move(e.value()));
    return api::Status();
  });
  return out;
}

void histeq_equalizer_destroy(histeq_equalizer* e) { delete e; }

histeq_status histeq_equalizer_process(histeq_equalizer* e, const histeq_image* in, const histeq_image* out,
                                       struct CUstream_st* stream) {
  return call(e != nullptr ? &e->error : nullptr, [&] {
    if (e == nullptr || in == nullptr) return null_argument(e == nullptr ? "equalizer" : "in");
    const api::Image a = image_of(*in);
    return e->eq.process(a, out != nullptr ? image_of(*out) : a, stream);
  });
}

void histeq_equalizer_reset(histeq_equalizer* e) {
  // Guarded like every entry point (no exception may unwind into C); a void function, so a failure
  // is only recorded (histeq_last_error, and the handle's).
  (void)call(e != nullptr ? &e->error : nullptr, [&] {
    if (e != nullptr) e->eq.reset();
    return api::Status();
  });
}

histeq_status histeq_equalizer_set(histeq_equalizer* e, const char* name, const char* value) {
  return set_control(e, &histeq_equalizer::eq, "equalizer", name, value);
}
histeq_status histeq_equalizer_set_number(histeq_equalizer* e, const char* name, double value) {
  return set_control(e, &histeq_equalizer::eq, "equalizer", name, value);
}

histeq_status histeq_equalizer_set_settings(histeq_equalizer* e, const histeq_settings* s) {
  return call(e != nullptr ? &e->error : nullptr, [&] {
    if (e == nullptr || s == nullptr) return null_argument(e == nullptr ? "equalizer" : "settings");
    return e->eq.set(s->settings);
  });
}

const char* histeq_equalizer_backend(histeq_equalizer* e) { return info_field(e, &api::EqualizerInfo::backend); }
const char* histeq_equalizer_device(histeq_equalizer* e) { return info_field(e, &api::EqualizerInfo::device); }
const char* histeq_equalizer_kernel(histeq_equalizer* e) { return info_field(e, &api::EqualizerInfo::kernel); }
const char* histeq_equalizer_error(const histeq_equalizer* e) { return e != nullptr ? e->error.c_str() : ""; }

size_t histeq_kernel_count(void) {
  size_t n = 0;
  (void)call(nullptr, [&] {
    n = tables().kernels.size();
    return api::Status();
  });
  return n;
}

const char* histeq_kernel_name(size_t index) {
  const char* name = nullptr;
  (void)call(nullptr, [&] {
    if (index < tables().kernels.size()) name = tables().kernels[index].name.c_str();
    return api::Status();
  });
  return name;
}

histeq_status histeq_kernel(size_t index, histeq_kernel_info* out) {
  return call(nullptr, [&] {
    if (out == nullptr) return null_argument("out");
    const auto& ks = tables().kernels;
    if (index >= ks.size())
      return api::Status(api::ErrorCode::invalid_argument, "kernel " + std::to_string(index) + ": there are " + std::to_string(ks.size()));
    const api::KernelInfo& k = ks[index];
    *out = {k.name.c_str(), k.description.c_str(), k.paper.c_str(), k.section.c_str(), k.backend.c_str(), mask_of(k.bins_8bit),
            mask_of(k.bins_16bit), k.data_independent ? 1 : 0, k.is_default ? 1 : 0, k.alias_of.c_str()};
    return api::Status();
  });
}

histeq_status histeq_histogram(const histeq_plane* plane, const char* kernel, int bins, struct CUstream_st* stream,
                               uint32_t* counts, size_t count) {
  return call(nullptr, [&] {
    if (plane == nullptr || counts == nullptr) return null_argument(plane == nullptr ? "plane" : "counts");
    const api::Plane p{plane->data, plane->width, plane->height, plane->pitch, plane->bytes_per_sample, plane->bit_depth,
                       plane->memory == HISTEQ_MEMORY_DEVICE ? api::Memory::device : api::Memory::host, plane->device};
    auto h = api::histogram(p, kernel != nullptr ? kernel : "", bins, stream);
    if (!h) return h.status();
    if (count < h.value().size())
      return api::Status(api::ErrorCode::invalid_argument, "counts holds " + std::to_string(count) + " counters, the histogram has " +
                                                               std::to_string(h.value().size()));
    std::memcpy(counts, h.value().data(), h.value().size() * sizeof(uint32_t));
    return api::Status();
  });
}

}  // extern "C"
