#include "sched/profile.h"

#include <gtest/gtest.h>

#include "sched/registry.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

TEST(ProfileTest, ParsesOptionsPluginsWeightsAndArgs) {
  auto p = ParseProfile(R"(name: mine
description: test
options:
  pricing_models: [on-demand, spot]
  max_fleet_candidates: 16
  tie_break: random
  explain: counts
plugins:
  - name: tier_sort
  - name: gpu_fit
    args: {max_gang_nodes: 4}
  - name: cheapest_price
    weight: 3
)",
                        "mine.yaml");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->name, "mine");
  EXPECT_EQ(p->options.pricing_models,
            (std::vector<PricingModel>{PricingModel::kOnDemand, PricingModel::kSpot}));
  EXPECT_EQ(p->options.max_fleet_candidates, 16);
  EXPECT_EQ(p->options.tie_break, TieBreak::kRandom);
  EXPECT_EQ(p->options.explain, ExplainLevel::kCounts);
  EXPECT_EQ(p->options.cpu_allocation, CpuAllocation::kGpuShare);  // unstated
  ASSERT_EQ(p->plugins.size(), 3u);
  EXPECT_EQ(p->plugins[2].weight, 3);
  EXPECT_EQ(p->plugins[0].weight, 1);
  EXPECT_TRUE(CheckProfile(*p).ok());
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* want;
};

TEST(ProfileTest, BadProfilesNameTheField) {
  const BadCase cases[] = {
      {"negative weight",
       "name: bad\nplugins:\n  - name: tier_sort\n  - name: gpu_fit\n  - name: first_fit\n"
       "  - name: cheapest_price\n    weight: -1\n",
       "bad.yaml:7:13: plugins[3].weight: \"-1\" must be >= 0"},
      {"unknown plugin", "name: bad\nplugins:\n  - name: gpu_fitt\n",
       "bad.yaml:3:11: plugins[0].name: \"gpu_fitt\" is not a plugin; did you mean gpu_fit?"},
      {"unknown key", "name: bad\nplugin:\n  - name: gpu_fit\n",
       "bad.yaml:2:1: plugin: unknown key; did you mean plugins?"},
      {"bad pricing model", "name: bad\noptions: {pricing_models: [spot, cheap]}\nplugins: [{name: gpu_fit}]\n",
       "options.pricing_models[1]: \"cheap\" must be on-demand, spot, flex-start or reserved"},
      {"no plugins", "name: bad\n", "plugins: must be a non-empty list"},
      {"twice", "name: bad\nplugins: [{name: gpu_fit}, {name: gpu_fit}]\n",
       "plugins[1].name: \"gpu_fit\" is listed twice"},
      {"bad candidates", "name: bad\noptions: {max_fleet_candidates: 0}\nplugins: [{name: gpu_fit}]\n",
       "options.max_fleet_candidates: \"0\" must be >= 1"},
      {"bad cpu allocation", "name: bad\noptions: {cpu_allocation: greedy}\nplugins: [{name: gpu_fit}]\n",
       "options.cpu_allocation: \"greedy\" must be gpu-share or sensitivity"},
  };
  for (const BadCase& c : cases) {
    auto p = ParseProfile(c.yaml, "bad.yaml");
    ASSERT_FALSE(p.ok()) << c.name;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.want), std::string::npos)
        << c.name << ": " << p.status().message();
  }
}

TEST(ProfileTest, PluginErrorsAtBuildNameTheField) {
  const BadCase cases[] = {
      {"weight on a filter", "name: bad\nplugins:\n  - name: gpu_fit\n    weight: 2\n",
       "bad.yaml:4:13: plugins[0].weight: \"gpu_fit\" is not a score plugin"},
      {"bad argument", "name: bad\nplugins:\n  - name: gpu_fit\n    args: {max_gang_nodes: many}\n",
       "bad.yaml:4:28: plugins[0].args.max_gang_nodes: \"many\" must be a whole number"},
      {"unknown argument", "name: bad\nplugins:\n  - name: cheapest_price\n    args: {foo: 1}\n",
       "plugins[0].args.foo: unknown argument; this plugin takes no arguments"},
  };
  testing::World w = testing::MakeWorld();
  for (const BadCase& c : cases) {
    auto p = ParseProfile(c.yaml, "bad.yaml");
    ASSERT_TRUE(p.ok()) << c.name << ": " << p.status().ToString();
    Status st = CheckProfile(*p);
    EXPECT_NE(st.message().find(c.want), std::string::npos) << c.name << ": " << st.message();
    auto s = Scheduler::Create(*p, w.fleet);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().message(), st.message());
  }
}

TEST(ProfileTest, EmbeddedProfilesParseAndBuild) {
  std::vector<std::string> names = EmbeddedProfileNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "default"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "fifo-strict"), names.end());
  for (const std::string& n : names) {
    auto p = EmbeddedProfile(n);
    ASSERT_TRUE(p.ok()) << n << ": " << p.status().ToString();
    EXPECT_EQ(p->name, n);
    EXPECT_TRUE(CheckProfile(*p).ok()) << n;
  }
  auto missing = EmbeddedProfile("defualt");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("did you mean default?"), std::string::npos);
}

TEST(RegistryTest, NamesAreUniqueAndFactoriesBuildWithDefaults) {
  std::set<std::string_view> seen;
  for (const PluginEntry& e : PluginRegistry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name;
    PluginArgs none;
    auto p = MakePlugin(e.name, none);
    ASSERT_TRUE(p.ok()) << e.name << ": " << p.status().ToString();
    EXPECT_EQ((*p)->name(), e.name);
  }
}

}  // namespace
}  // namespace meridian::sched
