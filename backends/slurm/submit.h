// How one attempt becomes an sbatch call: the checks on what reaches Slurm,
// the argv and the job's environment. Pure functions (tested without Slurm).
//
// The job's command never passes through a shell's parser: sbatch runs a
// fixed batch script, `exec "$@"`, and the command's argv follows the script
// as its arguments, which sbatch hands over as they are.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "control/backend.h"
#include "core/status.h"
#include "core/time.h"

namespace meridian::backends::slurm {

// The batch script every attempt runs.
inline constexpr char kBatchScript[] = "#!/bin/sh\n# meridian: runs the job's argv as given\nexec \"$@\"\n";

// "meridian-<job id>-<attempt>": the Slurm job name, by which Adopt checks a
// stored Slurm id still names this attempt.
std::string JobName(const std::string& job_id, int attempt);

// Rejects, naming the field, what would change sbatch's meaning: ids and
// tenants outside [A-Za-z0-9._-], env names Slurm reads itself (SLURM_*,
// SBATCH_*), '%' or '\' in paths (Slurm's file name patterns), NUL bytes.
Status CheckSubmit(const control::LaunchRequest& r);

struct SubmitPlan {
  std::string partition;      // the node's partition
  std::string gres_type;      // the node's GPU GRES type; "" for untyped GRES
  std::string script_path;    // the file holding kBatchScript
  std::string working_dir;    // resolved (the request's, or the job's own)
  std::string log_dir;        // resolved
  UnixSeconds now = 0;        // for the time limit
};

// sbatch's argv (without the program itself), ending in the script and the
// job's argv.
std::vector<std::string> SbatchArgs(const control::LaunchRequest& r, const SubmitPlan& p);

// --time in minutes: the time left to the deadline, rounded up, at least 1.
std::optional<int64_t> TimeLimitMinutes(std::optional<UnixSeconds> deadline, UnixSeconds now);

// The environment sbatch runs with (and so the job, with --export=ALL): the
// `base` (PATH, HOME, USER, LANG of the daemon), the spec's env, then
// meridian's own variables, then what the Slurm commands need (`slurm_conf`).
// A GPU job gets no CUDA_VISIBLE_DEVICES here: Slurm sets it from the GRES
// it allocates.
std::vector<std::string> JobEnvironment(const control::LaunchRequest& r,
                                        const std::map<std::string, std::string>& base,
                                        const std::string& checkpoint_dir);

}  // namespace meridian::backends::slurm
