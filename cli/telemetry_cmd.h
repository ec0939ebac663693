// `meridian telemetry`: the telemetry sampler and classifier without the
// daemon.
//   sample --pgid N   samples a process group (and, where NVML loads, its
//                     GPUs) every --interval for --duration, printing each
//                     sample with the class of the window so far
//   classify FILE     classifies a recorded series (telemetry/series_csv.h)
// Exit codes: 0 ok; 2 bad input (a flag, an unreadable or malformed file, a
// process group that does not exist).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace meridian::cli {

struct TelemetryCommands {
  CLI::App* telemetry = nullptr;
  CLI::App* sample = nullptr;
  CLI::App* classify = nullptr;
  int pgid = 0;
  std::string interval = "1s", duration = "20s", window;  // window "": the config's
  std::string gpus;       // "0,1": the GPUs whose readings are the job's
  bool mig = false;
  int vcpus = 0;
  std::string gpu_model;  // for the recommendation
  std::string config;     // a serve config whose telemetry: thresholds apply
  std::string file;
  std::string output = "table";
};

std::unique_ptr<TelemetryCommands> AddTelemetryCommands(CLI::App& app);
std::optional<int> RunTelemetryCommand(const TelemetryCommands& c, const std::string& catalog_dir,
                                       std::ostream& out, std::ostream& err);

}  // namespace meridian::cli
