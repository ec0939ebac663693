// The kubernetes backend over an injected runner that answers as an API
// server that fails would: which failures are transient (control/backend.h,
// IsTransient) and how an attempt is found by its Job name. No kubectl runs.
#include <gtest/gtest.h>

#include <fstream>

#include "backends/kubernetes/backend.h"

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

}  // namespace
}  // namespace meridian::backends::k8s
