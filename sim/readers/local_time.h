// Local wall-clock times, as sacct prints them (no zone), read as instants
// in an IANA time zone through the C library's tz database.
//
// A ZoneScope sets the process's TZ for its lifetime and restores it after:
// it is NOT thread-safe (nor is anything else reading local time while one
// lives); the trace readers run on one thread.
//
// DST, deterministically (docs/trace-format.md, "Time zones"):
// - a time the clocks pass twice (the hour repeated when they go back) is its
//   first occurrence, still on summer time: Europe/Berlin 2026-10-25T02:30
//   is 00:30 UTC, not 01:30;
// - a time the clocks skip (the hour lost when they go forward) is read with
//   the offset in force before the change: Europe/Berlin 2026-03-29T02:30 is
//   01:30 UTC (03:30 summer time), as if the clock had not been moved yet.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/time.h"

namespace meridian::sim {

class ZoneScope {
 public:
  // `zone` "" keeps the machine's zone. An unknown name fails (the C
  // library would silently read it as UTC).
  static Result<std::unique_ptr<ZoneScope>> Open(const std::string& zone);
  ~ZoneScope();
  ZoneScope(const ZoneScope&) = delete;
  ZoneScope& operator=(const ZoneScope&) = delete;

  // The instant of a wall-clock time in the zone.
  UnixSeconds ToUnix(const CivilTime& wall) const;
  const std::string& name() const { return name_; }

 private:
  ZoneScope(std::string name, std::optional<std::string> saved)
      : name_(std::move(name)), saved_(std::move(saved)) {}
  std::string name_;                  // as given; "" = the machine's
  std::optional<std::string> saved_;  // TZ before, nullopt = unset
  bool changed_ = false;
};

// "2026-03-01T10:00:00" (sacct's default time format) as civil fields;
// nullopt when it is not that.
std::optional<CivilTime> ParseWallTime(std::string_view s);

}  // namespace meridian::sim
