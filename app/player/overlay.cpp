#include "app/player/overlay.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace histeq::app::player {
namespace {

constexpr float kMargin = 12.f;
constexpr float kMainWidth = 400.f;
constexpr float kTimingWidth = 470.f;

const ImVec4 kGreen(0.33f, 0.80f, 0.47f, 1.f);
const ImVec4 kAmber(0.98f, 0.73f, 0.18f, 1.f);
const ImVec4 kRed(0.96f, 0.33f, 0.28f, 1.f);
const ImVec4 kDim(0.62f, 0.66f, 0.72f, 1.f);
const ImVec4 kInputColor(0.46f, 0.64f, 0.90f, 1.f);
const ImVec4 kOutputColor(0.98f, 0.64f, 0.26f, 1.f);

ImU32 u32(const ImVec4& c, float alpha = 1.f) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.x, c.y, c.z, c.w * alpha)); }

ImVec2 add(ImVec2 a, ImVec2 b) { return ImVec2(a.x + b.x, a.y + b.y); }

std::string clock(double s) {
  if (!(s >= 0) || !std::isfinite(s)) return "-:--";
  const int cs = static_cast<int>(std::lround(s * 100));
  char b[32];
  if (cs >= 360000) std::snprintf(b, sizeof(b), "%d:%02d:%02d.%02d", cs / 360000, cs / 6000 % 60, cs / 100 % 60, cs % 100);
  else std::snprintf(b, sizeof(b), "%d:%02d.%02d", cs / 6000, cs / 100 % 60, cs % 100);
  return b;
}

// A row label in the left column of a two-column "key: value" block; `widget`: the value is a
// framed widget, so the label is lowered to its text line.
void label(const char* text, bool widget = false, float width = 84.f) {
  if (widget) ImGui::AlignTextToFramePadding();
  ImGui::TextColored(kDim, "%s", text);
  ImGui::SameLine(width);
}

// Text wrapped at plain spaces only, in `width` pixels from the cursor (ImGui's own wrapping also
// breaks after '.', which splits "6.0 s"; no-break spaces keep a number with its unit).
void text_wrapped_at_spaces(const std::string& text, float width) {
  std::string line;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    const std::string candidate = line.empty() ? word : line + " " + word;
    if (!line.empty() && ImGui::CalcTextSize(candidate.c_str()).x > width) {
      ImGui::TextUnformatted(line.c_str());
      line = word;
    } else {
      line = candidate;
    }
    i = j + 1;
  }
  if (!line.empty()) ImGui::TextUnformatted(line.c_str());
}

// Right-aligned text in the current table cell.
void cell_right(const char* text, const ImVec4* color = nullptr) {
  const float w = ImGui::CalcTextSize(text).x;
  const float x = ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x - w;
  if (x > ImGui::GetCursorPosX()) ImGui::SetCursorPosX(x);
  if (color != nullptr) ImGui::TextColored(*color, "%s", text);
  else ImGui::TextUnformatted(text);
}

void cell_ms(double ms, double budget_ms) {
  char b[32];
  std::snprintf(b, sizeof(b), ms >= 100 ? "%.0f" : ms >= 10 ? "%.1f" : "%.2f", ms);
  const ImVec4* c = ms > budget_ms ? &kRed : ms > 0.75 * budget_ms ? &kAmber : nullptr;
  cell_right(b, c);
}

float finite_max(const std::vector<float>& v) {
  float m = 0;
  for (float x : v)
    if (x == x && x > m) m = x;
  return m;
}

// A small line of recent values, scaled to its own peak.
void sparkline(const std::vector<float>& v, ImVec2 size, ImU32 color) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::Dummy(size);
  if (v.size() < 2) return;
  const float top = finite_max(v);
  if (top <= 0) return;
  const float dx = size.x / static_cast<float>(v.size() - 1);
  std::vector<ImVec2> pts;
  auto flush = [&] {
    if (pts.size() >= 2) dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), color, ImDrawFlags_None, 1.2f);
    pts.clear();
  };
  for (size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] == v[i])) {  // a frame where the stage did not run: a gap
      flush();
      continue;
    }
    pts.emplace_back(p0.x + dx * static_cast<float>(i), p0.y + size.y - 1 - (size.y - 2) * std::min(1.f, v[i] / top));
  }
  flush();
}

// Frame times as bars, oldest at the left, against the budget: green, amber above 75% of it, red
// above it; a dropped frame is a faint red column.
void frame_graph(const std::vector<float>& ms, double budget, size_t capacity, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 p1 = add(p0, size);
  ImGui::Dummy(size);
  dl->AddRectFilled(p0, p1, IM_COL32(0, 0, 0, 110), 3.f);
  // The scale: twice the budget, up to four times when most frames need it (whole budgets, so it
  // does not jump with every spike); taller bars are clipped, with a white cap.
  std::vector<float> finite;
  for (float v : ms)
    if (v == v) finite.push_back(v);
  double p95 = 0;
  if (!finite.empty()) {
    const size_t k = static_cast<size_t>(0.95 * static_cast<double>(finite.size() - 1));
    std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(k), finite.end());
    p95 = finite[k];
  }
  const double top = budget * std::clamp(std::ceil(p95 / budget * 1.2), 2.0, 4.0);
  auto y_of = [&](double v) { return p1.y - static_cast<float>(std::min(1.0, v / top)) * (size.y - 2); };
  const float slot = size.x / static_cast<float>(std::max<size_t>(capacity, 1));
  const float x0 = p1.x - slot * static_cast<float>(ms.size());
  for (size_t i = 0; i < ms.size(); ++i) {
    const float xa = x0 + slot * static_cast<float>(i), xb = xa + std::max(1.f, slot - 0.25f);
    const float v = ms[i];
    if (!(v == v)) {
      dl->AddRectFilled(ImVec2(xa, p0.y + 1), ImVec2(xb, p1.y), u32(kRed, 0.28f));
      continue;
    }
    const ImVec4& c = v > budget ? kRed : v > 0.75 * budget ? kAmber : kGreen;
    dl->AddRectFilled(ImVec2(xa, y_of(v)), ImVec2(xb, p1.y), u32(c, 0.9f));
    if (v > top) dl->AddRectFilled(ImVec2(xa, p0.y + 1), ImVec2(xb, p0.y + 3), IM_COL32(255, 255, 255, 230));
  }
  // 75% and 100% of the budget.
  const float y75 = y_of(0.75 * budget), y100 = y_of(budget);
  dl->AddLine(ImVec2(p0.x, y75), ImVec2(p1.x, y75), u32(kAmber, 0.35f), 1.f);
  for (float x = p0.x; x < p1.x; x += 9.f) dl->AddLine(ImVec2(x, y100), ImVec2(std::min(x + 5.f, p1.x), y100), u32(kRed, 0.95f), 1.5f);
  char b[48];
  std::snprintf(b, sizeof(b), "budget %.1f ms", budget);
  const ImVec2 ts = ImGui::CalcTextSize(b);
  dl->AddText(ImVec2(p0.x + 5, y100 - ts.y - 1), u32(kRed), b);
  std::snprintf(b, sizeof(b), "%.0f ms", top);
  dl->AddText(ImVec2(p1.x - ImGui::CalcTextSize(b).x - 4, p0.y + 2), u32(kDim), b);
}

// A luma histogram: columns per display bin (scaled to a robust peak, so that one huge bin, e.g.
// a flat region, does not flatten the rest; clipped columns get a bright cap) and its CDF.
void luma_plot(const std::vector<float>& frac, const std::vector<float>& cdf, const ImVec4& color, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 p1 = add(p0, size);
  ImGui::Dummy(size);
  dl->AddRectFilled(p0, p1, IM_COL32(0, 0, 0, 110), 3.f);
  if (frac.empty()) return;
  std::vector<float> nz;
  for (float f : frac)
    if (f > 0) nz.push_back(f);
  if (nz.empty()) return;
  std::sort(nz.begin(), nz.end());
  const float robust = nz[std::min(nz.size() - 1, static_cast<size_t>(0.97 * static_cast<double>(nz.size())))] * 1.4f;
  const float top = std::min(nz.back(), std::max(robust, 1e-9f));
  const float w = size.x / static_cast<float>(frac.size());
  for (size_t i = 0; i < frac.size(); ++i) {
    if (frac[i] <= 0) continue;
    const float x = p0.x + w * static_cast<float>(i);
    const float h = std::min(1.f, frac[i] / top) * (size.y - 2);
    dl->AddRectFilled(ImVec2(x, p1.y - h), ImVec2(x + std::max(1.f, w), p1.y), u32(color, 0.85f));
    if (frac[i] > top) dl->AddRectFilled(ImVec2(x, p0.y + 1), ImVec2(x + std::max(1.f, w), p0.y + 3), IM_COL32(255, 255, 255, 230));
  }
  std::vector<ImVec2> pts;
  pts.reserve(cdf.size());
  for (size_t i = 0; i < cdf.size(); ++i)
    pts.emplace_back(p0.x + w * (static_cast<float>(i) + 0.5f), p1.y - 1 - cdf[i] * (size.y - 3));
  dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), IM_COL32(255, 255, 255, 200), ImDrawFlags_None, 1.3f);
}

// Mean and standard deviation of luma (8-bit scale) from display-bin fractions.
void luma_moments(const std::vector<float>& frac, double& mean, double& sd) {
  mean = sd = 0;
  if (frac.empty()) return;
  const double scale = 256.0 / static_cast<double>(frac.size());
  double m = 0, m2 = 0;
  for (size_t i = 0; i < frac.size(); ++i) {
    const double v = (static_cast<double>(i) + 0.5) * scale;
    m += frac[i] * v;
    m2 += frac[i] * v * v;
  }
  mean = m;
  sd = std::sqrt(std::max(0.0, m2 - m * m));
}

// One control of the table as a widget (app/player/controls.h, overlay_controls()): a choice as
// radio buttons, a flag as a checkbox, a grid as two integer sliders, a number as a slider over
// [0 or min, slider_max] in steps of `step`, showing "off" where 0 turns it off and `top_label` at
// its top. True when the user changed it (then `q` holds the change).
bool choice_widget(const eq::Control& c, eq::Quality& q) {
  int v = static_cast<int>(c.get(q));
  bool changed = false;
  for (size_t i = 0; i < c.choices.size(); ++i) {
    if (i > 0) ImGui::SameLine();
    const std::string id = c.choices[i] + "##" + c.name;
    changed |= ImGui::RadioButton(id.c_str(), &v, static_cast<int>(i));
  }
  if (changed) c.set(q, v);
  return changed;
}

bool number_widget(const eq::Control& c, eq::Quality& q) {
  const double v = c.get(q);
  const float lo = c.zero_off ? 0.f : static_cast<float>(c.min);
  const float hi = static_cast<float>(c.slider_max > 0 ? c.slider_max : c.max);
  const bool off = c.zero_off && (v <= 0 || v < c.min);
  const bool top = !c.top_label.empty() && v >= c.max;
  const std::string format = off ? "off" : top ? c.top_label : c.format.empty() ? "%.2f" : c.format;
  float f = static_cast<float>(v);
  ImGui::SetNextItemWidth(-1);
  if (!ImGui::SliderFloat(("##" + c.name).c_str(), &f, lo, hi, format.c_str())) return false;
  const double per_unit = c.step > 0 ? 1 / c.step : 0;  // 100 for 0.01: round(f * 100) / 100 is 0.35, not 0.35000000000000003
  double r = per_unit > 0 ? std::round(f * per_unit) / per_unit : f;
  if (c.zero_off && f < c.min) r = 0;  // below the range means off
  c.set(q, r);
  return true;
}

bool control_widget(const eq::Control& c, eq::Quality& q) {
  switch (c.type) {
    case eq::ControlType::choice: return choice_widget(c, q);
    case eq::ControlType::flag: {
      bool on = c.on(q);
      if (!ImGui::Checkbox((c.name + "##flag").c_str(), &on)) return false;
      c.set(q, on ? 1 : 0);
      return true;
    }
    case eq::ControlType::grid: {
      const hist::TileGrid g = c.get_grid(q);
      int v[2] = {g.cols, g.rows};
      ImGui::SetNextItemWidth(-1);
      const std::string format = c.format.empty() ? "%d" : c.format;
      if (!ImGui::SliderInt2(("##" + c.name).c_str(), v, static_cast<int>(c.min), static_cast<int>(c.max), format.c_str())) return false;
      c.set_grid(q, {v[0], v[1]});
      return true;
    }
    case eq::ControlType::number: break;
  }
  return number_widget(c, q);
}

constexpr ImGuiWindowFlags kPanel = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                    ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoFocusOnAppearing |
                                    ImGuiWindowFlags_NoSavedSettings;

}  // namespace

void Overlay::draw(const OverlayState& s, OverlayActions& out) {
  if (s.split) split_handle(s, out);
  if (s.overlay_visible) {
    main_panel(s, out);
    timing_panel(s);
    luma_panel(s);
    export_dialog(s, out);
    if (auto f = browser_.draw()) out.open = *f;
  }
  if (s.show_help) help_panel(s, out);
}

void Overlay::main_panel(const OverlayState& s, OverlayActions& out) {
  ImGui::SetNextWindowPos(ImVec2(kMargin, kMargin), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(kMainWidth, 0), ImGuiCond_Always);
  if (!ImGui::Begin("histeq  -  live histogram equalization", nullptr, kPanel)) {
    ImGui::End();
    return;
  }
  const float wrap = kMainWidth - 2 * ImGui::GetStyle().WindowPadding.x;
  info_rows(s);
  ImGui::Separator();
  kernel_selector(s, out, wrap);
  look_controls(s, out, wrap);
  ImGui::Separator();
  transport(s, out);
  export_status(s, out, wrap);
  main_bottom_ = ImGui::GetWindowPos().y + ImGui::GetWindowSize().y;
  ImGui::End();
}

void Overlay::info_rows(const OverlayState& s) {
  auto info_row = [&](const char* name, const std::string& value) {
    label(name);
    ImGui::BeginGroup();
    text_wrapped_at_spaces(value, ImGui::GetContentRegionAvail().x);
    ImGui::EndGroup();
  };
  info_row("Source", s.source);
  info_row("Format", s.format);
  info_row("Equalizer", s.equalizer);
  info_row("Display", s.display);
  if (ImGui::IsItemHovered() && !s.display_detail.empty()) ImGui::SetTooltip("%s", s.display_detail.c_str());
  if (!s.audio.empty()) {
    char vol[48];
    std::snprintf(vol, sizeof(vol), "; volume %.0f%%%s", s.volume * 100, s.muted ? " (muted: m)" : "");
    info_row("Sound", s.audio + vol);
  } else {
    label("Sound");
    ImGui::TextColored(kDim, "%s", s.audio_note.empty() ? "none" : s.audio_note.c_str());
  }
}

void Overlay::kernel_selector(const OverlayState& s, OverlayActions& out, float wrap) {
  // Kernel selector: every kernel with a mode for this stream's bins; the ones this equalizer
  // cannot switch to are shown greyed, saying why.
  label("Kernel", true);
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##kernel", s.kernel_shown.c_str(), ImGuiComboFlags_HeightLarge)) {
    for (const auto& k : s.kernels) {
      ImGui::BeginDisabled(!k.usable);
      const bool selected = k.name == s.kernel_shown;
      const std::string item = k.is_default ? k.name + " (default)" : k.name;
      if (ImGui::Selectable(item.c_str(), selected) && k.usable && !selected) out.kernel = k.name;
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(420);
        ImGui::TextUnformatted(k.description.c_str());
        if (k.is_default) ImGui::TextColored(kDim, "%s", k.why_default.c_str());
        if (!k.source.empty()) ImGui::TextColored(kDim, "%s", k.source.c_str());
        if (!k.usable) ImGui::TextColored(kAmber, "%s", k.why_not.c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  for (const auto& k : s.kernels)
    if (k.name == s.kernel_shown) {
      ImGui::PushTextWrapPos(wrap);
      ImGui::TextColored(kDim, "%s", k.description.c_str());
      if (k.is_default) ImGui::TextColored(kDim, "%s", k.why_default.c_str());
      ImGui::PopTextWrapPos();
      if (ImGui::IsItemHovered() && !k.source.empty()) ImGui::SetTooltip("%s", k.source.c_str());
    }
  if (!s.kernel_requested.empty()) ImGui::TextColored(kAmber, "switching to %s ...", s.kernel_requested.c_str());

}

void Overlay::look_controls(const OverlayState& s, OverlayActions& out, float wrap) {
  label("Strength", true);
  float strength = s.strength;
  ImGui::SetNextItemWidth(-1);
  if (ImGui::SliderFloat("##strength", &strength, 0.f, 1.f, "%.2f")) out.strength = strength;
  {
    eq::Quality q = s.quality;
    if (quality_controls("a", q)) out.quality = q;
    ImGui::PushTextWrapPos(wrap);
    ImGui::TextColored(kDim, "on screen: %s", s.quality_shown.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::Separator();
  bool split = s.split;
  if (ImGui::Checkbox("Split view", &split)) out.split = split;
  ImGui::SameLine();
  ImGui::TextColored(kDim, "left:");
  ImGui::SameLine();
  int left = s.compare_look ? 1 : 0;
  if (ImGui::RadioButton("input", &left, 0)) out.compare_look = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("settings B", &left, 1)) out.compare_look = true;
  ImGui::SameLine();
  if (ImGui::SmallButton("swap")) out.swap = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("exchange the settings of the right side (A) and of the left (B)");
  if (s.compare_look) {
    ImGui::TextColored(kAmber, "Settings B, left of the divider");
    pipeline::Look b = s.look_b;
    float bs = static_cast<float>(b.strength);
    label("Strength", true);
    ImGui::SetNextItemWidth(-1);
    bool changed = ImGui::SliderFloat("##strength_b", &bs, 0.f, 1.f, "%.2f");
    b.strength = bs;
    changed |= quality_controls("b", b.quality);
    if (changed) out.look_b = b;
  }
}

void Overlay::transport(const OverlayState& s, OverlayActions& out) {
  if (ImGui::Button(s.paused ? "Play" : "Pause", ImVec2(62, 0))) out.toggle_pause = true;
  ImGui::SameLine();
  if (ImGui::Button("Step")) out.step = true;
  ImGui::BeginDisabled(!s.can_seek);
  ImGui::SameLine();
  if (ImGui::Button("-5 s")) out.seek_to = std::max(0.0, s.position_s - kSeekStepS);
  ImGui::SameLine();
  if (ImGui::Button("+5 s")) out.seek_to = s.position_s + kSeekStepS;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::TextColored(s.ended ? kAmber : ImVec4(1, 1, 1, 1), "%s%s / %s", s.ended ? "end  " : "", clock(s.position_s).c_str(),
                     s.duration_s > 0 ? clock(s.duration_s).c_str() : "live");
  ImGui::BeginDisabled(!s.can_seek || s.duration_s <= 0);
  ImGui::SetNextItemWidth(-1);
  float pos = seeking_ ? seek_value_ : static_cast<float>(s.position_s);
  if (ImGui::SliderFloat("##seek", &pos, 0.f, static_cast<float>(std::max(s.duration_s, 0.001)), "", ImGuiSliderFlags_NoRoundToFormat)) {
    seeking_ = true;
    seek_value_ = pos;
  }
  if (ImGui::IsItemDeactivated() && seeking_) {  // seek once, on release
    out.seek_to = seek_value_;
    seeking_ = false;
  }
  ImGui::EndDisabled();
  if (ImGui::Button("Open...")) browser_.open(s.browse_from);
  ImGui::SameLine();
  ImGui::BeginDisabled(!s.exp.available || s.exp.running);
  if (ImGui::Button("Export...")) {
    std::snprintf(export_path_, sizeof(export_path_), "%s", s.exp.suggested_output.c_str());
    export_dialog_ = true;
  }
  ImGui::EndDisabled();
  if (!s.exp.available && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", s.exp.why_not.c_str());
  ImGui::SameLine();
  if (ImGui::Button("Keys (h)")) out.toggle_help = true;

}

void Overlay::export_status(const OverlayState& s, OverlayActions& out, float wrap) {
  if (s.exp.running) {
    char overlay[64];
    if (s.exp.fraction >= 0) std::snprintf(overlay, sizeof(overlay), "export %.0f%%", s.exp.fraction * 100);
    else std::snprintf(overlay, sizeof(overlay), "exporting");
    ImGui::ProgressBar(s.exp.fraction >= 0 ? static_cast<float>(s.exp.fraction) : 0.f, ImVec2(-70, 0), overlay);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) out.cancel_export = true;
    ImGui::TextColored(kDim, "%s", s.exp.line.c_str());
  } else if (!s.exp.result.empty()) {
    ImGui::PushTextWrapPos(wrap);
    ImGui::TextColored(s.exp.failed ? kRed : kGreen, "%s", s.exp.result.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!s.message.empty()) {
    ImGui::PushTextWrapPos(wrap);
    ImGui::TextColored(s.message_is_error ? kRed : kDim, "%s", s.message.c_str());
    ImGui::PopTextWrapPos();
  }
}

void Overlay::timing_panel(const OverlayState& s) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x - kMargin, kMargin), ImGuiCond_Always, ImVec2(1.f, 0.f));
  ImGui::SetNextWindowSize(ImVec2(kTimingWidth, 0), ImGuiCond_Always);
  if (!ImGui::Begin("Timing", nullptr, kPanel)) {
    ImGui::End();
    return;
  }
  ImGui::TextUnformatted("Frame time");
  ImGui::SameLine();
  ImGui::TextColored(kDim, "(busiest thread per frame, last %zu frame%s)", s.frame_ms.size(), s.frame_ms.size() == 1 ? "" : "s");
  const float w = ImGui::GetContentRegionAvail().x;
  frame_graph(s.frame_ms, s.budget_ms, 300, ImVec2(w, 92));
  ImGui::TextColored(kDim, "budget 1/%.4g fps  -  amber > 75%%  -  red > 100%%", s.source_fps);
  ImGui::Text("display %.1f fps   video %.1f fps   frame %lld", s.display_fps, s.video_fps, static_cast<long long>(s.frames_shown));
  if (!s.audio.empty()) {
    if (s.av_offset_ms == s.av_offset_ms) {
      const ImVec4& c = std::abs(s.av_offset_ms) > s.budget_ms ? kRed : std::abs(s.av_offset_ms) > 0.5 * s.budget_ms ? kAmber : kGreen;
      ImGui::TextColored(c, "A-V %+.1f ms", s.av_offset_ms);
    } else {
      ImGui::TextColored(kDim, "A-V -");
    }
    ImGui::SameLine();
    ImGui::TextColored(kDim, "(sound heard minus frame shown; the video follows the audio clock)");
  }

  ImGui::Spacing();
  stage_table(s);
  ImGui::Spacing();
  drops_table(s);
  if (s.corrupt_packets > 0 || s.damaged_frames > 0)
    ImGui::TextColored(kAmber, "input: %lld corrupt packets skipped, %lld damaged frames", static_cast<long long>(s.corrupt_packets),
                       static_cast<long long>(s.damaged_frames));
  ImGui::End();
}

void Overlay::stage_table(const OverlayState& s) {
  if (ImGui::BeginTable("stages", 6, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("stage", ImGuiTableColumnFlags_WidthFixed, 78);
    for (const char* c : {"last", "avg", "p99", "peak"}) ImGui::TableSetupColumn(c, ImGuiTableColumnFlags_WidthFixed, 50);
    ImGui::TableSetupColumn("ms, last frames", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (const auto& r : s.stages) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      const bool latency = r.name == "latency";
      if (latency) ImGui::TextColored(kDim, "%s", r.name.c_str());
      else ImGui::TextUnformatted(r.name.c_str());
      if (mono_ != nullptr) ImGui::PushFont(mono_);
      const double budget = latency ? 1e30 : s.budget_ms;  // latency spans several frames by design
      ImGui::TableSetColumnIndex(1);
      cell_ms(r.last, budget);
      ImGui::TableSetColumnIndex(2);
      cell_ms(r.avg, budget);
      ImGui::TableSetColumnIndex(3);
      cell_ms(r.p99, budget);
      ImGui::TableSetColumnIndex(4);
      cell_ms(r.peak, budget);
      if (mono_ != nullptr) ImGui::PopFont();
      ImGui::TableSetColumnIndex(5);
      sparkline(r.spark, ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetTextLineHeight()),
                latency ? u32(kDim) : u32(kInputColor));
    }
    ImGui::EndTable();
  }
}

void Overlay::drops_table(const OverlayState& s) {
  ImGui::TextUnformatted("Dropped and late frames");
  ImGui::SameLine();
  ImGui::TextColored(kDim, "(by cause)");
  if (ImGui::BeginTable("drops", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("cause", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("dropped", ImGuiTableColumnFlags_WidthFixed, 62);
    ImGui::TableSetupColumn("late", ImGuiTableColumnFlags_WidthFixed, 50);
    ImGui::TableSetupColumn("held", ImGuiTableColumnFlags_WidthFixed, 50);
    ImGui::TableHeadersRow();
    auto row = [&](const char* name, const char* hint, int64_t dropped, int64_t late, int64_t held = -1) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(name);
      if (hint != nullptr && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", hint);
      char b[32];
      for (int c = 0; c < 3; ++c) {
        const int64_t v = c == 0 ? dropped : c == 1 ? late : held;
        ImGui::TableSetColumnIndex(1 + c);
        if (v < 0) {
          cell_right("-", &kDim);
          continue;
        }
        std::snprintf(b, sizeof(b), "%lld", static_cast<long long>(v));
        cell_right(b, v > 0 ? (c == 0 ? &kRed : c == 1 ? &kAmber : nullptr) : &kDim);
      }
    };
    const char* hints[kCauses] = {"the decode thread (decode + convert) took longer than the budget",
                                  "the equalizer (upload .. download) took longer than the budget",
                                  "presenting (upload to GL, drawing) took longer than the budget",
                                  "no stage overran: the frame waited (queues, display, system)",
                                  "the sound had passed the frame by more than a frame interval (dropped) or was behind it "
                                  "(the picture held: repeated while the video waited for the audio clock)"};
    for (int c = 0; c < kCauses; ++c) {
      const bool sync = static_cast<Cause>(c) == Cause::av_sync;
      if (sync && s.audio.empty()) continue;
      row(cause_name(static_cast<Cause>(c)), hints[c], s.dropped[static_cast<size_t>(c)], s.late[static_cast<size_t>(c)],
          sync ? s.held : -1);
    }
    row("source (live, queue full)", "a camera frame dropped because the pipeline was full", s.dropped_source, -1);
    ImGui::EndTable();
  }
}

void Overlay::luma_panel(const OverlayState& s) {
  // At the bottom left; below the main panel when the window is too short for both (the sizes of
  // the previous frame: ImGui knows them only once drawn).
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float bottom_y = vp->WorkPos.y + vp->WorkSize.y - kMargin - luma_height_;
  ImGui::SetNextWindowPos(ImVec2(kMargin, std::max(bottom_y, main_bottom_ + kMargin)), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(kMainWidth, 0), ImGuiCond_Always);
  if (!ImGui::Begin("Luma histograms", nullptr, kPanel)) {
    ImGui::End();
    return;
  }
  const float w = ImGui::GetContentRegionAvail().x;
  double mean = 0, sd = 0;
  auto one = [&](const char* name, const std::vector<float>& f, const std::vector<float>& cdf, const ImVec4& color) {
    luma_moments(f, mean, sd);
    ImGui::TextColored(color, "%s", name);
    ImGui::SameLine();
    ImGui::TextColored(kDim, "mean %.1f   \xcf\x83 %.1f   (white: CDF)", mean, sd);
    luma_plot(f, cdf, color, ImVec2(w, 56));
  };
  if (s.luma.input.empty()) {
    ImGui::TextColored(kDim, "no histogram yet");
  } else {
    one("Input", s.luma.input, s.luma.input_cdf, kInputColor);
    one("Output", s.luma.output, s.luma.output_cdf, kOutputColor);
  }
  luma_height_ = ImGui::GetWindowSize().y;
  ImGui::End();
}

void Overlay::help_panel(const OverlayState&, OverlayActions& out) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  bool open = true;
  if (ImGui::Begin("Keys", &open, kPanel & ~ImGuiWindowFlags_NoFocusOnAppearing)) {
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& c : commands()) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        const std::string key = c.key == "left" ? "\xe2\x86\x90" : c.key == "right" ? "\xe2\x86\x92" : c.key;
        if (mono_ != nullptr) ImGui::PushFont(mono_);
        ImGui::TextColored(kAmber, "%-6s", key.c_str());
        if (mono_ != nullptr) ImGui::PopFont();
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(c.what.c_str());
      }
      ImGui::EndTable();
    }
    ImGui::Separator();
    ImGui::TextColored(kDim, "Mouse: drag the split divider on the video;");
    ImGui::TextColored(kDim, "drop a video file on the window to play it.");
  }
  ImGui::End();
  if (!open) out.toggle_help = true;
}

bool Overlay::quality_controls(const char* id, eq::Quality& q) {
  ImGui::PushID(id);
  bool changed = false;
  const std::vector<eq::Control> table = overlay_controls();
  for (const auto& c : table) {
    const eq::Control* needs = c.needs.empty() ? nullptr : eq::find_control(table, c.needs);
    if (needs != nullptr && !needs->on(q)) continue;  // e.g. the tiles in global mode
    if (!c.label.empty()) label(c.label.c_str(), true);
    else ImGui::SameLine();
    changed |= control_widget(c, q);
  }
  if (ImGui::SmallButton("plain")) {
    const eq::Quality levels = q;  // plain keeps the levels
    q = eq::plain_quality();
    q.range = levels.range;
    q.textbook = levels.textbook;
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("defaults")) {
    q = eq::default_quality();
    changed = true;
  }
  ImGui::PopID();
  return changed;
}

void Overlay::split_handle(const OverlayState& s, OverlayActions& out) {
  if (s.video_w <= 0) return;
  ImDrawList* fg = ImGui::GetForegroundDrawList();
  const float x = s.video_x + s.split_pos * s.video_w;
  // Labels at the top of each side.
  const std::string left = s.compare_look ? "B: " + eq::describe(s.look_b.quality) : "INPUT";
  const std::string right = s.compare_look ? "A: " + s.quality_shown : "OUTPUT";
  const char* labels[2] = {left.c_str(), right.c_str()};
  for (int i = 0; i < 2; ++i) {
    const ImVec2 ts = ImGui::CalcTextSize(labels[i]);
    const float cx = i == 0 ? x - 12 - ts.x : x + 12;
    const ImVec2 a(cx - 6, s.video_y + 14), b(cx + ts.x + 6, s.video_y + 20 + ts.y);
    if (a.x < s.video_x || b.x > s.video_x + s.video_w) continue;
    fg->AddRectFilled(a, b, IM_COL32(0, 0, 0, 150), 4.f);
    fg->AddText(ImVec2(cx, a.y + 3), IM_COL32(255, 218, 80, 255), labels[i]);
  }
  // Dragging: from anywhere near the divider that no panel covers.
  const ImGuiIO& io = ImGui::GetIO();
  const bool over_ui = io.WantCaptureMouse || ImGui::IsWindowHovered(ImGuiHoveredFlags_AnyWindow);
  const bool near = std::abs(io.MousePos.x - x) < 8 && io.MousePos.y >= s.video_y && io.MousePos.y <= s.video_y + s.video_h;
  if (!over_ui && (near || dragging_split_)) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  if (!over_ui && near && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) dragging_split_ = true;
  if (dragging_split_) {
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) dragging_split_ = false;
    else out.split_pos = std::clamp((io.MousePos.x - s.video_x) / s.video_w, 0.f, 1.f);
  }
}

void Overlay::export_dialog(const OverlayState& s, OverlayActions& out) {
  if (!export_dialog_) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(560, 0), ImGuiCond_Appearing);
  if (ImGui::Begin("Export the equalized video", &export_dialog_, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextColored(kDim, "Every frame of the file, with the current kernel, strength and settings, encoded with");
    ImGui::TextColored(kDim, "libx264 (audio and subtitles copied); playback goes on meanwhile.");
    ImGui::SetNextItemWidth(520);
    const bool enter = ImGui::InputText("##out", export_path_, sizeof(export_path_), ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::BeginDisabled(export_path_[0] == 0 || s.exp.running);
    if (ImGui::Button("Start", ImVec2(90, 0)) || (enter && export_path_[0] != 0)) {
      out.export_to = std::string(export_path_);
      export_dialog_ = false;
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Cancel", ImVec2(90, 0))) export_dialog_ = false;
  }
  ImGui::End();
}

}  // namespace histeq::app::player
