// `meridian serve` (the control plane daemon, docs/control-plane.md) and
// `meridian token create|list|revoke` (bearer tokens in its database, usable
// while the daemon runs).
//
// Exit codes: 0 ok (serve: stopped by SIGINT/SIGTERM); 2 bad input (a flag,
// the config file, a database that cannot be opened); 1 internal failure.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace meridian::cli {

// The flags of serve and token, filled by parsing.
struct ServeCommands {
  CLI::App* serve = nullptr;
  CLI::App* token = nullptr;
  CLI::App* token_create = nullptr;
  CLI::App* token_revoke = nullptr;
  CLI::App* token_list = nullptr;
  // serve
  std::string listen = "127.0.0.1:8080";
  std::string db = "meridian.db";
  std::string config;
  std::string state_dir;
  std::string sync = "full";
  // token
  std::string token_db = "meridian.db";
  std::string tenant;
  bool admin = false;
  std::string expires;
  std::string node;  // create --node
  std::string token_value;
  std::string token_id;  // revoke --id
  bool token_json = false;  // list --json
};

// Adds `serve` and `token` to `app`; the returned object holds their flags
// and must outlive parsing.
std::unique_ptr<ServeCommands> AddServeCommands(CLI::App& app);

// Runs `serve` or `token` if one was parsed; nullopt when neither was.
std::optional<int> RunServeCommand(const ServeCommands& commands, long long now, std::ostream& out,
                                   std::ostream& err);

}  // namespace meridian::cli
