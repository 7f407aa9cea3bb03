// CPU kernels against cpu_reference on the whole matrix, plus cpu_reference against an independent
// naive loop, plus the API's contract (validation, registry traits).
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "core/histogram/histogram.h"
#include "tests/common/histogram_cases.h"

namespace histeq::test {
namespace {

constexpr uint32_t kPoison = 0xDEADBEEFu;

std::vector<uint32_t> run_cpu(const std::string& kernel, const PlaneRef& p, int bins, hist::KernelOptions opts = {}) {
  auto k = hist::create_kernel(kernel, opts);
  EXPECT_TRUE(k.is_ok()) << k.status().to_string();
  std::vector<uint32_t> h(bins, kPoison);
  Status s = hist::compute(**k, p, {h.data(), bins, MemoryKind::host});
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return h;
}

class CpuKernel : public ::testing::TestWithParam<KernelCase> {};

TEST_P(CpuKernel, MatchesReference) {
  const KernelCase& kc = GetParam();
  std::vector<unsigned char> storage;
  const PlaneRef p = make_host_plane(kc.c, storage);
  const auto ref = run_cpu("cpu_reference", p, kc.c.bins);
  const auto got = run_cpu(kc.kernel, p, kc.c.bins, {kc.c.max_blocks});
  ASSERT_EQ(got.size(), ref.size());
  for (size_t b = 0; b < ref.size(); ++b) ASSERT_EQ(got[b], ref[b]) << "bin " << b;
}

INSTANTIATE_TEST_SUITE_P(Matrix, CpuKernel, ::testing::ValuesIn(kernel_cases(hist::Backend::cpu)),
                         [](const auto& info) { return kernel_case_name(info.param); });

class Reference : public ::testing::TestWithParam<HistCase> {};

TEST_P(Reference, MatchesNaiveLoopAndCountsEverySample) {
  const HistCase& c = GetParam();
  std::vector<unsigned char> storage;
  const PlaneRef p = make_host_plane(c, storage);
  const auto ref = run_cpu("cpu_reference", p, c.bins);
  EXPECT_EQ(ref, naive_histogram(p, c.bins));
  const uint64_t total = std::accumulate(ref.begin(), ref.end(), uint64_t{0});
  if (!c.out_of_range) EXPECT_EQ(total, p.samples());
  else EXPECT_LT(total, p.samples());
  if (c.pattern == synth::Pattern::degenerate && p.samples() > 0) {
    int shift = c.bit_depth - hist::bins_log2(c.bins);
    EXPECT_EQ(ref[c.value >> shift], p.samples());
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, Reference, ::testing::ValuesIn(histogram_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(HistogramApi, HandComputedExample) {
  // 3x2 plane, pitch 4 with padding bytes that must not be counted.
  unsigned char px[] = {1, 2, 2, 99, 255, 1, 1, 99};
  PlaneView<uint8_t> v{px, 3, 2, 4, 8, MemoryKind::host};
  auto h = run_cpu("cpu_parallel", v, 256);
  EXPECT_EQ(h[1], 3u);
  EXPECT_EQ(h[2], 2u);
  EXPECT_EQ(h[255], 1u);
  EXPECT_EQ(h[99], 0u);
  auto h4 = run_cpu("cpu_reference", v, 4);  // bins of 64 values
  EXPECT_EQ(h4, (std::vector<uint32_t>{5, 0, 0, 1}));
}

TEST(HistogramApi, RejectsBadRequests) {
  auto k = hist::create_kernel("cpu_reference");
  ASSERT_TRUE(k.is_ok());
  std::vector<unsigned char> px(64, 1);
  std::vector<uint32_t> h(1024);
  PlaneView<uint8_t> v{px.data(), 8, 8, 8, 8, MemoryKind::host};
  EXPECT_EQ(hist::compute(**k, v, {h.data(), 100, MemoryKind::host}).code(), Code::invalid_argument);  // not 2^k
  EXPECT_EQ(hist::compute(**k, v, {h.data(), 512, MemoryKind::host}).code(), Code::invalid_argument);  // > 8-bit range
  EXPECT_EQ(hist::compute(**k, v, {nullptr, 256, MemoryKind::host}).code(), Code::invalid_argument);
  EXPECT_EQ(hist::compute(**k, v, {h.data(), 256, MemoryKind::device}).code(), Code::invalid_argument);
  PlaneView<uint8_t> bad_pitch{px.data(), 8, 8, 4, 8, MemoryKind::host};
  EXPECT_EQ(hist::compute(**k, bad_pitch, {h.data(), 256, MemoryKind::host}).code(), Code::invalid_argument);
  PlaneView<uint8_t> on_device{px.data(), 8, 8, 8, 8, MemoryKind::device};
  EXPECT_EQ(hist::compute(**k, on_device, {h.data(), 256, MemoryKind::host}).code(), Code::invalid_argument);
  EXPECT_TRUE(hist::compute(**k, v, {h.data(), 256, MemoryKind::host}).is_ok());
}

TEST(Registry, NamesAreUniqueAndTraitsComplete) {
  std::set<std::string> names;
  for (const auto& e : hist::registry()) {
    EXPECT_TRUE(names.insert(e.info.name).second) << "duplicate " << e.info.name;
    EXPECT_FALSE(e.info.description.empty()) << e.info.name;
    EXPECT_FALSE(e.info.paper.empty()) << e.info.name;
    EXPECT_FALSE(e.info.section.empty()) << e.info.name;
    EXPECT_TRUE(e.info.bins_8bit != 0 || e.info.bins_16bit != 0) << e.info.name;
    EXPECT_NE(e.make, nullptr);
  }
  for (const char* required : {"cpu_reference", "cpu_parallel", "global_atomic", "block_atomic", "method2", "cub"})
    EXPECT_NE(hist::find_kernel(required), nullptr) << required;
  EXPECT_TRUE(hist::find_kernel("method2")->info.data_independent);
  EXPECT_TRUE(hist::find_kernel("method2")->info.supports(1, 256));
  EXPECT_TRUE(hist::find_kernel("method2")->info.supports(2, 1024));
  EXPECT_FALSE(hist::find_kernel("method2")->info.supports(1, 64));
}

TEST(Registry, UnknownNameIsNotFound) {
  auto k = hist::create_kernel("no_such_kernel");
  ASSERT_FALSE(k.is_ok());
  EXPECT_EQ(k.status().code(), Code::not_found);
  EXPECT_NE(k.status().message().find("method2"), std::string::npos) << "the error lists the known kernels";
}

}  // namespace
}  // namespace histeq::test
