// Kubectl over the backends' runner: what the call to kubectl carries, seen
// through an injected runner, and the environment a real program gets.
#include "backends/kubernetes/kubectl.h"

#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

namespace meridian::backends::k8s {
namespace {

TEST(KubectlTest, TheCallCarriesTheKubeconfigFlagTheInputAndTheTimeout) {
  std::vector<ProcessCall> calls;
  Kubectl k("kubectl", "/etc/meridian/kubeconfig", 45, [&](const ProcessCall& c) -> Result<ProcessOutput> {
    calls.push_back(c);
    ProcessOutput o;
    o.exit_code = 0;
    o.out = "job.batch/j-1 created\n";
    return o;
  });
  auto r = k.Run({"apply", "-f", "-"}, "kind: Job\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "job.batch/j-1 created\n");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].argv, (std::vector<std::string>{"kubectl", "--kubeconfig", "/etc/meridian/kubeconfig",
                                                     "apply", "-f", "-"}));
  EXPECT_EQ(calls[0].input, "kind: Job\n");
  EXPECT_EQ(calls[0].timeout_ms, 45000);
}

TEST(KubectlTest, AKubectlThatHangsIsKilledAndSaysSo) {
  Kubectl k("kubectl", "/k", 60, [](const ProcessCall&) -> Result<ProcessOutput> {
    ProcessOutput o;
    o.timed_out = true;
    o.signal = 9;
    return o;
  });
  auto r = k.Run({"get", "jobs"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->err, "kubectl: killed after 60 s");
}

TEST(KubectlTest, ItGetsTheListedVariablesOfTheDaemonAndNoOthers) {
  setenv("AWS_PROFILE", "dev", 1);  // an EKS kubeconfig's credential plugin reads it
  setenv("MERIDIAN_DAEMON_ONLY", "daemon-secret", 1);
  setenv("KUBECONFIG", "/somewhere/else", 1);  // the cluster comes from --kubeconfig only
  // /usr/bin/env stands in for kubectl: it prints the environment it got.
  Kubectl k("/usr/bin/env", "", 10);
  unsetenv("AWS_PROFILE");
  unsetenv("MERIDIAN_DAEMON_ONLY");
  unsetenv("KUBECONFIG");
  auto r = k.Run({});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_NE(r->out.find("AWS_PROFILE=dev\n"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("PATH="), std::string::npos) << r->out;
  EXPECT_EQ(r->out.find("MERIDIAN_DAEMON_ONLY"), std::string::npos) << r->out;
  EXPECT_EQ(r->out.find("KUBECONFIG"), std::string::npos) << r->out;
}

}  // namespace
}  // namespace meridian::backends::k8s
