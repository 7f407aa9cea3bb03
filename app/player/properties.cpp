// The controller's properties (app/player/controller.h): their values, how they are set and
// cycled, and their OSD lines.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app/common/run_common.h"
#include "app/player/controller.h"
#include "app/player/controller_values.h"
#include "core/equalize/equalizer_controls.h"

namespace histeq::app::player {
namespace {

using nlohmann::json;

std::string number_text(double v) {
  char b[40];
  std::snprintf(b, sizeof(b), "%.17g", v);
  double back = std::strtod(b, nullptr);
  for (int p = 6; p < 17; ++p) {  // the shortest form that reads back the same
    std::snprintf(b, sizeof(b), "%.*g", p, v);
    back = std::strtod(b, nullptr);
    if (back == v) break;
  }
  if (back != v) std::snprintf(b, sizeof(b), "%.17g", v);
  return b;
}

std::string on_off(bool b) { return b ? "on" : "off"; }

Reply invalid(std::string detail) { return Reply::fail("invalid parameter", std::move(detail)); }
Reply unavailable(std::string detail) { return Reply::fail("property unavailable", std::move(detail)); }
Reply value(json v) { return {"success", std::move(v), ""}; }

std::string capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// The --compare presets that `look` is, or "custom".
std::string look_name(const pipeline::Look& look) {
  for (const char* name : {"plain", "clahe", "default"}) {
    auto l = compare_look(name);
    if (l && l->has_value() && **l == look) return name;
  }
  return "custom";
}

}  // namespace

std::string text_value(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return number_text(v.get<double>());
  return v.dump();
}

std::string string_value(const json& v) { return v.is_null() ? "" : text_value(v); }

std::optional<double> number_value(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str()) return std::nullopt;
  if (*end == '/') {  // mpv's fractions: "1/1.1"
    const char* d = end + 1;
    const double y = std::strtod(d, &end);
    if (end == d || y == 0) return std::nullopt;
    x /= y;
  }
  if (*end != '\0' || !std::isfinite(x)) return std::nullopt;
  return x;
}

std::optional<bool> flag_value(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (s == "yes" || s == "true" || s == "1" || s == "on") return true;
  if (s == "no" || s == "false" || s == "0" || s == "off") return false;
  return std::nullopt;
}

// A property whose value is a number in [lo, hi] (osd: its line).
static Controller::Property number_property(const std::string& name, double lo, double hi, std::function<double()> get,
                                            std::function<void(double)> set, std::function<std::string()> osd) {
  Controller::Property p;
  p.name = name;
  p.get = [get] { return value(get()); };
  p.set = [name, lo, hi, set](const json& v) {
    const auto x = number_value(v);
    if (!x || *x < lo || *x > hi) return invalid(name + " must be a number in " + number_text(lo) + ".." + number_text(hi));
    set(*x);
    return Reply{};
  };
  p.osd = std::move(osd);
  return p;
}

static Controller::Property flag_property(const std::string& name, std::function<bool()> get, std::function<void(bool)> set,
                                          std::function<std::string()> osd) {
  Controller::Property p;
  p.name = name;
  p.get = [get] { return value(get()); };
  if (set)
    p.set = [name, set](const json& v) {
      const auto b = flag_value(v);
      if (!b) return invalid(name + " is yes or no (true or false)");
      set(*b);
      return Reply{};
    };
  p.osd = std::move(osd);
  return p;
}

void Controller::build_properties() {
  Session& s = s_;
  Property pause = flag_property("pause", [&s] { return s.paused(); }, [&s](bool b) { s.set_paused(b); },
                                 [&s] { return std::string(s.paused() ? "Paused" : "Playing"); });
  Property pos;
  pos.name = "time-pos";
  pos.get = [&s] { return s.frame() != nullptr ? value(s.position_s()) : unavailable("no frame yet"); };
  pos.set = [&s](const json& v) {
    const auto t = number_value(v);
    if (!t) return invalid("time-pos is in seconds");
    if (!s.state().can_seek) return Reply::fail("error running command", s.info().name + ": this source cannot seek");
    s.seek(*t);
    return Reply{};
  };
  pos.osd = [&s] {
    const double t = s.seek_base(), d = s.info().duration_s;
    return clock_string(t) + (d > 0 ? " / " + clock_string(d) + " (" + std::to_string(static_cast<int>(100 * t / d)) + "%)" : "");
  };
  Property duration;
  duration.name = "duration";
  duration.get = [&s] { return s.info().duration_s > 0 ? value(s.info().duration_s) : unavailable("a live input has no length"); };
  Property percent;
  percent.name = "percent-pos";
  percent.get = [&s] {
    const double d = s.info().duration_s;
    return d > 0 && s.frame() != nullptr ? value(100 * s.position_s() / d) : unavailable("no length or no frame yet");
  };
  Property speed = number_property("speed", kMinSpeed, kMaxSpeed, [&s] { return s.speed(); }, [&s](double v) { (void)s.set_speed(v); },
                                   [&s] {
                                     char b[48];
                                     std::snprintf(b, sizeof(b), "Speed: %.3gx%s", s.speed(),
                                                   s.has_audio() && !s.audio_stretches() && s.speed() != 1 ? " (sound off)" : "");
                                     return std::string(b);
                                   });
  Property eof = flag_property("eof-reached", [&s] { return s.ended(); }, nullptr, nullptr);
  Property path;
  path.name = "path";
  path.get = [&s] { return value(s.info().name); };
  props_ = {pause, pos, duration, percent, speed, eof, path};
  add_sound_properties();
  add_picture_properties();
  add_control_properties();
  add_window_properties();
}

void Controller::add_sound_properties() {
  Session& s = s_;
  props_.push_back(number_property("volume", 0, kMaxVolume * 100, [&s] { return s.volume() * 100; }, [&s](double v) { s.set_volume(v / 100); },
                                   [&s] { return "Volume: " + std::to_string(static_cast<int>(std::lround(s.volume() * 100))) + "%"; }));
  props_.push_back(flag_property("mute", [&s] { return s.muted(); }, [&s](bool m) { s.set_muted(m); },
                                 [&s] { return "Mute: " + on_off(s.muted()); }));
  // aid: mpv's audio track: its number (1..), or false ("no") for none.
  Property aid;
  aid.name = "aid";
  aid.get = [&s] { return s.audio_track() > 0 ? value(s.audio_track()) : value(false); };
  aid.set = [&s](const json& v) {
    const std::string t = text_value(v);
    const auto n = number_value(v);
    const int track = t == "no" || t == "false" ? 0 : t == "auto" ? 1 : n && *n == std::floor(*n) ? static_cast<int>(*n) : -1;
    if (track < 0 || track > std::max(1, s.audio_tracks())) return invalid("aid is no, auto or a track 1.." + std::to_string(s.audio_tracks()));
    s.set_audio_track(track);
    return Reply{};
  };
  aid.cycle = [&s](int dir) {
    const int n = s.audio_tracks();
    if (n == 0) return unavailable("no audio track");
    s.set_audio_track(((s.audio_track() + dir) % (n + 1) + n + 1) % (n + 1));  // 0 (none), 1..n
    return Reply{};
  };
  aid.osd = [&s] {
    if (s.audio_track() == 0) return std::string("Audio: none") + (s.audio_tracks() == 0 ? " (" + s.audio_note() + ")" : "");
    return "Audio: " + std::to_string(s.audio_track()) + "/" + std::to_string(s.audio_tracks()) + " " + s.audio_description();
  };
  Property audio = aid;
  audio.name = "audio";
  // sid: subtitles, which histeq does not draw: always "no".
  Property sid;
  sid.name = "sid";
  sid.get = [] { return value(false); };
  sid.set = [](const json& v) { return flag_value(v) == std::optional<bool>(false) || text_value(v) == "no" ? Reply{} : unavailable("histeq shows no subtitles"); };
  sid.cycle = [](int) { return Reply{}; };
  sid.osd = [] { return std::string("Subtitles: none (histeq shows no subtitles)"); };
  Property sub = sid;
  sub.name = "sub";
  props_.insert(props_.end(), {aid, audio, sid, sub});
}

void Controller::add_picture_properties() {
  Session& s = s_;
  Property kernel;
  kernel.name = "kernel";
  kernel.get = [&s] { return value(s.kernel()); };
  kernel.set = [&s](const json& v) {
    const std::string k = text_value(v);
    const auto& ks = s.kernels();
    if (std::find(ks.begin(), ks.end(), k) == ks.end()) {
      std::string list;
      for (const auto& n : ks) list += (list.empty() ? "" : ", ") + n;
      return invalid("kernel '" + k + "' cannot equalize this video here (kernels that can: " + list + ")");
    }
    s.set_kernel(k);
    return Reply{};
  };
  kernel.cycle = [&s](int dir) {
    s.set_kernel(player::cycle(s.kernels(), s.kernel(), dir));
    return Reply{};
  };
  kernel.osd = [&s] { return "Kernel: " + s.kernel(); };
  Property kernels;
  kernels.name = "histeq-kernels";
  kernels.get = [&s] { return value(s.kernels()); };
  const eq::Control& strength_spec = *eq::find_equalizer_control("strength");
  Property strength = number_property(strength_spec.name, strength_spec.min, strength_spec.max, [&s] { return s.strength(); }, [&s](double v) { s.set_strength(static_cast<float>(v)); },
                                      [&s] { return "Strength: " + number_text(std::round(s.strength() * 100) / 100); });
  auto split_osd = [&s] {
    if (!s.split()) return std::string("Split: off");
    return std::string(s.compare_look() ? "Split: B (" + look_name(s.look_b()) + ") | A" : "Split: input | output");
  };
  Property split = flag_property("split", [&s] { return s.split(); }, [&s](bool b) { s.set_split(b); }, split_osd);
  Property split_pos = number_property("split-pos", 0, 1, [&s] { return s.split_pos(); }, [&s](double v) { s.set_split_pos(static_cast<float>(v)); },
                                       [&s] { return "Split at " + std::to_string(static_cast<int>(std::lround(s.split_pos() * 100))) + "%"; });
  Property compare;
  compare.name = "compare";
  compare.get = [&s] { return value(s.compare_look() ? look_name(s.look_b()) : "input"); };
  compare.set = [&s](const json& v) {
    const std::string n = text_value(v);
    auto l = compare_look(n);
    if (!l) return invalid("compare is input, plain, clahe or default");
    s.set_compare(l->has_value(), l->has_value() ? **l : s.look_b());
    return Reply{};
  };
  compare.cycle = [&s](int) {
    s.command(Command::compare);
    return Reply{};
  };
  compare.osd = [&s] { return std::string("Left side: ") + (s.compare_look() ? "settings B (" + look_name(s.look_b()) + ")" : "the input"); };
  Property plain = flag_property("plain", [&s] { return s.quality().plain(); },
                                 [&s](bool b) {
                                   if (b != s.quality().plain()) s.command(Command::plain);
                                 },
                                 [&s] { return "Plain: " + on_off(s.quality().plain()); });
  props_.insert(props_.end(), {kernel, kernels, strength, split, split_pos, compare, plain});
  Property timings;
  timings.name = "histeq-timings";
  timings.get = [this] { return value(this->timings()); };
  Property frame;  // mpv's: the frame on screen's number, from its time and the frame rate
  frame.name = "estimated-frame-number";
  frame.get = [&s] { return s.frame() != nullptr ? value(s.frame_number()) : unavailable("no frame yet"); };
  props_.insert(props_.end(), {timings, frame});
}

// Every control of the table (core/equalize/controls.h) by its name, with the command line's values.
void Controller::add_control_properties() {
  Session& s = s_;
  for (const eq::Control& c : eq::controls()) {
    Property p;
    p.name = c.name;
    p.get = [&s, c] {
      switch (c.type) {
        case eq::ControlType::flag: return value(c.on(s.quality()));
        case eq::ControlType::number: return value(c.get(s.quality()));
        default: return value(eq::control_text(c, s.quality()));
      }
    };
    p.set = [&s, c](const json& v) {
      if (!c.live) return unavailable(c.what + " is set when playback starts (--" + c.name + "), not while playing");
      std::string t = text_value(v);
      if (c.type == eq::ControlType::flag) {
        const auto b = flag_value(v);
        if (!b) return invalid(c.name + " is yes or no");
        t = *b ? "1" : "0";
      }
      eq::Quality q = s.quality();
      Status st = eq::set_control_text(c, q, t);
      if (st) st = eq::check_control(c, q);
      if (st) st = eq::validate(q);
      if (!st) return invalid(st.message());
      s.set_quality(q);
      return Reply{};
    };
    p.cycle = [&s, c](int) {
      if (!c.live) return unavailable(c.what + " is set when playback starts");
      s.toggle_control(c.name);
      return Reply{};
    };
    p.osd = [&s, c] {
      const eq::Quality& q = s.quality();
      const std::string what = capitalized(c.what) + ": ";
      if (c.name == "mode") return what + eq::control_text(c, q) + (q.mode == eq::Mode::clahe ? " " + std::to_string(q.tiles.cols) + "x" + std::to_string(q.tiles.rows) : "");
      if (c.type == eq::ControlType::flag) return what + on_off(c.on(q));
      if (c.type == eq::ControlType::number && c.zero_off && !c.on(q)) return what + "off";
      return what + eq::control_text(c, q) + (c.type == eq::ControlType::number && !c.unit.empty() ? " " + c.unit : "");
    };
    props_.push_back(std::move(p));
  }
}

void Controller::add_window_properties() {
  using F = WindowControl::Flag;
  const std::pair<const char*, F> flags[] = {{"fullscreen", F::fullscreen}, {"overlay", F::overlay}, {"stats", F::stats}, {"help", F::help}};
  for (auto [name, f] : flags) {
    Property p;
    p.name = name;
    const std::string label = capitalized(name);
    p.get = [this, f = f] { return window_ != nullptr ? value(window_->flag(f)) : unavailable("headless play has no window"); };
    p.set = [this, f = f, n = std::string(name)](const json& v) {
      if (window_ == nullptr) return unavailable("headless play has no window");
      const auto b = flag_value(v);
      if (!b) return invalid(n + " is yes or no");
      window_->set_flag(f, *b);
      return Reply{};
    };
    if (f != F::help) p.osd = [this, f = f, label] { return window_ != nullptr ? label + ": " + on_off(window_->flag(f)) : std::string(); };
    props_.push_back(std::move(p));
  }
  Property layout;
  layout.name = "histeq-layout";
  layout.get = [this] { return window_ != nullptr ? value(window_->layout()) : unavailable("headless play has no window"); };
  props_.push_back(std::move(layout));
}

const Controller::Property* Controller::find(const std::string& name) const {
  for (const auto& p : props_)
    if (p.name == name) return &p;
  return nullptr;
}

Reply Controller::get(const std::string& name) const {
  const Property* p = find(name);
  return p == nullptr ? Reply::fail("property not found", name) : p->get();
}

Reply Controller::set(const std::string& name, const json& v, bool osd) {
  const Property* p = find(name);
  if (p == nullptr) return Reply::fail("property not found", name);
  if (!p->set) return unavailable(name + " cannot be set");
  Reply r = p->set(v);
  if (r.error == "success" && osd) show(name);
  return r;
}

Reply Controller::cycle(const std::string& name, int dir, bool osd) {
  const Property* p = find(name);
  if (p == nullptr) return Reply::fail("property not found", name);
  Reply r;
  if (p->cycle) {
    r = p->cycle(dir);
  } else {
    const Reply now = p->get();
    if (now.error != "success") return now;
    if (!now.data.is_boolean() || !p->set) return unavailable(name + " cannot be cycled");
    r = p->set(!now.data.get<bool>());
  }
  if (r.error == "success" && osd) show(name);
  return r;
}

Reply Controller::add(const std::string& name, double by, bool multiply, bool osd) {
  const Property* p = find(name);
  if (p == nullptr) return Reply::fail("property not found", name);
  const Reply now = p->get();
  if (now.error != "success") return now;
  if (!now.data.is_number() || !p->set) return unavailable(name + " is not a number that can be set");
  const double v = now.data.get<double>();
  double next = multiply ? v * by : v + by;
  // As mpv: add and multiply stop at the ends of the range rather than fail.
  Reply r = p->set(next);
  if (r.error != "success") r = clamp_to_range(*p, next);
  if (r.error == "success" && osd) show(name);
  return r;
}

// The nearest value the property takes: add/multiply past an end stop at it, as mpv's do.
Reply Controller::clamp_to_range(const Property& p, double wanted) {
  const std::pair<const char*, std::pair<double, double>> ranges[] = {
      {"speed", {kMinSpeed, kMaxSpeed}}, {"volume", {0, kMaxVolume * 100}}, {"strength", {0, 1}}, {"split-pos", {0, 1}}};
  for (const auto& [n, r] : ranges)
    if (p.name == n) return p.set(std::clamp(wanted, r.first, r.second));
  return p.set(wanted);
}

void Controller::show(const std::string& name) {
  const Property* p = find(name);
  if (p == nullptr || !p->osd) return;
  const std::string line = p->osd();
  if (!line.empty()) s_.osd(line);
}

// histeq-timings: what the overlay's timing panel shows.
json Controller::timings() const {
  const SessionState st = s_.state();
  json stages = json::array();
  for (const auto& r : st.stages) stages.push_back({{"stage", r.name}, {"last", r.last}, {"avg", r.avg}, {"p99", r.p99}, {"peak", r.peak}});
  json dropped = json::object(), late = json::object();
  for (int c = 0; c < kCauses; ++c) {
    dropped[cause_name(static_cast<Cause>(c))] = st.dropped[static_cast<size_t>(c)];
    late[cause_name(static_cast<Cause>(c))] = st.late[static_cast<size_t>(c)];
  }
  dropped["source"] = st.dropped_source;
  return {{"units", "ms"},       {"budget_ms", st.budget_ms},     {"stages", stages},           {"frames_shown", st.frames_shown},
          {"dropped", dropped},  {"late", late},                  {"held", st.held},            {"display_fps", st.display_fps},
          {"video_fps", st.video_fps}, {"av_offset_ms", std::isnan(st.av_offset_ms) ? json() : json(st.av_offset_ms)}};
}

}  // namespace histeq::app::player
