#include "sched/plugins/follow_the_sun.h"

#include <array>
#include <charconv>

#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr int kHour = 60;
constexpr std::array<TimeZone, 48> kZones = {{
    {"UTC", 0, DstRule::kNone},
    {"Etc/UTC", 0, DstRule::kNone},
    {"Africa/Johannesburg", 2 * kHour, DstRule::kNone},
    {"America/Chicago", -6 * kHour, DstRule::kUs},
    {"America/Denver", -7 * kHour, DstRule::kUs},
    {"America/Los_Angeles", -8 * kHour, DstRule::kUs},
    {"America/Mexico_City", -6 * kHour, DstRule::kNone},  // no DST since 2022
    {"America/New_York", -5 * kHour, DstRule::kUs},
    {"America/Phoenix", -7 * kHour, DstRule::kNone},
    {"America/Sao_Paulo", -3 * kHour, DstRule::kNone},    // no DST since 2019
    {"America/Toronto", -5 * kHour, DstRule::kUs},
    {"America/Vancouver", -8 * kHour, DstRule::kUs},
    {"America/Montreal", -5 * kHour, DstRule::kUs},
    {"America/Santiago", -4 * kHour, DstRule::kNone},     // simplification: Chile's DST not modelled
    {"Asia/Bahrain", 3 * kHour, DstRule::kNone},
    {"Asia/Dubai", 4 * kHour, DstRule::kNone},
    {"Asia/Hong_Kong", 8 * kHour, DstRule::kNone},
    {"Asia/Jakarta", 7 * kHour, DstRule::kNone},
    {"Asia/Jerusalem", 2 * kHour, DstRule::kEu},
    {"Asia/Kolkata", 5 * kHour + 30, DstRule::kNone},
    {"Asia/Kuala_Lumpur", 8 * kHour, DstRule::kNone},
    {"Asia/Qatar", 3 * kHour, DstRule::kNone},
    {"Asia/Riyadh", 3 * kHour, DstRule::kNone},
    {"Asia/Seoul", 9 * kHour, DstRule::kNone},
    {"Asia/Shanghai", 8 * kHour, DstRule::kNone},
    {"Asia/Singapore", 8 * kHour, DstRule::kNone},
    {"Asia/Taipei", 8 * kHour, DstRule::kNone},
    {"Asia/Tokyo", 9 * kHour, DstRule::kNone},
    {"Australia/Melbourne", 10 * kHour, DstRule::kAuSouth},
    {"Australia/Sydney", 10 * kHour, DstRule::kAuSouth},
    {"Australia/Brisbane", 10 * kHour, DstRule::kNone},
    {"Australia/Perth", 8 * kHour, DstRule::kNone},
    {"Europe/Amsterdam", 1 * kHour, DstRule::kEu},
    {"Europe/Berlin", 1 * kHour, DstRule::kEu},
    {"Europe/Brussels", 1 * kHour, DstRule::kEu},
    {"Europe/Dublin", 0, DstRule::kEu},
    {"Europe/Frankfurt", 1 * kHour, DstRule::kEu},
    {"Europe/Helsinki", 2 * kHour, DstRule::kEu},
    {"Europe/Lisbon", 0, DstRule::kEu},
    {"Europe/London", 0, DstRule::kEu},
    {"Europe/Madrid", 1 * kHour, DstRule::kEu},
    {"Europe/Milan", 1 * kHour, DstRule::kEu},
    {"Europe/Oslo", 1 * kHour, DstRule::kEu},
    {"Europe/Paris", 1 * kHour, DstRule::kEu},
    {"Europe/Rome", 1 * kHour, DstRule::kEu},
    {"Europe/Stockholm", 1 * kHour, DstRule::kEu},
    {"Europe/Warsaw", 1 * kHour, DstRule::kEu},
    {"Europe/Zurich", 1 * kHour, DstRule::kEu},
}};

constexpr int64_t kDay = 86400;

// 0 = Sunday; 1970-01-01 was a Thursday.
int Weekday(UnixSeconds t) {
  int64_t days = t >= 0 ? t / kDay : (t - kDay + 1) / kDay;
  return static_cast<int>(((days + 4) % 7 + 7) % 7);
}

int DaysIn(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// 00:00 UTC of the n-th Sunday (n >= 1) of the month, or the last (n = 0).
UnixSeconds Sunday(int year, int month, int n) {
  if (n == 0) {
    UnixSeconds last = FromCivil({year, month, DaysIn(year, month), 0, 0, 0});
    return last - Weekday(last) * kDay;
  }
  UnixSeconds first = FromCivil({year, month, 1, 0, 0, 0});
  int to_sunday = (7 - Weekday(first)) % 7;
  return first + (to_sunday + 7 * (n - 1)) * kDay;
}

bool InDaylightTime(const TimeZone& z, UnixSeconds t) {
  const int year = ToCivil(t).year;
  const UnixSeconds local_std = t + z.standard_offset_min * 60;  // as if UTC
  switch (z.dst) {
    case DstRule::kNone: return false;
    case DstRule::kEu:   // switches at 01:00 UTC
      return t >= Sunday(year, 3, 0) + 3600 && t < Sunday(year, 10, 0) + 3600;
    case DstRule::kUs:   // 02:00 local standard to 02:00 local daylight (01:00 standard)
      return local_std >= Sunday(year, 3, 2) + 2 * 3600 && local_std < Sunday(year, 11, 1) + 3600;
    case DstRule::kAuSouth:  // daylight from October to April: outside April..October
      return !(local_std >= Sunday(year, 4, 1) + 2 * 3600 && local_std < Sunday(year, 10, 1) + 2 * 3600);
  }
  return false;
}

std::optional<int> ParseClock(std::string_view s) {
  if (s.size() != 5 || s[2] != ':') return std::nullopt;
  int h = 0, m = 0;
  if (std::from_chars(s.data(), s.data() + 2, h).ptr != s.data() + 2) return std::nullopt;
  if (std::from_chars(s.data() + 3, s.data() + 5, m).ptr != s.data() + 5) return std::nullopt;
  if (h < 0 || m < 0 || m > 59 || h > 24 || (h == 24 && m != 0)) return std::nullopt;
  return h * 60 + m;
}

}  // namespace

std::optional<TimeZone> FindTimeZone(std::string_view name) {
  for (const TimeZone& z : kZones) {
    if (z.name == name) return z;
  }
  return std::nullopt;
}

int UtcOffsetMinutes(const TimeZone& zone, UnixSeconds t) {
  return zone.standard_offset_min + (InDaylightTime(zone, t) ? 60 : 0);
}

std::optional<WorkingHours> ParseWorkingHours(std::string_view s) {
  size_t dash = s.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::optional<int> a = ParseClock(s.substr(0, dash)), b = ParseClock(s.substr(dash + 1));
  if (!a || !b || *a == *b) return std::nullopt;
  WorkingHours h;
  h.start_min = *a;
  h.end_min = *b;
  return h;
}

bool InWorkingHours(const TimeZone& zone, const WorkingHours& hours, UnixSeconds t) {
  const UnixSeconds local = t + UtcOffsetMinutes(zone, t) * 60;
  const int minute = static_cast<int>(((local % kDay) + kDay) % kDay / 60);
  // A shift past midnight belongs to the day it started on.
  const bool wraps = hours.end_min < hours.start_min;
  bool in;
  UnixSeconds day_of_shift = local;
  if (!wraps) {
    in = minute >= hours.start_min && minute < hours.end_min;
  } else {
    in = minute >= hours.start_min || minute < hours.end_min;
    if (minute < hours.end_min) day_of_shift -= kDay;
  }
  if (!in || hours.weekends) return in;
  int wd = Weekday(day_of_shift);
  return wd != 0 && wd != 6;
}

Result<std::unique_ptr<Plugin>> FollowTheSun::Create(PluginArgs& args) {
  std::vector<Home> homes;
  Options o = ReadOptions(args, [&](PluginArgs& t, size_t index) {
    homes.resize(index + 1);
    Home& h = homes[index];
    h.boost = t.Number("boost", h.boost, 1, 100);
    h.lend = t.Number("lend", h.lend, 0.01, 1);
    h.hours.weekends = t.Bool("weekends", false);
    if (t.Has("zone")) {
      std::string zone = t.String("zone", "");
      h.zone = FindTimeZone(zone);
      if (!h.zone && !zone.empty()) {
        t.Error("zone", "\"" + zone + "\" is not in the built-in time zone table (" +
                            std::to_string(kZones.size()) + " IANA names, e.g. Europe/Berlin)");
      }
    }
    if (t.Has("hours")) {
      std::string text = t.String("hours", "");
      std::optional<WorkingHours> wh = ParseWorkingHours(text);
      if (wh) {
        wh->weekends = h.hours.weekends;
        h.hours = *wh;
      } else if (!text.empty()) {
        t.Error("hours", "\"" + text + "\" must be HH:MM-HH:MM, two different times");
      }
    }
  });
  return FinishPlugin<FollowTheSun>(args, std::move(o), std::move(homes));
}

double FollowTheSun::WeightAt(size_t index, UnixSeconds now) const {
  double w = DrfFairShare::WeightAt(index, now);
  if (index >= homes_.size() || !homes_[index].zone) return w;
  const Home& h = homes_[index];
  return w * (InWorkingHours(*h.zone, h.hours, now) ? h.boost : h.lend);
}

}  // namespace meridian::sched
