// `meridian workload generate`: a synthetic workload shaped like a public
// cluster trace, as JSONL (docs/workload.md, docs/trace-format.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace meridian::cli {

// The flags of `workload generate`, filled by CLI11.
struct WorkloadCommands {
  CLI::App* workload = nullptr;
  CLI::App* generate = nullptr;
  int64_t jobs = 1000;
  uint64_t seed = 1;
  std::string like = "philly";
  std::string output;  // empty: stdout
  int tenants = 0;
  double deadline_slack = 0;
  double preemptible_frac = 0;
  double rate_scale = 1;
  std::string gpu_model;
};

// Registers `workload generate` on `app`; the returned value holds its flags.
std::unique_ptr<WorkloadCommands> AddWorkloadCommands(CLI::App& app);

// The exit code when `workload` was the parsed command, nullopt otherwise.
std::optional<int> RunWorkloadCommand(const WorkloadCommands& cmd, std::ostream& out,
                                      std::ostream& err);

}  // namespace meridian::cli
