// The kubernetes backend: control::Backend on a Kubernetes cluster through
// kubectl. Each attempt is a Job named <job id>-<attempt> ("j-00000042-1")
// in the backend's namespace, with the attempt's GPUs claimed through a DRA
// ResourceClaimTemplate (manifest.h), applied with `kubectl apply -f -`.
//
//   Launch  renders the attempt's manifests and applies them; the handle is
//           "k8s:<namespace>/<job name>"
//   Stop    suspends the Job (spec.suspend: true): its pods get SIGTERM, then
//           SIGKILL after the pod's terminationGracePeriodSeconds (the
//           attempt's grace period, set at launch); the Job stays readable
//   Poll    at most once per status_refresh_ms: one labelled
//           `kubectl get jobs -l app.kubernetes.io/managed-by=meridian` per
//           namespace for every live attempt (and, for a Job that failed,
//           its pods' exit code), reporting phase changes (job_status.h); a
//           live attempt's Job missing from the list is lost
//   Adopt   reads one Job the same way
//   Logs    each attempt's pod log is copied into the LaunchRequest's
//           log_dir once, when Stop suspends it (before its pods go) or
//           when Poll or Adopt sees it end, under max_log_bytes
//           (pod_logs.h); the Job's meridian.dev/log-dir annotation keeps
//           the directory for a daemon that adopts the attempt
//   Retire  deletes the job's attempts' Jobs, claim templates and
//           checkpoint claim by name, and a service's replica runs'
//           objects by their meridian.dev/service label
//   Names   a run's Kubernetes name is its id lower-cased with '.' as '-'
//           (a replica "j-00000042.r1" runs as j-00000042-r1-<attempt>)
//   Nodes   the capacity declared in the options (as the local backend)
//
// Without a kubeconfig (kubectl.h) the backend is export-only: Launch fails
// with a message saying so, and `meridian k8s export` writes the manifests.
// Whole GPUs are claimed by model; a MIG instance by its UUID attribute
// (LaunchRequest.mig_uuids) or else by its profile (mig_profile: the DRA
// driver picks an instance of that profile on the node). Not thread-safe: the daemon calls it
// from its reconcile thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/common/environment.h"
#include "backends/kubernetes/job_status.h"
#include "backends/kubernetes/kubectl.h"
#include "catalog/catalog.h"
#include "control/backend.h"

namespace meridian::backends::k8s {

struct KubernetesBackendOptions {
  std::string kubeconfig;       // "" = export-only
  std::string kubectl = "kubectl";
  std::string ns = "default";   // namespace of every attempt's objects
  std::string image;            // container image of every attempt
  std::string gpu_model;        // the GPUs' catalog model (claims and Nodes)
  int gpus = 0;                 // GPUs per node, for Nodes
  std::vector<std::string> mig; // MIG layout of every GPU (profile names); empty = whole GPUs
  int nodes = 1;
  int vcpus = 0;
  double ram_gib = 0;
  // Poll lists the Jobs at most this often (the monotonic clock of
  // `environment`), and each list may take status_timeout_s.
  int64_t status_refresh_ms = 2000;
  int status_timeout_s = 20;
  // The most an attempt's pod log adds to the job's stdout.log, counting
  // what its log directory already holds (serve.yaml's node.max_log_bytes;
  // 0: no cap); pod_logs.h.
  int64_t max_log_bytes = 0;
  std::shared_ptr<const catalog::Catalog> catalog;
  BackendEnvironment environment;  // unset members: the system's (SystemEnvironment)
};

std::unique_ptr<control::Backend> MakeKubernetesBackend(const KubernetesBackendOptions& options);

// One Job's state from the cluster: the Job, and for a failed one its pods'
// exit code. A Job the server does not have is kLost; a server that cannot be
// asked is an error (kUnavailable-like: kInternal) with kubectl's message.
Result<JobState> ReadJobState(const Kubectl& kubectl, const std::string& ns,
                              const std::string& job);
// Every Job meridian manages in `ns`, by name, in one labelled list; a failed
// Job's exit code is not filled in (its pods say it; ReadJobState asks them).
Result<std::map<std::string, JobState>> ReadJobStates(const Kubectl& kubectl,
                                                      const std::string& ns);

}  // namespace meridian::backends::k8s
