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

// A word is offered candidates within max(2, |word| / 3) edits, and the
// lengths' difference is the fewest edits there can be: a candidate exactly
// that many letters away is still offered, one letter further is not.
TEST(CloseMatches, ACandidateAsFarApartInLengthAsTheLimitIsStillOffered) {
  // "checkpoints" (11 letters, limit 11 / 3 = 3): "checkpo" (7 letters) is 4
  // deletions away, "checkpoi" (8 letters) 3.
  EXPECT_TRUE(CloseMatches("checkpoints", {"checkpo"}).empty());
  EXPECT_EQ(CloseMatches("checkpoints", {"checkpoi"}), (std::vector<std::string>{"checkpoi"}));
  // "gpu_modelsxyz" (13 letters, limit 4) is 4 deletions from "gpu_model".
  EXPECT_EQ(CloseMatches("gpu_modelsxyz", {"gpu_model"}), (std::vector<std::string>{"gpu_model"}));
  // Same lengths, the distance decides: "kitten" (limit 2) is 3 edits from
  // "sitting" and 2 from "sittin".
  EXPECT_TRUE(CloseMatches("kitten", {"sitting"}).empty());
  EXPECT_EQ(CloseMatches("kitten", {"sitting", "sittin"}), (std::vector<std::string>{"sittin"}));
  // 4,000 letters against short keys: limit 1,333, every key thousands of
  // letters away, so none is offered.
  EXPECT_TRUE(CloseMatches(std::string(4000, 'g'), {"gpus", "gpu_models", "region"}).empty());
}

}  // namespace
}  // namespace meridian::spec
