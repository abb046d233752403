// Device strings (src/ml/device.cpp): parsing and printing, no libtorch involved.
#include <gtest/gtest.h>

#include "ml/backend.hpp"

namespace slipstream::ml {
namespace {

TEST(Device, ParsesCpuAndGpuCaseInsensitively) {
  EXPECT_EQ(parse_device("CPU"), (Device{Device::Kind::kCpu, 0}));
  EXPECT_EQ(parse_device("cpu"), (Device{Device::Kind::kCpu, 0}));
  EXPECT_EQ(parse_device("GPU"), (Device{Device::Kind::kGpu, 0}));
  EXPECT_EQ(parse_device("gpu:0"), (Device{Device::Kind::kGpu, 0}));
  EXPECT_EQ(parse_device("Gpu:3"), (Device{Device::Kind::kGpu, 3}));
  EXPECT_EQ(parse_device("GPU:12"), (Device{Device::Kind::kGpu, 12}));
}

TEST(Device, AcceptsRedisAiCpuOrdinal) {
  EXPECT_EQ(parse_device("CPU:0"), (Device{Device::Kind::kCpu, 0}));
  EXPECT_EQ(parse_device("cpu:1"), (Device{Device::Kind::kCpu, 0}));
}

TEST(Device, RejectsMalformedStrings) {
  for (const char* text : {"", "C", "TPU", "GPU:", "GPU:x", "GPU:-1", "GPU:+1", "GPU:1x", "GPU 1",
                           "GPU:1:2", "GPUS", "CPU1", " CPU", "GPU:99999999999"}) {
    EXPECT_FALSE(parse_device(text).has_value()) << text;
  }
}

TEST(Device, PrintsCanonicalNames) {
  EXPECT_EQ(Device{}.str(), "CPU");
  EXPECT_EQ((Device{Device::Kind::kGpu, 0}).str(), "GPU:0");
  EXPECT_EQ((Device{Device::Kind::kGpu, 2}).str(), "GPU:2");
  EXPECT_EQ(parse_device(parse_device("gpu:5")->str()), parse_device("GPU:5"));
}

}  // namespace
}  // namespace slipstream::ml
