// SpecReader: typed reads of yaml-cpp nodes for the spec parser, collecting
// every problem as "<source>:<line>:<col>: <path>: <value> <reason>" and
// recording where each field was written. Internal to spec/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/status.h"

namespace meridian::spec {

// "a.b" from "a" and "b"; "b" when `parent` is empty.
std::string JoinPath(const std::string& parent, const std::string& key);
// "a[3]".
std::string IndexPath(const std::string& parent, size_t index);

// Limits for a number: value must be >= min (or > min when `exclusive`).
struct NumberRange {
  double min = 0;
  bool exclusive = false;
};

class SpecReader {
 public:
  explicit SpecReader(std::string source) : source_(std::move(source)) {}

  // Paths passed to the reads below are relative to the current job; messages
  // show `prefix` ("jobs[1]") before them, and marks go to `marks`.
  void BeginJob(std::string prefix, std::map<std::string, std::pair<int, int>>* marks);

  // Records "<pos>: <full path>: <message>" at `at`'s position (or the
  // source alone where the node has no position).
  void Error(const YAML::Node& at, const std::string& path, const std::string& message);
  // Same, for problems with the file as a whole or its top level.
  void FileError(const YAML::Mark& mark, const std::string& message);
  bool ok() const { return errors_.empty(); }
  size_t error_count() const { return errors_.size(); }
  Status ToStatus() const;

  // True if `node` is a map. Reports, as errors: not a map; keys that are not
  // in `known` (with the nearest known key); keys given twice.
  bool ExpectMap(const YAML::Node& node, const std::string& path,
                 const std::vector<std::string>& known);
  // True if `node` is a list; reports it otherwise, with `example` as a hint.
  bool ExpectList(const YAML::Node& node, const std::string& path, const std::string& example);

  // Typed scalars; each returns nullopt after reporting an error.
  std::optional<std::string> String(const YAML::Node& node, const std::string& path);
  std::optional<double> Number(const YAML::Node& node, const std::string& path, NumberRange range);
  std::optional<int> WholeNumber(const YAML::Node& node, const std::string& path, int min);
  std::optional<bool> Bool(const YAML::Node& node, const std::string& path);
  // A duration ("90m", "36h", "14d", seconds); zero allowed only if `allow_zero`.
  std::optional<int64_t> Duration(const YAML::Node& node, const std::string& path,
                                  bool allow_zero);
  // A list of non-empty strings.
  std::vector<std::string> StringList(const YAML::Node& node, const std::string& path,
                                      const std::string& example);
  // A map of strings to scalars (kept as text).
  std::map<std::string, std::string> StringMap(const YAML::Node& node, const std::string& path);

  // Remembers where `path` was written, for LocateField later.
  void Mark(const YAML::Node& node, const std::string& path);

  // How `node` reads in a message: "\"text\"" for a scalar, "a list", "a map".
  static std::string Show(const YAML::Node& node);

 private:
  std::string Position(const YAML::Mark& mark) const;

  std::string source_;
  std::string prefix_;
  std::map<std::string, std::pair<int, int>>* marks_ = nullptr;
  std::vector<std::pair<int, std::string>> errors_;  // (offset in the file, message)
};

}  // namespace meridian::spec
