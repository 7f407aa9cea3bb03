// Frames for the public API's tests (tests/unit/test_api.cpp, tests/gpu/test_api_gpu.cpp): host
// images of every public format with structured, changing content and any row padding, and what
// core/pipeline's equalizer (the engine of `histeq export`) makes of the same frames, which the API
// must match bit for bit. Built with HISTEQ_API_NO_USING: the public names are histeq::api::.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/status.h"
#include "histeq/histeq.hpp"

namespace histeq::test {

// A host image that owns its planes: rows of `pitch` bytes (padding filled with a marker byte, so
// that a write past a row shows).
struct ApiFrame {
  api::PixelFormat format = api::PixelFormat::yuv420p;
  int width = 0, height = 0;
  api::ColorRange range = api::ColorRange::unspecified;
  double time_s = -1;
  std::vector<std::vector<uint8_t>> planes;
  std::vector<size_t> pitch;

  api::Image image();  // over the planes (host memory)
  // The samples of plane i, rows packed (no padding), for comparisons.
  std::vector<uint8_t> packed(int i) const;
  int rows(int i) const;
  size_t row_bytes(int i) const;
};

// Frame `n` of a clip of `format`: a gradient, a moving bright block, noise, and a hard cut to a
// darker picture at n = 4; padding bytes after each row; time n / 30 s.
ApiFrame make_frame(api::PixelFormat format, int width, int height, int n, size_t padding);

// The control table's settings and the strength / kernel as core/pipeline's options take them.
struct EngineSettings {
  std::vector<std::pair<std::string, std::string>> controls;  // name -> text, on top of the defaults
  bool plain = false;                                         // start from Settings::plain()
  api::Settings api() const;                                  // the public Settings (CPU backend)
};

// core/pipeline's CPU equalizer over copies of `frames` (in order, one video): the planes of each
// output frame, rows packed. Gray formats go through as 4:2:0 with neutral chroma, luma only back.
// `changes`: (frame index, control, value) applied just before that frame, as Equalizer::set does.
using Change = std::pair<int, std::pair<std::string, std::string>>;
Result<std::vector<std::vector<std::vector<uint8_t>>>> pipeline_reference(const std::vector<ApiFrame>& frames,
                                                                          const EngineSettings& s,
                                                                          const std::vector<Change>& changes = {});

const char* format_name(api::PixelFormat f);
// Every public format.
std::vector<api::PixelFormat> all_formats();

}  // namespace histeq::test
