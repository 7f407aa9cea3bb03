#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "core/image/synthetic.h"

#include "core/image/fork_join.h"

namespace histeq::synth {

const char* pattern_name(Pattern p) noexcept {
  switch (p) {
    case Pattern::uniform: return "uniform";
    case Pattern::degenerate: return "degenerate";
    case Pattern::natural: return "natural";
    case Pattern::gaussian: return "gaussian";
    case Pattern::colours: return "colours";
  }
  return "?";
}

Result<Pattern> parse_pattern(const std::string& name) {
  for (Pattern p : {Pattern::uniform, Pattern::degenerate, Pattern::natural, Pattern::gaussian, Pattern::colours})
    if (name == pattern_name(p)) return p;
  return HISTEQ_ERROR(Code::invalid_argument, "unknown pattern '" + name + "' (uniform, degenerate, natural, gaussian, colours)");
}

namespace {

// Padding marker: the top value of the depth, so kernels that read padding over-count the top bin.
template <class T>
Status fill(PlaneView<T> p, Pattern pattern, uint32_t seed, uint32_t value) {
  if (p.memory == MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "fill_host needs a host plane");
  const int threads = static_cast<int>(std::clamp<size_t>(p.samples() >> 20, 1, static_cast<size_t>(image::usable_cores())));
  auto rows = [&](int y0, int y1) {
    const size_t pad = (p.pitch - p.row_bytes()) / sizeof(T);
    const T marker = static_cast<T>((1u << p.bit_depth) - 1u);
    for (int y = y0; y < y1; ++y) {
      T* r = p.row(y);
      for (int x = 0; x < p.width; ++x)
        r[x] = static_cast<T>(sample(pattern, static_cast<uint32_t>(x), static_cast<uint32_t>(y), seed, p.bit_depth, value));
      for (size_t i = 0; i < pad; ++i) r[p.width + i] = marker;
    }
  };
  if (threads == 1) {
    rows(0, p.height);
    return Status::ok();
  }
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(rows, static_cast<int>(static_cast<int64_t>(p.height) * i / threads),
                      static_cast<int>(static_cast<int64_t>(p.height) * (i + 1) / threads));
  for (auto& t : pool) t.join();
  return Status::ok();
}

}  // namespace

Status fill_host(PlaneView<uint8_t> p, Pattern pattern, uint32_t seed, uint32_t value) {
  return fill(p, pattern, seed, value);
}
Status fill_host(PlaneView<uint16_t> p, Pattern pattern, uint32_t seed, uint32_t value) {
  return fill(p, pattern, seed, value);
}

}  // namespace histeq::synth
