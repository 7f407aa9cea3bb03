// Weighted GPU kernels (KernelInfo::weighted) against the double-precision CPU loop: counts exact,
// every bin's weight sum within 1e-5 (relative), on the weighted matrix (sizes, padded and unaligned
// pitches of samples and of weights, 8-bit and 10-bit data, one-value planes with a one-block grid).
// Their unweighted counts run in test_histogram_gpu.cpp's matrix like every other kernel. Without a
// CUDA device every test here reports itself SKIPPED.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/histogram/histogram.h"
#include "tests/common/histogram_cases.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

constexpr double kMaxRelativeError = 1e-5;  // the API's promise (histogram.h)

// A case's planes on the device, laid out byte for byte as on the host (same pitches, same base
// misalignment, the same NaN padding between weight rows).
struct DeviceCase {
  cuda::Buffer samples, weights;
  PlaneRef plane;
  WeightsView w;
};

DeviceCase upload(const PlaneRef& host, const std::vector<unsigned char>& storage, size_t base_offset,
                  const WeightsView& host_w, const std::vector<float>& wstorage) {
  DeviceCase d;
  auto s = cuda::Buffer::allocate(MemoryKind::device, storage.size());
  auto w = cuda::Buffer::allocate(MemoryKind::device, wstorage.size() * sizeof(float));
  EXPECT_TRUE(s.is_ok() && w.is_ok());
  d.samples = std::move(s.value());
  d.weights = std::move(w.value());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpy(d.samples.data(), storage.data(), storage.size(), cudaMemcpyHostToDevice)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpy(d.weights.data(), wstorage.data(), d.weights.bytes(), cudaMemcpyHostToDevice)).is_ok());
  // A pageable cudaMemcpy may return before its DMA lands, and the kernels run on non-blocking
  // streams that are not ordered after the legacy stream: wait for the uploads here.
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaDeviceSynchronize()).is_ok());
  d.plane = host;
  d.plane.data = static_cast<unsigned char*>(d.samples.data()) + base_offset;
  d.plane.memory = MemoryKind::device;
  d.w = host_w;
  d.w.data = static_cast<const float*>(d.weights.data());
  d.w.memory = MemoryKind::device;
  return d;
}

struct Outputs {
  std::vector<uint32_t> counts;
  std::vector<float> sums;
};

// One weighted run into poisoned device outputs (counts 0xA5A5A5A5, sums NaN), on `stream`.
Outputs run_weighted(hist::Kernel& k, const DeviceCase& d, int bins, cudaStream_t stream) {
  auto dc = cuda::DeviceArray<uint32_t>::allocate(bins);
  auto ds = cuda::DeviceArray<float>::allocate(bins);
  EXPECT_TRUE(dc.is_ok() && ds.is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemsetAsync(dc->data(), 0xA5, dc->bytes(), stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemsetAsync(ds->data(), 0xFF, ds->bytes(), stream)).is_ok());
  Status s = hist::compute(k, d.plane, d.w, {dc->data(), bins, MemoryKind::device, ds->data()}, stream);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  Outputs o{std::vector<uint32_t>(bins), std::vector<float>(bins)};
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(o.counts.data(), dc->data(), dc->bytes(), cudaMemcpyDeviceToHost, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(o.sums.data(), ds->data(), ds->bytes(), cudaMemcpyDeviceToHost, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(stream)).is_ok());
  return o;
}

void expect_matches(const Outputs& got, const WeightedHistogram& ref, const std::string& what) {
  ASSERT_EQ(got.counts.size(), ref.counts.size());
  for (size_t b = 0; b < ref.counts.size(); ++b) ASSERT_EQ(got.counts[b], ref.counts[b]) << what << ": count of bin " << b;
  int worst = -1;
  const double err = max_relative_error(got.sums, ref.sums, &worst);
  EXPECT_LE(err, kMaxRelativeError) << what << ": bin " << worst << " has "
                                    << (worst >= 0 ? got.sums[worst] : 0.0f) << ", exact "
                                    << (worst >= 0 ? ref.sums[worst] : 0.0);
}

class GpuWeighted : public ::testing::TestWithParam<WeightedKernelCase> {};

TEST_P(GpuWeighted, MatchesDoubleReference) {
  REQUIRE_GPU();
  const WeightedKernelCase& kc = GetParam();
  const HistCase& c = kc.wc.c;
  std::vector<unsigned char> storage;
  std::vector<float> wstorage;
  const PlaneRef p = make_host_plane(c, storage);
  const WeightsView w = make_host_weights(kc.wc, wstorage);
  const WeightedHistogram ref = naive_weighted_histogram(p, w, c.bins);
  auto k = hist::create_kernel(kc.kernel, {c.max_blocks});
  ASSERT_TRUE(k.is_ok()) << k.status().to_string();
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(stream.is_ok());
  const DeviceCase d = upload(p, storage, c.base_offset, w, wstorage);
  // Several runs on one instance: scratch state must not leak between calls, and hybrid times two
  // methods on its first two calls and uses the faster from the third on.
  const int runs = kc.kernel == "hybrid" ? 3 : 2;
  for (int r = 0; r < runs; ++r) expect_matches(run_weighted(**k, d, c.bins, stream->get()), ref, "run " + std::to_string(r));
}

INSTANTIATE_TEST_SUITE_P(Matrix, GpuWeighted, ::testing::ValuesIn(weighted_kernel_cases(Backend::gpu)),
                         [](const auto& info) { return weighted_kernel_case_name(info.param); });

TEST(GpuWeightedApi, EveryWeightedGpuKernelIsInTheMatrix) {
  // Not a device test: guards against a weighted kernel whose bin masks leave it out of the matrix.
  for (const auto& e : hist::registry()) {
    if (e.info.backend != Backend::gpu || !e.info.weighted) continue;
    int n = 0;
    for (const auto& kc : weighted_kernel_cases(Backend::gpu)) n += kc.kernel == e.info.name;
    EXPECT_GE(n, 10) << e.info.name;
  }
}

// Weighted, unweighted and weighted again on one instance and one stream, changing bins and sample
// size between calls: the unweighted call must not write the weight sums.
TEST(GpuWeightedApi, InstanceServesChangingRequests) {
  REQUIRE_GPU();
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(stream.is_ok());
  for (const auto& e : hist::registry()) {
    if (e.info.backend != Backend::gpu || !e.info.weighted) continue;
    auto k = hist::create_kernel(e.info.name);
    ASSERT_TRUE(k.is_ok());
    int step = 0;
    for (const WeightedCase& wc : weighted_cases()) {
      const HistCase& c = wc.c;
      if (c.max_blocks != 0 || !e.info.supports(c.bytes_per_sample, c.bins) || c.width * static_cast<long>(c.height) > (1 << 22))
        continue;
      std::vector<unsigned char> storage;
      std::vector<float> wstorage;
      const PlaneRef p = make_host_plane(c, storage);
      const WeightsView w = make_host_weights(wc, wstorage);
      const DeviceCase d = upload(p, storage, c.base_offset, w, wstorage);
      const std::string what = e.info.name + " on " + wc.name;
      if (step++ % 2 == 0) {
        expect_matches(run_weighted(**k, d, c.bins, stream->get()), naive_weighted_histogram(p, w, c.bins), what);
        continue;
      }
      auto dc = cuda::DeviceArray<uint32_t>::allocate(c.bins);
      auto ds = cuda::DeviceArray<float>::allocate(c.bins);
      ASSERT_TRUE(dc.is_ok() && ds.is_ok());
      ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaMemsetAsync(ds->data(), 0x7F, ds->bytes(), stream->get())).is_ok());
      ASSERT_TRUE(hist::compute(**k, d.plane, {dc->data(), c.bins, MemoryKind::device, ds->data()}, stream->get()).is_ok());
      ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(stream->get())).is_ok());  // the copies below use the legacy stream
      std::vector<uint32_t> counts(c.bins);
      std::vector<unsigned char> sums(ds->bytes());
      ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpy(counts.data(), dc->data(), dc->bytes(), cudaMemcpyDeviceToHost)).is_ok());
      ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpy(sums.data(), ds->data(), ds->bytes(), cudaMemcpyDeviceToHost)).is_ok());
      EXPECT_EQ(counts, naive_histogram(p, c.bins)) << what;
      EXPECT_EQ(sums, std::vector<unsigned char>(sums.size(), 0x7F)) << what << ": unweighted call wrote the weight sums";
    }
    EXPECT_GT(step, 6) << e.info.name;
  }
}

TEST(GpuWeightedApi, RejectsBadRequests) {
  REQUIRE_GPU();
  auto px = cuda::Buffer::allocate(MemoryKind::device, 64 * 64);
  auto wt = cuda::Buffer::allocate(MemoryKind::device, 64 * 64 * sizeof(float));
  auto dc = cuda::DeviceArray<uint32_t>::allocate(1024);
  auto ds = cuda::DeviceArray<float>::allocate(1024);
  ASSERT_TRUE(px.is_ok() && wt.is_ok() && dc.is_ok() && ds.is_ok());
  ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaMemset(px->data(), 3, px->bytes())).is_ok());
  ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaMemset(wt->data(), 0, wt->bytes())).is_ok());
  PlaneView<uint8_t> v{static_cast<uint8_t*>(px->data()), 64, 64, 64, 8, MemoryKind::device};
  WeightsView w{static_cast<const float*>(wt->data()), 64, 64, 256, 32, MemoryKind::device};
  const hist::HistogramView out{dc->data(), 256, MemoryKind::device, ds->data()};

  auto method2 = hist::create_kernel("method2");
  ASSERT_TRUE(method2.is_ok());
  EXPECT_EQ(hist::compute(**method2, v, w, out).code(), Code::unsupported);  // no `weighted` trait

  auto k = hist::create_kernel("collision");
  ASSERT_TRUE(k.is_ok());
  EXPECT_EQ(hist::compute(**k, v, w, {dc->data(), 256, MemoryKind::device}).code(), Code::invalid_argument);  // no sums
  WeightsView wrong_size = w;
  wrong_size.height = 63;
  EXPECT_EQ(hist::compute(**k, v, wrong_size, out).code(), Code::invalid_argument);
  WeightsView on_host = w;
  on_host.memory = MemoryKind::pinned;
  EXPECT_EQ(hist::compute(**k, v, on_host, out).code(), Code::invalid_argument);
  WeightsView small_pitch = w;
  small_pitch.pitch = 252;
  EXPECT_EQ(hist::compute(**k, v, small_pitch, out).code(), Code::invalid_argument);

  auto cf = hist::create_kernel("collision_free");
  ASSERT_TRUE(cf.is_ok());
  PlaneView<uint16_t> v16{static_cast<uint16_t*>(px->data()), 32, 64, 64, 10, MemoryKind::device};
  WeightsView w16{static_cast<const float*>(wt->data()), 32, 64, 128, 32, MemoryKind::device};
  EXPECT_EQ(hist::compute(**cf, v16, w16, {dc->data(), 1024, MemoryKind::device, ds->data()}).code(), Code::unsupported);
  EXPECT_TRUE(hist::compute(**cf, v, w, out).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaDeviceSynchronize()).is_ok());
}

}  // namespace
}  // namespace histeq::test
