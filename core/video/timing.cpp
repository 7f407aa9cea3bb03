#include "core/video/timing.h"

#include <array>
#include <atomic>
#include <mutex>
#include <string>

namespace histeq::video {
namespace {

// Names live in fixed storage and are published with a release store of the count, so that
// stage_name() needs no lock: an id below the count always names a fully written entry.
struct Table {
  std::mutex mu;
  std::array<std::string, kMaxStages> names;
  std::atomic<int> count{0};

  Table() {
    for (const char* n : {"decode", "convert", "upload", "download", "encode", "present", "glass-to-glass"})
      names[count.fetch_add(1)] = n;
  }
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

StageId stage_id(std::string_view name) {
  Table& t = table();
  const int n = t.count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (t.names[static_cast<size_t>(i)] == name) return i;
  std::lock_guard<std::mutex> l(t.mu);
  const int m = t.count.load(std::memory_order_relaxed);
  for (int i = n; i < m; ++i)
    if (t.names[static_cast<size_t>(i)] == name) return i;
  if (m >= kMaxStages) return kNoStage;
  t.names[static_cast<size_t>(m)] = std::string(name);
  t.count.store(m + 1, std::memory_order_release);
  return m;
}

const char* stage_name(StageId id) noexcept {
  Table& t = table();
  if (id < 0 || id >= t.count.load(std::memory_order_acquire)) return "?";
  return t.names[static_cast<size_t>(id)].c_str();
}

int stage_count() noexcept { return table().count.load(std::memory_order_acquire); }

}  // namespace histeq::video
