#include "app/player/overlay_widgets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace histeq::app::player::widgets {
namespace {

float finite_max(const std::vector<float>& v) {
  float m = 0;
  for (float x : v)
    if (x == x && x > m) m = x;
  return m;
}

}  // namespace

ImU32 u32(const ImVec4& c, float alpha) { return ImGui::ColorConvertFloat4ToU32(ImVec4(c.x, c.y, c.z, c.w * alpha)); }

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
void label(const char* text, bool widget, float width) {
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
void cell_right(const char* text, const ImVec4* color) {
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

}  // namespace histeq::app::player::widgets
