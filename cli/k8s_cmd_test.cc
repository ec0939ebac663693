// meridian k8s export through RunMeridian: the manifests of every example job
// and of MIG, multi-GPU, gang and reserved-cluster cases against the golden
// files in backends/kubernetes/testdata/golden, and the errors (exit 2) for
// names Kubernetes refuses and jobs that can never be placed.
//
// After an intended change to the manifests, regenerate the golden files and
// review their diff:
//   MERIDIAN_UPDATE_GOLDEN=1 build/cli/k8s_cmd_test --gtest_filter='K8sExport.Golden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/test_cli.h"

namespace meridian::cli {
namespace {

// Decisions depend on the market at the decision time: one fixed time.
constexpr char kAt[] = "2026-03-02T09:00:00Z";
constexpr char kGolden[] = "backends/kubernetes/testdata/golden/";
constexpr char kJobs[] = "backends/kubernetes/testdata/jobs/";

using testutil::CliRun;
using testutil::Meridian;
using testutil::ReadFile;

struct GoldenCase {
  std::string golden;  // file name under testdata/golden
  std::string spec;
  std::string fleet;   // "" = the catalog's cloud offerings only
};

std::vector<GoldenCase> Cases() {
  std::vector<GoldenCase> cases;
  for (const auto& e : std::filesystem::directory_iterator("examples")) {
    if (e.path().extension() != ".yaml") continue;
    std::string fleet;
    // Its 32 vCPUs and 256 GiB come with no T4/L4/A10G offering: it runs
    // on the fleet's CPU nodes (cpu_fallback).
    if (e.path().stem() == "data-science") fleet = "examples/fleets/onprem-mixed.yaml";
    cases.push_back({e.path().stem().string() + ".yaml", e.path().string(), fleet});
  }
  cases.push_back({"mig-inference.yaml", std::string(kJobs) + "mig-inference.yaml",
                   "examples/fleets/onprem-mixed.yaml"});
  cases.push_back({"gang-training.yaml", std::string(kJobs) + "gang-training.yaml",
                   "examples/fleets/onprem-mixed.yaml"});
  cases.push_back({"reserved-multi-gpu.yaml", std::string(kJobs) + "reserved-multi-gpu.yaml",
                   "examples/fleets/reserved-plus-cloud.yaml"});
  std::sort(cases.begin(), cases.end(),
            [](const GoldenCase& a, const GoldenCase& b) { return a.golden < b.golden; });
  return cases;
}

TEST(K8sExport, GoldenFiles) {
  const bool update = std::getenv("MERIDIAN_UPDATE_GOLDEN") != nullptr;
  std::vector<GoldenCase> cases = Cases();
  ASSERT_GE(cases.size(), 11u);  // 8 examples + MIG, gang, reserved
  for (const GoldenCase& c : cases) {
    std::vector<std::string> args = {"k8s", "export", c.spec, "--at", kAt};
    if (!c.fleet.empty()) args.insert(args.end(), {"--fleet", c.fleet});
    CliRun r = Meridian(args);
    ASSERT_EQ(r.code, kExitOk) << c.spec << ": " << r.err;
    const std::string path = std::string(kGolden) + c.golden;
    if (update) {
      std::ofstream(path, std::ios::binary | std::ios::trunc) << r.out;
      continue;
    }
    EXPECT_EQ(r.out, ReadFile(path)) << c.spec << " differs from " << path
                                 << " (see this file's comment to regenerate)";
  }
}

// No golden file lies around that no case writes.
TEST(K8sExport, GoldenFilesAreExactlyTheCases) {
  std::set<std::string> want, have;
  for (const GoldenCase& c : Cases()) want.insert(c.golden);
  for (const auto& e : std::filesystem::directory_iterator(kGolden)) {
    have.insert(e.path().filename().string());
  }
  EXPECT_EQ(want, have);
}

TEST(K8sExport, CoversMigMultiGpuAndGangs) {
  EXPECT_NE(ReadFile(std::string(kGolden) + "mig-inference.yaml").find("deviceClassName: mig.nvidia.com"),
            std::string::npos);
  EXPECT_NE(ReadFile(std::string(kGolden) + "reserved-multi-gpu.yaml").find("count: 4"),
            std::string::npos);
  const std::string gang = ReadFile(std::string(kGolden) + "gang-training.yaml");
  EXPECT_NE(gang.find("completionMode: Indexed"), std::string::npos);
  EXPECT_NE(gang.find("clusterIP: None"), std::string::npos);
}

TEST(K8sExport, WritesOneFilePerJobIntoTheFolder) {
  const std::string dir = testing::TempDir() + "k8s-export-out";
  std::filesystem::remove_all(dir);
  CliRun r = Meridian({"k8s", "export", "examples/training.yaml", "--at", kAt, "-o", dir});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("Job/vit-large-imagenet"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir + "/vit-large-imagenet.yaml"), ReadFile(std::string(kGolden) + "training.yaml"));
}

struct BadCase {
  std::vector<std::string> args;
  std::string error;
};

TEST(K8sExport, BadInputNamesTheFieldAndExits2) {
  const std::string bad_name = std::string(kJobs) + "bad-name.yaml";
  const std::string impossible = std::string(kJobs) + "impossible.yaml";
  BadCase cases[] = {
      {{"k8s", "export", bad_name, "--at", kAt},
       bad_name + ":2:7: name: \"Llama_Eval\" is not a valid Kubernetes name: must consist of lower "
                  "case letters, digits or '-'"},
      {{"k8s", "export", impossible, "--at", kAt},
       impossible + ":6:12: resources: job \"too-big\" cannot be placed"},
      {{"k8s", "export", "examples/training.yaml", "--at", kAt, "--namespace", "Team_A"},
       "--namespace: \"Team_A\" is not a valid Kubernetes name"},
      {{"k8s", "export", "examples/training.yaml", "--at", "yesterday"}, "--at:"},
      {{"k8s", "export", "examples/training.yaml", "--job", "nope"},
       "--job: \"nope\" is not a job in examples/training.yaml"},
  };
  for (const BadCase& c : cases) {
    CliRun r = Meridian(c.args);
    EXPECT_EQ(r.code, kExitBadInput) << c.args[2] << ": " << r.err;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// No kubeconfig anywhere: apply writes the manifests, applies nothing, says so.
TEST(K8sApply, ExportOnlyWithoutAKubeconfig) {
  const std::string home = testing::TempDir() + "k8s-no-kube-home";
  const std::string dir = testing::TempDir() + "k8s-apply-out";
  std::filesystem::create_directories(home);
  std::filesystem::remove_all(dir);
  setenv("HOME", home.c_str(), 1);
  unsetenv("KUBECONFIG");
  CliRun r = Meridian({"k8s", "apply", "examples/training.yaml", "--at", kAt, "-o", dir});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("export-only mode: no kubeconfig"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kubectl apply -f " + dir), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir + "/vit-large-imagenet.yaml"), ReadFile(std::string(kGolden) + "training.yaml"));
  CliRun s = Meridian({"k8s", "status", "vit-large-imagenet"});
  EXPECT_EQ(s.code, kExitBadInput);
  EXPECT_NE(s.err.find("export-only mode"), std::string::npos) << s.err;
  CliRun missing = Meridian({"k8s", "apply", "examples/training.yaml", "--kubeconfig",
                             "/nonexistent/kubeconfig"});
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("--kubeconfig: \"/nonexistent/kubeconfig\": no such file"),
            std::string::npos)
      << missing.err;
}

}  // namespace
}  // namespace meridian::cli
