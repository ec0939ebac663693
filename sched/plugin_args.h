// PluginArgs: a plugin's typed arguments as written in a profile
// (`plugins[i].args`), read by the plugin's factory. Every read validates and,
// on a bad value, records an error naming the position and the field:
//   profiles/default.yaml:14:15: plugins[2].args.max_gpus: "-3" must be >= 1
// The framework reports keys no read asked for as unknown (with suggestions).
// Reads return the default when the key is absent. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/units.h"

namespace YAML {
class Node;
}

namespace meridian::sched {

class PluginArgs {
 public:
  // Arguments from YAML text (tests, code-built profiles): `yaml` is a map or empty.
  static Result<PluginArgs> FromYaml(std::string_view yaml, std::string source = "args",
                                     std::string path = "args");
  // No arguments at all.
  PluginArgs();
  PluginArgs(const YAML::Node& node, std::string source, std::string path);
  PluginArgs(const PluginArgs&);
  PluginArgs& operator=(const PluginArgs&);
  PluginArgs(PluginArgs&&) noexcept;
  PluginArgs& operator=(PluginArgs&&) noexcept;
  ~PluginArgs();

  bool Has(std::string_view key) const;
  double Number(std::string_view key, double def, double min, double max);
  int64_t Integer(std::string_view key, int64_t def, int64_t min, int64_t max);
  bool Bool(std::string_view key, bool def);
  // One of `allowed`.
  std::string Choice(std::string_view key, std::string def, const std::vector<std::string>& allowed);
  std::vector<std::string> Strings(std::string_view key);
  // A non-empty string (the caller checks its form and calls Error).
  std::string String(std::string_view key, std::string def);
  // A duration ("90m", "36h", seconds) in seconds, >= 0.
  int64_t Duration(std::string_view key, int64_t def);
  // US dollars (a number), >= 0.
  Money Dollars(std::string_view key, Money def);

  // A map of user-named entries (tenants, weights): the map under `key` as
  // arguments of its own, path "<path>.<key>"; absent: empty. Read its
  // entries, then Adopt it so its errors (unknown keys too) become this one's.
  PluginArgs Map(std::string_view key);
  // The keys of this map, in file order.
  std::vector<std::string> Keys() const;
  void Adopt(PluginArgs& child);

  // Records a custom error on `key` ("must be below max_x") naming its position.
  void Error(std::string_view key, const std::string& message);
  // OK, or every error so far (one per line); also reports unknown keys.
  Status Finish();
  const std::string& path() const { return path_; }

 private:
  std::string Where(std::string_view key) const;
  std::string Show(std::string_view key) const;

  std::unique_ptr<YAML::Node> node_;  // a map, or null
  std::string source_;
  std::string path_;
  std::set<std::string, std::less<>> read_;
  std::vector<std::string> errors_;
};

}  // namespace meridian::sched
