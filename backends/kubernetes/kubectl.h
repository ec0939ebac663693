// Kubectl: runs the kubectl program (Debian's kubernetes-client, or any on
// PATH) from an argv, never through a shell, with the manifests on standard
// input, and returns its exit status and output. This is the only code of
// the kubernetes backend that talks to a cluster.
//
// It runs through the backends' one runner (backends/common/subprocess.h):
// only stdio descriptors, its own process group, killed at the timeout, and
// an environment of the names KubectlEnvironmentNames lists, not the
// daemon's whole environment.
//
// Which cluster: the kubeconfig FindKubeconfig chooses, passed with
// --kubeconfig on every call, so the daemon's environment never picks one
// by accident. No kubeconfig: the backend exports manifests only.
#pragma once

#include <string>
#include <vector>

#include "backends/common/subprocess.h"
#include "core/status.h"

namespace meridian::backends::k8s {

struct KubectlResult {
  int exit_code = -1;  // -1: killed at the timeout
  std::string out;
  std::string err;
};

class Kubectl {
 public:
  // `program`: "kubectl" (looked up in PATH) or a path.
  // `run`: how to run it (default RunProcess; tests inject a recorder).
  Kubectl(std::string program, std::string kubeconfig, int timeout_s = 60, ProcessRunner run = {});
  // kubectl --kubeconfig K ARGS..., `input` on standard input. An error only
  // when kubectl cannot be started; its own failures are in the result.
  Result<KubectlResult> Run(const std::vector<std::string>& args, const std::string& input = "") const;
  const std::string& kubeconfig() const { return kubeconfig_; }

 private:
  std::string program_;
  std::string kubeconfig_;
  int timeout_s_;
  ProcessRunner run_;
  std::vector<std::string> env_;  // taken from the daemon's at construction
};

// A kubectl call that failed (exit_code != 0), as a status whose code says
// whether trying again may help (control/backend.h, IsTransient): killed at
// its timeout, the API server not reached (connection refused, i/o timeout,
// "Unable to connect to the server") or answering 5xx, 429 or "try again":
// kInternal (transient); the object not there: kNotFound; anything else the
// server refused (an invalid object, forbidden, a conflict): kInvalidArgument.
// The message is "`what` (exit N): kubectl's stderr".
Status KubectlFailure(const std::string& what, const KubectlResult& r);

// The daemon's variables kubectl is given (a trailing '*' is a prefix).
const std::vector<std::string>& KubectlEnvironmentNames();

// The kubeconfig to use: `flag` when set (it must exist), else the first
// existing file of $KUBECONFIG (a ':'-separated list), else ~/.kube/config;
// "" when there is none (export-only). Errors (kNotFound) for a missing
// `flag` file.
Result<std::string> FindKubeconfig(const std::string& flag);

}  // namespace meridian::backends::k8s
