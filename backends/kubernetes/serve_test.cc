// `meridian serve` on a fleet cluster with backend: kubernetes, the real
// daemon and Debian's real kubectl: configs it cannot run exit 2 with the
// field and the reason; without a kubeconfig it starts export-only, says so,
// and keeps jobs waiting; with a kubeconfig whose API server does not answer
// (connection refused: transient), a job's launch is tried again as
// backend_retry says, then fails with kubectl's own message; a kubectl that
// hangs reading the Jobs' status does not hold up the API's plans. No API server runs here
// (docs/kubernetes.md, "What was tested against a real API server").
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "control/test_daemon.h"

namespace meridian::backends::k8s {
namespace {

using control::testing::Auth;
using control::testing::DaemonProcess;
using control::testing::GetJob;
using control::testing::MakeTempDir;
using control::testing::RunCommand;
using control::testing::SubmitJob;
using nlohmann::json;

const char kCluster[] = "clusters:\n  - name: gke\n    region: gcp:us-central1\n"
                        "    gpu_hour_usd: 2\n    backend: kubernetes\n";
const char kNodes[] = "    nodes: [{count: 2, gpu: A100-80GB, gpus: 8, vcpus: 96, ram_gib: 1360}]\n";
const char kImage[] = "kubernetes: {image: nvcr.io/nvidia/pytorch:24.05-py3}\n";
// Two tries of a launch, 100 ms apart.
const char kTwoTries[] = "backend_retry: {launch_attempts: 2, initial_backoff: 100ms}\n";

class KubernetesServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("k8s-serve");
    // No kubeconfig but the test's own: an empty home, no $KUBECONFIG.
    setenv("HOME", dir_.c_str(), 1);
    unsetenv("KUBECONFIG");
  }
  void TearDown() override {
    daemon_.reset();
    control::testing::RemoveTempDir(dir_);
  }

  void WriteFleet(const std::string& nodes) { std::ofstream(dir_ + "/fleet.yaml") << kCluster << nodes; }
  std::string Config(const std::string& extra) const {
    return "fleet: " + dir_ + "/fleet.yaml\nreconcile_interval_ms: 50\n" + extra;
  }
  // serve's exit code and output for a config it must refuse.
  int Refused(const std::string& config, std::string* out) const {
    std::ofstream(dir_ + "/serve.yaml") << config;
    int rc = 0;
    *out = RunCommand({"/bin/sh", "-c",
                       std::string(MERIDIAN_BINARY) + " serve --listen 127.0.0.1:0 --db " + dir_ +
                           "/refused.db --config " + dir_ + "/serve.yaml 2>&1"},
                      &rc);
    return rc;
  }
  void Begin(const std::string& config) {
    daemon_ = std::make_unique<DaemonProcess>(dir_, config);
    daemon_->Start();
    token_ = daemon_->Token("research");
    http_ = daemon_->Client();
  }
  std::string Submit(bool mig = false) {
    json spec = {{"name", "train"},
                 {"kind", "training"},
                 {"resources", {{"gpus", 1}, {"gpu_models", {"A100-80GB"}}}},
                 {"command", {"python3", "train.py"}}};
    if (mig) {
      // examples' mig-inference job (backends/kubernetes/testdata/jobs).
      spec = {{"name", "embed-service"},
              {"kind", "batch-inference"},
              {"model", {{"params_b", 0.3}, {"precision", "fp16"}, {"layers", 24}, {"hidden", 1024},
                         {"heads", 16}, {"seq_len", 512}, {"batch", 32}, {"output_tokens", 1}}},
              {"work", {{"tokens", 2.0e7}}},
              {"resources", {{"gpus", 1}, {"gpu_models", {"A100-80GB"}}, {"mig", true}}},
              {"command", {"python3", "-m", "embed"}}};
    }
    return SubmitJob(*http_, token_, spec);
  }
  json Job(const std::string& id) { return GetJob(*http_, token_, id); }
  json Nodes() {
    auto r = http_->Get("/v1/nodes", Auth(token_));
    return r ? json::parse(r->body)["nodes"] : json();
  }

  std::string dir_, token_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(KubernetesServeTest, ConfigsItCannotRunExitTwoWithTheFieldAndReason) {
  struct Case {
    const char* what;
    std::string nodes;
    std::string extra;
    std::string want;
  } cases[] = {
      {"no image", kNodes, "", "serve.yaml: kubernetes.image: is required to run a kubernetes cluster"},
      {"two node groups",
       "    nodes:\n      - {count: 1, gpu: A100-80GB, gpus: 8}\n      - {count: 1, gpu: H100-80GB, gpus: 8}\n",
       kImage, "fleet.yaml:7:7: clusters[0].nodes: a kubernetes cluster under meridian serve has one node group; this one has 2"},
      {"a kubeconfig that is not there", kNodes,
       "kubernetes: {image: x, kubeconfig: /nonexistent/kubeconfig}\n",
       "serve.yaml: kubernetes.kubeconfig: "},
      {"a misspelt key", kNodes, "kubernetes: {imag: x}\n", "kubernetes.imag: unknown key"},
  };
  for (const Case& c : cases) {
    WriteFleet(c.nodes);
    std::string out;
    EXPECT_EQ(Refused(Config(c.extra), &out), 2) << c.what << ": " << out;
    EXPECT_NE(out.find(c.want), std::string::npos) << c.what << ": " << out;
  }
}

TEST_F(KubernetesServeTest, WithoutAKubeconfigItStartsExportOnlyAndJobsWait) {
  WriteFleet(kNodes);
  Begin(Config(kImage));
  EXPECT_NE(daemon_->Log().find("meridian serve: export-only: no kubeconfig"), std::string::npos)
      << daemon_->Log();
  json nodes;
  for (int i = 0; i < 100 && nodes.size() < 2; ++i) {
    nodes = Nodes();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(nodes.size(), 2u) << nodes.dump();
  for (const json& n : nodes) {
    EXPECT_EQ(n["state"], "down") << n.dump();
    EXPECT_EQ(n["gpu_model"], "A100-80GB") << n.dump();
  }
  const std::string id = Submit();
  json j;
  for (int i = 0; i < 100; ++i) {
    j = Job(id);
    if (j["reason"] == "no schedulable nodes") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(j["state"], "queued") << j.dump();
  EXPECT_EQ(j["reason"], "no schedulable nodes") << j.dump();
}

// A kubeconfig whose API server is a closed port on this machine.
std::string DeadKubeconfig(const std::string& dir) {
  const std::string kubeconfig = dir + "/dead-kubeconfig";
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n"
                               "  cluster: {server: \"https://127.0.0.1:9\"}\nusers:\n- name: u\n"
                               "  user: {token: not-a-token}\ncontexts:\n- name: dead\n"
                               "  context: {cluster: dead, user: u}\ncurrent-context: dead\n";
  return kubeconfig;
}

TEST_F(KubernetesServeTest, ALaunchThatKubectlCannotApplyFailsWithKubectlsMessage) {
  const std::string kubeconfig = DeadKubeconfig(dir_);
  WriteFleet(kNodes);
  Begin(Config("kubernetes: {image: nvcr.io/nvidia/pytorch:24.05-py3, namespace: ml, kubeconfig: " +
               kubeconfig + "}\n" + kTwoTries));
  EXPECT_NE(daemon_->Log().find("kubernetes: applying Jobs in namespace ml with --kubeconfig " +
                                kubeconfig),
            std::string::npos)
      << daemon_->Log();
  const std::string id = Submit();
  json j;
  for (int i = 0; i < 600; ++i) {  // kubectl retries the dead server for a few seconds
    j = Job(id);
    if (j["state"] == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(j["state"], "failed") << j.dump() << daemon_->Log();
  const std::string reason = j["reason"];
  EXPECT_TRUE(reason.starts_with("launch failed after 2 tries: kubectl apply failed (exit 1): "))
      << reason;
  EXPECT_NE(reason.find("127.0.0.1:9"), std::string::npos) << reason;  // kubectl names the server
}

// A MIG node group: the daemon's nodes carry the layout, a MIG job is placed
// on one instance and launched with a claim for that profile.
TEST_F(KubernetesServeTest, AMigJobIsPlacedOnAnInstanceAndLaunched) {
  WriteFleet("    nodes: [{count: 1, gpu: A100-80GB, gpus: 8, vcpus: 96, ram_gib: 1360, "
             "mig: [3g.40gb, 3g.40gb]}]\n");
  Begin(Config("kubernetes: {image: nvcr.io/nvidia/pytorch:24.05-py3, kubeconfig: " +
               DeadKubeconfig(dir_) + "}\n" + kTwoTries));
  const std::string id = Submit(true);
  json j;
  for (int i = 0; i < 600; ++i) {
    j = Job(id);
    if (j["state"] == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(j["state"], "failed") << j.dump() << daemon_->Log();
  EXPECT_EQ(j["placement"]["node"], "k8s-0") << j.dump();
  EXPECT_EQ(j["placement"]["mig"], "3g.40gb") << j.dump();
  EXPECT_TRUE(j["reason"].get<std::string>().starts_with(
      "launch failed after 2 tries: kubectl apply failed"))
      << j.dump();
}

// A kubectl that applies at once but hangs when asked for the Jobs' status
// (a stand-in: an API server that stops answering mid-way). While the
// daemon's cycle waits on it, POST /v1/plan is still answered: the cycle asks
// for status before it locks the scheduler's state.
TEST_F(KubernetesServeTest, AKubectlThatHangsReadingStatusDoesNotHoldUpPlans) {
  const std::string kubectl = dir_ + "/kubectl";
  std::ofstream(kubectl) << "#!/bin/sh\nd=$(dirname \"$0\")\n"
                            "for a in \"$@\"; do case \"$a\" in\n"
                            "  apply) cat > /dev/null; exit 0;;\n"
                            "  jobs) touch \"$d/hanging\"; i=0\n"
                            "    while [ ! -e \"$d/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
                            "    echo '{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": []}'; exit 0;;\n"
                            "esac; done\nexit 1\n";
  std::filesystem::permissions(kubectl, std::filesystem::perms::owner_all);
  WriteFleet(kNodes);
  Begin(Config("kubernetes: {image: nvcr.io/nvidia/pytorch:24.05-py3, kubectl: " + kubectl +
               ", kubeconfig: " + DeadKubeconfig(dir_) + "}\n"));
  const std::string id = Submit();
  bool hanging = false;
  for (int i = 0; i < 300 && !hanging; ++i) {
    hanging = std::filesystem::exists(dir_ + "/hanging");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(hanging) << Job(id).dump() << daemon_->Log();
  json spec = {{"name", "what-if"},
               {"kind", "training"},
               {"resources", {{"gpus", 1}, {"gpu_models", {"A100-80GB"}}}},
               {"command", {"python3", "train.py"}}};
  auto plan = http_->Post("/v1/plan", Auth(token_), spec.dump(), "application/json");
  // Answered while kubectl still hangs: the test has not released it yet.
  const bool released_before = std::filesystem::exists(dir_ + "/release");
  std::ofstream(dir_ + "/release") << "go\n";
  ASSERT_TRUE(plan) << "no answer to /v1/plan while kubectl hung";
  EXPECT_EQ(plan->status, 200) << plan->body;
  EXPECT_FALSE(released_before);
}

}  // namespace
}  // namespace meridian::backends::k8s
