// CarbonSeries::SumAt against its definition, the loop over At written out
// here: the same double for hourly steps (read from running sums), other
// whole-hour steps and steps of part of an hour, at the series' edges.
#include <gtest/gtest.h>

#include <vector>

#include "catalog/catalog.h"

namespace meridian::catalog {
namespace {

std::vector<float> Hours(int year, float (*value)(size_t h)) {
  std::vector<float> hours(IsLeapYear(year) ? 8784 : 8760);
  for (size_t h = 0; h < hours.size(); ++h) hours[h] = value(h);
  return hours;
}

// Eighths plus 0.1f: values with fractional bits down to 2^-27.
float Fractional(size_t h) { return static_cast<float>((h * 7919) % 997) / 8.0f + 0.1f; }
// 10000 and 0.1f alternating: 0.1f has bits down to 2^-27, so a sum is exact
// below 2^26 = 67,108,864. A year sums to 4380 x 10000.1 = 43.8 million
// (exact); 20000 hours to 100 million, where adding 0.1f rounds.
float Wide(size_t h) { return h % 2 ? 10000.0f : 0.1f; }

double LoopOverAt(const CarbonSeries& s, UnixSeconds start, int64_t step_s, int count) {
  double sum = 0;
  for (int i = 0; i < count; ++i) sum += s.At(start + static_cast<UnixSeconds>(i) * step_s);
  return sum;
}

// Every start x step x count; returns how many were compared.
int ExpectSumAtEqualsLoop(const CarbonSeries& s, const std::vector<UnixSeconds>& starts) {
  int checked = 0;
  for (UnixSeconds start : starts) {
    for (int64_t step_s : {3600, 7200, 86400, 1800}) {
      for (int count : {0, 1, 2, 23, 24, 25, 1416, 1441, 8759, 8760, 8761, 8784, 8785, 20000}) {
        EXPECT_EQ(s.SumAt(start, step_s, count), LoopOverAt(s, start, step_s, count))
            << s.zone() << " " << FormatRfc3339(start) << " step " << step_s << " s x " << count;
        ++checked;
      }
    }
  }
  return checked;
}

// Data for a common year and a leap year: targets inside the data, before
// it, after it in common years (Mar 1 on shifts a day) and leap years, and
// across each year end and Feb 28 / 29 / Mar 1.
TEST(CarbonSeries, SumAtEqualsTheLoopOverAtAroundEveryEdge) {
  const CarbonSeries s("TWO-YEARS", {{2023, Hours(2023, Fractional)},
                                     {2024, Hours(2024, Fractional)}});
  const std::vector<UnixSeconds> starts = {
      FromCivil({2023, 1, 1, 0, 0, 0}),    FromCivil({2023, 2, 28, 23, 0, 0}),
      FromCivil({2023, 12, 31, 23, 0, 0}), FromCivil({2023, 12, 31, 23, 30, 0}),
      FromCivil({2024, 2, 28, 0, 0, 0}),   FromCivil({2024, 2, 29, 23, 59, 59}),
      FromCivil({2024, 3, 1, 0, 0, 0}),    FromCivil({2024, 12, 31, 23, 0, 0}),
      FromCivil({2025, 2, 28, 12, 0, 0}),  FromCivil({2027, 12, 31, 22, 0, 0}),
      FromCivil({2020, 6, 1, 0, 0, 0}),    FromCivil({2021, 3, 1, 0, 0, 0})};
  EXPECT_EQ(ExpectSumAtEqualsLoop(s, starts), 12 * 4 * 14);
}

// Only a common year: a leap target year maps Feb 29 onto Feb 28 (Mar 1 on
// shifts back a day).
TEST(CarbonSeries, SumAtEqualsTheLoopForALeapTargetOnACommonYear) {
  const CarbonSeries s("COMMON", {{2022, Hours(2022, Fractional)}});
  const std::vector<UnixSeconds> starts = {
      FromCivil({2022, 12, 31, 0, 0, 0}), FromCivil({2024, 1, 1, 0, 0, 0}),
      FromCivil({2024, 2, 28, 23, 0, 0}), FromCivil({2024, 2, 29, 0, 0, 0}),
      FromCivil({2024, 12, 30, 5, 0, 0})};
  EXPECT_EQ(ExpectSumAtEqualsLoop(s, starts), 5 * 4 * 14);
}

// A year shorter than its calendar: hours past its end repeat the last one.
TEST(CarbonSeries, SumAtEqualsTheLoopPastAShortYearsEnd) {
  std::vector<float> short_year(100);
  for (size_t h = 0; h < short_year.size(); ++h) short_year[h] = Fractional(h);
  const CarbonSeries s("SHORT", {{2024, short_year}});
  const std::vector<UnixSeconds> starts = {
      FromCivil({2024, 1, 1, 0, 0, 0}), FromCivil({2024, 1, 5, 2, 0, 0}),
      FromCivil({2025, 1, 1, 0, 0, 0}), FromCivil({2023, 12, 31, 20, 0, 0})};
  EXPECT_EQ(ExpectSumAtEqualsLoop(s, starts), 4 * 4 * 14);
}

// Values whose long sums round: the loop's rounding is kept.
TEST(CarbonSeries, SumAtEqualsTheLoopWhereLongSumsRound) {
  const CarbonSeries s("WIDE", {{2023, Hours(2023, Wide)}, {2024, Hours(2024, Wide)}});
  const std::vector<UnixSeconds> starts = {FromCivil({2023, 1, 1, 0, 0, 0}),
                                           FromCivil({2023, 7, 1, 0, 0, 0}),
                                           FromCivil({2024, 12, 1, 0, 0, 0})};
  EXPECT_EQ(ExpectSumAtEqualsLoop(s, starts), 3 * 4 * 14);
  // The loop does round there: 0.1f = 13421773 x 2^-27, so the exact sum is
  // 10000 x 10000 + 10000 x 0.1f = 100,001,000 + 125 x 2^-23 (a double), and
  // the loop's double is another.
  const UnixSeconds y2023 = FromCivil({2023, 1, 1, 0, 0, 0});
  EXPECT_NE(LoopOverAt(s, y2023, 3600, 20000), 100001000.0 + 125.0 / 8388608);
}

}  // namespace
}  // namespace meridian::catalog
