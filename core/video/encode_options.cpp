#include "core/video/encode_options.h"
#include "core/cuda/numbers.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace histeq::video {

Result<int64_t> parse_bit_rate(const std::string& text) {
  const std::string bad = "--bitrate '" + text + "': give bits per second, e.g. 4M, 2500k or 800000";
  if (text.empty()) return HISTEQ_ERROR(Code::invalid_argument, bad);
  // The number, then an optional unit letter; locale-free (numbers.h).
  const size_t digits = text.find_first_not_of("0123456789.eE+-");
  const std::string unit = digits == std::string::npos ? "" : text.substr(digits);
  double v = 0;
  if (!parse_number(text.substr(0, digits), v)) return HISTEQ_ERROR(Code::invalid_argument, bad);
  double scale = 1;
  if (unit == "k" || unit == "K") scale = 1e3;
  else if (unit == "M" || unit == "m") scale = 1e6;
  else if (unit == "G" || unit == "g") scale = 1e9;
  else if (!unit.empty()) return HISTEQ_ERROR(Code::invalid_argument, bad);
  const double bits = v * scale;
  if (!std::isfinite(bits) || bits < 1 || bits > 1e12) return HISTEQ_ERROR(Code::invalid_argument, bad);
  return static_cast<int64_t>(std::llround(bits));
}

Result<std::pair<std::string, std::string>> parse_encoder_option(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return HISTEQ_ERROR(Code::invalid_argument, "--encoder-opt '" + text + "': give KEY=VALUE, e.g. --encoder-opt tune=film");
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

namespace {

std::vector<std::string> split_colons(const std::string& s) {
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t colon = s.find(':', from);
    parts.push_back(s.substr(from, colon == std::string::npos ? std::string::npos : colon - from));
    if (colon == std::string::npos) return parts;
    from = colon + 1;
  }
}

// A stream or input number: digits only.
bool parse_number(const std::string& p, int* out) {
  if (p.empty() || p.size() > 6) return false;
  for (char c : p)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  *out = std::atoi(p.c_str());
  return true;
}

}  // namespace

Result<StreamMap> parse_stream_map(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return HISTEQ_ERROR(Code::invalid_argument, "-map '" + text + "': " + why +
                                                    " (accepted: 0, 0:v, 0:a, 0:s, 0:a:1, 0:3, a '-' before to remove, a '?' after to allow none)");
  };
  StreamMap m;
  m.text = text;
  std::string s = text;
  if (!s.empty() && s.front() == '-') {
    m.negative = true;
    s.erase(0, 1);
  }
  if (!s.empty() && s.back() == '?') {
    m.optional = true;
    s.pop_back();
  }
  const std::vector<std::string> parts = split_colons(s);
  int input = -1;
  if (!parse_number(parts[0], &input)) return bad("it begins with the input's number, 0");
  if (input != 0) return bad("there is one input, 0");
  if (parts.size() > 3) return bad("too many parts");
  size_t next = 1;
  if (parts.size() > 1 && parts[1].size() == 1 && std::string("vas").find(parts[1][0]) != std::string::npos) {
    m.type = parts[1][0];
    next = 2;
  }
  if (next < parts.size()) {
    if (!parse_number(parts[next], &m.index)) return bad("'" + parts[next] + "' is neither v, a, s nor a stream number");
    ++next;
  }
  if (next != parts.size()) return bad("too many parts");
  return m;
}

}  // namespace histeq::video
