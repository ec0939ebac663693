#include "sched/plugin.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

#include "sched/rng.h"

namespace meridian::sched {
namespace {

__extension__ using U128 = unsigned __int128;

// The definition, with a division per score: floor((s - min) x 100 / (max -
// min)) in 128-bit integers where that fits the int64 range the fast path
// covers, else the documented floating-point form.
std::vector<int64_t> Reference(std::vector<int64_t> v) {
  if (v.empty()) return v;
  int64_t min = v[0], max = v[0];
  for (int64_t s : v) {
    min = std::min(min, s);
    max = std::max(max, s);
  }
  const uint64_t span = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);
  for (int64_t& s : v) {
    const uint64_t off = static_cast<uint64_t>(s) - static_cast<uint64_t>(min);
    if (span == 0) {
      s = 100;
    } else if (off > static_cast<uint64_t>(INT64_MAX / 100)) {
      s = static_cast<int64_t>(static_cast<double>(off) / static_cast<double>(span) * 100.0);
    } else {
      s = static_cast<int64_t>(U128{off} * 100 / span);
    }
  }
  return v;
}

std::vector<int64_t> Normalized(std::vector<int64_t> v) {
  NormalizeMinMax(v);
  return v;
}

TEST(NormalizeMinMax, Table) {
  struct Case {
    std::vector<int64_t> in, want;
  };
  const Case cases[] = {
      {{}, {}},
      {{7}, {100}},                    // one candidate: the best
      {{-3, -3, -3}, {100, 100, 100}},  // all equal: 100
      // span 4: (0, 1, 2, 4) x 100 / 4
      {{10, 11, 12, 14}, {0, 25, 50, 100}},
      // span 3: 1 x 100 / 3 = 33.3 -> 33, 2 x 100 / 3 = 66.7 -> 66
      {{0, 1, 2, 3}, {0, 33, 66, 100}},
      // prices in micros, negated: -1.25 $, -2.50 $, -5.00 $; span 3.75 $:
      // (5.00 - 2.50) / 3.75 x 100 = 66.7 -> 66
      {{-1250000, -2500000, -5000000}, {100, 66, 0}},
      // the whole int64 range: span 2^64 - 1; off 2^63 - 1 is past
      // INT64_MAX / 100, so the floating form: 49.99... -> 50 in doubles
      {{INT64_MIN, -1, INT64_MAX}, {0, 50, 100}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Normalized(c.in), c.want);
    EXPECT_EQ(Reference(c.in), c.want);
  }
}

// The reciprocal and its one-step correction agree with the division on
// spans from 1 to 2^64 - 1, with offsets right at and beside the steps of
// the quotient (span x k / 100) where a rounding error would show.
TEST(NormalizeMinMax, AgreesWithTheDivisionEverywhere) {
  Rng rng(20261203);
  for (int round = 0; round < 200000; ++round) {
    const int bits = 1 + static_cast<int>(rng.Below(64));
    const uint64_t span = std::max<uint64_t>(1, rng.Next() >> (64 - bits));
    const uint64_t min = rng.Next() >> rng.Below(64);
    const uint64_t at_min = min, at_max = min + span;  // wraps like int64 arithmetic
    std::vector<int64_t> v = {static_cast<int64_t>(at_min), static_cast<int64_t>(at_max)};
    if (static_cast<int64_t>(at_max) < static_cast<int64_t>(at_min)) continue;  // not min..max
    for (int i = 0; i < 6; ++i) {
      const uint64_t k = rng.Below(101);
      uint64_t off = static_cast<uint64_t>(U128{span} * k / 100);
      if (rng.Below(2) && off > 0) --off;
      if (rng.Below(2) && off < span) ++off;
      v.push_back(static_cast<int64_t>(min + off));
    }
    ASSERT_EQ(Normalized(v), Reference(v)) << "round " << round << " span " << span;
  }
}

}  // namespace
}  // namespace meridian::sched
