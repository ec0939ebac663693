// The SLO as users see it: service-minutes met, worked by hand on the test
// catalog's regions (Tokyo, Ashburn), and through the engine.
#include "sim/service_slo.h"

#include <gtest/gtest.h>

#include "estimate/test_catalog.h"
#include "sim/test_world.h"

namespace meridian::sim {
namespace {

using testing::kStart;  // 2026-01-01T00:00:00Z: second 0 of the trace is 00:00 UTC

std::shared_ptr<const catalog::Catalog> Cat() { return estimate::testing::TestCatalog(); }

RegionId Region(const std::string& id) { return sched::FindRegionId(*Cat(), id); }

JobSpec Chat(double slo_ms, std::vector<std::string> users) {
  JobSpec s;
  s.kind = WorkloadKind::kRealtimeInference;
  s.latency.slo_ms = slo_ms;
  s.latency.users = std::move(users);
  return s;
}

// A shape with one GPU model whose replica serves 10 requests per second and
// answers one request in 20 ms.
sched::QueuedJob TenRpsShape() {
  sched::QueuedJob q;
  sched::ModelDemand d;
  d.replica_rps = 10;
  d.request_ms = 20;
  q.demands.push_back(d);
  return q;
}

struct Service {
  JobSpec spec;
  TraceJob job;
  JobOutcome outcome;
  sched::QueuedJob shape = TenRpsShape();
  ServiceCase Case() const { return {&job, &spec, &shape, &outcome}; }
};

// Due 2 h from second 0.
Service TwoHours(JobSpec spec) {
  Service s;
  s.spec = std::move(spec);
  s.job.submit_s = 0;
  s.job.duration_s = 7200;
  return s;
}

ServiceSpan Span(int64_t from, int64_t to, const std::string& region, uint16_t replicas = 1) {
  return {0, from, to, Region(region), 0, replicas};
}

// Users in Tokyo, 40 ms: Ashburn is ~10,872 km away, 2 x 10,872 / 200 + 5 =
// 113.7 ms of round trip alone: every one of the 120 minutes fails. Served
// from Tokyo: 5 ms + 20 ms per request = 25 ms: every minute is met.
TEST(ServiceSloTest, FarFromItsUsersEveryMinuteFails) {
  Service s = TwoHours(Chat(40, {"gcp:asia-northeast1"}));
  ServiceMinutes far = ServiceSloOf(s.Case(), {Span(0, 7200, "aws:us-east-1")}, *Cat(), kStart);
  EXPECT_EQ(far.minutes, 120);
  EXPECT_EQ(far.met, 0);
  ServiceMinutes near = ServiceSloOf(s.Case(), {Span(0, 7200, "gcp:asia-northeast1")}, *Cat(), kStart);
  EXPECT_EQ(near.met, 120);
  // A 20 ms SLO: 5 + 20 = 25 ms is over.
  Service tight = TwoHours(Chat(20, {"gcp:asia-northeast1"}));
  EXPECT_EQ(ServiceSloOf(tight.Case(), {Span(0, 7200, "gcp:asia-northeast1")}, *Cat(), kStart).met, 0);
}

// 15 requests/s from 00:00 UTC, 25 from 01:00; 10 per replica: 2 replicas
// in hour 0, 3 in hour 1. Two replicas up throughout meet hour 0 only: 60
// of 120 minutes.
TEST(ServiceSloTest, ReplicasShortOfTheHoursLoadMissTheHour) {
  JobSpec spec = Chat(100, {"gcp:asia-northeast1"});
  spec.latency.rps_by_hour.assign(24, 0);
  spec.latency.rps_by_hour[0] = 15;
  spec.latency.rps_by_hour[1] = 25;
  Service s = TwoHours(spec);
  EXPECT_EQ(ServiceSloOf(s.Case(), {Span(0, 7200, "gcp:asia-northeast1", 2)}, *Cat(), kStart).met, 60);
  EXPECT_EQ(ServiceSloOf(s.Case(), {Span(0, 7200, "gcp:asia-northeast1", 3)}, *Cat(), kStart).met, 120);
  EXPECT_EQ(ServiceSloOf(s.Case(), {Span(0, 7200, "gcp:asia-northeast1", 1)}, *Cat(), kStart).met, 0);
}

// Down from 1800 s to 1830 s (a reclaim and a 30 s restart): minute 30
// ([1800, 1860)) is short; 119 of 120. Spans that touch leave no gap.
// Never placed: 0 of 120.
TEST(ServiceSloTest, MinutesDownCountAgainstTheSlo) {
  Service s = TwoHours(Chat(100, {"gcp:asia-northeast1"}));
  const std::string tokyo = "gcp:asia-northeast1";
  EXPECT_EQ(ServiceSloOf(s.Case(), {Span(0, 1800, tokyo), Span(1830, 7200, tokyo)}, *Cat(), kStart).met, 119);
  EXPECT_EQ(ServiceSloOf(s.Case(), {Span(0, 1800, tokyo), Span(1800, 7200, tokyo)}, *Cat(), kStart).met, 120);
  EXPECT_EQ(ServiceSloOf(s.Case(), {}, *Cat(), kStart).met, 0);
  // Started 90 s late: minutes 0 and 1 ([0, 60), [60, 120)) are missed.
  EXPECT_EQ(ServiceSloOf(s.Case(), {Span(90, 7200, tokyo)}, *Cat(), kStart).met, 118);
  // Running past its window counts nothing more.
  EXPECT_EQ(ServiceSloOf(s.Case(), {Span(0, 9000, tokyo)}, *Cat(), kStart).met, 120);
}

// A replica set's replicas each have a span; the replicas up are their sum.
// 15 requests/s all day, 10 per replica: 2 replicas needed. Replica A up
// [0, 7200); replica B up [0, 1800), reclaimed, its replacement up from
// 2100 (a 300 s restart): one replica up in [1800, 2100), minutes 30 to 34
// ([1800, 2100) is 5 whole minutes): 115 of 120. A third replica up
// throughout covers the gap: 120. A replica far from the users (Ashburn for
// Tokyo, 40 ms) counts for nothing: with it in place of the third, 115.
TEST(ServiceSloTest, ReplicasOfASetAddUp) {
  JobSpec spec = Chat(40, {"gcp:asia-northeast1"});
  spec.latency.rps = 15;
  Service s = TwoHours(spec);
  const std::string tokyo = "gcp:asia-northeast1";
  const std::vector<ServiceSpan> two = {Span(0, 7200, tokyo), Span(0, 1800, tokyo), Span(2100, 7200, tokyo)};
  EXPECT_EQ(ServiceSloOf(s.Case(), two, *Cat(), kStart).met, 115);
  std::vector<ServiceSpan> three = two;
  three.push_back(Span(0, 7200, tokyo));
  EXPECT_EQ(ServiceSloOf(s.Case(), three, *Cat(), kStart).met, 120);
  std::vector<ServiceSpan> far = two;
  far.push_back(Span(0, 7200, "aws:us-east-1"));
  EXPECT_EQ(ServiceSloOf(s.Case(), far, *Cat(), kStart).met, 115);
}

// Through the engine: one H100 node in aws:us-east-1, no cloud capacity,
// `skypilot-like` (no latency rule) places every service there at once. A
// 40 ms service for Tokyo meets none of its 120 minutes; one for users in
// Ashburn (5 ms) meets all 120. The run's slo_met_frac: 120 / 240 = 0.5.
TEST(ServiceSloTest, EngineCountsServiceMinutes) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "east";
  c.region = "aws:us-east-1";
  c.gpu_hour = Money::FromDollars(2.00);
  c.nodes.push_back({1, "H100-80GB", 8, 96, 1024, {}, "", {}, {}});
  f.clusters = {c};
  World w = testing::TestWorld(f);
  Trace t;
  JobSpec tokyo = Chat(40, {"gcp:asia-northeast1"});
  tokyo.resources.gpus = 1;
  tokyo.resources.vram_gib = 10;
  JobSpec ashburn = tokyo;
  ashburn.latency.users = {"aws:us-east-1"};
  testing::AddJob(t, tokyo, "tokyo", 0, 7200);
  testing::AddJob(t, ashburn, "ashburn", 0, 7200);
  PolicyRun run = testing::RunPolicy(t, w, "skypilot-like");
  ASSERT_EQ(run.services.size(), 2u);
  EXPECT_EQ(run.jobs[0].state, JobState::kDone);
  EXPECT_EQ(run.services[0].minutes, 120);
  EXPECT_EQ(run.services[0].met, 0);
  EXPECT_EQ(run.services[1].met, 120);
  Summary s = Summarize(t, w, run);
  ASSERT_TRUE(s.slo_met_frac.has_value());
  EXPECT_DOUBLE_EQ(*s.slo_met_frac, 0.5);
}

}  // namespace
}  // namespace meridian::sim
