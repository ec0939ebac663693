// Civil time in UTC, without the C library's time zone state: the core never
// reads a clock; callers pass instants as seconds since the Unix epoch (UTC).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace meridian {

// Seconds since 1970-01-01T00:00:00Z.
using UnixSeconds = int64_t;

struct CivilTime {
  int year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;
};

bool IsLeapYear(int year);
CivilTime ToCivil(UnixSeconds t);
UnixSeconds FromCivil(const CivilTime& c);
// Hour of the year, 0-based: 0 is Jan 1 00:00-01:00 UTC; 8759 (8783 in a leap
// year) is Dec 31 23:00.
int HourOfYear(UnixSeconds t);

// Parses an RFC 3339 timestamp ("2026-03-01T09:00:00Z", "...+02:00",
// fractional seconds allowed) into Unix seconds.
Result<UnixSeconds> ParseRfc3339(std::string_view s);
// "2026-03-01T09:00:00Z".
std::string FormatRfc3339(UnixSeconds t);

// Parses a duration "90m", "36h", "14d", "45s", "1.5h" or a bare number of
// seconds into seconds. Negative or malformed values are errors; the message
// names the value and the reason but not the field (callers add it).
Result<int64_t> ParseDuration(std::string_view s);
// "1d 12h", "36h", "90m", "45s": the largest units that are exact, for output.
std::string FormatDuration(int64_t seconds);

}  // namespace meridian
