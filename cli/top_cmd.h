// `meridian top`: the running jobs of the daemon at $MERIDIAN_URL with their
// telemetry class and recommendation, refreshed every --interval (like
// nvidia-smi meets htop); `--once` prints one frame and exits, so scripts
// and tests can read it. Exit codes as the client commands (client_cmd.h).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace meridian::cli {

struct TopCommand {
  CLI::App* top = nullptr;
  bool once = false;
  std::string interval = "2s";
  std::string output = "table";
};

std::unique_ptr<TopCommand> AddTopCommand(CLI::App& app);
std::optional<int> RunTopCommand(const TopCommand& c, std::ostream& out, std::ostream& err);

// One frame from the jobs and their /utilization answers (same order).
void PrintTopFrame(const nlohmann::json& jobs, const nlohmann::json& utilization,
                   std::ostream& out);

}  // namespace meridian::cli
