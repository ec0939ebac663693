// The values of Slurm accounting fields, as `sacct --parsable2` prints them:
// durations (Elapsed, Timelimit), TRES lists (AllocTRES, ReqTRES), job IDs
// and states. Pure functions; the sacct reader (sacct.cc) puts them together.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meridian::sim {

// Slurm's time formats, in seconds: "[D-]HH:MM:SS", "MM:SS", "M", "D-H",
// "D-H:M" (sacct prints Elapsed as [D-]HH:MM:SS). nullopt: not a duration.
std::optional<int64_t> ParseSlurmDuration(std::string_view s);

// A Timelimit: seconds, or -1 for UNLIMITED, Partition_Limit, Unknown, None
// and empty; nullopt: not a time limit.
std::optional<int64_t> ParseTimeLimit(std::string_view s);

// What a TRES list holds about a job's size.
struct Tres {
  std::optional<int> gpus;                // gres/gpu=N, else the sum of gres/gpu:TYPE=N
  std::vector<std::string> gpu_types;     // the TYPEs of gres/gpu:TYPE=N, in order
  int nodes = 0;                          // node=N; 0 = not given
  int vcpus = 0;                          // cpu=N
  double ram_gib = 0;                     // mem=64G (K, M, G, T; no suffix: M)
};

// Parses "billing=8,cpu=8,gres/gpu:a100=4,gres/gpu=4,mem=64G,node=1". Keys
// other than these (billing, energy, gres/gpumem, licenses) are ignored.
// nullopt with `why` set: malformed (`why` says which item and why).
std::optional<Tres> ParseTres(std::string_view s, std::string* why);

// A job step's ID ("123.batch", "123.0", "123.extern", "4108_3.0"): steps
// are skipped, the allocation row stands for the job.
bool IsJobStep(std::string_view job_id);

// The state's first word: "CANCELLED by 123" -> "CANCELLED"; "" when the
// value is empty.
std::string StateWord(std::string_view state);

}  // namespace meridian::sim
