// CPU kernels against cpu_reference on the whole matrix, plus cpu_reference against an independent
// naive loop, plus the API's contract (validation, registry traits).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <typeinfo>

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
  const auto got = run_cpu(kc.kernel, p, kc.c.bins, {kc.c.max_blocks, kc.c.max_pass_steps});
  ASSERT_EQ(got.size(), ref.size());
  for (size_t b = 0; b < ref.size(); ++b) ASSERT_EQ(got[b], ref[b]) << "bin " << b;
}

INSTANTIATE_TEST_SUITE_P(Matrix, CpuKernel, ::testing::ValuesIn(kernel_cases(Backend::cpu)),
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
  PlaneView<uint8_t> shallow{px.data(), 8, 8, 8, 6, MemoryKind::host};
  EXPECT_EQ(hist::compute(**k, shallow, {h.data(), 64, MemoryKind::host}).code(), Code::invalid_argument) << "8-bit planes are 8 bits deep";
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
    EXPECT_TRUE(static_cast<bool>(e.make)) << e.info.name;
  }
  for (const char* required :
       {"cpu_reference", "cpu_parallel", "global_atomic", "block_atomic", "method2", "cub", "original", "block_partition",
        "tlb", "tlb_blr", "linear", "podlozhnyuk64", "podlozhnyuk256", "method1_base", "method1_ext1", "method1_ext2",
        "method1_ext3", "method1_ext2_ext3", "method2_map1", "method2_map2", "method2_map4", "privatized8_merge",
        "privatized8_avoid"})
    EXPECT_NE(hist::find_kernel(required), nullptr) << required;
  EXPECT_TRUE(hist::find_kernel("podlozhnyuk64")->info.supports(1, 64));
  EXPECT_FALSE(hist::find_kernel("podlozhnyuk64")->info.supports(1, 256));
  EXPECT_TRUE(hist::find_kernel("method2_map4")->info.data_independent);
  EXPECT_FALSE(hist::find_kernel("method2_map1")->info.data_independent);
  EXPECT_TRUE(hist::find_kernel("method2")->info.data_independent);
  EXPECT_TRUE(hist::find_kernel("method2")->info.supports(1, 256));
  EXPECT_TRUE(hist::find_kernel("method2")->info.supports(2, 1024));
  EXPECT_FALSE(hist::find_kernel("method2")->info.supports(1, 64));
}

TEST(Registry, AliasesNameARealKernelAndShareItsCode) {
  int aliases = 0;
  for (const auto& e : hist::registry()) {
    if (e.info.alias_of.empty()) continue;
    ++aliases;
    const hist::KernelEntry* target = hist::find_kernel(e.info.alias_of);
    ASSERT_NE(target, nullptr) << e.info.name << " is an alias of an unknown kernel";
    EXPECT_TRUE(target->info.alias_of.empty()) << "alias of an alias: " << e.info.name;
    // The same code: both factories make the same class (constructors allocate nothing, so this
    // needs no device even for GPU kernels).
    auto a = e.make(e.info, {});
    auto t = target->make(target->info, {});
    ASSERT_TRUE(a.is_ok() && t.is_ok()) << e.info.name;
    EXPECT_TRUE(typeid(**a) == typeid(**t)) << e.info.name << " must reuse its target's factory";
    EXPECT_EQ(e.info.bins_8bit, target->info.bins_8bit);
    EXPECT_EQ(e.info.bins_16bit, target->info.bins_16bit);
    EXPECT_EQ(e.info.backend, target->info.backend);
    EXPECT_EQ(e.info.data_independent, target->info.data_independent);
    EXPECT_NE(e.info.paper, target->info.paper) << e.info.name << " cites the source that uses its name";
  }
  EXPECT_EQ(hist::find_kernel("original")->info.alias_of, "global_atomic");
  EXPECT_EQ(hist::find_kernel("block_partition")->info.alias_of, "block_atomic");
  EXPECT_EQ(aliases, 2);
  // Matrix pairs never include aliases (they would repeat their target).
  for (auto backend : {Backend::cpu, Backend::gpu})
    for (const auto& kc : kernel_cases(backend)) EXPECT_TRUE(hist::find_kernel(kc.kernel)->info.alias_of.empty()) << kc.kernel;
}

// Every registered kernel meets every 8-bit content, size and geometry of the matrix at each bin
// count it supports (not only the 256-bin ones).
TEST(Matrix, EveryKernelMeetsEveryCaseAtEachOfItsBinCounts) {
  const auto cases = histogram_cases();
  for (const auto& e : hist::registry()) {
    if (!e.info.alias_of.empty()) continue;
    for (int bins : {64, 256}) {
      if (!e.info.supports(1, bins)) continue;
      size_t n = 0, n256 = 0;
      for (const auto& c : cases) {
        if (c.bytes_per_sample != 1) continue;
        if (c.bins == bins) ++n;
        if (c.bins == 256) ++n256;
      }
      EXPECT_EQ(n, n256) << e.info.name << " at " << bins << " bins";
      EXPECT_GE(n, 20u);
    }
    EXPECT_TRUE(std::any_of(cases.begin(), cases.end(), [&](const HistCase& c) {
      return c.max_blocks == 1 && e.info.supports(c.bytes_per_sample, c.bins);
    })) << e.info.name << " has no starved-grid overflow case";
  }
}

// ---- Weighted histograms -------------------------------------------------------------------------

// cpu_reference's weighted form against the independent double loop: counts exact, and each weight
// sum the double sum rounded once to float (relative error <= 2^-24).
class WeightedReference : public ::testing::TestWithParam<WeightedCase> {};

TEST_P(WeightedReference, MatchesDoubleLoop) {
  const WeightedCase& wc = GetParam();
  std::vector<unsigned char> storage;
  std::vector<float> wstorage;
  const PlaneRef p = make_host_plane(wc.c, storage);
  const WeightsView w = make_host_weights(wc, wstorage);
  const int bins = wc.c.bins;
  auto k = hist::create_kernel("cpu_reference");
  ASSERT_TRUE(k.is_ok());
  std::vector<uint32_t> counts(bins, kPoison);
  std::vector<float> sums(bins, std::numeric_limits<float>::quiet_NaN());
  Status s = hist::compute(**k, p, w, {counts.data(), bins, MemoryKind::host, sums.data()});
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  const WeightedHistogram ref = naive_weighted_histogram(p, w, bins);
  EXPECT_EQ(counts, ref.counts);
  int worst = -1;
  EXPECT_LE(max_relative_error(sums, ref.sums, &worst), 6.0e-8) << "bin " << worst;
  // Weighted and unweighted counts agree.
  EXPECT_EQ(counts, run_cpu("cpu_reference", p, bins));
  if (wc.weights == WeightKind::constant && p.samples() > 0) {
    const uint64_t n = std::accumulate(ref.counts.begin(), ref.counts.end(), uint64_t{0});
    const double total = std::accumulate(ref.sums.begin(), ref.sums.end(), 0.0);
    EXPECT_NEAR(total, 0.7f * static_cast<double>(n), 1e-9 * n);  // the double loop itself is exact enough
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, WeightedReference, ::testing::ValuesIn(weighted_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(WeightedApi, HandComputedExample) {
  // 3x2 plane, pitch 4; weights with pitch 16 bytes (4 floats, the last of each row is padding).
  unsigned char px[] = {1, 2, 2, 99, 255, 1, 1, 99};
  float wt[] = {0.5f, 1.0f, 2.0f, 1000.0f, 4.0f, 0.25f, 0.125f, 1000.0f};
  PlaneView<uint8_t> v{px, 3, 2, 4, 8, MemoryKind::host};
  WeightsView w{wt, 3, 2, 16, 32, MemoryKind::host};
  auto k = hist::create_kernel("cpu_reference");
  ASSERT_TRUE(k.is_ok());
  std::vector<uint32_t> counts(4, kPoison);
  std::vector<float> sums(4, -1.0f);
  ASSERT_TRUE(hist::compute(**k, v, w, {counts.data(), 4, MemoryKind::host, sums.data()}).is_ok());  // bins of 64 values
  EXPECT_EQ(counts, (std::vector<uint32_t>{5, 0, 0, 1}));
  EXPECT_EQ(sums, (std::vector<float>{0.5f + 1.0f + 2.0f + 0.25f + 0.125f, 0.0f, 0.0f, 4.0f}));
}

TEST(WeightedApi, RejectsBadRequests) {
  std::vector<unsigned char> px(64, 1);
  std::vector<float> wt(64, 1.0f);
  std::vector<uint32_t> counts(256);
  std::vector<float> sums(256);
  PlaneView<uint8_t> v{px.data(), 8, 8, 8, 8, MemoryKind::host};
  WeightsView w{wt.data(), 8, 8, 32, 32, MemoryKind::host};
  const hist::HistogramView out{counts.data(), 256, MemoryKind::host, sums.data()};
  auto ref = hist::create_kernel("cpu_reference");
  auto par = hist::create_kernel("cpu_parallel");
  ASSERT_TRUE(ref.is_ok() && par.is_ok());
  EXPECT_TRUE(hist::compute(**ref, v, w, out).is_ok());
  // A kernel without the trait.
  EXPECT_FALSE(hist::find_kernel("cpu_parallel")->info.weighted);
  EXPECT_EQ(hist::compute(**par, v, w, out).code(), Code::unsupported);
  // Missing output.
  EXPECT_EQ(hist::compute(**ref, v, w, {counts.data(), 256, MemoryKind::host}).code(), Code::invalid_argument);
  // Geometry: size, pitch, alignment, memory kind.
  auto with = [&](auto change) {
    WeightsView bad = w;
    change(bad);
    return hist::compute(**ref, v, bad, out).code();
  };
  EXPECT_EQ(with([](WeightsView& b) { b.width = 7; }), Code::invalid_argument);
  EXPECT_EQ(with([](WeightsView& b) { b.height = 9; }), Code::invalid_argument);
  EXPECT_EQ(with([](WeightsView& b) { b.pitch = 28; }), Code::invalid_argument);  // smaller than a row
  EXPECT_EQ(with([](WeightsView& b) { b.pitch = 34; }), Code::invalid_argument);  // not whole floats
  EXPECT_EQ(with([](WeightsView& b) { b.data = nullptr; }), Code::invalid_argument);
  EXPECT_EQ(with([](WeightsView& b) { b.data = reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(b.data) + 1); }),
            Code::invalid_argument);
  EXPECT_EQ(with([](WeightsView& b) { b.memory = MemoryKind::device; }), Code::invalid_argument);
  // The sample checks still apply.
  EXPECT_EQ(hist::compute(**ref, v, w, {counts.data(), 100, MemoryKind::host, sums.data()}).code(), Code::invalid_argument);
}

TEST(WeightedApi, EmptyPlaneZeroesBothOutputs) {
  auto k = hist::create_kernel("cpu_reference");
  ASSERT_TRUE(k.is_ok());
  std::vector<uint32_t> counts(256, kPoison);
  std::vector<float> sums(256, std::numeric_limits<float>::quiet_NaN());
  PlaneView<uint8_t> v{nullptr, 0, 0, 0, 8, MemoryKind::host};
  WeightsView w{nullptr, 0, 0, 0, 32, MemoryKind::host};
  ASSERT_TRUE(hist::compute(**k, v, w, {counts.data(), 256, MemoryKind::host, sums.data()}).is_ok());
  EXPECT_EQ(counts, std::vector<uint32_t>(256, 0u));
  EXPECT_EQ(sums, std::vector<float>(256, 0.0f));
}

TEST(WeightedApi, UnweightedComputeLeavesWeightSumsAlone) {
  std::vector<unsigned char> px(64, 1);
  std::vector<uint32_t> counts(256);
  std::vector<float> sums(256, -3.0f);
  PlaneView<uint8_t> v{px.data(), 8, 8, 8, 8, MemoryKind::host};
  auto k = hist::create_kernel("cpu_reference");
  ASSERT_TRUE(hist::compute(**k, v, {counts.data(), 256, MemoryKind::host, sums.data()}).is_ok());
  EXPECT_EQ(counts[1], 64u);
  EXPECT_EQ(sums, std::vector<float>(256, -3.0f));
}

TEST(WeightedApi, RelativeErrorHelperCatchesBadSums) {
  // The GPU suite's 1e-5 check rests on this helper: it must fail NaN, a stray value in an empty
  // bin, and a wrong sum.
  EXPECT_EQ(max_relative_error({1.0f, 0.0f}, {1.0, 0.0}), 0.0);
  EXPECT_TRUE(std::isinf(max_relative_error({std::numeric_limits<float>::quiet_NaN()}, {1.0})));
  EXPECT_TRUE(std::isinf(max_relative_error({1e-30f}, {0.0})));
  int worst = -1;
  EXPECT_NEAR(max_relative_error({1.0f, 2.0f, 3.0f}, {1.0, 2.002, 3.0}, &worst), 0.002 / 2.002, 1e-9);
  EXPECT_EQ(worst, 1);
  EXPECT_TRUE(std::isinf(max_relative_error({1.0f}, {1.0, 2.0})));
}

TEST(Registry, WeightedTraits) {
  for (const char* name : {"cpu_reference", "collision_free", "collision", "collision_reduced", "hybrid"}) {
    const hist::KernelEntry* e = hist::find_kernel(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_TRUE(e->info.weighted) << name;
  }
  for (const char* name : {"cpu_parallel", "global_atomic", "block_atomic", "method2", "cub"})
    EXPECT_FALSE(hist::find_kernel(name)->info.weighted) << name;
  // collision_free keeps a histogram per thread: up to 256 bins (policy::XuCollisionFree::kMaxBins).
  const auto& cf = hist::find_kernel("collision_free")->info;
  EXPECT_TRUE(cf.supports(1, 256) && cf.supports(1, 2) && cf.supports(2, 256) && cf.supports(2, 64));
  EXPECT_FALSE(cf.supports(2, 512) || cf.supports(2, 1024));
  EXPECT_TRUE(cf.data_independent);
  for (const char* name : {"collision", "collision_reduced", "hybrid"}) {
    const auto& info = hist::find_kernel(name)->info;
    EXPECT_TRUE(info.supports(1, 256) && info.supports(2, 1024) && info.supports(1, 2)) << name;
  }
}

TEST(Registry, BinMasksPrintAsRangesOrLists) {
  EXPECT_EQ(hist::bins_to_string(hist::kAnyBins), "2..1024");
  EXPECT_EQ(hist::bins_to_string(0x1FEu), "2..256");
  EXPECT_EQ(hist::bins_to_string(hist::bins_bit(256)), "256");
  EXPECT_EQ(hist::bins_to_string(hist::bins_bit(256) | hist::bins_bit(1024)), "256,1024");
  EXPECT_EQ(hist::bins_to_string(hist::bins_bit(128) | hist::bins_bit(256)), "128,256");
  EXPECT_EQ(hist::bins_to_string(0), "-");
}

TEST(Registry, UnknownNameIsNotFound) {
  auto k = hist::create_kernel("no_such_kernel");
  ASSERT_FALSE(k.is_ok());
  EXPECT_EQ(k.status().code(), Code::not_found);
  EXPECT_NE(k.status().message().find("method2"), std::string::npos) << "the error lists the known kernels";
}

}  // namespace
}  // namespace histeq::test
