#include "core/units.h"

#include <gtest/gtest.h>

namespace meridian {
namespace {

TEST(Money, IsExactInMicroDollars) {
  // 0.1 + 0.2 in double is 0.30000000000000004; in micro-dollars it is exact.
  Money m = Money::FromDollars(0.1) + Money::FromDollars(0.2);
  EXPECT_EQ(m.micros(), 300000);
  EXPECT_EQ(m, Money::FromDollars(0.3));
  EXPECT_EQ(Money::FromDollars(98.32).ToString(), "98.32");
}

TEST(Money, TimesRoundsToMicro) {
  // 3.67339 $/h for 2.5 h = 9.183475 $.
  EXPECT_EQ(Money::FromDollars(3.67339).Times(2.5).micros(), 9183475);
}

TEST(Co2, KilogramsRoundTrip) {
  EXPECT_EQ(Co2Grams::FromKilograms(1.2345).grams(), 1235);  // rounds half away from zero
  EXPECT_DOUBLE_EQ(Co2Grams::FromGrams(2500).kilograms(), 2.5);
}

}  // namespace
}  // namespace meridian
