#include "app/player/overlay.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/player/hints.h"
#include "core/equalize/equalizer_controls.h"
#include "app/player/overlay_widgets.h"

namespace histeq::app::player {
namespace {

using namespace widgets;

// The strength's slider over its spec's range (core/equalize/equalizer_controls.h).
bool strength_slider(const char* id, float& v) {
  const eq::Control* c = eq::find_equalizer_control("strength");
  return ImGui::SliderFloat(id, &v, static_cast<float>(c->min), static_cast<float>(c->max), "%.2f");
}

// A kernel's description, its source, why it is the default or why it cannot be used.
void kernel_tooltip(const KernelChoice& k) {
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(420);
  ImGui::TextUnformatted(k.description.c_str());
  if (k.is_default) ImGui::TextColored(kDim, "%s", k.why_default.c_str());
  if (!k.source.empty()) ImGui::TextColored(kDim, "%s", k.source.c_str());
  if (!k.usable) ImGui::TextColored(kAmber, "%s", k.why_not.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// The kernel selector: every kernel with a mode for this stream's bins; the ones this equalizer
// cannot switch to are shown greyed, saying why. The kernel's description is its tooltip.
void kernel_selector(const OverlayState& s, OverlayActions& out, float wrap) {
  label("Kernel", true);
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - 140);
  const bool open = ImGui::BeginCombo("##kernel", s.kernel_shown.c_str(), ImGuiComboFlags_HeightLarge);
  if (!open && ImGui::IsItemHovered())
    for (const auto& k : s.kernels)
      if (k.name == s.kernel_shown) kernel_tooltip(k);
  if (open) {
    for (const auto& k : s.kernels) {
      ImGui::BeginDisabled(!k.usable);
      const bool selected = k.name == s.kernel_shown;
      const std::string item = k.is_default ? k.name + " (default)" : k.name;
      if (ImGui::Selectable(item.c_str(), selected) && k.usable && !selected) out.kernel = k.name;
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) kernel_tooltip(k);
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  (void)wrap;
  // The strength beside it: one row for what equalizes.
  ImGui::SameLine();
  ImGui::TextColored(kDim, "strength");
  ImGui::SameLine();
  float strength = s.strength;
  ImGui::SetNextItemWidth(-1);
  if (strength_slider("##strength", strength)) out.strength = strength;
  if (!s.kernel_requested.empty()) ImGui::TextColored(kAmber, "switching to %s ...", s.kernel_requested.c_str());
}

// The export's progress or outcome, and the last message.
void status_lines(const OverlayState& s, OverlayActions& out, float wrap) {
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

// One control of the table as a widget (app/player/controls.h, overlay_controls()): a choice as
// radio buttons, a flag as a checkbox, a grid as two integer sliders, a number as a slider over
// [0 or min, slider_max] in steps of `step` (its hints, hints.h), showing "off" where 0 turns it off and `top_label` at
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

bool number_widget(const eq::Control& c, const ControlHints& h, eq::Quality& q) {
  const double v = c.get(q);
  const float lo = c.zero_off ? 0.f : static_cast<float>(c.min);
  const float hi = static_cast<float>(h.slider_max > 0 ? h.slider_max : c.max);
  const bool off = c.zero_off && (v <= 0 || v < c.min);
  const bool top = !h.top_label.empty() && v >= c.max;
  const std::string format = off ? "off" : top ? h.top_label : h.format.empty() ? "%.2f" : h.format;
  float f = static_cast<float>(v);
  ImGui::SetNextItemWidth(-1);
  if (!ImGui::SliderFloat(("##" + c.name).c_str(), &f, lo, hi, format.c_str())) return false;
  const double per_unit = h.step > 0 ? 1 / h.step : 0;  // 100 for 0.01: round(f * 100) / 100 is 0.35, not 0.35000000000000003
  double r = per_unit > 0 ? std::round(f * per_unit) / per_unit : f;
  if (c.zero_off && f < c.min) r = 0;  // below the range means off
  c.set(q, r);
  return true;
}

bool control_widget(const eq::Control& c, const ControlHints& h, eq::Quality& q) {
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
      const std::string format = h.format.empty() ? "%d" : h.format;
      if (!ImGui::SliderInt2(("##" + c.name).c_str(), v, static_cast<int>(c.min), static_cast<int>(c.max), format.c_str())) return false;
      c.set_grid(q, {v[0], v[1]});
      return true;
    }
    case eq::ControlType::number: break;
  }
  return number_widget(c, h, q);
}

}  // namespace

void Overlay::draw(const OverlayState& s, OverlayActions& out) {
  panels_.clear();
  if (s.split) split_handle(s, out);
  if (s.overlay_visible) {
    main_panel(s, out);
    if (s.stats_visible) timing_panel(s);
    luma_panel(s);
    export_dialog(s, out);
    if (auto f = browser_.draw()) out.open = *f;
  }
  if (s.show_help) help_panel(s, out);
  osd(s);
}

void Overlay::keep_rect(const char* name) {
  const ImVec2 p = ImGui::GetWindowPos(), z = ImGui::GetWindowSize();
  panels_.push_back({name, p.x, p.y, z.x, z.y});
}

void Overlay::main_panel(const OverlayState& s, OverlayActions& out) {
  ImGui::SetNextWindowPos(ImVec2(kMargin, kMargin), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(kMainWidth, 0), ImGuiCond_Always);
  // Rows a little closer than elsewhere: the panel and the luma histograms under it fit a
  // 720-pixel-high window.
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(ImGui::GetStyle().ItemSpacing.x, 4.f));
  const bool open = ImGui::Begin("histeq  -  live histogram equalization", nullptr, kPanel);
  ImGui::PopStyleVar();
  if (!open) {
    ImGui::End();
    return;
  }
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(ImGui::GetStyle().ItemSpacing.x, 4.f));
  const float wrap = kMainWidth - 2 * ImGui::GetStyle().WindowPadding.x;
  kernel_selector(s, out, wrap);
  look_controls(s, out, wrap);
  ImGui::Separator();
  split_controls(s, out);
  ImGui::Separator();
  transport(s, out);
  file_buttons(s, out);
  status_lines(s, out, wrap);
  mini_timing(s);
  ImGui::PopStyleVar();
  main_bottom_ = ImGui::GetWindowPos().y + ImGui::GetWindowSize().y;
  main_right_ = ImGui::GetWindowPos().x + ImGui::GetWindowSize().x;
  keep_rect("histeq");
  ImGui::End();
}

// The settings of the output (A), and (beside its plain / defaults buttons) those of the frame on
// screen.
void Overlay::look_controls(const OverlayState& s, OverlayActions& out, float wrap) {
  eq::Quality q = s.quality;
  if (quality_controls("a", q)) out.quality = q;
  ImGui::SameLine();
  ImGui::PushTextWrapPos(wrap);
  ImGui::TextColored(kDim, "on screen: %s", s.quality_shown.c_str());
  ImGui::PopTextWrapPos();
}

// The split view, its left side (the input or settings B), and settings B.
void Overlay::split_controls(const OverlayState& s, OverlayActions& out) {
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
    bool changed = strength_slider("##strength_b", bs);
    b.strength = bs;
    changed |= quality_controls("b", b.quality);
    if (changed) out.look_b = b;
  }
}

// Play/pause, step, +-5 s, the position and the seek bar (a seek on release).
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
}

// Open..., Export... (its dialog) and the keyboard help.
void Overlay::file_buttons(const OverlayState& s, OverlayActions& out) {
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
  ImGui::SameLine();
  if (ImGui::Button(s.stats_visible ? "Hide stats (i)" : "Stats (i)")) out.toggle_stats = true;
}

void Overlay::help_panel(const OverlayState& s, OverlayActions& out) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_Always,
                          ImVec2(0.5f, 0.5f));
  bool open = true;
  if (ImGui::Begin("Keys", &open, kPanel & ~ImGuiWindowFlags_NoFocusOnAppearing)) {
    if (ImGui::BeginTable("keys", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      // Two columns of keys, so that the panel fits a 720-pixel-high window.
      const size_t half = (s.keys.size() + 1) / 2;
      for (size_t r = 0; r < half; ++r) {
        ImGui::TableNextRow();
        for (size_t c = 0; c < 2 && r + c * half < s.keys.size(); ++c) {
          const auto& [key, what] = s.keys[r + c * half];
          ImGui::TableSetColumnIndex(static_cast<int>(2 * c));
          if (mono_ != nullptr) ImGui::PushFont(mono_);
          ImGui::TextColored(kAmber, "%s", key.c_str());
          if (mono_ != nullptr) ImGui::PopFont();
          ImGui::TableSetColumnIndex(static_cast<int>(2 * c + 1));
          ImGui::TextUnformatted(what.c_str());
        }
      }
      ImGui::EndTable();
    }
    ImGui::Separator();
    ImGui::TextColored(kDim, "Mouse: drag the split divider on the video; drop a video file on the window to play it.");
    ImGui::TextColored(kDim, "Keys are mpv's (input.conf syntax); --input-conf FILE rebinds them.");
    keep_rect("keys");
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
    const ControlHints h = hints_of(c);
    if (!h.label.empty()) label(h.label.c_str(), true);
    else ImGui::SameLine();
    changed |= control_widget(c, h, q);
  }
  if (ImGui::SmallButton("plain")) {
    eq::make_plain(q);  // the specs' plain values; the levels stay
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