// The histogram test matrix, shared by the CPU and GPU suites: every kernel is checked against
// cpu_reference on each case its traits support. Planes are filled on the host with the synthetic
// patterns (same content everywhere) and uploaded for GPU kernels.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/histogram/histogram.h"
#include "core/image/synthetic.h"

namespace histeq::test {

struct HistCase {
  std::string name;
  int width = 0, height = 0;
  size_t pitch = 0;          // bytes; 0 = tight
  int bytes_per_sample = 1;
  int bit_depth = 8;
  int bins = 256;
  synth::Pattern pattern = synth::Pattern::uniform;
  uint32_t value = 0;        // for degenerate
  uint32_t seed = 1;
  size_t base_offset = 0;    // bytes: > 0 makes rows start unaligned (a cropped view)
  bool out_of_range = false;  // 16-bit: sprinkle samples >= 2^bit_depth, which must not be counted
  int max_blocks = 0;        // > 0: starve the grid so each thread gets a huge share (overflow test)
  int max_pass_steps = 0;    // > 0: KernelOptions::max_pass_steps, short passes to exercise counter flushes
};

std::vector<HistCase> histogram_cases();

// Kernel x case pairs for kernels of one backend, restricted to what each kernel supports.
struct KernelCase {
  std::string kernel;
  HistCase c;
};
std::vector<KernelCase> kernel_cases(hist::Backend backend);
std::string kernel_case_name(const KernelCase& kc);

// gtest prints these by name instead of as raw bytes.
inline void PrintTo(const HistCase& c, std::ostream* os) { *os << c.name; }
inline void PrintTo(const KernelCase& kc, std::ostream* os) { *os << kernel_case_name(kc); }

// Builds the host plane of a case into `storage` (bytes, kept alive by the caller) and returns its
// view. 16-bit planes are returned through PlaneRef.
PlaneRef make_host_plane(const HistCase& c, std::vector<unsigned char>& storage);

// cpu_reference on a host plane, with its own loop written independently of the library.
std::vector<uint32_t> naive_histogram(const PlaneRef& p, int bins);

}  // namespace histeq::test
