// `meridian mig`: the MIG geometry planner from the command line (docs/mig.md).
//   mig layouts --gpu MODEL [--maximal] [--no-media]   every valid layout of one GPU
//   mig check --gpu MODEL PROFILE@START...             checks one layout
//   mig pack --gpu MODEL --gpus N REQUEST...           packs slice requests onto N GPUs
//   mig repartition --gpu MODEL --gpus N --wait REQUEST... GPU:PROFILE@START[:COST]...
//                                                      which running instances to drain
//   mig openb [--trace PODS.csv]                       fractional pods: MIG vs whole vs shared
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace meridian::cli {

struct MigCommands {
  CLI::App* mig = nullptr;
  CLI::App* layouts = nullptr;
  CLI::App* check = nullptr;
  CLI::App* pack = nullptr;
  CLI::App* openb = nullptr;
  CLI::App* repartition = nullptr;
  std::vector<std::string> wait;  // repartition: waiting requests
  std::string gpu = "A100-80GB";
  bool maximal = false;
  bool no_media = false;
  std::vector<std::string> items;  // check: PROFILE@START; pack: PROFILE[xN] or milli:M[xN]
  int gpus = 1;
  std::string output = "table";
  std::string trace;    // openb pod list
  std::string mig_gpu;  // openb: the MIG GPU each trace GPU stands for (empty: per type)
};

std::unique_ptr<MigCommands> AddMigCommands(CLI::App& app);

// The exit code when `mig` was the parsed command, nullopt otherwise.
std::optional<int> RunMigCommand(const MigCommands& cmd, const std::string& catalog_dir,
                                 std::ostream& out, std::ostream& err);

}  // namespace meridian::cli
