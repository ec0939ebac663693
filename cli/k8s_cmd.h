// `meridian k8s`: the kubernetes backend from the command line
// (docs/kubernetes.md).
//   k8s export JOB.yaml [--fleet F] [-o DIR]   plans each job with the scheduler and
//                                              writes its manifests (no cluster needed)
//   k8s apply JOB.yaml [--fleet F] [--watch]   the same, then kubectl apply with a
//                                              kubeconfig (export-only without one)
//   k8s status NAME                            the Job's phase as meridian reads it
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace meridian::cli {

struct K8sCommands {
  CLI::App* k8s = nullptr;
  CLI::App* export_cmd = nullptr;
  CLI::App* apply = nullptr;
  CLI::App* status = nullptr;
  std::string spec_path;
  std::string job_name;     // --job: one job of a file with several
  std::string fleet_path;   // --fleet: decide against this fleet; default: cloud offerings only
  std::string profile = "default";
  std::string at;           // --at: decision time, RFC 3339
  std::string out_dir;      // -o: one <name>.yaml per job; default stdout
  std::string ns;           // --namespace; default: the job's tenant
  std::string image;        // --image; default: the job's image
  std::string checkpoint_size = "100Gi";
  std::string storage_class;
  std::string kubeconfig;   // apply/status; default $KUBECONFIG, then ~/.kube/config
  std::string kubectl = "kubectl";
  bool watch = false;       // apply: poll the Job until it ends
  int watch_timeout_s = 3600;
  std::string name;         // status: the Job's name
};

std::unique_ptr<K8sCommands> AddK8sCommands(CLI::App& app);

// The exit code when `k8s` was the parsed command, nullopt otherwise.
std::optional<int> RunK8sCommand(const K8sCommands& cmd, const std::string& catalog_dir,
                                 long long now, std::ostream& out, std::ostream& err);

}  // namespace meridian::cli
