// Numbers in text, independent of the C locale: what the controls, the settings' descriptions, the
// command line's sizes and the library's messages print and parse. printf's %g and strtod follow
// LC_NUMERIC, so a host program that set a decimal-comma locale (de_DE.UTF-8: GStreamer's
// gst-launch-1.0, a Python script's locale.setlocale) would print "1,5" and refuse "1.5"; these use
// std::to_chars / std::from_chars, which never look at the locale.
//
// Nothing here allocates beyond the returned string; thread-safe.
#pragma once

#include <string>

#include "core/cuda/status.h"

namespace histeq {

// As printf("%.*g", precision, v) in the C locale: "1.1", "0.35", "1e+06", "inf", "nan".
std::string format_number(double v, int precision = 6);
// As printf("%.*f", decimals, v) in the C locale: "12.5".
std::string format_fixed(double v, int decimals);

// The whole of `text` as a decimal number ("1.5", "+1.5", "-2", "1e3", "inf", "nan"; no spaces,
// never a comma): false when any of it is not a number, or beyond double's range.
bool parse_number(const std::string& text, double& out);

// "WxH" (the command line's --size, --tiles, the grid controls): two decimal integers in
// 1..max_each joined by one 'x', nothing else (no sign, space or second 'x'); never wraps: numbers
// beyond int are out of range. Errors (invalid_argument), one line naming `what`:
// "tiles must be WxH (two whole numbers, e.g. 8x8), not '8x'", "tiles must be 1..32 per axis, not 4294967304x4".
Status parse_dimensions(const std::string& text, const std::string& what, int max_each, int& first, int& second);

}  // namespace histeq
