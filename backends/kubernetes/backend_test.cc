// The kubernetes backend with the real kubectl: without a kubeconfig it is
// export-only and says so; with one whose API server does not answer, Launch
// fails with kubectl's own error. No Kubernetes API server runs in these
// tests (docs/kubernetes.md says what was and was not run against one).
#include "backends/kubernetes/backend.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "backends/kubernetes/kubectl.h"

namespace meridian::backends::k8s {
namespace {

std::shared_ptr<const catalog::Catalog> Cat() {
  static auto c = catalog::Catalog::LoadEmbedded().value();
  return c;
}

control::LaunchRequest Request() {
  control::LaunchRequest r;
  r.job_id = "j-00000042";
  r.attempt = 2;
  r.tenant = "research";
  r.argv = {"python3", "train.py"};
  r.gpus = {0, 1};
  r.node = "k8s-0";
  return r;
}

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
