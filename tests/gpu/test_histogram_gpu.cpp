// GPU kernels against cpu_reference on the whole matrix. Without a CUDA device every test here
// reports itself SKIPPED (never passed); on the device they all run.
#include <gtest/gtest.h>

#include <cstring>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/histogram/histogram.h"
#include "core/image/synthetic.h"
#include "tests/common/histogram_cases.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

// Runs `kernel` on a device copy of the host plane (same pitch, same base misalignment) into a
// poisoned device histogram, and returns the histogram.
std::vector<uint32_t> run_gpu(hist::Kernel& k, const PlaneRef& host, const std::vector<unsigned char>& storage,
                              size_t base_offset, int bins, cudaStream_t stream) {
  auto dbuf = cuda::Buffer::allocate(MemoryKind::device, storage.size());
  EXPECT_TRUE(dbuf.is_ok()) << dbuf.status().to_string();
  // Upload on the kernel's stream: a legacy-stream cudaMemcpy from pageable memory may return
  // before its DMA lands, and a non-blocking stream is not ordered after it.
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(dbuf->data(), storage.data(), storage.size(), cudaMemcpyHostToDevice, stream)).is_ok());
  PlaneRef dev = host;
  dev.data = static_cast<unsigned char*>(dbuf->data()) + base_offset;
  dev.memory = MemoryKind::device;
  auto dh = cuda::DeviceArray<uint32_t>::allocate(bins);
  EXPECT_TRUE(dh.is_ok());
  // Poison on the kernel's own stream: a legacy-stream cudaMemset would not be ordered with it.
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemsetAsync(dh->data(), 0xA5, dh->bytes(), stream)).is_ok());
  Status s = hist::compute(k, dev, {dh->data(), bins, MemoryKind::device}, stream);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  std::vector<uint32_t> h(bins);
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpyAsync(h.data(), dh->data(), dh->bytes(), cudaMemcpyDeviceToHost, stream)).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaStreamSynchronize(stream)).is_ok());
  return h;
}

std::vector<uint32_t> reference(const PlaneRef& p, int bins) {
  auto k = hist::create_kernel("cpu_reference");
  std::vector<uint32_t> h(bins, 0xDEADBEEFu);
  EXPECT_TRUE(hist::compute(**k, p, {h.data(), bins, MemoryKind::host}).is_ok());
  return h;
}

class GpuKernel : public ::testing::TestWithParam<KernelCase> {};

TEST_P(GpuKernel, MatchesReference) {
  REQUIRE_GPU();
  const KernelCase& kc = GetParam();
  std::vector<unsigned char> storage;
  const PlaneRef p = make_host_plane(kc.c, storage);
  const auto ref = reference(p, kc.c.bins);
  auto k = hist::create_kernel(kc.kernel, {kc.c.max_blocks, kc.c.max_pass_steps});
  ASSERT_TRUE(k.is_ok()) << k.status().to_string();
  auto stream = cuda::Stream::create();
  ASSERT_TRUE(stream.is_ok());
  const auto got = run_gpu(**k, p, storage, kc.c.base_offset, kc.c.bins, stream->get());
  for (size_t b = 0; b < ref.size(); ++b) ASSERT_EQ(got[b], ref[b]) << "bin " << b;
  // Twice on the same instance: per-instance state (scratch, temp storage) must not leak results.
  const auto again = run_gpu(**k, p, storage, kc.c.base_offset, kc.c.bins, stream->get());
  EXPECT_EQ(again, ref);
}

INSTANTIATE_TEST_SUITE_P(Matrix, GpuKernel, ::testing::ValuesIn(kernel_cases(Backend::gpu)),
                         [](const auto& info) { return kernel_case_name(info.param); });

TEST(GpuHistogram, InstanceServesChangingSizes) {
  REQUIRE_GPU();
  for (const auto& e : hist::registry()) {
    if (e.info.backend != Backend::gpu || !e.info.alias_of.empty()) continue;
    const int bins = e.info.supports(1, 256) ? 256 : 64;  // podlozhnyuk64 is 64 bins only
    ASSERT_TRUE(e.info.supports(1, bins)) << e.info.name;
    auto k = hist::create_kernel(e.info.name);
    ASSERT_TRUE(k.is_ok());
    for (auto [w, h] : std::vector<std::pair<int, int>>{{64, 64}, {3840, 2160}, {17, 5}, {1920, 1080}}) {
      HistCase c{"", w, h, 0, 1, 8, bins, synth::Pattern::natural, 0, static_cast<uint32_t>(w)};
      std::vector<unsigned char> storage;
      const PlaneRef p = make_host_plane(c, storage);
      EXPECT_EQ(run_gpu(**k, p, storage, 0, bins, nullptr), reference(p, bins)) << e.info.name << " at " << w << "x" << h;
    }
  }
}

// The matrix skips aliases; one case shows each alias runs its target's kernel correctly.
TEST(GpuHistogram, AliasesRunTheirTarget) {
  REQUIRE_GPU();
  int aliases = 0;
  for (const auto& e : hist::registry()) {
    if (e.info.backend != Backend::gpu || e.info.alias_of.empty()) continue;
    ++aliases;
    auto k = hist::create_kernel(e.info.name);
    ASSERT_TRUE(k.is_ok()) << k.status().to_string();
    EXPECT_EQ((*k)->info().name, e.info.name);
    HistCase c{"", 1921, 1081, 0, 1, 8, 256, synth::Pattern::natural, 0, 5};
    std::vector<unsigned char> storage;
    const PlaneRef p = make_host_plane(c, storage);
    EXPECT_EQ(run_gpu(**k, p, storage, 0, 256, nullptr), reference(p, 256)) << e.info.name;
  }
  EXPECT_GE(aliases, 2);
}

TEST(GpuHistogram, RejectsHostPlanes) {
  REQUIRE_GPU();
  auto k = hist::create_kernel("method2");
  ASSERT_TRUE(k.is_ok());
  std::vector<unsigned char> px(64, 1);
  auto dh = cuda::DeviceArray<uint32_t>::allocate(256);
  PlaneView<uint8_t> v{px.data(), 8, 8, 8, 8, MemoryKind::host};
  EXPECT_EQ(hist::compute(**k, v, {dh->data(), 256, MemoryKind::device}).code(), Code::invalid_argument);
}

TEST(GpuSynthetic, DeviceFillMatchesHostFill) {
  REQUIRE_GPU();
  for (auto pat : {synth::Pattern::uniform, synth::Pattern::natural, synth::Pattern::degenerate, synth::Pattern::gaussian,
                   synth::Pattern::colours}) {
    auto h = Plane8::allocate(MemoryKind::host, 1921, 67, 2048);
    auto d = Plane8::allocate(MemoryKind::device, 1921, 67, 2048);
    auto back = Plane8::allocate(MemoryKind::host, 1921, 67, 2048);
    ASSERT_TRUE(h.is_ok() && d.is_ok() && back.is_ok());
    ASSERT_TRUE(synth::fill_host(h->view(), pat, 3, 90).is_ok());
    ASSERT_TRUE(synth::fill_device(d->view(), pat, 3, 90).is_ok());
    ASSERT_TRUE(HISTEQ_CUDA_STATUS(cudaMemcpy(back->data(), d->data(), d->bytes(), cudaMemcpyDeviceToHost)).is_ok());
    EXPECT_EQ(std::memcmp(h->data(), back->data(), h->bytes()), 0) << synth::pattern_name(pat);
  }
}

TEST(GpuHistogram, ReadCeilingAndSpinRun) {
  REQUIRE_GPU();
  auto d = Plane8::allocate(MemoryKind::device, 1921, 1081);
  auto sink = cuda::DeviceArray<uint32_t>::allocate(1);
  ASSERT_TRUE(synth::fill_device(d->view(), synth::Pattern::uniform, 1).is_ok());
  auto bytes = hist::read_ceiling(*d, sink->data());
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_GE(*bytes, size_t{1921} * 1081 - 16);
  EXPECT_LE(*bytes, size_t{1921} * 1081);
  EXPECT_TRUE(hist::gpu_busy_wait(50.0).is_ok());
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaDeviceSynchronize()).is_ok());
}

}  // namespace
}  // namespace histeq::test
