// sacct's field values: Slurm's duration formats, time limits, TRES lists,
// job steps and states. Expected values worked out by hand in the comments.
#include "sim/readers/sacct_fields.h"

#include <gtest/gtest.h>

namespace meridian::sim {
namespace {

TEST(SacctFields, Durations) {
  const struct {
    const char* text;
    std::optional<int64_t> seconds;
  } cases[] = {
      {"01:30:00", 5400},        // 1 h 30 min = 5400 s
      {"10:00", 600},            // MM:SS: 10 min = 600 s
      {"00:00:45", 45},
      {"1-02:00:00", 93600},     // 1 day + 2 h = 86400 + 7200
      {"5", 300},                // M: 5 min
      {"2-12", 216000},          // D-H: 2 days + 12 h = 172800 + 43200
      {"2-12:30", 217800},       // D-H:M: 216000 + 30 min
      {"", std::nullopt},
      {"1:2:3:4", std::nullopt},
      {"abc", std::nullopt},
      {"-5", std::nullopt},
      {"1-", std::nullopt},
      {"01:xx:00", std::nullopt},
      {"99999999999-00:00:00", std::nullopt},  // no overflow: not a duration
  };
  for (const auto& c : cases) EXPECT_EQ(ParseSlurmDuration(c.text), c.seconds) << c.text;
}

TEST(SacctFields, TimeLimits) {
  EXPECT_EQ(ParseTimeLimit("UNLIMITED"), -1);
  EXPECT_EQ(ParseTimeLimit("Partition_Limit"), -1);
  EXPECT_EQ(ParseTimeLimit(""), -1);
  EXPECT_EQ(ParseTimeLimit("02:00:00"), 7200);
  EXPECT_EQ(ParseTimeLimit("2-00:00:00"), 172800);  // 2 days
  EXPECT_EQ(ParseTimeLimit("soon"), std::nullopt);
}

TEST(SacctFields, TresLists) {
  std::string why;
  std::optional<Tres> t = ParseTres("billing=8,cpu=8,gres/gpu:a100=4,gres/gpu=4,mem=64G,node=1", &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->gpus, 4);
  EXPECT_EQ(t->gpu_types, std::vector<std::string>{"a100"});
  EXPECT_EQ(t->nodes, 1);
  EXPECT_EQ(t->vcpus, 8);
  EXPECT_DOUBLE_EQ(t->ram_gib, 64);
  // Two types and no total: 2 + 1 GPUs.
  t = ParseTres("gres/gpu:a100=2,gres/gpu:v100=1", &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->gpus, 3);
  EXPECT_EQ(t->gpu_types, (std::vector<std::string>{"a100", "v100"}));
  // mem without a suffix is MiB: 512 / 1024 = 0.5 GiB; 1T = 1024 GiB.
  EXPECT_DOUBLE_EQ(ParseTres("mem=512", &why)->ram_gib, 0.5);
  EXPECT_DOUBLE_EQ(ParseTres("mem=1T", &why)->ram_gib, 1024);
  // gres/gpumem and energy are not sizes of the job: ignored.
  t = ParseTres("gres/gpumem=40G,energy=12,cpu=1", &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->gpus, std::nullopt);
  EXPECT_EQ(ParseTres("", &why)->gpus, std::nullopt);  // CPU-only or unknown
  EXPECT_EQ(ParseTres("cpu=x", &why), std::nullopt);
  EXPECT_EQ(why, "item \"cpu=x\" is not key=count");
  EXPECT_EQ(ParseTres("gres/gpu", &why), std::nullopt);
}

TEST(SacctFields, StepsAndStates) {
  const std::pair<const char*, bool> steps[] = {
      {"123.batch", true}, {"123.0", true},    {"123.extern", true},
      {"4108_3.0", true},  {"4108_3", false},  {"4108_[1-3]", false},
  };
  for (const auto& [id, step] : steps) EXPECT_EQ(IsJobStep(id), step) << id;
  EXPECT_EQ(StateWord("CANCELLED by 1000"), "CANCELLED");
  EXPECT_EQ(StateWord("NODE_FAIL"), "NODE_FAIL");
  EXPECT_EQ(StateWord(""), "");
}

}  // namespace
}  // namespace meridian::sim
