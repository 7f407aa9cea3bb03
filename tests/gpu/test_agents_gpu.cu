// The agents of core/histogram (agent/*.cuh) used as another module uses them: from kernels written
// here, outside core/histogram, through the public headers only. Each agent's contract (the share of
// the plane a block counts, the shared memory it needs, the merge) must give the exact histogram of
// the CPU's count: block_atomic's on two halves of a plane counted by one launch, method2_tuned's
// count / publish / finish twice on one scratch (which the last block must leave zero). Without a
// CUDA device every test here reports itself SKIPPED.
#include <gtest/gtest.h>

#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/resources.h"
#include "core/histogram/agent/block_atomic.cuh"
#include "core/histogram/agent/method2_tuned.cuh"
#include "core/image/synthetic.h"
#include "tests/common/gtest_status.h"

namespace histeq::test {
namespace {

using hist::detail::PlaneGeometry;

// Blocks [0, gridDim.x / 2) count the top rows, the others the bottom rows, into one histogram.
template <class T>
__global__ void halves_kernel(PlaneGeometry top, PlaneGeometry bottom, hist::detail::BinMap m, int bins, uint32_t* hist) {
  const uint32_t half = gridDim.x / 2;
  const bool low = blockIdx.x < half;
  hist::agent::block_atomic_block<hist::policy::BlockAtomic, T>(low ? top : bottom, m, bins, hist,
                                                                low ? blockIdx.x : blockIdx.x - half, half);
}

// method2_tuned's agent in a kernel of its own: count, publish, and the last block writes `out`.
template <class T, int kCap, class L, class Bin>
__global__ void m2t_kernel(PlaneGeometry g, Bin bin, uint32_t bins, hist::m2t::Scratch s, uint32_t* out) {
  extern __shared__ uint4 smem[];
  uint32_t* block_acc = hist::m2t::count_block<T, kCap, L>(g, bin, bins, hist::m2t::CountersFor<T, kCap, L, Bin>::kPassUnitsMax,
                                                           reinterpret_cast<uint32_t*>(smem), blockDim.x / 32,
                                                           hist::m2t::L2Prefetch{});
  __shared__ uint32_t last;
  if (hist::m2t::publish(block_acc, bins, s, &last)) hist::m2t::finish(bins, s, out);
}

struct DevicePlane {
  cuda::Buffer buf;
  PlaneRef ref;
};

// A natural picture of w x h samples of T (bit depth `depth`), on the host and in a pitched device copy.
template <class T>
DevicePlane upload(int w, int h, int depth, std::vector<T>& host) {
  host.assign(static_cast<size_t>(w) * h, 0);
  EXPECT_TRUE(synth::fill_host(PlaneView<T>{host.data(), w, h, w * sizeof(T), depth, MemoryKind::host},
                               synth::Pattern::natural, 7)
                  .is_ok());
  const size_t pitch = (w * sizeof(T) + 255) / 256 * 256;
  DevicePlane d;
  auto b = cuda::Buffer::allocate(MemoryKind::device, pitch * h);
  EXPECT_TRUE(b.is_ok());
  d.buf = std::move(b.value());
  EXPECT_EQ(cudaMemcpy2D(d.buf.data(), pitch, host.data(), w * sizeof(T), w * sizeof(T), h, cudaMemcpyHostToDevice), cudaSuccess);
  d.ref = PlaneRef(PlaneView<T>{static_cast<T*>(d.buf.data()), w, h, pitch, depth, MemoryKind::device});
  return d;
}

template <class T>
std::vector<uint32_t> cpu_histogram(const std::vector<T>& host, int depth, int bins) {
  std::vector<uint32_t> h(bins, 0);
  for (T v : host)
    if (v < (1u << depth)) ++h[v >> (depth - hist::bins_log2(bins))];
  return h;
}

std::vector<uint32_t> download(const uint32_t* d, int n) {
  std::vector<uint32_t> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

TEST(HistogramAgents, BlockAtomicCountsAnyShareOfAPlane) {
  REQUIRE_GPU();
  std::vector<uint16_t> host;
  const int w = 1921, h = 1081, bins = 1024;
  DevicePlane d = upload<uint16_t>(w, h, 10, host);
  PlaneRef top = d.ref, bottom = d.ref;
  top.height = h / 2;
  bottom.height = h - h / 2;
  bottom.data = static_cast<unsigned char*>(d.buf.data()) + d.ref.pitch * (h / 2);
  auto out = cuda::DeviceArray<uint32_t>::allocate(bins);
  ASSERT_TRUE(out.is_ok());
  ASSERT_EQ(cudaMemset(out->data(), 0, out->bytes()), cudaSuccess);
  halves_kernel<uint16_t><<<14, hist::policy::BlockAtomic::kThreads, bins * sizeof(uint32_t)>>>(
      hist::detail::make_geometry(top), hist::detail::make_geometry(bottom), hist::detail::make_binmap(d.ref, bins), bins,
      out->data());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(download(out->data(), bins), cpu_histogram(host, 10, bins));
}

TEST(HistogramAgents, Method2TunedAgentInAForeignKernelLeavesItsScratchZero) {
  REQUIRE_GPU();
  using P = hist::policy::Method2Tuned;
  using Bin = hist::m2t::DirectBin;
  using C = hist::m2t::CountersFor<uint8_t, 256, P::Loop8, Bin>;
  std::vector<uint8_t> host;
  DevicePlane d = upload<uint8_t>(1920, 1080, 8, host);
  auto dev = cuda::device_info();
  ASSERT_TRUE(dev.is_ok());
  const PlaneGeometry g = hist::detail::make_geometry(d.ref);
  const hist::m2t::Plan plan = hist::m2t::plan_for(g.total_units(), dev->sm_count, 4, P::kUnitsPerLane8, 0);
  auto scratch = cuda::DeviceArray<uint32_t>::allocate(256 + 4);  // acc, then the ticket
  auto out = cuda::DeviceArray<uint32_t>::allocate(256);
  ASSERT_TRUE(scratch.is_ok() && out.is_ok());
  ASSERT_EQ(cudaMemset(scratch->data(), 0, scratch->bytes()), cudaSuccess);
  const hist::m2t::Scratch s{scratch->data(), 1, nullptr, scratch->data() + 256};
  auto kernel = m2t_kernel<uint8_t, 256, P::Loop8, Bin>;
  const size_t smem = C::smem_bytes(plan.warps);
  ASSERT_EQ(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)), cudaSuccess);
  const std::vector<uint32_t> want = cpu_histogram(host, 8, 256);
  for (int call = 0; call < 2; ++call) {
    ASSERT_EQ(cudaMemset(out->data(), 0xFF, out->bytes()), cudaSuccess);
    kernel<<<plan.blocks, plan.warps * 32, smem>>>(g, Bin{}, 256u, s, out->data());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(download(out->data(), 256), want) << "call " << call;
    EXPECT_EQ(download(scratch->data(), 257), std::vector<uint32_t>(257, 0)) << "the scratch after call " << call;
  }
}

}  // namespace
}  // namespace histeq::test
