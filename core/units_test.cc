#include "core/units.h"
#include "core/round.h"

#include <cmath>
#include <gtest/gtest.h>

namespace meridian {
namespace {

TEST(RoundToInt64, AgreesWithLlroundEverywhere) {
  // Halves away from zero, the doubles next to them, and the edges where
  // x + 0.5 would round up by itself (0.49999999999999994).
  const double edge = std::nextafter(0.5, 0.0);
  for (double x : {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, edge, -edge, 1e15 + 0.5,
                   4503599627370495.5, 4503599627370497.0, 9007199254740993.0, -7.49999,
                   1e300, -1e300, 9.3e18}) {
    EXPECT_EQ(RoundToInt64(x), std::llround(x)) << x;
  }
  uint64_t state = 88172645463325252ull;
  for (int i = 0; i < 100000; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    double x = static_cast<double>(static_cast<int64_t>(state >> 11) - (int64_t{1} << 52)) /
               static_cast<double>(1 + (state & 0xffff));
    ASSERT_EQ(RoundToInt64(x), std::llround(x)) << x;
    ASSERT_EQ(RoundToInt64(x + 0.5), std::llround(x + 0.5)) << x + 0.5;
  }
}

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
