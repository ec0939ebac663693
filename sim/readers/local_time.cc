#include "sim/readers/local_time.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>

namespace meridian::sim {

namespace {

// Seconds east of UTC in force at `t`, in the process's zone.
int64_t OffsetAt(UnixSeconds t) {
  const time_t tt = static_cast<time_t>(t);
  struct tm local {};
  localtime_r(&tt, &local);
  return local.tm_gmtoff;
}

bool KnownZone(const std::string& zone) {
  if (zone == "UTC" || zone == "GMT") return true;
  if (zone.empty() || zone.front() == '/' || zone.find("..") != std::string::npos) return false;
  const char* dir = std::getenv("TZDIR");
  std::error_code ec;
  return std::filesystem::is_regular_file(
      std::filesystem::path(dir && *dir ? dir : "/usr/share/zoneinfo") / zone, ec);
}

std::optional<int> Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return std::nullopt;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

Result<std::unique_ptr<ZoneScope>> ZoneScope::Open(const std::string& zone) {
  const char* tz = std::getenv("TZ");
  std::optional<std::string> saved;
  if (tz != nullptr) saved = tz;
  std::unique_ptr<ZoneScope> scope(new ZoneScope(zone, saved));
  if (zone.empty()) {
    tzset();
    return scope;
  }
  if (!KnownZone(zone)) {
    return Status::Invalid("--tz: \"" + zone +
                           "\" is not a time zone of the tz database (an IANA name such as "
                           "Europe/Berlin, America/New_York or UTC)");
  }
  setenv("TZ", zone.c_str(), 1);
  tzset();
  scope->changed_ = true;
  return scope;
}

ZoneScope::~ZoneScope() {
  if (!changed_) return;
  if (saved_) {
    setenv("TZ", saved_->c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

UnixSeconds ZoneScope::ToUnix(const CivilTime& wall) const {
  const UnixSeconds as_utc = FromCivil(wall);
  // The offsets a day either side; a wall time maps to as_utc - offset for
  // an offset in force at that instant.
  const int64_t before = OffsetAt(as_utc - 86400);
  const int64_t after = OffsetAt(as_utc + 86400);
  // Larger offset first: the earlier instant, the first occurrence.
  for (int64_t offset : {std::max(before, after), std::min(before, after)}) {
    if (OffsetAt(as_utc - offset) == offset) return as_utc - offset;
  }
  return as_utc - before;  // skipped by the clocks: the offset before the change
}

std::optional<CivilTime> ParseWallTime(std::string_view s) {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  std::optional<int> y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2),
                     h = Digits(s, 11, 2), mi = Digits(s, 14, 2), sec = Digits(s, 17, 2);
  if (!y || !mo || !d || !h || !mi || !sec) return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *h > 23 || *mi > 59 || *sec > 60) return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const int days = kDays[*mo - 1] + (*mo == 2 && IsLeapYear(*y) ? 1 : 0);
  if (*d > days) return std::nullopt;
  return CivilTime{*y, *mo, *d, *h, *mi, *sec};
}

}  // namespace meridian::sim
