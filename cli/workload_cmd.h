// `meridian workload generate`: a synthetic workload shaped like a public
// cluster trace, as JSONL (docs/workload.md, docs/trace-format.md).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>

namespace meridian::cli {

struct WorkloadCommands;

// Registers `workload generate` on `app`; the returned value holds its flags.
std::unique_ptr<WorkloadCommands> AddWorkloadCommands(CLI::App& app);

// The exit code when `workload` was the parsed command, nullopt otherwise.
std::optional<int> RunWorkloadCommand(const WorkloadCommands& cmd, std::ostream& out,
                                      std::ostream& err);

}  // namespace meridian::cli
