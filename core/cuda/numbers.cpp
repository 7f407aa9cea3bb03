#include "core/cuda/numbers.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <system_error>

namespace histeq {

std::string format_number(double v, int precision) {
  char b[64];
  const auto r = std::to_chars(b, b + sizeof(b), v, std::chars_format::general, precision);
  return std::string(b, r.ec == std::errc() ? r.ptr : b);
}

std::string format_fixed(double v, int decimals) {
  char b[400];  // 1e308 with its decimals
  const auto r = std::to_chars(b, b + sizeof(b), v, std::chars_format::fixed, decimals);
  return std::string(b, r.ec == std::errc() ? r.ptr : b);
}

bool parse_number(const std::string& text, double& out) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+' && last - first > 1 && first[1] != '-') ++first;  // strtod took "+1.5" too
  double v = 0;
  const auto r = std::from_chars(first, last, v);
  if (r.ec != std::errc() || r.ptr != last || first == last) return false;
  out = v;
  return true;
}

namespace {

// One decimal integer, all of `part`; beyond long long it saturates (a range check then fails
// rather than wrap, as sscanf's %d did: "4294967304" was 8).
bool whole_number(const std::string& part, long long& v) {
  if (part.empty() || part[0] < '0' || part[0] > '9') return false;
  const auto r = std::from_chars(part.data(), part.data() + part.size(), v);
  if (r.ptr != part.data() + part.size()) return false;
  if (r.ec == std::errc::result_out_of_range) v = LLONG_MAX;
  return r.ec == std::errc() || r.ec == std::errc::result_out_of_range;
}

}  // namespace

Status parse_dimensions(const std::string& text, const std::string& what, int max_each, int& first, int& second) {
  const size_t x = text.find('x');
  long long a = 0, b = 0;
  if (x == std::string::npos || !whole_number(text.substr(0, x), a) || !whole_number(text.substr(x + 1), b))
    return HISTEQ_ERROR(Code::invalid_argument, what + " must be WxH (two whole numbers, e.g. 8x8), not '" + text + "'");
  if (a < 1 || b < 1 || a > max_each || b > max_each)
    return HISTEQ_ERROR(Code::invalid_argument, what + " must be 1.." + std::to_string(max_each) + " per axis, not " + text);
  first = static_cast<int>(a);
  second = static_cast<int>(b);
  return Status::ok();
}

}  // namespace histeq
