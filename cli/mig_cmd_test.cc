// meridian mig through RunMeridian: counts, checks with their errors and exit
// codes, packing as table and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/test_cli.h"

namespace meridian::cli {
namespace {

using testutil::CliRun;
using testutil::Meridian;

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

// GPU 0 runs 1g at 1 (cost 900) and 5 (cost 100), GPU 1 a 1g at 0 (cost
// 50); a 3g and a 7g wait. GPU 0: drain the 1g at 5 (cheaper), placed again
// at 0, the 3g at 4. Then GPU 1 can no longer give its free half to the 3g:
// its 1g moves to GPU 0's free slices 2-3 and the 7g gets GPU 1.
TEST(MigCmd, Repartition) {
  CliRun r = Meridian({"mig", "repartition", "--gpu", "H100-80GB", "--gpus", "2", "--wait", "3g.40gb",
                       "--wait", "7g.80gb", "0:1g.10gb@1:900", "0:1g.10gb@5:100", "1:1g.10gb@0:50",
                       "-o", "json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["gpu"], 0);
  EXPECT_EQ(j[0]["after"], "1g.10gb@0 1g.10gb@1 3g.40gb@4");
  EXPECT_EQ(j[0]["drains"][0]["instance"], "0:1g.10gb@5:100");
  EXPECT_EQ(j[0]["cost"], 100);
  EXPECT_EQ(j[1]["gpu"], 1);
  EXPECT_EQ(j[1]["after"], "7g.80gb@0");
  EXPECT_EQ(j[1]["drains"][0]["to_gpu"], 0);
  EXPECT_EQ(j[1]["drains"][0]["to_start"], 2);
  CliRun none = Meridian({"mig", "repartition", "--gpu", "H100-80GB", "--wait", "3g.40gb", "0:1g.10gb@0"});
  EXPECT_EQ(none.code, kExitOk);
  EXPECT_NE(none.out.find("no change serves more waiting requests"), std::string::npos);
  CliRun bad = Meridian({"mig", "repartition", "--gpu", "H100-80GB", "--wait", "3g.40gb", "3:1g.10gb@0"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("instance 1: \"3:1g.10gb@0\": GPU 3 is not one of 0..0 (--gpus)"), std::string::npos)
      << bad.err;
  CliRun overlap = Meridian(
      {"mig", "repartition", "--gpu", "H100-80GB", "--wait", "3g.40gb", "0:1g.10gb@0", "0:1g.10gb@0"});
  EXPECT_EQ(overlap.code, kExitBadInput);
  EXPECT_NE(overlap.err.find("GPU 0: H100-80GB: 1g.10gb at 0 overlaps 1g.10gb at 0"), std::string::npos);
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

namespace meridian::cli {
namespace {

// The small openb files of sim/readers/testdata: 7 GPU pods (one 8-GPU, two
// shares: 460 and 220 milli) onto 2 x 2 P100 and 2 x 8 G2 GPUs, in creation
// order. Whole: every pod fits, 14 GPUs held of 20. Shared: the 220 share
// goes beside the 460 on one P100 GPU (540 left -> 320). MIG: the 460 is a
// 4g.20gb on a G2 (A100-40GB) GPU, the 220 a 2g.10gb (ceil(1.54) compute,
// ceil(1.76) memory) beside it at 4, so the 8-GPU pod takes the other G2 node.
TEST(MigCmd, OpenbTestdataThreeWays) {
  const std::string trace = std::string(MERIDIAN_SOURCE_DIR) + "/sim/readers/testdata/openb_pods.csv";
  CliRun r = Meridian({"mig", "openb", "--trace", trace, "-o", "json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 3u);
  for (const auto& row : j) {
    EXPECT_EQ(row["pods"], 7);
    EXPECT_EQ(row["placed"], 7);
    EXPECT_EQ(row["gpus"], 20);
    EXPECT_EQ(row["requested_milli"], 12680);  // 1 + 0.46 + 1 + 8 + 0.22 + 1 + 1 GPUs
  }
  EXPECT_EQ(j[0]["held_milli"], 14000);
  EXPECT_EQ(j[0]["idle_gpus"], 6);
  EXPECT_EQ(j[1]["held_milli"], 12680);
  EXPECT_EQ(j[1]["idle_gpus"], 7);
  EXPECT_EQ(j[2]["held_milli"], 1000 + 571 + 1000 + 8000 + 285 + 1000 + 1000);
  EXPECT_EQ(j[2]["idle_gpus"], 7);
  EXPECT_EQ(j[2]["profiles"], (nlohmann::json{{"2g.10gb", 1}, {"4g.20gb", 1}}));
  CliRun bad = Meridian({"mig", "openb", "--trace", trace, "--mig-gpu", "T4"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--mig-gpu: \"T4\" is not a MIG GPU model"), std::string::npos);
  CliRun missing = Meridian({"mig", "openb", "--trace", "/nonexistent/pods.csv"});
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("--trace: cannot read \"/nonexistent/pods.csv\""), std::string::npos);
}

}  // namespace
}  // namespace meridian::cli

namespace meridian::cli {
namespace {

// plan --fleet on examples/fleets/onprem-mixed.yaml (32 A100-80GB laid out
// 3g.40gb + 2g.20gb + 2g.20gb, 16 repartitionable H100-80GB in MIG mode) with
// one job sized to a 3g.40gb (30 GiB). Against 3g demand: each A100 has only
// its 3g instance for it, 4 memory / 4 compute slices stranded (x 32 = 128 /
// 128); each H100 fits two 3g (all 8 memory, 6 of 7 compute: 16 compute
// stranded). The job takes 4 memory / 3 compute slices: 380 / 333 free.
TEST(MigCmd, PlanFleetReportsFragmentation) {
  const std::string dir = std::string(MERIDIAN_SOURCE_DIR);
  const std::string job = (std::filesystem::temp_directory_path() / "meridian_mig_job.yaml").string();
  std::ofstream(job) << "name: slice\nkind: batch-inference\nresources:\n  gpus: 1\n  vram_gib: 30\n"
                        "  mig: true\nwork:\n  duration: 1h\n";
  CliRun r = Meridian({"plan", job, "--fleet", dir + "/examples/fleets/onprem-mixed.yaml", "-o", "json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  nlohmann::json m = nlohmann::json::parse(r.out)["mig"];
  EXPECT_EQ(m["gpus"], 48);
  EXPECT_EQ(m["free_memory_slices"], 380);
  EXPECT_EQ(m["free_compute_slices"], 333);
  EXPECT_EQ(m["unallocatable_memory_slices"], 0);
  EXPECT_EQ(m["unallocatable_memory_slices_for_jobs"], 128);
  EXPECT_EQ(m["unallocatable_compute_slices_for_jobs"], 144);
  EXPECT_EQ(m["jobs_take_mig"], true);
  CliRun text = Meridian({"plan", dir + "/examples/fine-tuning.yaml", "--fleet",
                          dir + "/examples/fleets/onprem-mixed.yaml"});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("MIG after these placements: 48 GPUs in MIG mode, 384 memory / 336 compute "
                          "slices free; unallocatable: 0 / 0 by any profile (no job here takes a MIG slice)"),
            std::string::npos)
      << text.out;
  std::filesystem::remove(job);
}

}  // namespace
}  // namespace meridian::cli
