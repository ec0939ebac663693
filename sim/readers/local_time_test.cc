// Local times in a zone, with the DST rules local_time.h documents. The
// expected instants are worked out from the zones' published rules, not
// from the C library: Europe/Berlin is UTC+1 (CET), UTC+2 (CEST) from the
// last Sunday of March 01:00 UTC to the last Sunday of October 01:00 UTC;
// in 2026 those are March 29 and October 25.
#include "sim/readers/local_time.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace meridian::sim {
namespace {

UnixSeconds Utc(const char* rfc3339) { return ParseRfc3339(rfc3339).value(); }

UnixSeconds In(const std::string& zone, const char* wall) {
  Result<std::unique_ptr<ZoneScope>> z = ZoneScope::Open(zone);
  EXPECT_TRUE(z.ok()) << z.status().message();
  return (*z)->ToUnix(*ParseWallTime(wall));
}

TEST(LocalTime, WinterAndSummer) {
  // CET: 10:00 local = 09:00 UTC; CEST: 12:00 local = 10:00 UTC.
  EXPECT_EQ(In("Europe/Berlin", "2026-03-01T10:00:00"), Utc("2026-03-01T09:00:00Z"));
  EXPECT_EQ(In("Europe/Berlin", "2026-07-01T12:00:00"), Utc("2026-07-01T10:00:00Z"));
  EXPECT_EQ(In("UTC", "2026-07-01T12:00:00"), Utc("2026-07-01T12:00:00Z"));
}

// Clocks go back at 03:00 CEST on 2026-10-25 to 02:00 CET: 02:30 happens
// twice, at 00:30 UTC (CEST) and 01:30 UTC (CET). The first is taken.
TEST(LocalTime, AmbiguousTimeIsItsFirstOccurrence) {
  EXPECT_EQ(In("Europe/Berlin", "2026-10-25T02:30:00"), Utc("2026-10-25T00:30:00Z"));
  // US: 2026-11-01 02:00 EDT -> 01:00 EST; 01:30 EDT (UTC-4) = 05:30 UTC.
  EXPECT_EQ(In("America/New_York", "2026-11-01T01:30:00"), Utc("2026-11-01T05:30:00Z"));
}

// Clocks go forward at 02:00 CET on 2026-03-29 to 03:00 CEST: 02:30 never
// happens; read with the offset before the change (UTC+1): 01:30 UTC.
TEST(LocalTime, SkippedTimeTakesTheOffsetBeforeTheChange) {
  EXPECT_EQ(In("Europe/Berlin", "2026-03-29T02:30:00"), Utc("2026-03-29T01:30:00Z"));
  // Either side of the gap: 01:59:59 CET = 00:59:59 UTC; 03:00 CEST = 01:00 UTC.
  EXPECT_EQ(In("Europe/Berlin", "2026-03-29T01:59:59"), Utc("2026-03-29T00:59:59Z"));
  EXPECT_EQ(In("Europe/Berlin", "2026-03-29T03:00:00"), Utc("2026-03-29T01:00:00Z"));
}

TEST(LocalTime, RestoresTheZoneAndRejectsUnknownNames) {
  setenv("TZ", "Asia/Tokyo", 1);
  { ASSERT_TRUE(ZoneScope::Open("Europe/Berlin").ok()); }
  ASSERT_NE(std::getenv("TZ"), nullptr);
  EXPECT_STREQ(std::getenv("TZ"), "Asia/Tokyo");
  unsetenv("TZ");
  Result<std::unique_ptr<ZoneScope>> bad = ZoneScope::Open("Europe/Berln");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--tz: \"Europe/Berln\" is not a time zone of the tz database (an IANA name such as "
            "Europe/Berlin, America/New_York or UTC)");
  EXPECT_FALSE(ZoneScope::Open("../etc/passwd").ok());
}

TEST(LocalTime, WallTimeFormat) {
  EXPECT_TRUE(ParseWallTime("2024-02-29T23:59:59"));
  EXPECT_FALSE(ParseWallTime("2026-02-29T00:00:00"));  // not a leap year
  EXPECT_FALSE(ParseWallTime("2026-03-01 10:00:00"));
  EXPECT_FALSE(ParseWallTime("03/01-10:00:00"));
  EXPECT_FALSE(ParseWallTime("Unknown"));
}

}  // namespace
}  // namespace meridian::sim
