// The kubernetes backend over an injected runner that answers as an API
// server (or one that fails) would: which failures are transient
// (control/backend.h, IsTransient), how an attempt is found by its Job name,
// and how often Poll asks for the Jobs' status. No kubectl runs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backends/kubernetes/backend.h"
#include "backends/kubernetes/test_request.h"

namespace meridian::backends::k8s {
namespace {

using test_support::Cat;
using test_support::Request;

// A kubeconfig file (the runner never reads it; the backend needs one to launch).
std::string Kubeconfig() {
  const std::string path = testing::TempDir() + "meridian-injected-kubeconfig";
  std::ofstream(path) << "apiVersion: v1\nkind: Config\n";
  return path;
}

// What the API server answered decides whether meridian tries again
// (control/backend.h, IsTransient: kInternal transient, the others
// permanent). kubectl's stderr as kubectl 1.25 prints it for each status.
TEST(KubernetesBackend, LaunchAndStopFailuresAreTransientOnlyWhenTheServerCouldNotAnswer) {
  struct Case {
    std::string err;
    int exit_code;
    StatusCode launch;
  } cases[] = {
      {"Error from server (ServiceUnavailable): the server is currently unable to handle the "
       "request\n", 1, StatusCode::kInternal},
      {"Error from server (InternalError): Internal error occurred: etcdserver: request timed out\n",
       1, StatusCode::kInternal},
      {"Error from server (TooManyRequests): the server has received too many requests and has "
       "asked us to try again later\n", 1, StatusCode::kInternal},
      {"The connection to the server 10.0.0.1:6443 was refused - did you specify the right host "
       "or port?\n", 1, StatusCode::kInternal},
      {"kubectl: killed after 60 s", -1, StatusCode::kInternal},  // Kubectl::Run at its timeout
      {"The Job \"j-00000042-2\" is invalid: spec.template.spec.containers[0].image: Required "
       "value\n", 1, StatusCode::kInvalidArgument},
      {"Error from server (Forbidden): jobs.batch is forbidden: User \"meridian\" cannot create "
       "resource \"jobs\"\n", 1, StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    KubernetesBackendOptions o;
    o.catalog = Cat();
    o.kubeconfig = Kubeconfig();
    o.gpu_model = "H100-80GB";
    o.image = "nvcr.io/nvidia/pytorch:24.05-py3";
    o.environment.run = [&c](const ProcessCall&) -> Result<ProcessOutput> {
      ProcessOutput out;
      out.exit_code = c.exit_code;
      out.timed_out = c.exit_code < 0;
      out.err = c.err;
      return out;
    };
    auto b = MakeKubernetesBackend(o);
    auto h = b->Launch(Request());
    ASSERT_FALSE(h.ok()) << c.err;
    EXPECT_EQ(h.status().code(), c.launch) << h.status().message();
    EXPECT_TRUE(h.status().message().starts_with("kubectl apply failed")) << h.status().message();
    Status stop = b->Stop("k8s:default/j-00000042-2", 30);
    EXPECT_EQ(stop.code(), c.launch) << stop.message();
  }
}

TEST(KubernetesBackend, FindLaunchedAsksForTheAttemptsJobByName) {
  std::vector<std::vector<std::string>> calls;
  bool exists = true;
  KubernetesBackendOptions o;
  o.catalog = Cat();
  o.kubeconfig = Kubeconfig();
  o.ns = "ml";
  o.environment.run = [&](const ProcessCall& c) -> Result<ProcessOutput> {
    calls.push_back(c.argv);
    ProcessOutput out;
    out.exit_code = exists ? 0 : 1;
    if (exists) out.out = "job.batch/j-00000042-2\n";
    else out.err = "Error from server (NotFound): jobs.batch \"j-00000042-2\" not found\n";
    return out;
  };
  auto b = MakeKubernetesBackend(o);
  auto found = b->FindLaunched("j-00000042", 2);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->value_or(""), "k8s:ml/j-00000042-2");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(std::vector<std::string>(calls[0].begin() + 3, calls[0].end()),
            (std::vector<std::string>{"get", "job", "j-00000042-2", "-n", "ml", "-o", "name"}));
  exists = false;
  found = b->FindLaunched("j-00000042", 2);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_FALSE(found->has_value());
}

nlohmann::json RecordedJob(const std::string& file, const std::string& name) {
  std::ifstream f("backends/kubernetes/testdata/status/" + file);
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  EXPECT_TRUE(j.is_object()) << file;
  j["metadata"]["name"] = name;
  return j;
}

// Three live attempts cost one `kubectl get jobs -l ...` per refresh
// interval of the held steady clock, not one `get job` each every cycle.
TEST(KubernetesBackend, PollListsEveryAttemptsJobInOneLabelledGetPerRefreshInterval) {
  std::vector<std::vector<std::string>> gets;
  int64_t steady = 1'000'000;
  // The cluster: attempt 1 of j-00000001 running, of j-00000002 complete; j-00000003's is gone.
  const nlohmann::json list = {
      {"apiVersion", "v1"},
      {"kind", "List"},
      {"metadata", {{"resourceVersion", ""}}},
      {"items", {RecordedJob("job-running.json", "j-00000001-1"),
                 RecordedJob("job-complete.json", "j-00000002-1")}}};
  KubernetesBackendOptions o;
  o.catalog = Cat();
  o.kubeconfig = Kubeconfig();
  o.gpu_model = "H100-80GB";
  o.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  o.environment.steady_ms = [&] { return steady; };
  o.environment.clock = [] { return UnixSeconds{1'800'000'000}; };
  o.environment.run = [&](const ProcessCall& c) -> Result<ProcessOutput> {
    ProcessOutput out;
    out.exit_code = 0;
    const std::vector<std::string> args(c.argv.begin() + 3, c.argv.end());  // after --kubeconfig K
    if (args.at(0) == "get") {
      gets.push_back(args);
      out.out = list.dump();
    }
    return out;
  };
  auto b = MakeKubernetesBackend(o);
  for (const char* id : {"j-00000001", "j-00000002", "j-00000003"}) {
    control::LaunchRequest r = Request();
    r.job_id = id;
    r.attempt = 1;
    ASSERT_TRUE(b->Launch(r).ok()) << id;
  }
  auto seen = b->Poll();
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0], (std::vector<std::string>{"get", "jobs", "-n", "default", "-l",
                                               "app.kubernetes.io/managed-by=meridian", "-o",
                                               "json"}));
  std::map<std::string, control::RunObservation> by_job;
  for (const auto& obs : seen) by_job[obs.job_id] = obs;
  ASSERT_EQ(by_job.size(), 3u);
  EXPECT_EQ(by_job["j-00000001"].phase, control::RunPhase::kRunning);
  EXPECT_EQ(by_job["j-00000002"].phase, control::RunPhase::kExited);
  EXPECT_EQ(by_job["j-00000002"].exit_code, 0);
  EXPECT_EQ(by_job["j-00000003"].phase, control::RunPhase::kLost);
  EXPECT_EQ(by_job["j-00000003"].message, "Job j-00000003-1 is no longer in namespace default");
  steady += 1999;  // status_refresh_ms is 2000
  EXPECT_TRUE(b->Poll().empty());
  EXPECT_EQ(gets.size(), 1u);
  steady += 1;
  EXPECT_TRUE(b->Poll().empty());  // j-00000001 still running: nothing new
  EXPECT_EQ(gets.size(), 2u);
}

}  // namespace
}  // namespace meridian::backends::k8s
