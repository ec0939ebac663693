#include "core/enums.h"

#include <gtest/gtest.h>

namespace meridian {
namespace {

TEST(Enums, RoundTripEveryWord) {
  for (auto k : AllWorkloadKinds()) EXPECT_EQ(ParseWorkloadKind(ToString(k)), k);
  for (auto p : AllPrecisions()) EXPECT_EQ(ParsePrecision(ToString(p)), p);
  for (auto m : {PricingModel::kOnDemand, PricingModel::kSpot, PricingModel::kFlexStart,
                 PricingModel::kReserved}) {
    EXPECT_EQ(ParsePricingModel(ToString(m)), m);
  }
  EXPECT_EQ(ParsePriority("critical"), Priority::kCritical);
  EXPECT_FALSE(ParseWorkloadKind("gaming").has_value());
}

TEST(Enums, BytesPerValue) {
  EXPECT_EQ(BytesPerValue(Precision::kBf16), 2);
  EXPECT_EQ(BytesPerValue(Precision::kFp64), 8);
  EXPECT_EQ(BytesPerValue(Precision::kFp8), 1);
}

TEST(Enums, JoinAlternatives) {
  EXPECT_EQ(JoinAlternatives({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(JoinAlternatives({"a"}), "a");
}

}  // namespace
}  // namespace meridian
