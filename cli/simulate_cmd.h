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
#include <utility>
#include <vector>

#include "core/status.h"
#include "sched/profile.h"
#include "sim/engine.h"
#include "sim/market_replay.h"
#include "sim/trace.h"

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
  bool no_migrations = false;
  bool quiet = false;
};

// Adds `simulate` to `app`; the returned object holds its flags and must
// outlive parsing.
std::unique_ptr<SimulateCommand> AddSimulateCommand(CLI::App& app);

// Runs `simulate` when it was the parsed command; nullopt otherwise.
// `catalog_dir` is the global --catalog ("" = embedded).
std::optional<int> RunSimulateCommand(const SimulateCommand& cmd, const std::string& catalog_dir,
                                      std::ostream& out, std::ostream& err);

// What `simulate` and `report savings` (cli/savings_cmd.h) share.

// kExitBadInput for a bad flag, file or value (kInvalidArgument, kNotFound),
// else kExitInternal.
int SimulateExitCode(const Status& s);

// Prints "meridian COMMAND: message" on `err` and gives the exit code:
// SimulateExitCode, or kExitInternal for a file the command could not write.
struct CommandFailure {
  std::ostream& err;
  std::string command;
  int operator()(const Status& s) const;
  int Internal(const Status& s) const;
};

// --policy: a comma-separated list of shipped profile names or profile
// files, loaded in order; errors name the --policy entry.
using NamedProfiles = std::vector<std::pair<std::string, sched::Profile>>;
Result<NamedProfiles> LoadProfiles(const std::string& list);

// The trace flags: --trace, --format, --nodes, --gpu-map, --tz.
struct TraceFlags {
  std::string trace, format, nodes, gpu_map, tz;
};
Result<sim::Trace> ReadTraceFlags(const TraceFlags& flags, const catalog::Catalog& catalog);

// The fleet of `spec`, checked against the catalog (errors name the field).
Result<std::shared_ptr<const sched::Fleet>> BuildFleet(
    const FleetSpec& spec, const std::shared_ptr<const catalog::Catalog>& catalog);

// A replay's world: the fleet, the replay market from `market` (the shipped
// spot traces), and the elastic index when the fleet is elastic.
sim::World MakeWorld(const std::shared_ptr<const catalog::Catalog>& catalog,
                     std::shared_ptr<const sched::Fleet> fleet, const sim::ReplayMarketOptions& market);

}  // namespace meridian::cli
