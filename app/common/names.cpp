#include "app/common/names.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace histeq::app {
namespace {

// The length of the valid UTF-8 character at s[i], or 0 when the byte there does not start one.
size_t utf8_char_len(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned cp;
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

void hex_byte(std::string& out, unsigned char c) {
  char b[5];
  std::snprintf(b, sizeof(b), "\\x%02x", c);
  out += b;
}

// Shared by escape_name and terminal_safe: printable characters pass, the rest as "\xNN".
std::string escape(const std::string& s, bool backslash) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_char_len(s, i);
    // C1 controls (U+0080..U+009F) are "\xC2\x80".."\xC2\x9F": some terminals obey them.
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
    if (n == 0 || c < 0x20 || c == 0x7F || c1) {
      for (size_t k = 0; k < (c1 ? 2u : 1u); ++k) hex_byte(out, static_cast<unsigned char>(s[i + k]));
      i += c1 ? 2 : 1;
      continue;
    }
    if (c == '\\' && backslash) out += "\\\\";
    else out.append(s, i, n);
    i += n;
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_char_len(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escape_name(const std::string& s) { return escape(s, true); }

std::string terminal_safe(const std::string& s) { return escape(s, false); }

std::string unescape_name(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && hex_digit(s[i + 2]) >= 0 && hex_digit(s[i + 3]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3]));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

void put_name(nlohmann::json& j, const std::string& key, const std::string& name) {
  j[key] = name;
  if (!valid_utf8(name)) j[key + "_escaped"] = escape_name(name);
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace histeq::app
