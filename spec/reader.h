// SpecReader: typed reads of yaml-cpp nodes for the spec parser, collecting
// every problem as "<source>:<line>:<col>: <path>: <value> <reason>" and
// recording where each field was written. Internal to spec/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/job.h"
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
  // A name ("onprem-a"): 1-63 letters, digits, '-', '_' or '.', starting with
  // a letter or digit, as identifiers in the ledger and the control plane are.
  std::optional<std::string> Name(const YAML::Node& node, const std::string& path);
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

// Parses `yaml` as a single YAML document. Reports, and returns nullopt for:
// malformed YAML; an empty file ("is empty; <empty_hint>"); a second document
// ("a second YAML document (---); <many_hint>").
std::optional<YAML::Node> LoadOneDocument(SpecReader& r, std::string_view yaml,
                                          const std::string& empty_hint,
                                          const std::string& many_hint);

// The text of the file at `path`; "<path>: cannot open: <reason>" otherwise.
Result<std::string> ReadSpecFile(const std::string& path);

// Calls `fn(key, value, path)` for each key of a map whose value is not null;
// unknown and repeated keys are reported by ExpectMap and skipped. False if
// `node` is not a map.
template <typename Fn>
bool ForEachKey(SpecReader& r, const YAML::Node& node, const std::string& path,
                const std::vector<std::string>& known, Fn fn) {
  if (!r.ExpectMap(node, path, known)) return false;
  std::vector<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = kv.first.Scalar();
    bool is_known = false, repeated = false;
    for (const std::string& k : known) is_known = is_known || k == key;
    for (const std::string& k : seen) repeated = repeated || k == key;
    seen.push_back(key);
    if (!is_known || repeated || kv.second.IsNull()) continue;
    fn(key, kv.second, JoinPath(path, key));
  }
  return true;
}

// "<source>:<line>:<col>: <origin path>.<field>" for `field` of a parsed
// spec, using the position of the field or of its nearest parent that
// `origin` knows.
std::string LocateInOrigin(const SpecOrigin& origin, const std::string& field);

// Problems found after parsing (against the catalog), each located through a
// spec's origin; listed one per line in the order found.
class Findings {
 public:
  explicit Findings(const SpecOrigin& origin) : origin_(origin) {}
  void Add(const std::string& field, const std::string& message) {
    errors_.push_back(LocateInOrigin(origin_, field) + ": " + message);
  }
  bool ok() const { return errors_.empty(); }
  Status ToStatus() const;

 private:
  const SpecOrigin& origin_;
  std::vector<std::string> errors_;
};

}  // namespace meridian::spec
