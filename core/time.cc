#include "core/time.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace meridian {

namespace {

// Days from civil, after Howard Hinnant's public-domain algorithm.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int& year, int& month, int& day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  year = static_cast<int>(y + (month <= 2));
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (month == 2 && IsLeapYear(year)) ? 29 : kDays[month - 1];
}

bool ReadInt(std::string_view s, size_t& pos, size_t digits, int& out) {
  if (pos + digits > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < digits; ++i) {
    char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  pos += digits;
  out = v;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos < s.size() && (s[pos] == c || std::tolower(s[pos]) == std::tolower(c))) {
    ++pos;
    return true;
  }
  return false;
}

}  // namespace

bool IsLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

CivilTime ToCivil(UnixSeconds t) {
  int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
  int64_t rem = t - days * 86400;
  CivilTime c;
  CivilFromDays(days, c.year, c.month, c.day);
  c.hour = static_cast<int>(rem / 3600);
  c.minute = static_cast<int>((rem % 3600) / 60);
  c.second = static_cast<int>(rem % 60);
  return c;
}

UnixSeconds FromCivil(const CivilTime& c) {
  return DaysFromCivil(c.year, static_cast<unsigned>(c.month), static_cast<unsigned>(c.day)) *
             86400 +
         c.hour * 3600 + c.minute * 60 + c.second;
}

int HourOfYear(UnixSeconds t) {
  CivilTime c = ToCivil(t);
  UnixSeconds start = FromCivil(CivilTime{c.year, 1, 1, 0, 0, 0});
  return static_cast<int>((t - start) / 3600);
}

Result<UnixSeconds> ParseRfc3339(std::string_view s) {
  auto bad = [&](const char* why) {
    return Status::Invalid("\"" + std::string(s) + "\" is not an RFC 3339 time (" + why +
                           "; expected e.g. 2026-03-01T09:00:00Z)");
  };
  CivilTime c;
  size_t pos = 0;
  if (!ReadInt(s, pos, 4, c.year) || !Expect(s, pos, '-') || !ReadInt(s, pos, 2, c.month) ||
      !Expect(s, pos, '-') || !ReadInt(s, pos, 2, c.day)) {
    return bad("date must be YYYY-MM-DD");
  }
  if (!(Expect(s, pos, 'T') || Expect(s, pos, ' '))) return bad("missing 'T' before the time");
  if (!ReadInt(s, pos, 2, c.hour) || !Expect(s, pos, ':') || !ReadInt(s, pos, 2, c.minute) ||
      !Expect(s, pos, ':') || !ReadInt(s, pos, 2, c.second)) {
    return bad("time must be HH:MM:SS");
  }
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos, ++digits;
    if (digits == 0) return bad("fractional seconds need digits");
  }
  if (c.month < 1 || c.month > 12) return bad("month out of range");
  if (c.day < 1 || c.day > DaysInMonth(c.year, c.month)) return bad("day out of range");
  if (c.hour > 23 || c.minute > 59 || c.second > 60) return bad("time of day out of range");
  int offset_s = 0;
  if (Expect(s, pos, 'Z')) {
    offset_s = 0;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int sign = s[pos] == '+' ? 1 : -1;
    ++pos;
    int oh = 0, om = 0;
    if (!ReadInt(s, pos, 2, oh) || !Expect(s, pos, ':') || !ReadInt(s, pos, 2, om) || oh > 23 ||
        om > 59) {
      return bad("offset must be Z or +HH:MM");
    }
    offset_s = sign * (oh * 3600 + om * 60);
  } else {
    return bad("missing time zone offset (Z or +HH:MM)");
  }
  if (pos != s.size()) return bad("trailing characters");
  if (c.second == 60) c.second = 59;  // leap second: clamp
  return FromCivil(c) - offset_s;
}

std::string FormatRfc3339(UnixSeconds t) {
  CivilTime c = ToCivil(t);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year, c.month, c.day, c.hour,
                c.minute, c.second);
  return buf;
}

Result<int64_t> ParseDuration(std::string_view s) {
  std::string text(s);
  auto bad = [&](const std::string& why) {
    return Status::Invalid("\"" + text + "\" " + why);
  };
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (text.empty()) return bad("is empty; a duration looks like 45s, 90m, 36h or 14d");
  double unit = 1;
  std::string number = text;
  switch (text.back()) {
    case 's': unit = 1; number.pop_back(); break;
    case 'm': unit = 60; number.pop_back(); break;
    case 'h': unit = 3600; number.pop_back(); break;
    case 'd': unit = 86400; number.pop_back(); break;
    default:
      if (!std::isdigit(static_cast<unsigned char>(text.back()))) {
        return bad("has an unknown unit; use s, m, h or d (e.g. 90m, 36h, 14d)");
      }
  }
  if (number.empty()) return bad("has no number; a duration looks like 90m, 36h or 14d");
  char* end = nullptr;
  double v = std::strtod(number.c_str(), &end);
  if (end == number.c_str() || *end != '\0' || !std::isfinite(v)) {
    return bad("is not a duration; use a number and s, m, h or d (e.g. 90m, 36h, 14d)");
  }
  if (v < 0) return bad("is negative; a duration must be >= 0");
  double seconds = v * unit;
  if (seconds > 1e12) return bad("is too long");
  return static_cast<int64_t>(std::llround(seconds));
}

std::string FormatDuration(int64_t seconds) {
  if (seconds == 0) return "0s";
  if (seconds % 86400 == 0) return std::to_string(seconds / 86400) + "d";
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

}  // namespace meridian
