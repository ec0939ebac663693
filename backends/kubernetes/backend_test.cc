// The kubernetes backend with the real kubectl: without a kubeconfig it is
// export-only and says so; with one whose API server does not answer, Launch
// fails with kubectl's own error. No Kubernetes API server runs in these
// tests (docs/kubernetes.md says what was and was not run against one).
#include <nlohmann/json.hpp>

#include "backends/kubernetes/backend.h"
#include "backends/kubernetes/pod_logs.h"
#include "backends/kubernetes/test_request.h"

#include <gtest/gtest.h>

#include <algorithm>
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
// the recorded Job of testdata/status/job-complete.json (with the
// meridian.dev/log-dir annotation `log_dir_annotation` when set), `logs`
// with `pod_log`, as much of it as --limit-bytes allows (the API server's
// limitBytes); the rest succeed.
struct RecordedCluster {
  std::vector<std::vector<std::string>> calls;
  std::vector<std::string> inputs;
  std::string pod_log;
  std::string log_dir_annotation;
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
        nlohmann::json j = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(f), {}));
        if (!log_dir_annotation.empty()) {
          j["metadata"]["annotations"]["meridian.dev/log-dir"] = log_dir_annotation;
        }
        if (c.argv[4] == "jobs") {
          j["metadata"]["name"] = "j-00000042-2";
          j = nlohmann::json{{"kind", "List"}, {"items", {j}}};
        }
        o.out = j.dump();
      }
      if (c.argv.size() > 3 && c.argv[3] == "logs") {
        o.out = pod_log;
        for (const std::string& a : c.argv) {
          if (a.starts_with("--limit-bytes=")) o.out.resize(std::min(o.out.size(), std::stoul(a.substr(14))));
        }
      }
      return o;
    };
  }
  size_t Count(const std::string& verb) const {
    return std::count_if(calls.begin(), calls.end(),
                         [&](const std::vector<std::string>& c) { return c.at(0) == verb; });
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
                 "--wait=false"},
                // A service's replica runs, by their label (none for a batch job).
                {"delete", "jobs,pvc,resourceclaimtemplates.resource.k8s.io", "-n", "research",
                 "-l", "meridian.dev/service=j-00000042", "--ignore-not-found", "--wait=false"}}));
}

// Issue 24: a service's replicas run as j-00000042.r<i> (control/backend.h,
// ReplicaRunId); each attempt's objects carry the service's label, so
// retiring the service deletes them whatever the replicas' restarts.
TEST(KubernetesBackend, RetiringAServiceDeletesItsReplicasAttemptsByTheServiceLabel) {
  RecordedCluster cluster;
  auto b = MakeKubernetesBackend(RecordedOptions(&cluster));
  control::LaunchRequest r = Request();
  r.job_id = "j-00000042.r1";  // replica 1, its third process
  r.attempt = 3;
  auto h = b->Launch(r);
  ASSERT_TRUE(h.ok()) << h.status().message();
  // '.' is not allowed in a DNS-1123 label: the run is named j-00000042-r1.
  EXPECT_EQ(*h, "k8s:research/j-00000042-r1-3");
  const std::string& yaml = cluster.inputs.at(0);
  EXPECT_NE(yaml.find("name: j-00000042-r1-3\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("name: j-00000042-r1-checkpoint"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("name: j-00000042-r1-3-gpu"), std::string::npos) << yaml;
  // The label on the checkpoint claim, the claim template (and the claims
  // made from it) and the Job: 4 times. The Job's pods need none: deleting
  // the Job deletes them.
  size_t labelled = 0;
  for (size_t at = yaml.find("meridian.dev/service: j-00000042\n"); at != std::string::npos;
       at = yaml.find("meridian.dev/service: j-00000042\n", at + 1)) {
    ++labelled;
  }
  EXPECT_EQ(labelled, 4u) << yaml;
  // Found by its name after a restart, as every attempt.
  cluster.calls.clear();
  ASSERT_TRUE(b->FindLaunched("j-00000042.r1", 3).ok());
  ASSERT_EQ(cluster.calls.size(), 1u);
  EXPECT_EQ(cluster.calls[0][2], "j-00000042-r1-3");

  cluster.calls.clear();
  ASSERT_TRUE(b->Retire("j-00000042", 1).ok());
  ASSERT_EQ(cluster.calls.size(), 4u);
  EXPECT_EQ(cluster.calls[3],
            (std::vector<std::string>{"delete", "jobs,pvc,resourceclaimtemplates.resource.k8s.io",
                                      "-n", "research", "-l", "meridian.dev/service=j-00000042",
                                      "--ignore-not-found", "--wait=false"}));
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string FreshLogDir(const std::string& name) {
  const std::string dir = testing::TempDir() + "meridian-k8s-logs-" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Issue 24: node.max_log_bytes caps a Kubernetes job's log as it caps a
// local one: stdout.log and stderr.log together, earlier attempts counted.
TEST(KubernetesBackend, APodLogStopsAtTheCapCountingEarlierAttemptsAndSaysWhere) {
  RecordedCluster cluster;
  cluster.pod_log = std::string(5000, 'x');
  KubernetesBackendOptions o = RecordedOptions(&cluster);
  o.max_log_bytes = 4096;
  auto b = MakeKubernetesBackend(o);
  const std::string dir = FreshLogDir("cap");
  std::ofstream(dir + "/stdout.log") << std::string(1000, 'a');  // attempt 1's
  std::ofstream(dir + "/stderr.log") << std::string(96, 'b');
  control::LaunchRequest r = Request();
  r.log_dir = dir;
  ASSERT_TRUE(b->Launch(r).ok());
  // The Job keeps the directory for a daemon that adopts it.
  EXPECT_NE(cluster.inputs[0].find("meridian.dev/log-dir: " + dir), std::string::npos);
  auto ended = b->Poll();  // the Job is complete: its log is copied
  ASSERT_EQ(ended.size(), 1u);
  // Room: 4096 - (1000 + 96) = 3000 bytes; 3001 asked for, to see the log goes on.
  ASSERT_EQ(cluster.Count("logs"), 1u);
  const auto& logs = *std::find_if(cluster.calls.begin(), cluster.calls.end(),
                                   [](const auto& c) { return c[0] == "logs"; });
  EXPECT_EQ(logs, (std::vector<std::string>{"logs", "job/j-00000042-2", "-n", "research",
                                            "--limit-bytes=3001"}));
  EXPECT_EQ(ReadFile(dir + "/stdout.log"),
            std::string(1000, 'a') + std::string(3000, 'x') +
                "\n[meridian: the job's logs reached their cap of 4096 bytes; what the job "
                "writes to this stream from here on is dropped]\n");
  EXPECT_EQ(ReadFile(dir + "/stderr.log"), std::string(96, 'b'));
  // Ended and copied: not copied again.
  EXPECT_TRUE(b->Poll().empty());
  EXPECT_EQ(cluster.Count("logs"), 1u);
}

TEST(KubernetesBackend, APodLogUnderTheCapOrWithNoCapIsCopiedWhole) {
  for (int64_t cap : {int64_t{0}, int64_t{4096}}) {
    RecordedCluster cluster;
    cluster.pod_log = "epoch 1 loss 0.52\nepoch 2 loss 0.31\n";  // 36 bytes
    KubernetesBackendOptions o = RecordedOptions(&cluster);
    o.max_log_bytes = cap;
    auto b = MakeKubernetesBackend(o);
    const std::string dir = FreshLogDir("whole-" + std::to_string(cap));
    control::LaunchRequest r = Request();
    r.log_dir = dir;
    ASSERT_TRUE(b->Launch(r).ok());
    ASSERT_EQ(b->Poll().size(), 1u);
    EXPECT_EQ(ReadFile(dir + "/stdout.log"), cluster.pod_log) << cap;
    // No cap: nothing limits what the server sends. 4096: 4096 + 1 asked for.
    const auto& logs = *std::find_if(cluster.calls.begin(), cluster.calls.end(),
                                     [](const auto& c) { return c[0] == "logs"; });
    EXPECT_EQ(logs.back(), cap == 0 ? "research" : "--limit-bytes=4097") << cap;
  }
}

// Suspending a Job deletes its pods and their logs: Stop copies the log
// first, and the attempt's end does not copy it again.
TEST(KubernetesBackend, StopCopiesThePodLogBeforeSuspendingTheJobAndOnlyOnce) {
  RecordedCluster cluster;
  cluster.pod_log = "step 100\n";
  auto b = MakeKubernetesBackend(RecordedOptions(&cluster));
  const std::string dir = FreshLogDir("stop");
  control::LaunchRequest r = Request();
  r.log_dir = dir;
  auto h = b->Launch(r);
  ASSERT_TRUE(h.ok());
  cluster.calls.clear();
  ASSERT_TRUE(b->Stop(*h, 30).ok());
  ASSERT_EQ(cluster.calls.size(), 2u);
  EXPECT_EQ(cluster.calls[0][0], "logs");
  EXPECT_EQ(cluster.calls[1][0], "patch");
  ASSERT_EQ(b->Poll().size(), 1u);
  EXPECT_EQ(cluster.Count("logs"), 1u);
  EXPECT_EQ(ReadFile(dir + "/stdout.log"), "step 100\n");
}

// A daemon that restarts adopts the attempt from its stored handle, with no
// log directory: the Job's annotation names it (the daemon's layout,
// <state_dir>/jobs/<id>/logs).
TEST(KubernetesBackend, AnAdoptedAttemptsLogGoesToTheDirectoryItsJobNames) {
  RecordedCluster cluster;
  cluster.pod_log = "done\n";
  const std::string dir = FreshLogDir("adopt/jobs/j-00000042/logs");
  cluster.log_dir_annotation = dir;
  auto b = MakeKubernetesBackend(RecordedOptions(&cluster));
  auto o = b->Adopt("j-00000042", 2, "k8s:research/j-00000042-2");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->phase, control::RunPhase::kExited);
  EXPECT_EQ(ReadFile(dir + "/stdout.log"), "done\n");
}

// An annotation naming any other place (another job's logs, a path out of
// the layout) is not written to: whoever can edit a Job in the cluster
// cannot choose a file for the daemon to append to.
TEST(KubernetesBackend, AnAdoptedAttemptsAnnotationOutsideItsJobsLogDirIsNotWritten) {
  for (const std::string name : {"other/jobs/j-00000043/logs", "plain", "up/jobs/j-00000042/../j-00000042/logs"}) {
    RecordedCluster cluster;
    cluster.pod_log = "done\n";
    const std::string dir = FreshLogDir("adopt-bad/" + name);
    cluster.log_dir_annotation = dir;
    auto b = MakeKubernetesBackend(RecordedOptions(&cluster));
    auto o = b->Adopt("j-00000042", 2, "k8s:research/j-00000042-2");
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(o->phase, control::RunPhase::kExited) << name;
    EXPECT_FALSE(std::filesystem::exists(dir + "/stdout.log")) << name;
    EXPECT_EQ(cluster.Count("logs"), 0u) << name;
  }
}

TEST(KubernetesBackend, ARunsLogDirIsItsJobsOrItsServicesInTheDaemonsLayout) {
  EXPECT_TRUE(IsRunsLogDir("/var/lib/meridian/jobs/j-00000042/logs", "j-00000042"));
  // a replica's run writes to its service's logs
  EXPECT_TRUE(IsRunsLogDir("/var/lib/meridian/jobs/j-00000042/logs", "j-00000042.r1"));
  EXPECT_FALSE(IsRunsLogDir("/var/lib/meridian/jobs/j-00000043/logs", "j-00000042"));
  EXPECT_FALSE(IsRunsLogDir("/jobs/j-00000042/logs/../../etc", "j-00000042"));
  EXPECT_FALSE(IsRunsLogDir("/a/../jobs/j-00000042/logs", "j-00000042"));
  EXPECT_FALSE(IsRunsLogDir("/jobs/j-00000042/logs", "j-00000042"));  // nothing above the layout
  EXPECT_FALSE(IsRunsLogDir("", "j-00000042"));
  EXPECT_FALSE(IsRunsLogDir("/s/jobs/../logs", ".."));
}

// Pods already gone (a Job past its TTL): the log says so rather than
// staying silently empty.
TEST(KubernetesBackend, ALogThatCannotBeReadIsSaidInStderr) {
  RecordedCluster cluster;
  KubernetesBackendOptions o = RecordedOptions(&cluster);
  ProcessRunner recorded = cluster.Runner();
  o.environment.run = [recorded](const ProcessCall& c) -> Result<ProcessOutput> {
    auto out = recorded(c);
    if (c.argv.size() > 3 && c.argv[3] == "logs") {
      out->exit_code = 1;
      out->err = "error: timed out waiting for the condition\n";
    }
    return out;
  };
  auto b = MakeKubernetesBackend(o);
  const std::string dir = FreshLogDir("unreadable");
  control::LaunchRequest r = Request();
  r.log_dir = dir;
  ASSERT_TRUE(b->Launch(r).ok());
  ASSERT_EQ(b->Poll().size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/stdout.log"));
  EXPECT_EQ(ReadFile(dir + "/stderr.log"),
            "[meridian: attempt 2's output could not be copied from Kubernetes: kubectl logs "
            "job/j-00000042-2 failed (exit 1): error: timed out waiting for the condition]\n");
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
