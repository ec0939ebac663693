// Parsers for what Slurm's client commands print, and the mapping of Slurm's
// job and node states onto meridian's. Pure functions over text, tested on
// output recorded from slurm-wlm 22.05 (backends/slurm/testdata/).
//
// The formats asked for (docs/slurm.md, "Observing"):
//   squeue --noheader --states=all --jobs=ID,... --format=%i|%T|%N|%r
//   scontrol --oneliner --details show job ID
//   sinfo --noheader --Node --partition=P,... --format=%N|%T|%G|%c|%m|%R|%E
//   sbatch --parsable ...
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/backend.h"
#include "core/status.h"
#include "core/time.h"

namespace meridian::backends::slurm {

// One line of the squeue format above.
struct QueueRow {
  std::string job_id;
  std::string state;   // JobState, long form: PENDING, RUNNING, COMPLETED, ...
  std::string nodes;   // "node2", "" while pending
  std::string reason;  // "None", "Resources", "ReqNodeNotAvail, ...", ...
};

// Lines that do not have four fields are skipped (squeue prints errors on
// stderr, never on stdout).
std::vector<QueueRow> ParseQueue(std::string_view text);

// The fields of `scontrol show job` that meridian reads.
struct JobRecord {
  std::string job_id;
  std::string name;
  std::string state;
  std::string reason;
  std::optional<int> exit_code;    // ExitCode=<code>:<signal>
  std::optional<int> exit_signal;  // non-zero signal of ExitCode
  UnixSeconds start = 0;           // 0: Unknown/None
  UnixSeconds end = 0;
  std::string nodes;               // NodeList
  std::vector<int> gpu_indexes;    // from the detail line's GRES=gpu...(IDX:0-1)
};

// Reads the one-line form. The first occurrence of each key wins: every field
// before the free text a user controls (Command=, WorkDir=, Comment=, StdOut=)
// is written by Slurm or by meridian, so a job's argument that reads
// "ExitCode=0:0" cannot pass for the job's exit code. Times are epoch
// seconds (the backend runs scontrol with SLURM_TIME_FORMAT=%s) or, as
// scontrol prints them by default, local time in the process's time zone.
Result<JobRecord> ParseJobRecord(std::string_view text);

// One line of the sinfo format above.
struct NodeRow {
  std::string name;
  std::string state;      // long form, lowercase: idle, mixed, allocated, drained, down*, ...
  std::string gres;       // "gpu:a100-80gb:8(S:0-1)", "(null)"
  int cpus = 0;
  int64_t mem_mib = 0;
  std::string partition;  // "gpu" (a trailing '*' of the default partition removed)
  std::string reason;     // "none", or the admin's reason
};

// Lines with fewer than seven fields are skipped; the reason is the rest of
// the line (it may hold '|').
std::vector<NodeRow> ParseNodes(std::string_view text);

// The GPU GRES of a node: "gpu:a100-80gb:8(S:0-1),nic:1" -> {"a100-80gb", 8}.
// An untyped "gpu:8" gives type "". More than one GPU type on a node is an
// error (meridian's nodes have one model).
struct GpuGres {
  std::string type;
  int count = 0;
};
Result<GpuGres> ParseGpuGres(std::string_view gres);
// Every GPU GRES type of a node with its count, in the order first listed:
// "gpu:3g.40gb:4(S:0),gpu:4g.40gb:2" -> {{"3g.40gb", 4}, {"4g.40gb", 2}} (a
// node whose GPUs are split into MIG instances offers them typed by profile).
Result<std::vector<GpuGres>> ParseGpuGresTypes(std::string_view gres);
// "3g.40gb", "1g.10gb+me": a MIG profile name as NVIDIA writes them.
bool IsMigProfileName(std::string_view type);

// sbatch --parsable prints "<id>" or "<id>;<cluster>".
Result<std::string> ParseSubmitted(std::string_view text);

// A Slurm client command that exited non-zero, as a status whose code says
// whether trying again may help (control/backend.h, IsTransient): the
// controller answered and refused the request ("Batch job submission failed:
// Invalid partition name specified", "Requested node configuration is not
// available", "Invalid generic resource (gres) specification", ...):
// kInvalidArgument; it did not answer, or said to try later ("Unable to
// contact slurm controller", "Socket timed out", "Slurm temporarily unable to
// accept job", ...), or the command did not say why: kInternal. `what` names
// the command ("sbatch"); the message is what it printed last.
Status CommandFailure(const std::string& what, int exit_code, std::string_view err);

// "0-1,3,5-6" -> {0,1,3,5,6}.
Result<std::vector<int>> ParseIndexList(std::string_view text);

// Slurm's job state -> the phase meridian tracks (docs/slurm.md, "States").
// `exit_code`/`exit_signal` come from the job record (terminal states only).
struct PhaseOfJob {
  control::RunPhase phase = control::RunPhase::kStarting;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string message;  // "Slurm job 12 COMPLETED", "... NODE_FAIL on node3", ...
};
PhaseOfJob MapJobState(const std::string& job_id, const std::string& state,
                       std::optional<int> exit_code, std::optional<int> exit_signal,
                       const std::string& nodes);
bool IsTerminalJobState(std::string_view state);

// Whether a node in this sinfo state takes new work, and why not.
struct NodeHealth {
  bool schedulable = true;
  std::string reason;  // "Slurm state drained: disk bad"
};
NodeHealth MapNodeState(const std::string& state, const std::string& reason);

}  // namespace meridian::backends::slurm
