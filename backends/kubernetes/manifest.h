// Manifests: a job spec and its placement as the Kubernetes objects that run
// it (docs/kubernetes.md), in the order they are applied:
//
//   PriorityClass          meridian-<tier> (cluster-wide; the same for every job of the tier)
//   PersistentVolumeClaim  <name>-checkpoint, when the job checkpoints; mounted
//                          at MERIDIAN_CHECKPOINT_DIR in every pod and kept across attempts
//   ResourceClaimTemplate  <name>-gpu (resource.k8s.io/v1): one claim per pod
//                          for exactly the placement's GPUs or MIG device
//   Service                <name>-peers, headless, for a gang's members to find each other
//   Job                    <name> (batch/v1); a gang is an Indexed Job with
//                          completions = parallelism = members; deleted by
//                          Kubernetes ttl_seconds_after_finished after it ends
//
// Names are checked as the API server would (names.h) and errors name the
// field: "name", "tenant" (the namespace), "labels.team", "image".
// BuildManifests is pure; the same inputs give the same objects, key order
// included.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/kubernetes/placement.h"
#include "catalog/catalog.h"
#include "core/job.h"
#include "core/status.h"

namespace meridian::backends::k8s {

inline constexpr char kCheckpointMount[] = "/var/lib/meridian/checkpoint";
// Names meridian derives from the job's take at most this many characters
// beyond it ("-checkpoint"), so the job's name may have 63 - 11.
inline constexpr size_t kMaxJobNameLength = 52;

struct ManifestOptions {
  std::string name;       // object name base; "" = the spec's name
  std::string ns;         // namespace; "" = the spec's tenant
  std::string image;      // container image; "" = the spec's image
  std::string checkpoint_size = "100Gi";  // the checkpoint claim's storage request
  std::string storage_class;              // "" = the cluster's default class
  // The Job's ttlSecondsAfterFinished: Kubernetes deletes a finished Job and
  // its pods this long after it ended. A week: long enough for a daemon that
  // was down to come back and read how each attempt ended (a Job gone before
  // that reads as a lost attempt), short enough that finished Jobs do not
  // pile up in the namespace (docs/kubernetes.md, "Clean-up").
  int64_t ttl_seconds_after_finished = 7 * 86400;
};

struct Manifest {
  std::string kind;   // "Job", "ResourceClaimTemplate", ...
  std::string name;
  nlohmann::ordered_json object;
};

// Errors are kInvalidArgument and start with the field: `name: "Llama_7B" is
// not a valid Kubernetes name: ...`.
Result<std::vector<Manifest>> BuildManifests(const JobSpec& job, const Placement& placement,
                                             const catalog::Catalog& catalog,
                                             const ManifestOptions& options);

// The manifests as one YAML stream, "---" between objects.
std::string RenderYaml(const std::vector<Manifest>& manifests);

// The PriorityClass name and value of a tier: critical 1000000, high 100000,
// normal 10000, low 1000 (all far below the system classes' 2000000000).
std::string PriorityClassName(Priority p);
int64_t PriorityClassValue(Priority p);

}  // namespace meridian::backends::k8s
