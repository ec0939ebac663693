#include "spec/suggest.h"

#include <gtest/gtest.h>

namespace meridian::spec {
namespace {

TEST(EditDistance, CountsEditsIgnoringCase) {
  struct Case {
    const char* a;
    const char* b;
    int want;
  } cases[] = {
      {"", "", 0},           {"abc", "", 3},          {"preemptable", "preemptible", 1},
      {"GPUS", "gpus", 0},   {"kitten", "sitting", 3}, {"vram", "vram_gib", 4},
  };
  for (const Case& c : cases) EXPECT_EQ(EditDistance(c.a, c.b), c.want) << c.a << " " << c.b;
}

TEST(CloseMatches, FindsTyposAndPrefixes) {
  std::vector<std::string> gpus = {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "L4"};
  EXPECT_EQ(CloseMatches("H100", gpus), (std::vector<std::string>{"H100-80GB"}));
  EXPECT_EQ(CloseMatches("a100", gpus), (std::vector<std::string>{"A100-40GB", "A100-80GB"}));
  EXPECT_EQ(CloseMatches("H100-80G", gpus), (std::vector<std::string>{"H100-80GB"}));
  EXPECT_TRUE(CloseMatches("TPU-v5", gpus).empty());
}

}  // namespace
}  // namespace meridian::spec
