// Test helpers shared by the unit and GPU tests: a GPU test that reports itself skipped where
// there is no CUDA device (never passing vacuously), and an assertion on a Status that prints it.
#pragma once

#include <gtest/gtest.h>

#include "core/cuda/device.h"
#include "core/cuda/status.h"

#define REQUIRE_GPU() \
  if (!::histeq::cuda::have_device()) GTEST_SKIP() << "no CUDA device on this machine"

#define ASSERT_OK(expr)                                          \
  do {                                                           \
    const ::histeq::Status s_ = (expr);                          \
    ASSERT_TRUE(s_.is_ok()) << #expr << ": " << s_.to_string();  \
  } while (0)
