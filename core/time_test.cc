#include "core/time.h"

#include <gtest/gtest.h>

namespace meridian {
namespace {

TEST(Rfc3339, ParsesUtcAndOffsets) {
  // 2024-01-01T00:00:00Z is 19723 days after the epoch: 19723 * 86400 = 1704067200.
  EXPECT_EQ(ParseRfc3339("2024-01-01T00:00:00Z").value(), 1704067200);
  // +02:00 means two hours ahead of UTC, so the instant is 2 h earlier.
  EXPECT_EQ(ParseRfc3339("2024-01-01T02:00:00+02:00").value(), 1704067200);
  EXPECT_EQ(ParseRfc3339("2024-01-01T00:00:00.250Z").value(), 1704067200);
  EXPECT_EQ(FormatRfc3339(1704067200), "2024-01-01T00:00:00Z");
}

TEST(Rfc3339, RejectsMalformed) {
  for (const char* s : {"2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01",
                        "2024-01-01T00:00:00", "2024-01-01T25:00:00Z", "yesterday",
                        "2024-01-01T00:00:00Zjunk"}) {
    EXPECT_FALSE(ParseRfc3339(s).ok()) << s;
  }
}

TEST(HourOfYear, CountsFromJanuaryFirst) {
  EXPECT_EQ(HourOfYear(1704067200), 0);                 // 2024-01-01T00:00Z
  EXPECT_EQ(HourOfYear(1704067200 + 59 * 86400), 1416);  // 2024-02-29T00:00Z: 59 days * 24
  // 2024 is a leap year: Dec 31 23:00 is hour 366 * 24 - 1 = 8783.
  EXPECT_EQ(HourOfYear(ParseRfc3339("2024-12-31T23:30:00Z").value()), 8783);
  EXPECT_EQ(HourOfYear(ParseRfc3339("2023-12-31T23:00:00Z").value()), 8759);
}

TEST(Civil, RoundTrips) {
  for (UnixSeconds t : {0LL, 951782400LL, 1704067200LL, 4102444800LL, -86400LL}) {
    EXPECT_EQ(FromCivil(ToCivil(t)), t);
  }
}

TEST(Duration, ParsesUnits) {
  struct Case {
    const char* text;
    int64_t seconds;
  } cases[] = {
      {"45s", 45}, {"90m", 5400}, {"36h", 129600}, {"14d", 1209600}, {"1.5h", 5400}, {"600", 600},
  };
  for (const auto& c : cases) EXPECT_EQ(ParseDuration(c.text).value(), c.seconds) << c.text;
}

TEST(Duration, RejectsBadInput) {
  for (const char* s : {"", "h", "-5m", "10x", "abc", "1.2.3h"}) {
    auto r = ParseDuration(s);
    EXPECT_FALSE(r.ok()) << s;
  }
  EXPECT_NE(ParseDuration("-5m").status().message().find("negative"), std::string::npos);
}

TEST(Duration, Formats) {
  EXPECT_EQ(FormatDuration(129600), "36h");
  EXPECT_EQ(FormatDuration(1209600), "14d");
  EXPECT_EQ(FormatDuration(5400), "90m");
  EXPECT_EQ(FormatDuration(61), "61s");
}

}  // namespace
}  // namespace meridian
