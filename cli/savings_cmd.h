// `meridian report savings`: what meridian would have saved on a team's own
// history (sim/savings.h, docs/savings.md): the history as it ran beside
// each policy on the same fleet and beside the fleet plus cloud capacity;
// savings.txt (also on stdout) and savings.html in --out.
//
// Exit codes as `simulate`'s: 0 ok; 2 bad input (a flag, the trace, the
// fleet file, a profile), the error naming the file, line and field; 1 when
// an output file cannot be written or the core fails.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace meridian::cli {

struct SavingsCommand {
  CLI::App* app = nullptr;
  std::string trace, format, nodes, fleet, out_dir, gpu_map, tz;
  std::string start = "2024-01-01T00:00:00Z";
  std::string policies = "fifo-backfill,fifo-strict,default,kueue-like";
  std::string burst_policy = "default";  // "none": no burst column
  uint64_t seed = 1;
  bool quiet = false;
};

// Adds `report savings` to `app`; the returned object holds its flags and
// must outlive parsing.
std::unique_ptr<SavingsCommand> AddReportCommands(CLI::App& app);

// Runs `report savings` when it was the parsed command; nullopt otherwise.
// `catalog_dir` is the global --catalog ("" = embedded).
std::optional<int> RunReportCommand(const SavingsCommand& cmd, const std::string& catalog_dir,
                                    std::ostream& out, std::ostream& err);

}  // namespace meridian::cli
