// The overlay's drawing helpers: its colours and layout, text rows and table cells, the frame-time
// graph, sparklines and luma plots (Dear ImGui draw lists). Private to the overlay
// (overlay.cpp, overlay_timing.cpp).
//
// Thread: the window's, between Window::new_frame() and Window::render_ui().
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace histeq::app::player::widgets {

constexpr float kMargin = 12.f;
constexpr float kMainWidth = 400.f;
constexpr float kTimingWidth = 470.f;

inline const ImVec4 kGreen(0.33f, 0.80f, 0.47f, 1.f);
inline const ImVec4 kAmber(0.98f, 0.73f, 0.18f, 1.f);
inline const ImVec4 kRed(0.96f, 0.33f, 0.28f, 1.f);
inline const ImVec4 kDim(0.62f, 0.66f, 0.72f, 1.f);
inline const ImVec4 kInputColor(0.46f, 0.64f, 0.90f, 1.f);
inline const ImVec4 kOutputColor(0.98f, 0.64f, 0.26f, 1.f);

inline constexpr ImGuiWindowFlags kPanel = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                    ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoFocusOnAppearing |
                                    ImGuiWindowFlags_NoSavedSettings;

ImU32 u32(const ImVec4& c, float alpha = 1.f);
ImVec2 add(ImVec2 a, ImVec2 b);
// Media time as [H:]MM:SS.cc; "-:--" when unknown.
std::string clock(double s);
// A row label in the left column of a two-column "key: value" block; `widget`: the value is a
// framed widget, so the label is lowered to its text line.
void label(const char* text, bool widget = false, float width = 84.f);
// Text wrapped at plain spaces only, in `width` pixels from the cursor (ImGui's own wrapping also
// breaks after '.', which splits "6.0 s"; no-break spaces keep a number with its unit).
void text_wrapped_at_spaces(const std::string& text, float width);
// Right-aligned text in the current table cell.
void cell_right(const char* text, const ImVec4* color = nullptr);
// Milliseconds in a table cell, amber above 75% of the budget, red above it.
void cell_ms(double ms, double budget_ms);
// A small line of recent values, scaled to its own peak; NaN: a gap.
void sparkline(const std::vector<float>& v, ImVec2 size, ImU32 color);
// Frame times as bars, oldest at the left, against the budget: green, amber above 75% of it, red
// above it; a dropped frame (NaN) is a faint red column.
void frame_graph(const std::vector<float>& ms, double budget, size_t capacity, ImVec2 size);
// A luma histogram (display-bin fractions) and its CDF.
void luma_plot(const std::vector<float>& frac, const std::vector<float>& cdf, const ImVec4& color, ImVec2 size);
// Mean and standard deviation of luma (8-bit scale) from display-bin fractions.
void luma_moments(const std::vector<float>& frac, double& mean, double& sd);

}  // namespace histeq::app::player::widgets
