// The hidden files an export keeps beside its output NAME, in NAME's folder: the temporary file
// being written (".NAME.XXXXXX.part", mkstemps' template), the record of a finished batch export
// (".NAME.histeq") and the temporary files of JSON reports. Their names add up to 13 bytes to
// NAME's, so an output name near the file system's limit (NAME_MAX, 255 bytes on most) would leave
// no room: then the hidden name keeps as much of NAME's start as fits (cut on a UTF-8 character's
// boundary), then "~" and 16 hex digits of a hash of the whole NAME, so that two long names that
// share their start still differ. A name that fits is written as it always was.
#pragma once

#include <string>

namespace histeq::pipeline {

// The path of the hidden file `"." + NAME + suffix` beside `path` (its folder, "." when it has
// none), shortened as above when that name would pass the folder's NAME_MAX. `suffix` is short
// (".XXXXXX.part", ".histeq").
std::string hidden_sibling(const std::string& path, const std::string& suffix);

}  // namespace histeq::pipeline
