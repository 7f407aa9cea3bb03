#include "core/pipeline/hidden_names.h"

#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>

namespace histeq::pipeline {
namespace {

// FNV-1a, 64 bits: stable across runs and machines (a resumed batch finds what an earlier run left).
uint64_t hash_of(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

size_t name_max(const std::string& dir) {
  const long n = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  return n > 0 ? static_cast<size_t>(n) : static_cast<size_t>(NAME_MAX);
}

// The first `n` bytes of `s` or fewer, not cutting a UTF-8 sequence (a continuation byte never starts the rest).
std::string utf8_prefix(const std::string& s, size_t n) {
  if (n >= s.size()) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace

std::string hidden_sibling(const std::string& path, const std::string& suffix) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const size_t limit = name_max(dir);
  if (1 + name.size() + suffix.size() <= limit) return folder + "." + name + suffix;
  char hex[24];
  std::snprintf(hex, sizeof(hex), "~%016llx", static_cast<unsigned long long>(hash_of(name)));
  const std::string tag(hex);
  const size_t fixed = 1 + tag.size() + suffix.size();
  return folder + "." + utf8_prefix(name, limit > fixed ? limit - fixed : 0) + tag + suffix;
}

}  // namespace histeq::pipeline
