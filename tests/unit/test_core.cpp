// Core types: Status, planes (RAII, move, pitch), host copies, synthetic content.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/image/plane.h"
#include "core/image/synthetic.h"

namespace histeq {
namespace {

TEST(Status, CarriesCallTextFileAndLine) {
  Status s = HISTEQ_CUDA_STATUS(cudaErrorInvalidValue);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), Code::cuda_error);
  EXPECT_NE(s.message().find("cudaErrorInvalidValue"), std::string::npos) << s.message();
  EXPECT_NE(s.to_string().find("test_core.cpp:"), std::string::npos) << s.to_string();
  EXPECT_EQ(HISTEQ_CUDA_STATUS(cudaErrorMemoryAllocation).code(), Code::out_of_memory);
  EXPECT_TRUE(HISTEQ_CUDA_STATUS(cudaSuccess).is_ok());
}

Status fails_then_stops(int& reached) {
  HISTEQ_TRY(HISTEQ_ERROR(Code::invalid_argument, "first"));
  reached = 1;
  return Status::ok();
}

TEST(Status, TryPropagates) {
  int reached = 0;
  Status s = fails_then_stops(reached);
  EXPECT_EQ(s.code(), Code::invalid_argument);
  EXPECT_EQ(s.message(), "first");
  EXPECT_EQ(s.to_string(), "first") << "user errors carry no source location";
  EXPECT_EQ(reached, 0);
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> a = 5;
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(*a, 5);
  Result<int> b = HISTEQ_ERROR(Code::not_found, "x");
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().code(), Code::not_found);
}

TEST(Plane, AllocatesWithPitchAndMoves) {
  auto p = Plane8::allocate(MemoryKind::host, 31, 17, 64);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->pitch(), 64u);
  EXPECT_EQ(p->bytes(), 64u * 17);
  uint8_t* data = p->data();
  Plane8 moved = std::move(p.value());
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(p->data(), nullptr) << "moved-from plane owns nothing";
  Plane8 assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.data(), data);
  EXPECT_EQ(assigned.width(), 31);
}

TEST(Plane, RejectsBadGeometry) {
  EXPECT_EQ(Plane8::allocate(MemoryKind::host, 100, 10, 50).status().code(), Code::invalid_argument);
  EXPECT_EQ(Plane16::allocate(MemoryKind::host, 10, 10, 21).status().code(), Code::invalid_argument);
  EXPECT_EQ(Plane16::allocate(MemoryKind::host, 10, 10, 0, 17).status().code(), Code::invalid_argument);
  EXPECT_EQ(Plane8::allocate(MemoryKind::host, -1, 10).status().code(), Code::invalid_argument);
  auto empty = Plane8::allocate(MemoryKind::host, 0, 0);
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->view().empty());
}

TEST(Plane, HostCopyRespectsBothPitches) {
  auto a = Plane16::allocate(MemoryKind::host, 5, 3, 16, 10);
  auto b = Plane16::allocate(MemoryKind::host, 5, 3, 12, 10);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) a->view().row(y)[x] = static_cast<uint16_t>(100 * y + x);
  ASSERT_TRUE(copy_plane(*a, b->view()).is_ok());
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(b->view().row(y)[x], 100 * y + x);
  auto c = Plane16::allocate(MemoryKind::host, 4, 3);
  EXPECT_FALSE(copy_plane(*a, c->view()).is_ok()) << "size mismatch is refused";
}

TEST(Synthetic, PatternsHaveTheirShape) {
  auto p = Plane8::allocate(MemoryKind::host, 512, 256);
  ASSERT_TRUE(p.is_ok());
  ASSERT_TRUE(synth::fill_host(p->view(), synth::Pattern::degenerate, 1, 128).is_ok());
  for (int y = 0; y < 256; ++y)
    for (int x = 0; x < 512; ++x) ASSERT_EQ(p->view().row(y)[x], 128);

  ASSERT_TRUE(synth::fill_host(p->view(), synth::Pattern::uniform, 1).is_ok());
  std::vector<int> h(256);
  for (int y = 0; y < 256; ++y)
    for (int x = 0; x < 512; ++x) ++h[p->view().row(y)[x]];
  for (int b = 0; b < 256; ++b) EXPECT_NEAR(h[b], 512, 120) << "uniform bin " << b;

  // Natural: neighbours are close far more often than in uniform noise.
  ASSERT_TRUE(synth::fill_host(p->view(), synth::Pattern::natural, 1).is_ok());
  int close = 0, distinct = 0;
  std::vector<int> seen(256);
  for (int y = 0; y < 256; ++y)
    for (int x = 1; x < 512; ++x) {
      close += std::abs(p->view().row(y)[x] - p->view().row(y)[x - 1]) <= 8;
      distinct += seen[p->view().row(y)[x]]++ == 0;
    }
  EXPECT_GT(close, 255 * 511 * 9 / 10);
  EXPECT_GT(distinct, 40) << "natural content spans a real range of tones";
}

TEST(Synthetic, GaussianAndColoursHaveTheirShape) {
  auto p = Plane16::allocate(MemoryKind::host, 512, 512, 0, 10);
  ASSERT_TRUE(p.is_ok());
  auto stats = [&](double& mean, double& sd, std::set<int>& values) {
    double s = 0, s2 = 0;
    values.clear();
    for (int y = 0; y < 512; ++y)
      for (int x = 0; x < 512; ++x) {
        const int v = p->view().row(y)[x];
        s += v;
        s2 += double(v) * v;
        values.insert(v);
      }
    const double n = 512.0 * 512.0;
    mean = s / n;
    sd = std::sqrt(s2 / n - mean * mean);
  };
  double mean, sd;
  std::set<int> values;
  ASSERT_TRUE(synth::fill_host(p->view(), synth::Pattern::gaussian, 1, 40).is_ok());
  stats(mean, sd, values);
  EXPECT_NEAR(mean, 512, 2);
  EXPECT_NEAR(sd, 40, 2);
  ASSERT_TRUE(synth::fill_host(p->view(), synth::Pattern::gaussian, 1, 0).is_ok());
  stats(mean, sd, values);
  EXPECT_EQ(values.size(), 1u) << "sigma 0 is one value";
  for (uint32_t n : {1u, 2u, 5u, 256u}) {
    ASSERT_TRUE(synth::fill_host(p->view(), synth::Pattern::colours, 1, n).is_ok());
    stats(mean, sd, values);
    EXPECT_EQ(values.size(), n) << n << " colours";
  }
}

TEST(Synthetic, DeterministicAndSeeded) {
  auto a = Plane16::allocate(MemoryKind::host, 64, 64, 0, 10);
  auto b = Plane16::allocate(MemoryKind::host, 64, 64, 0, 10);
  ASSERT_TRUE(synth::fill_host(a->view(), synth::Pattern::natural, 5).is_ok());
  ASSERT_TRUE(synth::fill_host(b->view(), synth::Pattern::natural, 5).is_ok());
  EXPECT_EQ(std::memcmp(a->data(), b->data(), a->bytes()), 0);
  ASSERT_TRUE(synth::fill_host(b->view(), synth::Pattern::natural, 6).is_ok());
  EXPECT_NE(std::memcmp(a->data(), b->data(), a->bytes()), 0);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) ASSERT_LT(a->view().row(y)[x], 1024);
}

TEST(Device, NoDeviceIsNotAnError) {
  // Passes on both kinds of machine: what matters is that the answer is consistent.
  const int n = cuda::device_count();
  EXPECT_EQ(cuda::have_device(), n > 0);
  auto info = cuda::device_info();
  EXPECT_EQ(info.is_ok(), n > 0);
  if (n == 0) {
    EXPECT_EQ(info.status().code(), Code::no_device);
  }
}

}  // namespace
}  // namespace histeq
