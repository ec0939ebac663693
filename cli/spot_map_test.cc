// `meridian simulate --spot-traces MAP.yaml`: a team's own spot history. A
// map of two entries is replayed (the reclaim times worked by hand from the
// files' ticks), a run on it goes where the counts say, and every bad entry
// is exit 2 with the map's line, the entry and field, the value and why.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/spot_map.h"
#include "cli/test_cli.h"

namespace meridian::cli {
namespace {

namespace fs = std::filesystem;
using testutil::CliRun;
using testutil::Meridian;

constexpr UnixSeconds kStart = 1704067200;  // 2024-01-01T00:00:00Z, simulate's default --start

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

OfferingId Find(const std::string& zone, const std::string& type) {
  const auto& offers = Embedded()->offerings();
  for (size_t i = 0; i < offers.size(); ++i) {
    if (offers[i].zone == zone && offers[i].instance_type == type) return OfferingId(static_cast<uint32_t>(i));
  }
  return OfferingId();
}

class SpotMapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("meridian-spot-map-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "traces");
    // a: ticks of 600 s: up, up, down, up (period 2400 s).
    Write("traces/a.json", R"({"metadata": {"gap_seconds": 600}, "data": [1, 1, 0, 1]})");
    // b: ticks of 300 s: 0, 2, 2, 2, 1, 0 (period 1800 s).
    Write("traces/b.json", R"({"metadata": {"gap_seconds": 300}, "data": [0, 2, 2, 2, 1, 0]})");
    Write("t.jsonl",
          R"({"name": "s", "submit_s": 0, "duration_s": 3000, "gpus": 1, "gpu_model": "V100-16GB", )"
          R"("kind": "batch-inference", "preemptible": true, "model": {"precision": "fp16"}, )"
          R"("checkpoint": {"interval": "5m", "restart_overhead": "1m"}, "residency": ["aws:us-east-2"]})"
          "\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  // The map of the two traces: a on use2-az1, b on use2-az2 with tick 0 ten
  // minutes before the simulation's second 0.
  std::string TwoEntries() const {
    return "other_spot: none\n"
           "traces:\n"
           "  - offering: {provider: aws, region: aws:us-east-2, zone: use2-az1, instance_type: p3.2xlarge}\n"
           "    file: traces/a.json\n"
           "  - offering: {provider: aws, region: aws:us-east-2, zone: use2-az2, instance_type: p3.2xlarge}\n"
           "    file: traces/b.json\n"
           "    start: 2023-12-31T23:50:00Z\n";
  }
  fs::path dir_;
};

TEST_F(SpotMapTest, TwoEntriesReplayTheirFilesAndNothingElseHasSpot) {
  Write("map.yaml", TwoEntries());
  auto map = LoadSpotMap(Path("map.yaml"), *Embedded());
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->other_spot, sim::OtherSpot::kNone);
  ASSERT_EQ(map->mapped.size(), 2u);
  sim::ReplayMarketOptions mo;
  mo.start = kStart;
  mo.other_spot = map->other_spot;
  mo.mapped = map->mapped;
  sim::ReplayMarket m(Embedded(), sim::EmbeddedSpotTraces(), mo);
  const OfferingId a = Find("use2-az1", "p3.2xlarge"), b = Find("use2-az2", "p3.2xlarge");
  ASSERT_TRUE(a.valid() && b.valid());
  // a from the simulation's second 0: up [0,1200), down [1200,1800), up
  // [1800,3600), down again at 2400 + 1200 = 3600.
  EXPECT_EQ(m.SpotInstances(a, kStart), 1);
  EXPECT_EQ(m.NextSpotReclaim(a, kStart), kStart + 1200);
  EXPECT_EQ(m.SpotInstances(a, kStart + 1500), 0);
  EXPECT_EQ(m.NextSpotReclaim(a, kStart + 1800), kStart + 3600);
  // b's tick 0 is 600 s before second 0, so second s reads trace second
  // s + 600: 2 at second 0 (tick 2), below 2 from trace 1200 (second 600),
  // 0 from trace 1500 (second 900), 2 again from trace 1800 + 300 (second
  // 1500).
  EXPECT_EQ(m.SpotInstances(b, kStart), 2);
  EXPECT_EQ(m.NextSpotBelow(b, kStart, 2), kStart + 600);
  EXPECT_EQ(m.NextSpotReclaim(b, kStart), kStart + 900);
  EXPECT_EQ(m.SpotInstances(b, kStart + 1500), 2);
  // other_spot: none: every other offering has no spot, not even those the
  // shipped traces were measured on.
  EXPECT_EQ(m.SpotInstances(Find("use2-az3", "p3.16xlarge"), kStart), 0);
  EXPECT_EQ(m.SpotInstances(Find("use1-az1", "p3.2xlarge"), kStart), 0);
}

TEST_F(SpotMapTest, OtherSpotCatalogKeepsTheShippedAssignment) {
  Write("map.yaml",
        "traces:\n"
        "  - offering: {provider: aws, region: aws:us-east-2, zone: use2-az1, instance_type: p3.2xlarge}\n"
        "    file: " + Path("traces/a.json") + "\n");  // an absolute path
  auto map = LoadSpotMap(Path("map.yaml"), *Embedded());
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  sim::ReplayMarketOptions mo;
  mo.start = kStart;
  mo.other_spot = map->other_spot;
  mo.mapped = map->mapped;
  sim::ReplayMarket mapped(Embedded(), sim::EmbeddedSpotTraces(), mo);
  sim::ReplayMarketOptions shipped_options;
  shipped_options.start = kStart;
  sim::ReplayMarket shipped(Embedded(), sim::EmbeddedSpotTraces(), shipped_options);
  const auto& offers = Embedded()->offerings();
  const OfferingId a = Find("use2-az1", "p3.2xlarge");
  for (size_t i = 0; i < offers.size(); ++i) {
    const OfferingId o(static_cast<uint32_t>(i));
    if (o == a) {
      EXPECT_TRUE(mapped.AssignmentOf(o).mapped);
      continue;
    }
    EXPECT_EQ(mapped.AssignmentOf(o).trace, shipped.AssignmentOf(o).trace) << i;
    EXPECT_EQ(mapped.AssignmentOf(o).offset_s, shipped.AssignmentOf(o).offset_s) << i;
  }
}

// skypilot-like on the two-entry map, one 1-GPU V100 job of 3000 s with
// checkpoints every 300 s and restarts of 60 s, in aws:us-east-2:
//   0     spot on use2-az2 (the cheaper spot, $0.3635/h; count 2).
//   900   b's count is 0: reclaimed, 900 s saved; spot on use2-az1 (a is up).
//   1200  a goes down: reclaimed after 60 s of restart and 240 s of work,
//         less than a checkpoint; neither zone has spot: on-demand to the
//         end, 1200 + 60 + 2100 = 3360.
TEST_F(SpotMapTest, SimulateRunsOnTheMappedHistory) {
  Write("map.yaml", TwoEntries());
  CliRun r = Meridian({"simulate", "--trace", Path("t.jsonl"), "--format", "jsonl", "--policy",
                       "skypilot-like", "--spot-traces", Path("map.yaml"), "--out", Path("out")});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::istringstream csv(testutil::ReadFile(Path("out/jobs.csv")));
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  auto column = [&](const std::string& name) {
    std::istringstream h(header), v(row);
    std::string key, value;
    while (std::getline(h, key, ',') && std::getline(v, value, ',')) {
      if (key == name) return value;
    }
    return std::string("?");
  };
  EXPECT_EQ(column("start_s"), "0");
  EXPECT_EQ(column("end_s"), "3360");
  EXPECT_EQ(column("preemptions"), "2");
  EXPECT_EQ(column("pricing"), "on-demand");
}

struct BadMap {
  const char* name;
  std::string yaml;
  std::string message;  // a part of stderr
};

TEST_F(SpotMapTest, BadEntriesAreExitTwoNamingEntryAndField) {
  Write("traces/zero_gap.json", R"({"metadata": {"gap_seconds": 0}, "data": [1]})");
  Write("traces/bad.json", R"({"metadata": {"gap_seconds": 60}, "data": [1, "up"]})");
  Write("traces/broken.json", R"({"metadata": )");
  const std::string az1 = "  - offering: {provider: aws, region: aws:us-east-2, zone: use2-az1, instance_type: p3.2xlarge}\n";
  const std::vector<BadMap> cases = {
      {"unknown zone",
       "traces:\n  - offering: {provider: aws, region: aws:us-east-2, zone: use2-az9, instance_type: p3.2xlarge}\n"
       "    file: traces/a.json\n",
       "map.yaml:2: traces[0].offering.zone: \"use2-az9\" names no catalog offering in aws "
       "aws:us-east-2; did you mean use2-az1"},
      {"unknown region",
       "traces:\n  - offering: {provider: aws, region: aws:us-east-9, zone: use2-az1, instance_type: p3.2xlarge}\n"
       "    file: traces/a.json\n",
       "traces[0].offering.region: \"aws:us-east-9\" names no catalog offering in aws; did you mean"},
      {"unknown instance type",
       "traces:\n  - offering: {provider: aws, region: aws:us-east-2, zone: use2-az1, instance_type: p3.2xlarg}\n"
       "    file: traces/a.json\n",
       "traces[0].offering.instance_type: \"p3.2xlarg\" names no catalog offering in aws aws:us-east-2 "
       "use2-az1; did you mean p3.2xlarge"},
      {"no spot price",
       "traces:\n  - offering: {provider: aws, region: aws:us-east-2, zone: use2-az3, instance_type: p3.2xlarge}\n"
       "    file: traces/a.json\n",
       "traces[0].offering: aws:us-east-2 use2-az3 p3.2xlarge has no spot price in the catalog"},
      {"missing file", "traces:\n" + az1 + "    file: traces/nope.json\n",
       "map.yaml:3: traces[0].file: \"traces/nope.json\" cannot be read"},
      {"no file", "traces:\n" + az1, "map.yaml:2: traces[0].file: is missing"},
      {"zero gap", "traces:\n" + az1 + "    file: traces/zero_gap.json\n",
       "traces[0].file: traces/zero_gap.json: metadata.gap_seconds is 0, not a whole number of seconds > 0"},
      {"malformed data", "traces:\n" + az1 + "    file: traces/bad.json\n",
       "traces[0].file: traces/bad.json: data[1] is \"up\", not a count of instances"},
      {"not JSON", "traces:\n" + az1 + "    file: traces/broken.json\n",
       "traces[0].file: traces/broken.json: not JSON"},
      {"bad start", "traces:\n" + az1 + "    file: traces/a.json\n    start: yesterday\n",
       "map.yaml:4: traces[0].start: \"yesterday\" is not an RFC 3339 time"},
      {"twice", "traces:\n" + az1 + "    file: traces/a.json\n" + az1 + "    file: traces/a.json\n",
       "traces[1].offering: is the offering traces[0] maps already"},
      {"other_spot", "other_spot: some\ntraces: []\n",
       "map.yaml:1: other_spot: \"some\" is not catalog or none"},
      {"unknown key", "trace:\n" + az1 + "    file: traces/a.json\n",
       "map.yaml:1: trace: is not a known key; did you mean traces"},
      {"unknown entry key", "traces:\n" + az1 + "    fil: traces/a.json\n",
       "traces[0].fil: is not a known key; did you mean file"},
  };
  for (const BadMap& c : cases) {
    Write("map.yaml", c.yaml);
    CliRun r = Meridian({"simulate", "--trace", Path("t.jsonl"), "--format", "jsonl", "--spot-traces",
                         Path("map.yaml")});
    EXPECT_EQ(r.code, kExitBadInput) << c.name;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.name << "\n" << r.err;
  }
  CliRun missing = Meridian({"simulate", "--trace", Path("t.jsonl"), "--format", "jsonl",
                             "--spot-traces", Path("none.yaml")});
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("none.yaml: cannot read the spot map"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace meridian::cli
