#include "app/player/file_browser.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/pipeline/source_factory.h"

namespace histeq::app::player {
namespace fs = std::filesystem;

namespace {

std::string human_size(unsigned long long b) {
  char s[32];
  if (b >= (1ull << 30)) std::snprintf(s, sizeof(s), "%.1f GB", b / double(1ull << 30));
  else if (b >= (1ull << 20)) std::snprintf(s, sizeof(s), "%.1f MB", b / double(1ull << 20));
  else if (b >= 1024) std::snprintf(s, sizeof(s), "%.0f KB", b / 1024.0);
  else std::snprintf(s, sizeof(s), "%llu B", b);
  return s;
}

void set_buffer(char* buf, size_t cap, const std::string& s) {
  std::snprintf(buf, cap, "%s", s.c_str());
}

}  // namespace

bool FileBrowser::looks_like_video(const std::string& name) { return pipeline::is_video_file_name(name); }

void FileBrowser::open(const std::string& start) {
  std::error_code ec;
  fs::path p = start.empty() ? fs::current_path(ec) : fs::path(start);
  if (!fs::is_directory(p, ec)) p = p.has_parent_path() ? p.parent_path() : fs::current_path(ec);
  list(fs::absolute(p, ec).lexically_normal().string());
  open_ = true;
}

void FileBrowser::list(const std::string& dir) {
  entries_.clear();
  selected_ = -1;
  error_.clear();
  std::error_code ec;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    error_ = dir + ": " + ec.message();
    return;  // keep showing the folder we were in
  }
  dir_ = dir;
  set_buffer(path_, sizeof(path_), dir_);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    Entry e;
    e.name = it->path().filename().string();
    if (e.name.empty() || e.name[0] == '.') continue;  // hidden files
    e.dir = it->is_directory(ec);
    if (!e.dir) {
      e.video = looks_like_video(e.name);
      e.bytes = it->is_regular_file(ec) ? static_cast<unsigned long long>(it->file_size(ec)) : 0;
    }
    entries_.push_back(std::move(e));
  }
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    if (a.dir != b.dir) return a.dir;
    return a.name < b.name;
  });
}

std::optional<std::string> FileBrowser::draw() {
  if (!open_) return std::nullopt;
  std::optional<std::string> chosen;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(640.f, vp->WorkSize.x - 40), std::min(460.f, vp->WorkSize.y - 40)), ImGuiCond_Appearing);
  if (!ImGui::Begin("Open a video", &open_, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return chosen;
  }
  // Where to go is decided while drawing and acted on after: listing a folder replaces entries_.
  std::optional<fs::path> go;
  if (ImGui::Button("Up")) go = fs::path(dir_).parent_path();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Only videos").x - 40);
  if (ImGui::InputText("##path", path_, sizeof(path_), ImGuiInputTextFlags_EnterReturnsTrue)) go = fs::path(path_);
  ImGui::SameLine();
  ImGui::Checkbox("Only videos", &only_video_);
  if (!error_.empty()) ImGui::TextColored(ImVec4(0.95f, 0.35f, 0.3f, 1), "%s", error_.c_str());

  if (auto clicked = draw_entries()) go = fs::path(*clicked);
  if (auto pressed = draw_buttons()) go = fs::path(*pressed);
  ImGui::End();
  if (go) {
    std::error_code ec;
    if (fs::is_directory(*go, ec)) {
      list(fs::absolute(*go, ec).lexically_normal().string());
    } else {
      chosen = go->string();
      open_ = false;
    }
  }
  return chosen;
}

std::optional<std::string> FileBrowser::draw_entries() {
  std::optional<std::string> go;
  const float footer = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  if (!ImGui::BeginTable("files", 2, ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter, ImVec2(0, -footer)))
    return go;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed, 80);
  ImGui::TableHeadersRow();
  for (int i = 0; i < static_cast<int>(entries_.size()); ++i) {
    const Entry& e = entries_[static_cast<size_t>(i)];
    if (only_video_ && !e.dir && !e.video) continue;
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    const std::string label = (e.dir ? e.name + "/" : e.name) + "##" + std::to_string(i);
    const ImVec4 col = e.dir ? ImVec4(0.55f, 0.75f, 1.f, 1) : e.video ? ImVec4(1, 1, 1, 1) : ImVec4(0.6f, 0.6f, 0.6f, 1);
    ImGui::PushStyleColor(ImGuiCol_Text, col);
    if (ImGui::Selectable(label.c_str(), selected_ == i, ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
      selected_ = i;
      if (ImGui::IsMouseDoubleClicked(0)) go = (fs::path(dir_) / e.name).string();
    }
    ImGui::PopStyleColor();
    ImGui::TableSetColumnIndex(1);
    if (!e.dir) ImGui::TextDisabled("%s", human_size(e.bytes).c_str());
  }
  ImGui::EndTable();
  return go;
}

std::optional<std::string> FileBrowser::draw_buttons() {
  std::optional<std::string> go;
  const bool can_open = selected_ >= 0 && selected_ < static_cast<int>(entries_.size());
  ImGui::BeginDisabled(!can_open);
  if (ImGui::Button("Open", ImVec2(90, 0)) && can_open) go = (fs::path(dir_) / entries_[static_cast<size_t>(selected_)].name).string();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Cancel", ImVec2(90, 0))) open_ = false;
  ImGui::SameLine();
  ImGui::TextDisabled("or drop a file on the window");
  return go;
}

}  // namespace histeq::app::player
