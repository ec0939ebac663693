// The dashboard aggregates (/v1/overview, /v1/waiting, /v1/fleet,
// /v1/regions) against a real `meridian serve`: the totals agree with the jobs
// the API lists, each tenant sees only its own jobs, and every answer has the
// shape of its checked-in example in testdata/api/ (the same files the front
// end's component tests render).
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "control/test_daemon.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;

json Example(const std::string& name) {
  std::ifstream in(std::string(MERIDIAN_API_TESTDATA) + "/" + name);
  EXPECT_TRUE(in) << name;
  return json::parse(in, nullptr, false);
}

// "" when `actual` has the shape of `example`: the same keys in every object,
// the same kind of value under each (a null on either side stands for a value
// that may be absent), every array element shaped like the example's first.
std::string ShapeDiff(const json& example, const json& actual, const std::string& path = "$") {
  if (example.is_null() || actual.is_null()) return "";
  if (example.is_number() && actual.is_number()) return "";
  if (example.type() != actual.type()) {
    return path + ": example is " + example.type_name() + ", answer is " + actual.type_name();
  }
  if (example.is_object()) {
    for (const auto& [k, v] : example.items()) {
      if (!actual.contains(k)) return path + "." + k + ": missing from the answer";
      if (auto d = ShapeDiff(v, actual[k], path + "." + k); !d.empty()) return d;
    }
    for (const auto& [k, v] : actual.items()) {
      if (!example.contains(k)) return path + "." + k + ": not in the example";
    }
  }
  if (example.is_array() && !example.empty()) {
    for (size_t i = 0; i < actual.size(); ++i) {
      if (auto d = ShapeDiff(example[0], actual[i], path + "[" + std::to_string(i) + "]"); !d.empty()) {
        return d;
      }
    }
  }
  return "";
}

// The default profile with tenants' working hours for follow_the_sun.
std::string FollowTheSunProfile(const std::string& dir) {
  std::ifstream in(std::string(MERIDIAN_SOURCE_DIR) + "/sched/profiles/default.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string from = "  - name: drf_fair_share";
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  const size_t eol = text.find('\n', at);
  text.replace(at, eol - at,
               "  - name: follow_the_sun\n"
               "    args:\n"
               "      tenants:\n"
               "        alice: {zone: Asia/Tokyo, hours: \"09:00-18:00\"}\n"
               "        bob: {zone: Europe/Berlin, hours: \"08:00-17:00\"}");
  const std::string path = dir + "/follow-the-sun.yaml";
  std::ofstream(path) << text;
  return path;
}

class AggregatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("aggregates");
    daemon_ = std::make_unique<DaemonProcess>(
        dir_, 4, "gpu_hour_usd: 1.10\nprofile: " + FollowTheSunProfile(dir_) + "\n");
    daemon_->Start();
    alice_ = daemon_->Token("alice");
    bob_ = daemon_->Token("bob");
    admin_ = daemon_->Token("ops", true);
    http_ = daemon_->Client();
  }
  void TearDown() override {
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }

  json Get(const std::string& path, const std::string& token) {
    auto r = http_->Get(path.c_str(), Auth(token));
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  std::string Submit(const std::string& token, const std::string& name, int gpus, int seconds) {
    auto r = http_->Post("/v1/jobs", Auth(token),
                         R"({"name": ")" + name + R"(", "kind": "data-science", "resources": {"gpus": )" +
                             std::to_string(gpus) + R"(, "gpu_models": ["T4"]}, "command": ["/bin/sleep", ")" +
                             std::to_string(seconds) + R"("]})",
                         "application/json");
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    return r ? json::parse(r->body)["id"].get<std::string>() : "";
  }
  json WaitFor(const std::string& token, const std::string& id, const std::string& state) {
    json j;
    for (int i = 0; i < 300; ++i) {
      j = Get("/v1/jobs/" + id, token);
      if (j["state"] == state) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(j["state"], state) << j.dump();
    return j;
  }

  std::string dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string alice_, bob_, admin_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(AggregatesTest, OverviewTotalsAgreeWithTheJobsAndArePerTenant) {
  std::vector<std::string> ids = {Submit(alice_, "a1", 1, 2), Submit(alice_, "a2", 2, 2)};
  const std::string bobs = Submit(bob_, "b1", 1, 1);
  for (const auto& id : ids) WaitFor(alice_, id, "succeeded");
  WaitFor(bob_, bobs, "succeeded");

  json o = Get("/v1/overview", alice_);
  EXPECT_EQ(ShapeDiff(Example("overview.json"), o), "") << o.dump(2);
  EXPECT_EQ(o["tenant"], "alice");
  EXPECT_EQ(o["jobs"]["total"], 2);
  EXPECT_EQ(o["jobs"]["by_state"]["succeeded"], 2);
  EXPECT_EQ(o["jobs"]["by_state"]["queued"], 0);
  EXPECT_EQ(o["jobs"]["by_tier"]["normal"]["done"], 2);
  EXPECT_EQ(o["jobs"]["by_tier"]["critical"]["total"], 0);
  double cost = 0, co2_g = 0;
  const json list = Get("/v1/jobs", alice_);
  for (const auto& j : list["jobs"]) {
    cost += j["cost_usd"].get<double>();
    co2_g += j["co2_g"].get<double>();
  }
  EXPECT_GT(cost, 0);
  EXPECT_NEAR(o["spend"]["so_far_usd"].get<double>(), cost, 1e-6);
  EXPECT_NEAR(o["co2"]["so_far_kg"].get<double>(), co2_g / 1000, 1e-6);
  ASSERT_EQ(o["spend"]["by_pricing"].size(), 5u);
  for (const auto& p : o["spend"]["by_pricing"]) {
    const double want = p["pricing"] == "owned" ? cost : 0.0;
    EXPECT_NEAR(p["so_far_usd"].get<double>(), want, 1e-6) << p.dump();
    EXPECT_EQ(p["per_hour_usd"], 0) << "nothing runs now";
  }
  EXPECT_EQ(o["utilization"]["owned"]["gpus"], 4);
  EXPECT_EQ(o["utilization"]["owned"]["busy_gpus"], 0);
  EXPECT_EQ(o["utilization"]["reserved"]["gpus"], 0);
  EXPECT_EQ(o["preemptions"], 0);

  json b = Get("/v1/overview", bob_);
  EXPECT_EQ(b["jobs"]["total"], 1);
  json admin = Get("/v1/overview", admin_);
  EXPECT_EQ(admin["jobs"]["total"], 3);
  EXPECT_TRUE(admin["tenant"].is_null());
}

TEST_F(AggregatesTest, WaitingAndFleetExplainAndHideOtherTenants) {
  const std::string big = Submit(alice_, "fills-the-node", 4, 30);
  WaitFor(alice_, big, "running");
  const std::string waits = Submit(alice_, "waits", 1, 1);
  const std::string bobs = Submit(bob_, "bob-waits", 1, 1);
  json w;
  for (int i = 0; i < 100; ++i) {
    w = Get("/v1/waiting", alice_);
    if (w["jobs"].size() == 1 && w["jobs"][0]["decision"] != "pending") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(ShapeDiff(Example("waiting.json"), w), "") << w.dump(2);
  ASSERT_EQ(w["jobs"].size(), 1u) << w.dump(2);
  const json& e = w["jobs"][0];
  EXPECT_EQ(e["id"], waits);
  EXPECT_EQ(e["tier"], "normal");
  EXPECT_EQ(e["decision"], "wait") << e.dump(2);
  // The node has room once the running job's expected end comes.
  EXPECT_TRUE(e["earliest_start"].is_string()) << e.dump(2);
  EXPECT_NE(e["start_reason"].get<std::string>().find("testnode"), std::string::npos) << e.dump(2);
  EXPECT_EQ(e["pricing"], "owned");
  EXPECT_FALSE(e["message"].get<std::string>().empty());
  json bw = Get("/v1/waiting", bob_);
  ASSERT_EQ(bw["jobs"].size(), 1u);
  EXPECT_EQ(bw["jobs"][0]["id"], bobs);

  json f = Get("/v1/fleet", alice_);
  EXPECT_EQ(ShapeDiff(Example("fleet.json"), f), "") << f.dump(2);
  EXPECT_EQ(f["totals"]["gpus"], 4);
  EXPECT_EQ(f["totals"]["busy_gpus"], 4);
  const json& node = f["clusters"][0]["nodes"][0];
  EXPECT_EQ(node["name"], "testnode");
  EXPECT_EQ(node["gpu_slots"][0]["job"], big);
  ASSERT_EQ(node["jobs"].size(), 1u);
  EXPECT_EQ(node["jobs"][0]["id"], big);
  auto raw = http_->Get("/v1/fleet", Auth(bob_));
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->body.find(big), std::string::npos) << "bob sees alice's job id";
  EXPECT_EQ(raw->body.find("fills-the-node"), std::string::npos);
  json bf = json::parse(raw->body);
  EXPECT_EQ(bf["clusters"][0]["nodes"][0]["other_tenants_jobs"], 1);
  EXPECT_EQ(bf["clusters"][0]["nodes"][0]["busy_gpus"], 4);
  auto nodes = http_->Get("/v1/nodes", Auth(bob_));
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->body.find(big), std::string::npos) << "/v1/nodes shows bob alice's job id";

  // A drained node is listed as drained and counted.
  auto reg = http_->Post("/v1/nodes", Auth(admin_),
                         R"({"name": "spare", "gpu_model": "T4", "gpus": 2, "vcpus": 8, "ram_gib": 32})",
                         "application/json");
  ASSERT_TRUE(reg && reg->status == 201);
  auto drain = http_->Post("/v1/nodes/spare/drain", Auth(admin_), "", "application/json");
  ASSERT_TRUE(drain && drain->status == 200);
  json after = Get("/v1/fleet", alice_);
  EXPECT_EQ(after["totals"]["drained_nodes"], 1);
  bool found = false;
  for (const auto& n : after["clusters"][0]["nodes"]) {
    if (n["name"] == "spare") {
      found = true;
      EXPECT_TRUE(n["drained"].get<bool>());
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(AggregatesTest, RegionsHavePriceCarbonAndTheSunStrip) {
  const std::string id = Submit(alice_, "ran", 1, 1);
  WaitFor(alice_, id, "succeeded");
  json r = Get("/v1/regions", alice_);
  EXPECT_EQ(ShapeDiff(Example("regions.json"), r), "") << r.dump(2).substr(0, 4000);
  EXPECT_EQ(r["home_region"], "gcp:us-central1");
  EXPECT_EQ(r["hours"].size(), 24u);
  auto cat = catalog::Catalog::LoadEmbedded();
  ASSERT_TRUE(cat.ok());
  EXPECT_EQ(r["regions"].size(), (*cat)->regions().size());
  const json* home = nullptr;
  for (const auto& g : r["regions"]) {
    EXPECT_EQ(g["carbon_g_per_kwh_hourly"].size(), 24u) << g["id"];
    if (g["id"] == "gcp:us-central1") home = &g;
  }
  ASSERT_NE(home, nullptr);
  EXPECT_TRUE((*home)["home"].get<bool>());
  EXPECT_EQ((*home)["owned_gpu_hour_usd"], 1.10);
  // The T4 price is the catalog's cheapest T4 offering there, per GPU.
  double want = 0;
  for (const auto& o : (*cat)->offerings()) {
    if (o.region != "gcp:us-central1" || o.gpu_model != "T4") continue;
    const double p = o.on_demand_per_hour.dollars() / o.gpu_count;
    if (want == 0 || p < want) want = p;
  }
  bool priced = false;
  for (const auto& p : (*home)["prices"]) {
    if (p["gpu_model"] != "T4") continue;
    priced = true;
    EXPECT_NEAR(p["on_demand_usd_per_gpu_hour"].get<double>(), want, 1e-4);
  }
  EXPECT_EQ(priced, want > 0);
  double load = 0;
  for (const auto& v : (*home)["gpu_hours_24h"]) load += v.get<double>();
  EXPECT_GT(load, 0) << "the job's GPU-seconds land in the home region's strip";
  ASSERT_EQ(r["tenants"].size(), 1u) << "alice sees only her own working hours";
  EXPECT_EQ(r["tenants"][0]["tenant"], "alice");
  EXPECT_EQ(r["tenants"][0]["zone"], "Asia/Tokyo");
  EXPECT_EQ(r["tenants"][0]["working"].size(), 24u);
  int working = 0;
  for (const auto& v : r["tenants"][0]["working"]) working += v.get<bool>() ? 1 : 0;
  EXPECT_LE(working, 9) << "nine working hours a weekday, none at weekends";

  json b = Get("/v1/regions", bob_);
  ASSERT_EQ(b["tenants"].size(), 1u);
  EXPECT_EQ(b["tenants"][0]["tenant"], "bob");
  for (const auto& g : b["regions"]) {
    for (const auto& v : g["gpu_hours_24h"]) EXPECT_EQ(v, 0) << "bob sees alice's load";
  }
  EXPECT_EQ(Get("/v1/regions", admin_)["tenants"].size(), 2u);
}

}  // namespace
}  // namespace meridian::control
