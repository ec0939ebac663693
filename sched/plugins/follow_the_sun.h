// follow_the_sun (QueueSort, in place of drf_fair_share): DRF fair share
// whose tenant weights follow the sun. A tenant with a home time zone and
// working hours has its weight multiplied by `boost` during its working hours
// (local time, Monday to Friday unless `weekends`) and by `lend` outside them,
// so its share rises while its people work and it lends capacity while they
// sleep. Without home zones it orders exactly as drf_fair_share.
//
// Time zones: no tz database (the core reads no files). A built-in table maps
// the IANA names the catalog's regions use (and a few more) to a standard UTC
// offset and one of four daylight-saving rules: none; EU (last Sunday of
// March 01:00 UTC to last Sunday of October 01:00 UTC); US (second Sunday of
// March 02:00 local to first Sunday of November 02:00 local); south-eastern
// Australia (first Sunday of October 02:00 local standard to first Sunday of
// April 03:00 local daylight). Rules are today's, applied to every year;
// Asia/Jerusalem uses the EU dates (Israel changes two days earlier in spring).
//
// Arguments: drf_fair_share's, and per tenant entry:
//   tenants: {research: {weight: 2, zone: Asia/Tokyo, hours: "09:00-18:00",
//                        boost: 2, lend: 0.5, weekends: false}}
//   zone      IANA name from the table (no default: a tenant without one keeps its weight)
//   hours     "HH:MM-HH:MM" local; an end before the start wraps past midnight (default 09:00-18:00)
//   boost: 2  weight factor in working hours, 1..100
//   lend: 0.5 weight factor outside them, 0.01..1
//   weekends: false  whether Saturday and Sunday are working days
#pragma once

#include <optional>
#include <string_view>

#include "sched/plugins/drf_fair_share.h"

namespace meridian::sched {

enum class DstRule : uint8_t { kNone, kEu, kUs, kAuSouth };

struct TimeZone {
  std::string_view name;
  int standard_offset_min = 0;  // east of UTC
  DstRule dst = DstRule::kNone;
};

// The table's entry for an IANA name; nullopt when not in the table.
std::optional<TimeZone> FindTimeZone(std::string_view name);
// Minutes east of UTC in `zone` at `t` (standard, or +60 in daylight time).
int UtcOffsetMinutes(const TimeZone& zone, UnixSeconds t);

struct WorkingHours {
  int start_min = 9 * 60;  // local minutes after midnight
  int end_min = 18 * 60;
  bool weekends = false;
};
// "09:00-18:00" -> minutes; nullopt when malformed or empty.
std::optional<WorkingHours> ParseWorkingHours(std::string_view s);
bool InWorkingHours(const TimeZone& zone, const WorkingHours& hours, UnixSeconds t);

class FollowTheSun final : public DrfFairShare {
 public:
  struct Home {
    std::optional<TimeZone> zone;  // nullopt: no home zone, weight unchanged
    WorkingHours hours;
    double boost = 2;
    double lend = 0.5;
  };
  static constexpr std::string_view kName = "follow_the_sun";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  FollowTheSun(Options o, std::vector<Home> homes)
      : DrfFairShare(std::move(o)), homes_(std::move(homes)) {}

  std::string_view name() const override { return kName; }

 protected:
  double WeightAt(size_t index, UnixSeconds now) const override;

 private:
  std::vector<Home> homes_;  // per tenant of options().tenants
};

}  // namespace meridian::sched
