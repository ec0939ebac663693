// How one attempt becomes an sbatch call: the checks on what reaches Slurm,
// the argv and the job's environment. Pure functions (tested without Slurm).
//
// The job's command never passes through a shell's parser: sbatch runs a
// fixed batch script, and the command's argv follows the script as its
// arguments, which sbatch hands over as they are.
//
// The job's environment reaches the job only: it is written to a file (mode
// 0600, beside the attempt's other files on the shared state directory) that
// the batch script sources on the compute node before it execs the argv.
// sbatch itself runs with a minimal environment of its own (PATH, and
// SLURM_CONF when set), so no variable of a tenant's (LD_PRELOAD, ...) ever
// acts on sbatch on the daemon's host. A file rather than `--export=NAME=value`:
// --export splits its list at commas, so values holding commas do not pass.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "control/backend.h"
#include "core/status.h"
#include "core/time.h"

namespace meridian::backends::slurm {

// The batch script every attempt runs: its first argument is the job's
// environment file, the rest the job's argv.
inline constexpr char kBatchScript[] =
    "#!/bin/sh\n"
    "# meridian: sets the job's environment from the file named first, then runs the job's argv as given\n"
    ". \"$1\" || exit 127\n"
    "shift\n"
    "exec \"$@\"\n";

// "meridian-<job id>-<attempt>": the Slurm job name, by which Adopt checks a
// stored Slurm id still names this attempt.
std::string JobName(const std::string& job_id, int attempt);
// "meridian-<job id>-": what every attempt's name of the job starts with.
std::string JobNamePrefix(const std::string& job_id);

// Rejects, naming the field, what would change sbatch's meaning: ids and
// tenants outside [A-Za-z0-9._-], env names Slurm reads itself (SLURM_*,
// SBATCH_*), the dynamic loader's (LD_*), names that are not shell names
// ([A-Za-z_][A-Za-z0-9_]*: the environment file is sourced by sh), '%' or
// '\' in paths (Slurm's file name patterns), NUL bytes.
Status CheckSubmit(const control::LaunchRequest& r);

struct SubmitPlan {
  std::string partition;      // the node's partition
  std::string gres_type;      // the node's GPU GRES type; "" for untyped GRES
  std::string script_path;    // the file holding kBatchScript
  std::string env_path;       // the job's environment file (EnvironmentFile)
  std::string working_dir;    // resolved (the request's, or the job's own)
  std::string log_dir;        // resolved
  // The log cap (node.max_log_bytes; 0: none) and meridian-log-relay's path
  // on the compute node: with a cap the batch script execs the relay, which
  // runs the job's argv and cuts its output (backends/local/log_relay.h).
  int64_t max_log_bytes = 0;
  std::string log_relay;
  UnixSeconds now = 0;        // for the time limit
};

// sbatch's argv (without the program itself), ending in the script, the
// environment file, the relay and its cap when there is one
// (`<relay> --cap <bytes> --`), and the job's argv.
std::vector<std::string> SbatchArgs(const control::LaunchRequest& r, const SubmitPlan& p);

// --time in minutes: the time left to the deadline, rounded up, at least 1.
std::optional<int64_t> TimeLimitMinutes(std::optional<UnixSeconds> deadline, UnixSeconds now);

// The job's environment, as "NAME=value": the `base` (PATH, HOME, USER,
// LANG of the daemon), the spec's env, then meridian's own variables. A GPU
// job gets no CUDA_VISIBLE_DEVICES here: Slurm sets it from the GRES it
// allocates.
std::vector<std::string> JobEnvironment(const control::LaunchRequest& r,
                                        const std::map<std::string, std::string>& base,
                                        const std::string& checkpoint_dir);

// The text of the environment file: one `export NAME='value'` line per
// variable, each value single-quoted (a ' inside becomes '\''), so sh takes
// every byte literally. Names must have passed CheckSubmit.
std::string EnvironmentFile(const std::vector<std::string>& env);

// The environment sbatch (and every Slurm command) runs with: PATH, and
// SLURM_CONF when `slurm_conf` is set. Nothing of any job's.
std::vector<std::string> SbatchEnvironment(const std::string& path, const std::string& slurm_conf);

}  // namespace meridian::backends::slurm
