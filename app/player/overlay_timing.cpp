// The overlay's "Statistics" and "Luma histograms" panels, the main panel's small frame-time graph
// and the OSD line.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/player/overlay.h"
#include "app/player/overlay_widgets.h"

namespace histeq::app::player {
namespace {

using namespace widgets;

// Source, format, equalizer, display and sound, one "key: value" row each.
void info_rows(const OverlayState& s) {
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


// The frame-time graph against the budget, the display and video rates, and the A/V offset.
void frame_times(const OverlayState& s) {
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
}

// A row per stage that ran (then latency): its last, mean, p99 and peak times, and a sparkline.
void stage_table(const OverlayState& s, ImFont* mono) {
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
      if (mono != nullptr) ImGui::PushFont(mono);
      const double budget = latency ? 1e30 : s.budget_ms;  // latency spans several frames by design
      ImGui::TableSetColumnIndex(1);
      cell_ms(r.last, budget);
      ImGui::TableSetColumnIndex(2);
      cell_ms(r.avg, budget);
      ImGui::TableSetColumnIndex(3);
      cell_ms(r.p99, budget);
      ImGui::TableSetColumnIndex(4);
      cell_ms(r.peak, budget);
      if (mono != nullptr) ImGui::PopFont();
      ImGui::TableSetColumnIndex(5);
      sparkline(r.spark, ImVec2(ImGui::GetContentRegionAvail().x, ImGui::GetTextLineHeight()),
                latency ? u32(kDim) : u32(kInputColor));
    }
    ImGui::EndTable();
  }
}

// Dropped, late and held frames by cause.
void drop_table(const OverlayState& s) {
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

}  // namespace

void Overlay::timing_panel(const OverlayState& s) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x - kMargin, kMargin), ImGuiCond_Always, ImVec2(1.f, 0.f));
  ImGui::SetNextWindowSize(ImVec2(kTimingWidth, 0), ImGuiCond_Always);
  if (!ImGui::Begin("Statistics  (i)", nullptr, kPanel)) {
    ImGui::End();
    return;
  }
  info_rows(s);
  ImGui::Separator();
  frame_times(s);
  ImGui::Spacing();
  stage_table(s, mono_);
  ImGui::Spacing();
  drop_table(s);
  if (s.corrupt_packets > 0 || s.damaged_frames > 0)
    ImGui::TextColored(kAmber, "input: %lld corrupt packets skipped, %lld damaged frames", static_cast<long long>(s.corrupt_packets),
                       static_cast<long long>(s.damaged_frames));
  keep_rect("statistics");
  ImGui::End();
}

// The main panel's glance at the timing: the frame times against the budget, the rates and the
// drops; the statistics panel (i) has the rest.
void Overlay::mini_timing(const OverlayState& s) {
  ImGui::Separator();
  int64_t dropped = s.dropped_source, late = 0;
  for (int c = 0; c < kCauses; ++c) {
    dropped += s.dropped[static_cast<size_t>(c)];
    late += s.late[static_cast<size_t>(c)];
  }
  ImGui::TextColored(kDim, "frame time   video %.1f fps   dropped %lld   late %lld", s.video_fps, static_cast<long long>(dropped),
                     static_cast<long long>(late));
  frame_graph(s.frame_ms, s.budget_ms, 300, ImVec2(ImGui::GetContentRegionAvail().x, 30));
}

// mpv's OSD: the last key action's line, for about a second and a half, at the top left of the
// picture (right of the main panel while the overlay shows), with or without the overlay.
void Overlay::osd(const OverlayState& s) {
  if (s.osd.empty()) return;
  ImDrawList* fg = ImGui::GetForegroundDrawList();
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize() * 1.7f;
  const float x = (s.overlay_visible ? std::max(main_right_, s.video_x) : s.video_x) + kMargin + 6;
  const float y = std::max(s.video_y, 0.f) + kMargin + 4;
  const ImVec2 ts = font->CalcTextSizeA(size, 1e9f, 0.f, s.osd.c_str());
  fg->AddRectFilled(ImVec2(x - 8, y - 5), ImVec2(x + ts.x + 8, y + ts.y + 5), IM_COL32(0, 0, 0, 150), 5.f);
  fg->AddText(font, size, ImVec2(x + 1.5f, y + 1.5f), IM_COL32(0, 0, 0, 220), s.osd.c_str());
  fg->AddText(font, size, ImVec2(x, y), s.osd_is_error ? u32(kRed) : IM_COL32(255, 255, 255, 255), s.osd.c_str());
}

void Overlay::luma_panel(const OverlayState& s) {
  // At the bottom left, under the main panel; where the window is too short for both, at the
  // bottom right (the sizes of the previous frame: ImGui knows them only once drawn).
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float bottom_y = vp->WorkPos.y + vp->WorkSize.y - kMargin - luma_height_;
  const bool fits_left = bottom_y >= main_bottom_ + kMargin;
  const float x = fits_left ? kMargin : std::max(main_right_ + kMargin, vp->WorkPos.x + vp->WorkSize.x - kMargin - kMainWidth);
  ImGui::SetNextWindowPos(ImVec2(x, std::max(bottom_y, vp->WorkPos.y + kMargin)), ImGuiCond_Always);
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
    luma_plot(f, cdf, color, ImVec2(w, 46));
  };
  if (s.luma.input.empty()) {
    ImGui::TextColored(kDim, "no histogram yet");
  } else {
    one("Input", s.luma.input, s.luma.input_cdf, kInputColor);
    one("Output", s.luma.output, s.luma.output_cdf, kOutputColor);
  }
  luma_height_ = ImGui::GetWindowSize().y;
  keep_rect("luma");
  ImGui::End();
}

}  // namespace histeq::app::player
