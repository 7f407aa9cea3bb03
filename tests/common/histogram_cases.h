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
std::vector<KernelCase> kernel_cases(Backend backend);
std::string kernel_case_name(const KernelCase& kc);

// gtest prints these by name instead of as raw bytes.
inline void PrintTo(const HistCase& c, std::ostream* os) { *os << c.name; }
inline void PrintTo(const KernelCase& kc, std::ostream* os) { *os << kernel_case_name(kc); }

// Builds the host plane of a case into `storage` (bytes, kept alive by the caller) and returns its
// view. 16-bit planes are returned through PlaneRef.
PlaneRef make_host_plane(const HistCase& c, std::vector<unsigned char>& storage);

// cpu_reference on a host plane, with its own loop written independently of the library.
std::vector<uint32_t> naive_histogram(const PlaneRef& p, int bins);

// ---- Weighted histograms -------------------------------------------------------------------------
//   centre    1 at the centre falling to 0 at the ellipse through the edges' midpoints (0 outside):
//             a centre-weighted mask, with exact zeros
//   random    independent, uniform in [0, 1)
//   constant  0.7 everywhere: not a binary fraction, so every float add rounds the same way, the
//             worst case for long float sums
enum class WeightKind { centre, random, constant };
const char* weight_kind_name(WeightKind k);

struct WeightedCase {
  std::string name;
  HistCase c;
  WeightKind weights = WeightKind::random;
  size_t weight_pitch = 0;  // bytes; 0 = tight (width * 4)
};

std::vector<WeightedCase> weighted_cases();

// Kernel x weighted case pairs for the `weighted` kernels of one backend, restricted to what each
// kernel supports.
struct WeightedKernelCase {
  std::string kernel;
  WeightedCase wc;
};
std::vector<WeightedKernelCase> weighted_kernel_cases(Backend backend);
std::string weighted_kernel_case_name(const WeightedKernelCase& kc);
inline void PrintTo(const WeightedKernelCase& kc, std::ostream* os) { *os << weighted_kernel_case_name(kc); }
inline void PrintTo(const WeightedCase& wc, std::ostream* os) { *os << wc.name; }

// Builds the host weight plane of a case into `storage` and returns its view. The bytes between a
// row's last weight and the next row are NaN, so a kernel that reads them produces NaN sums.
WeightsView make_host_weights(const WeightedCase& wc, std::vector<float>& storage);

// Counts and double-precision weight sums, by a loop written independently of the library.
struct WeightedHistogram {
  std::vector<uint32_t> counts;
  std::vector<double> sums;
};
WeightedHistogram naive_weighted_histogram(const PlaneRef& p, const WeightsView& w, int bins);

// The largest |got - ref| / |ref| over the bins; infinity where got is NaN, or where ref is 0 and
// got is not. *worst (if given) receives that bin.
double max_relative_error(const std::vector<float>& got, const std::vector<double>& ref, int* worst = nullptr);

}  // namespace histeq::test
