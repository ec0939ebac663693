// The command line end to end: in-process through RunMeridian for exit codes
// and messages, and through the real binary for `-o json` parsed back.
#include "cli/commands.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace meridian::cli {
namespace {

using nlohmann::json;

// 2026-03-02T09:00:00Z: a fixed "now" so runs are reproducible.
constexpr long long kNow = 1772442000;

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun Meridian(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = RunMeridian(args, kNow, out, err);
  return {code, out.str(), err.str()};
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("meridian_cli_test_" + name);
  std::ofstream(path) << text;
  return path.string();
}

const std::vector<std::string> kExampleKinds = {
    "llm-training",       "training",     "fine-tuning", "batch-inference",
    "realtime-inference", "data-science", "rendering",   "scientific"};

TEST(Cli, HelpListsCommands) {
  CliRun r = Meridian({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("plan"), std::string::npos);
  EXPECT_NE(r.out.find("catalog"), std::string::npos);
  CliRun p = Meridian({"plan", "--help"});
  EXPECT_EQ(p.code, 0);
  EXPECT_NE(p.out.find("--top"), std::string::npos);
  EXPECT_NE(p.out.find("--at"), std::string::npos);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(Meridian({}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"frobnicate"}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"plan"}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"plan", "no/such/file.yaml"}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"plan", "examples/training.yaml", "-o", "xml"}).code, kExitBadInput);
  CliRun at = Meridian({"plan", "examples/training.yaml", "--at", "tomorrow"});
  EXPECT_EQ(at.code, kExitBadInput);
  EXPECT_NE(at.err.find("--at"), std::string::npos);
}

TEST(Cli, BadSpecNamesFieldAndExitsTwo) {
  std::string path = WriteTemp("bad_gpus.yaml", "name: x\nkind: training\nresources: {gpus: -2}\n");
  CliRun r = Meridian({"plan", path});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("resources.gpus"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-2"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  std::string unknown_gpu =
      WriteTemp("bad_model.yaml", "name: x\nkind: training\nresources: {gpu_models: [H900]}\n");
  CliRun u = Meridian({"plan", unknown_gpu});
  EXPECT_EQ(u.code, kExitBadInput);
  EXPECT_NE(u.err.find("H900"), std::string::npos) << u.err;
}

TEST(Cli, PlansEveryExampleAsJson) {
  for (const auto& kind : kExampleKinds) {
    SCOPED_TRACE(kind);
    CliRun r = Meridian({"plan", "examples/" + kind + ".yaml", "-o", "json", "--top", "0"});
    ASSERT_EQ(r.code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["job"]["kind"], kind);
    ASSERT_TRUE(j["options"].is_array());
    ASSERT_TRUE(j["rejected"].is_array());
    ASSERT_FALSE(j["options"].empty()) << "no option for " << kind << ": " << j["rejected"].dump();
    for (const auto& o : j["options"]) {
      for (const char* key : {"gpu", "gpus", "provider", "region", "zone", "instance_type",
                              "pricing", "hours", "cost_usd", "energy_kwh", "co2_kg",
                              "memory_per_gpu_gib", "billed_hours", "other_zones"}) {
        EXPECT_TRUE(o.contains(key)) << key;
      }
      EXPECT_NE(o["region"].get<std::string>().find(':'), std::string::npos);
      EXPECT_GT(o["hours"].get<double>(), 0);
      EXPECT_GE(o["cost_usd"].get<double>(), 0);
      // A reservation is paid for its whole term; everything else for the hours used.
      if (o["pricing"] == "reserved") {
        EXPECT_GE(o["billed_hours"].get<double>(), 8760.0);
      } else {
        EXPECT_DOUBLE_EQ(o["billed_hours"].get<double>(), o["hours"].get<double>());
      }
      std::string pricing = o["pricing"];
      EXPECT_TRUE(pricing == "on-demand" || pricing == "spot" || pricing == "flex-start" ||
                  pricing == "reserved");
      // Spot only for preemptible jobs; flex-start never for real-time services.
      if (!j["job"]["preemptible"].get<bool>()) {
        EXPECT_NE(pricing, "spot");
      }
      if (kind == "realtime-inference") {
        EXPECT_NE(pricing, "flex-start");
      }
    }
    // Ranked: options meeting the deadline first, then by cost.
    const auto& opts = j["options"];
    for (size_t i = 1; i < opts.size(); ++i) {
      bool a = opts[i - 1]["meets_deadline"], b = opts[i]["meets_deadline"];
      EXPECT_GE(a, b);
      if (a == b) {
        EXPECT_LE(opts[i - 1]["cost_usd"].get<double>(), opts[i]["cost_usd"].get<double>());
      }
    }
    for (const auto& rej : j["rejected"]) {
      EXPECT_FALSE(rej["gpu"].get<std::string>().empty());
      EXPECT_FALSE(rej["reason"].get<std::string>().empty());
    }
  }
}

TEST(Cli, TopLimitsOptions) {
  CliRun r = Meridian({"plan", "examples/fine-tuning.yaml", "-o", "json", "--top", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LE(json::parse(r.out)["options"].size(), 3u);
}

TEST(Cli, TableShowsArithmeticAndRejections) {
  CliRun r = Meridian({"plan", "examples/fine-tuning.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Options"), std::string::npos);
  EXPECT_NE(r.out.find("memory:"), std::string::npos);
  EXPECT_NE(r.out.find("speed:"), std::string::npos);
  EXPECT_NE(r.out.find("/h x "), std::string::npos);
}

TEST(Cli, CatalogCommands) {
  CliRun g = Meridian({"catalog", "gpus", "-o", "json"});
  ASSERT_EQ(g.code, 0) << g.err;
  json gpus = json::parse(g.out)["gpus"];
  EXPECT_GE(gpus.size(), 12u);

  CliRun o = Meridian({"catalog", "offers", "--gpu", "H100-80GB", "--provider", "aws", "-o", "json"});
  ASSERT_EQ(o.code, 0) << o.err;
  json offers = json::parse(o.out)["offers"];
  ASSERT_FALSE(offers.empty());
  for (const auto& x : offers) {
    EXPECT_EQ(x["gpu"], "H100-80GB");
    EXPECT_EQ(x["provider"], "aws");
  }

  CliRun eu = Meridian({"catalog", "regions", "--region", "eu", "-o", "json"});
  ASSERT_EQ(eu.code, 0) << eu.err;
  json regions = json::parse(eu.out)["regions"];
  ASSERT_FALSE(regions.empty());
  for (const auto& x : regions) EXPECT_EQ(x["geography"], "eu");

  CliRun bad = Meridian({"catalog", "offers", "--gpu", "H900"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--gpu"), std::string::npos);
  EXPECT_EQ(Meridian({"catalog", "planets"}).code, kExitBadInput);
}

TEST(Cli, RealBinaryJsonParsesBack) {
  std::string cmd = std::string(MERIDIAN_BINARY) +
                    " plan examples/fine-tuning.yaml -o json --at 2026-03-02T09:00:00Z";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
  int status = pclose(pipe);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  json j = json::parse(text);
  EXPECT_EQ(j["at"], "2026-03-02T09:00:00Z");
  EXPECT_FALSE(j["options"].empty());
}

}  // namespace
}  // namespace meridian::cli
