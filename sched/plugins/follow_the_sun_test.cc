#include "sched/plugins/follow_the_sun.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"
#include "sched/tenant_usage.h"

namespace meridian::sched {
namespace {

using testing::kNow;  // 2026-01-01T00:00:00Z, a Thursday
using testing::MakeWorld;

UnixSeconds At(const char* rfc3339) { return ParseRfc3339(rfc3339).value(); }

TEST(FollowTheSunTest, UtcOffsets) {
  struct Case {
    const char* zone;
    const char* at;
    int want;
  } cases[] = {
      {"Europe/Berlin", "2026-01-15T12:00:00Z", 60},
      {"Europe/Berlin", "2026-07-15T12:00:00Z", 120},
      // EU 2026: last Sunday of March (29th) and of October (25th), 01:00 UTC
      {"Europe/Berlin", "2026-03-29T00:59:59Z", 60},
      {"Europe/Berlin", "2026-03-29T01:00:00Z", 120},
      {"Europe/London", "2026-10-25T00:59:59Z", 60},
      {"Europe/London", "2026-10-25T01:00:00Z", 0},
      // US 2026: second Sunday of March (8th) 02:00 EST = 07:00 UTC,
      // first Sunday of November (1st) 02:00 EDT = 06:00 UTC
      {"America/New_York", "2026-03-08T06:59:59Z", -300},
      {"America/New_York", "2026-03-08T07:00:00Z", -240},
      {"America/New_York", "2026-11-01T05:59:59Z", -240},
      {"America/New_York", "2026-11-01T06:00:00Z", -300},
      {"America/Los_Angeles", "2026-07-01T00:00:00Z", -420},
      {"America/Phoenix", "2026-07-01T00:00:00Z", -420},
      // Australia 2026: ends first Sunday of April (5th) 03:00 AEDT = 16:00 UTC
      // on the 4th; starts first Sunday of October (4th) 02:00 AEST = 16:00 UTC on the 3rd
      {"Australia/Sydney", "2026-01-15T00:00:00Z", 660},
      {"Australia/Sydney", "2026-04-04T15:59:59Z", 660},
      {"Australia/Sydney", "2026-04-04T16:00:00Z", 600},
      {"Australia/Sydney", "2026-10-03T15:59:59Z", 600},
      {"Australia/Sydney", "2026-10-03T16:00:00Z", 660},
      {"Asia/Tokyo", "2026-07-01T00:00:00Z", 540},
      {"Asia/Kolkata", "2026-07-01T00:00:00Z", 330},
      {"America/Sao_Paulo", "2026-01-01T00:00:00Z", -180},
  };
  for (const Case& c : cases) {
    std::optional<TimeZone> z = FindTimeZone(c.zone);
    ASSERT_TRUE(z) << c.zone;
    EXPECT_EQ(UtcOffsetMinutes(*z, At(c.at)), c.want) << c.zone << " at " << c.at;
  }
  EXPECT_FALSE(FindTimeZone("Mars/Olympus_Mons"));
}

TEST(FollowTheSunTest, WorkingHours) {
  TimeZone tokyo = *FindTimeZone("Asia/Tokyo");
  TimeZone berlin = *FindTimeZone("Europe/Berlin");
  WorkingHours day = *ParseWorkingHours("09:00-18:00");
  WorkingHours night = *ParseWorkingHours("22:00-06:00");
  WorkingHours all_week = day;
  all_week.weekends = true;
  struct Case {
    const char* name;
    TimeZone z;
    WorkingHours h;
    const char* at;
    bool want;
  } cases[] = {
      {"Tokyo Thu 09:00", tokyo, day, "2026-01-01T00:00:00Z", true},
      {"Tokyo Thu 08:59", tokyo, day, "2025-12-31T23:59:00Z", false},
      {"Tokyo Thu 18:00 (end excluded)", tokyo, day, "2026-01-01T09:00:00Z", false},
      {"Berlin Thu 01:00", berlin, day, "2026-01-01T00:00:00Z", false},
      {"Berlin Thu 13:00", berlin, day, "2026-01-01T12:00:00Z", true},
      {"Tokyo Sat 10:00", tokyo, day, "2026-01-03T01:00:00Z", false},
      {"Tokyo Sat 10:00, weekends work", tokyo, all_week, "2026-01-03T01:00:00Z", true},
      {"Berlin Fri 23:00 night shift", berlin, night, "2026-01-02T22:00:00Z", true},
      // Sat 05:00: the shift began Friday night, a working day
      {"Berlin Sat 05:00 night shift", berlin, night, "2026-01-03T04:00:00Z", true},
      {"Berlin Sat 23:00 night shift", berlin, night, "2026-01-03T22:00:00Z", false},
  };
  for (const Case& c : cases) EXPECT_EQ(InWorkingHours(c.z, c.h, At(c.at)), c.want) << c.name;
  EXPECT_FALSE(ParseWorkingHours("9-18"));
  EXPECT_FALSE(ParseWorkingHours("09:00-09:00"));
  EXPECT_FALSE(ParseWorkingHours("09:00-25:00"));
}

QueuedJob TenantJob(const testing::World& w, const char* tenant, uint32_t tenant_id, uint32_t id) {
  JobSpec spec = testing::TwoHourJob("j", 1, 40);
  spec.tenant = tenant;
  return MakeQueuedJob(std::make_shared<JobSpec>(spec), *w.catalog,
                       {JobId(id), TenantId(tenant_id), kNow, id})
      .value();
}

TEST(FollowTheSunTest, ShareRisesInWorkingHours) {
  testing::World w = MakeWorld();
  // Both hold 8 of the fleet's 50 GPUs: 0.16 each (the dominant share).
  for (uint32_t t = 0; t < 2; ++t) {
    Allocation a;
    a.job = JobId(100 + t);
    a.tenant = TenantId(t);
    a.end = kNow + 3600;
    a.nodes.push_back({NodeId(t), 0xff, std::nullopt, 0, 0});
    ASSERT_TRUE(w.ledger.Reserve(a).ok());
  }
  QueuedJob tokyo = TenantJob(w, "tokyo", 0, 1);
  QueuedJob berlin = TenantJob(w, "berlin", 1, 2);
  std::vector<const QueuedJob*> q = {&tokyo, &berlin};
  TenantUsage usage = TenantUsage::Build(*w.fleet, w.ledger, q);
  auto args = PluginArgs::FromYaml(
      "{tenants: {tokyo: {zone: Asia/Tokyo, hours: '09:00-18:00'},"
      " berlin: {zone: Europe/Berlin, hours: '09:00-18:00', boost: 3, lend: 0.25}}}");
  ASSERT_TRUE(args.ok());
  auto made = FollowTheSun::Create(*args);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto* sun = dynamic_cast<FollowTheSun*>(made->get());
  struct Case {
    const char* at;
    double tokyo_weight, berlin_weight;
    std::weak_ordering want;
  } cases[] = {
      // 09:00 in Tokyo (x2), 01:00 in Berlin (x0.25): 0.16 / 2 = 0.08 < 0.16 / 0.25 = 0.64
      {"2026-01-01T00:00:00Z", 2, 0.25, std::weak_ordering::less},
      // 21:00 in Tokyo (x0.5), 13:00 in Berlin (x3): 0.32 > 0.053
      {"2026-01-01T12:00:00Z", 0.5, 3, std::weak_ordering::greater},
      // Saturday: both lend: 0.16 / 0.5 = 0.32 < 0.16 / 0.25 = 0.64
      {"2026-01-03T12:00:00Z", 0.5, 0.25, std::weak_ordering::less},
  };
  for (const Case& c : cases) {
    Snapshot snap = w.At(At(c.at));
    snap.tenants = &usage;
    EXPECT_DOUBLE_EQ(sun->WeightOf(tokyo, snap.now), c.tokyo_weight) << c.at;
    EXPECT_DOUBLE_EQ(sun->WeightOf(berlin, snap.now), c.berlin_weight) << c.at;
    EXPECT_EQ(sun->Compare(snap, tokyo, berlin), c.want) << c.at;
  }
}

TEST(FollowTheSunTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml(
      "{tenants: {t: {zone: Mars/Base, hours: '9-5', boost: 0.5, lend: 2}}}", "p.yaml",
      "plugins[2].args");
  ASSERT_TRUE(args.ok());
  auto made = FollowTheSun::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[2].args.tenants.t.zone: \"Mars/Base\" is not in the built-in time zone table"),
            std::string::npos) << m;
  EXPECT_NE(m.find("plugins[2].args.tenants.t.hours: \"9-5\" must be HH:MM-HH:MM"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[2].args.tenants.t.boost: \"0.5\" must be >= 1"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[2].args.tenants.t.lend: \"2\" must be <= 1"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
