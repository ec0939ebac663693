// The planning half of `meridian k8s`: each job of a spec file decided by
// the scheduler (against a fleet, or the catalog's cloud offerings alone) at
// one time, in queue order with each placement committed so later jobs see
// it, then turned into manifests. Shared by `k8s export` and `k8s apply`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "backends/kubernetes/manifest.h"
#include "backends/kubernetes/placement.h"
#include "cli/k8s_cmd.h"
#include "core/status.h"

namespace meridian::cli {

struct ExportedJob {
  std::string name;
  backends::k8s::Placement placement;
  std::vector<backends::k8s::Manifest> manifests;
};

// In the file's order. Errors name the file, line and field: a job that can
// never be placed, a name Kubernetes would refuse (kInvalidArgument).
Result<std::vector<ExportedJob>> ExportJobs(const K8sCommands& c, const std::string& catalog_dir,
                                            long long now);

// To `out` as one YAML stream when `dir` is empty; else <dir>/<job>.yaml per
// job, each file written named on `err`.
Status WriteExport(const std::vector<ExportedJob>& jobs, const std::string& dir, std::ostream& out,
                   std::ostream& err);

// The options `k8s export` and `k8s apply` share (JOB.yaml, --fleet, ...).
void AddPlanOptions(CLI::App* cmd, K8sCommands& c);
// `k8s apply` and `k8s status` (k8s_apply.cc).
void AddApplyCommands(K8sCommands& c);
int RunApplyCommand(const K8sCommands& c, const std::string& catalog_dir, long long now,
                    std::ostream& out, std::ostream& err);

}  // namespace meridian::cli
