// meridian mig through RunMeridian: counts, checks with their errors and exit
// codes, packing as table and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"

namespace meridian::cli {
namespace {

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun Meridian(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = RunMeridian(args, 1772442000, out, err);
  return {code, out.str(), err.str()};
}

TEST(MigCmd, LayoutsCounts) {
  CliRun all = Meridian({"mig", "layouts", "--gpu", "H200-141GB", "-o", "json"});
  ASSERT_EQ(all.code, kExitOk) << all.err;
  EXPECT_EQ(nlohmann::json::parse(all.out)["count"], 2319);
  CliRun maximal = Meridian({"mig", "layouts", "--gpu", "B200", "--maximal", "--no-media"});
  ASSERT_EQ(maximal.code, kExitOk) << maximal.err;
  EXPECT_NE(maximal.out.find("78 maximal layouts of B200 without +me profiles"), std::string::npos)
      << maximal.out;
  EXPECT_NE(maximal.out.find("4g.90gb@0 3g.90gb@4"), std::string::npos);
}

struct BadCase {
  std::vector<std::string> args;
  std::string error;
};

TEST(MigCmd, BadInputExitsTwoNamingTheValue) {
  const std::vector<BadCase> cases = {
      {{"mig", "check", "--gpu", "A100-80GB", "2g.20gb@6"},
       "A100-80GB: 2g.20gb at 6: not a valid start (valid: 0, 2, 4)"},
      {{"mig", "check", "--gpu", "A100-80GB", "2g.20gb"},
       "instance 1: \"2g.20gb\" must be PROFILE@START"},
      {{"mig", "layouts", "--gpu", "T4"}, "--gpu: \"T4\" has no MIG profiles"},
      {{"mig", "layouts", "--gpu", "Z9"}, "--gpu: \"Z9\" is not a catalog GPU model"},
      {{"mig", "pack", "--gpu", "H100-80GB", "5g.50gb"}, "request 1: \"5g.50gb\" is not a MIG profile of H100-80GB"},
      {{"mig", "pack", "--gpu", "H100-80GB", "milli:1200"}, "milli must be a whole number 1..1000"},
      {{"mig", "pack", "--gpu", "H100-80GB", "--gpus", "0", "1g.10gb"}, "--gpus: \"0\" must be 1..100000"},
  };
  for (const BadCase& c : cases) {
    CliRun r = Meridian(c.args);
    EXPECT_EQ(r.code, kExitBadInput) << c.error;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << r.err;
  }
}

TEST(MigCmd, CheckAndPack) {
  CliRun ok = Meridian({"mig", "check", "--gpu", "A100-80GB", "3g.40gb@4", "2g.20gb@0", "2g.20gb@2"});
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_NE(ok.out.find("valid: 2g.20gb@0 2g.20gb@2 3g.40gb@4 (7/7 compute, 8/8 memory slices)"),
            std::string::npos);
  // 4 x 2g + 2 x 3g + a 460-milli share (a 4g): 20 memory slices, 3 GPUs at least.
  CliRun p = Meridian({"mig", "pack", "--gpu", "A100-80GB", "--gpus", "4", "2g.20gbx4", "3g.40gbx2",
                       "milli:460", "-o", "json"});
  ASSERT_EQ(p.code, kExitOk) << p.err;
  nlohmann::json j = nlohmann::json::parse(p.out);
  EXPECT_EQ(j["placed"], 7);
  EXPECT_EQ(j["gpus_used"], 3);
  EXPECT_TRUE(j["unplaced"].empty());
  // Two 7g on one GPU: one is not placed.
  CliRun full = Meridian({"mig", "pack", "--gpu", "H100-80GB", "7g.80gbx2"});
  ASSERT_EQ(full.code, kExitOk);
  EXPECT_NE(full.out.find("1 of 2 requests placed on 1 of 1 H100-80GB GPUs; not placed: 7g.80gbx2"),
            std::string::npos)
      << full.out;
}

}  // namespace
}  // namespace meridian::cli
