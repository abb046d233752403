// The model runs' latency histogram of INFO models (model_latency_us): power-of-two buckets from
// 16 us, each latency counted once in the first bucket whose bound holds it, the rest in "inf".
#include <gtest/gtest.h>

#include "ml/executor.hpp"

namespace slipstream::ml {
namespace {

TEST(LatencyHistogram, CountsEachLatencyInTheFirstBucketThatHoldsIt) {
  LatencyHistogram h;
  for (std::uint64_t us : {0ULL, 16ULL, 17ULL, 32ULL, 1000ULL, 16ULL << 20, (16ULL << 20) + 1,
                           1ULL << 40}) {
    h.add(us);
  }
  EXPECT_EQ(h.counts[0].load(), 2u);   // 0 and 16: up to 16
  EXPECT_EQ(h.counts[1].load(), 2u);   // 17 and 32: up to 32
  EXPECT_EQ(h.counts[6].load(), 1u);   // 1000: up to 1024
  EXPECT_EQ(h.counts[20].load(), 1u);  // 16 << 20 exactly
  EXPECT_EQ(h.counts[21].load(), 2u);  // longer: inf
  const std::string text = h.text();
  EXPECT_EQ(text.rfind("16=2,32=2,64=0,", 0), 0u) << text;
  EXPECT_NE(text.find(",16777216=1,inf=2"), std::string::npos) << text;
}

}  // namespace
}  // namespace slipstream::ml
