// The client commands of `meridian serve`: submit, status, cancel, logs and
// nodes, talking to the daemon at $MERIDIAN_URL (default
// http://127.0.0.1:8080) with the bearer token in $MERIDIAN_TOKEN.
//
// Exit codes: 0 ok; 2 bad input (a flag, an unreadable file, a bad
// MERIDIAN_URL) or a 4xx answer from the daemon (its message and field
// printed); 1 when the daemon cannot be reached or fails (5xx).
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

// The client subcommands and their flags (bound by CLI11).
struct ClientCommands {
  std::string output = "table";
  // submit
  CLI::App* submit = nullptr;
  std::string file, idempotency_key;
  int retries = 4;
  // status
  CLI::App* status = nullptr;
  std::string id, state, tenant, kind;
  int limit = 100;
  // cancel
  CLI::App* cancel = nullptr;
  // logs
  CLI::App* logs = nullptr;
  bool follow = false;
  std::string stream = "stdout";
  int poll_ms = 500;
  // nodes
  CLI::App* nodes = nullptr;
};

// Adds the subcommands to `app`; the returned object holds their flags and
// must outlive parsing.
std::unique_ptr<ClientCommands> AddClientCommands(CLI::App& app);

// Runs the client subcommand that was parsed, if any; nullopt when none was.
std::optional<int> RunClientCommand(const ClientCommands& commands, std::ostream& out,
                                    std::ostream& err);

// Output, shared with tests: the job list as a table, one job as fields, the
// nodes as a table.
void PrintJobTable(const nlohmann::json& jobs, std::ostream& out);
void PrintJob(const nlohmann::json& job, std::ostream& out);
void PrintNodes(const nlohmann::json& nodes, std::ostream& out);

}  // namespace meridian::cli
