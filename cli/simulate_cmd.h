// `meridian simulate`: replay a trace under each policy (sim/engine.h) and
// compare them: a table on stdout, and with --out DIR the files of
// sim/report.h (docs/simulate.md).
//
// Exit codes: 0 ok; 2 bad input (a flag, the trace, the fleet file, a
// profile), with the error naming the file, line and field; 1 when an
// output file cannot be written or the core fails.
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

struct SimulateCommand {
  CLI::App* app = nullptr;
  std::string trace, format, nodes, fleet, out_dir, start = "2024-01-01T00:00:00Z";
  std::string spot_traces;  // --spot-traces MAP.yaml (cli/spot_map.h); "" = the shipped traces
  std::string gpu_map;      // --gpu-map FILE (sim/readers/gpu_map.h): sacct, k8s-jobs
  std::string tz;           // --tz ZONE: sacct's local times; "" = the machine's
  std::string policies = "default";
  uint64_t seed = 1;
  double flex_wait_mean_h = -1;
  double node_mtbf_h = 0;
  bool no_mig_drains = false;
  bool quiet = false;
};

// Adds `simulate` to `app`; the returned object holds its flags and must
// outlive parsing.
std::unique_ptr<SimulateCommand> AddSimulateCommand(CLI::App& app);

// Runs `simulate` when it was the parsed command; nullopt otherwise.
// `catalog_dir` is the global --catalog ("" = embedded).
std::optional<int> RunSimulateCommand(const SimulateCommand& cmd, const std::string& catalog_dir,
                                      std::ostream& out, std::ostream& err);

}  // namespace meridian::cli
