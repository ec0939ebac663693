// The kubernetes backend with the real kubectl: without a kubeconfig it is
// export-only and says so; with one whose API server does not answer, Launch
// fails with kubectl's own error. No Kubernetes API server runs in these
// tests (docs/kubernetes.md says what was and was not run against one).
#include <nlohmann/json.hpp>

#include "backends/kubernetes/backend.h"
#include "backends/kubernetes/test_request.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "backends/kubernetes/kubectl.h"

namespace meridian::backends::k8s {
namespace {

using test_support::Cat;
using test_support::Request;

// A kubeconfig whose server is a closed port on this machine.
std::string DeadKubeconfig() {
  const std::string path = testing::TempDir() + "meridian-dead-kubeconfig";
  std::ofstream(path) << R"(apiVersion: v1
kind: Config
clusters:
- name: dead
  cluster: {server: "https://127.0.0.1:9"}
users:
- name: u
  user: {token: not-a-token}
contexts:
- name: dead
  context: {cluster: dead, user: u, namespace: research}
current-context: dead
)";
  return path;
}

TEST(KubernetesBackend, ExportOnlyWithoutAKubeconfig) {
  KubernetesBackendOptions o;
  o.catalog = Cat();
  o.gpu_model = "H100-80GB";
  o.gpus = 8;
  o.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  auto b = MakeKubernetesBackend(o);
  auto h = b->Launch(Request());
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("export-only (no kubeconfig)"), std::string::npos);
  auto nodes = b->Nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_FALSE(nodes[0].schedulable);
  EXPECT_EQ(nodes[0].reason, "export-only: no kubeconfig");
}

TEST(KubernetesBackend, KubectlsOwnErrorWhenTheServerDoesNotAnswer) {
  KubernetesBackendOptions o;
  o.catalog = Cat();
  o.kubeconfig = DeadKubeconfig();
  o.gpu_model = "H100-80GB";
  o.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  o.ns = "research";
  auto b = MakeKubernetesBackend(o);
  auto h = b->Launch(Request());
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("kubectl apply failed"), std::string::npos)
      << h.status().message();
  EXPECT_NE(h.status().message().find("127.0.0.1:9"), std::string::npos) << h.status().message();
  // A handle of an earlier daemon: the Job cannot be read, so it is not yet known lost.
  auto o2 = b->Adopt("j-00000042", 1, "k8s:research/j-00000042-1");
  ASSERT_TRUE(o2.ok());
  EXPECT_EQ(o2->phase, control::RunPhase::kStarting);
  EXPECT_FALSE(b->Adopt("j-1", 1, "pid:1:2").ok());
}

// A cluster as kubectl answers it, for what no API server runs here: every
// call is recorded (without kubectl --kubeconfig K); `get job` answers with
// the recorded Job of testdata/status/job-complete.json, the rest succeed.
struct RecordedCluster {
  std::vector<std::vector<std::string>> calls;
  std::vector<std::string> inputs;
  ProcessRunner Runner() {
    return [this](const ProcessCall& c) -> Result<ProcessOutput> {
      calls.emplace_back(c.argv.begin() + 3, c.argv.end());
      inputs.push_back(c.input);
      ProcessOutput o;
      o.exit_code = 0;
      if (c.argv.size() > 4 && c.argv[3] == "get" && (c.argv[4] == "job" || c.argv[4] == "jobs")) {
        // One Job by name, or the labelled list Poll reads: attempt 2 of
        // j-00000042 (Request()) complete.
        std::ifstream f("backends/kubernetes/testdata/status/job-complete.json");
        std::string job(std::istreambuf_iterator<char>(f), {});
        if (c.argv[4] == "jobs") {
          nlohmann::json j = nlohmann::json::parse(job);
          j["metadata"]["name"] = "j-00000042-2";
          job = nlohmann::json{{"kind", "List"}, {"items", {j}}}.dump();
        }
        o.out = job;
      }
      return o;
    };
  }
};

KubernetesBackendOptions RecordedOptions(RecordedCluster* cluster) {
  KubernetesBackendOptions o;
  o.catalog = Cat();
  o.kubeconfig = DeadKubeconfig();
  o.gpu_model = "H100-80GB";
  o.gpus = 8;
  o.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  o.ns = "research";
  o.environment.run = cluster->Runner();
  return o;
}

TEST(KubernetesBackend, AJobDeletesItselfAWeekAfterItEndsAndItsEndIsReportedOnce) {
  RecordedCluster cluster;
  auto b = MakeKubernetesBackend(RecordedOptions(&cluster));
  auto h = b->Launch(Request());
  ASSERT_TRUE(h.ok()) << h.status().message();
  // The Job deletes itself a week after it ends: 7 * 86400 = 604800 s.
  ASSERT_EQ(cluster.inputs.size(), 1u);
  EXPECT_NE(cluster.inputs[0].find("ttlSecondsAfterFinished: 604800"), std::string::npos)
      << cluster.inputs[0];
  auto first = b->Poll();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].phase, control::RunPhase::kExited);
  const size_t calls = cluster.calls.size();
  // Ended and reported: nothing more is asked of the cluster about it.
  EXPECT_TRUE(b->Poll().empty());
  EXPECT_EQ(cluster.calls.size(), calls);
}

TEST(KubernetesBackend, RetiringAJobDeletesItsAttemptsJobsClaimTemplatesAndCheckpointClaim) {
  RecordedCluster cluster;
  auto b = MakeKubernetesBackend(RecordedOptions(&cluster));
  ASSERT_TRUE(b->Launch(Request()).ok());
  // Attempt 2 of j-00000042 mounts the job's claim, j-00000042-checkpoint,
  // and claims its GPUs through the template j-00000042-2-gpu.
  EXPECT_NE(cluster.inputs[0].find("claimName: j-00000042-checkpoint"), std::string::npos);
  EXPECT_NE(cluster.inputs[0].find("name: j-00000042-2-gpu"), std::string::npos);
  cluster.calls.clear();
  ASSERT_TRUE(b->Retire("j-00000042", 2).ok());
  using Argv = std::vector<std::string>;
  EXPECT_EQ(cluster.calls,
            (std::vector<Argv>{
                {"delete", "job", "-n", "research", "--ignore-not-found", "--wait=false",
                 "j-00000042-1", "j-00000042-2"},
                {"delete", "resourceclaimtemplates.resource.k8s.io", "-n", "research",
                 "--ignore-not-found", "--wait=false", "j-00000042-1-gpu", "j-00000042-2-gpu"},
                {"delete", "pvc", "j-00000042-checkpoint", "-n", "research", "--ignore-not-found",
                 "--wait=false"}}));
}

TEST(Kubectl, StandardInputReachesTheProgramAndArgvIsNotAShell) {
  // cat stands in for kubectl here only to show the plumbing: stdin in, stdout out.
  Kubectl cat("cat", "", 10);
  auto r = cat.Run({"-"}, std::string(200000, 'x') + "$(echo no shell)");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out.size(), 200000u + 16u);
  EXPECT_TRUE(r->out.ends_with("$(echo no shell)"));
  EXPECT_FALSE(Kubectl("/nonexistent/kubectl", "", 10).Run({"version"}).ok());
}

TEST(Kubectl, FindKubeconfig) {
  EXPECT_EQ(FindKubeconfig("/nonexistent/config").status().code(), StatusCode::kNotFound);
  const std::string dead = DeadKubeconfig();
  EXPECT_EQ(*FindKubeconfig(dead), dead);
  setenv("KUBECONFIG", ("/nonexistent:" + dead).c_str(), 1);
  EXPECT_EQ(*FindKubeconfig(""), dead);
  const std::string home = testing::TempDir() + "meridian-empty-home";
  std::filesystem::create_directories(home);
  setenv("KUBECONFIG", "/nonexistent", 1);
  setenv("HOME", home.c_str(), 1);
  EXPECT_EQ(*FindKubeconfig(""), "");
  unsetenv("KUBECONFIG");
}

}  // namespace
}  // namespace meridian::backends::k8s
