// Job spec files (docs/job-spec.md): YAML text in, JobSpec values out.
//
// Parsing checks everything the file alone can tell (keys, types, ranges,
// durations, times, one work form, unique names); ValidateAgainstCatalog adds
// what needs the catalog (GPU model and region names) and the submission time.
// Every error message starts with "<source>:<line>:<col>: " where the position
// is known, then names the field path ("jobs[1].resources.gpus"), the value and
// the reason. When a file has several problems, the message lists each on its
// own line. All functions are pure apart from LoadJobSpecFile reading its file,
// and are safe to call from many threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "core/job.h"
#include "core/status.h"
#include "core/time.h"

namespace meridian::spec {

// Parses one job (a map with `name:` and `kind:`) or several (a map whose only
// key is `jobs:`, a list of jobs). `source_name` is used in error messages and
// stored in each JobSpec's origin. Errors are kInvalidArgument.
Result<std::vector<JobSpec>> ParseJobSpecs(std::string_view yaml, std::string_view source_name);

// Reads `path` and parses it as above, with `path` as the source name.
Result<std::vector<JobSpec>> LoadJobSpecFile(const std::string& path);

// Checks `job` against the catalog: GPU models (resources.gpu_models,
// work.on) and regions (data.region, latency.users, residency entries that are
// neither a geography nor a region id) must exist, with close matches or the
// allowed names suggested; an absolute deadline must lie after `submitted_at`
// and a deadline must leave room for a service's stated duration; mig: true
// needs an allowed model that has MIG profiles. Errors are kInvalidArgument.
Status ValidateAgainstCatalog(const JobSpec& job, const catalog::Catalog& catalog,
                              UnixSeconds submitted_at);

// "<source>:<line>:<col>: <job path>.<field>" for a field of `job`, using the
// position of the field or of its nearest parent that the origin knows; for
// messages about a parsed job from later stages (the estimator, the planner).
std::string LocateField(const JobSpec& job, const std::string& field);

}  // namespace meridian::spec
