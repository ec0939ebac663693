// The trace readers behind ReadTrace (sim/trace.h), one per format, and what
// they share: shape interning and error collection. Internal to sim/readers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catalog/catalog.h"
#include "core/job.h"
#include "core/status.h"
#include "sim/trace.h"

namespace meridian::sim {

// Jobs of one shape share one JobSpec: `Intern(key, spec)` returns the index
// of the spec first stored under `key` (a canonical text of the shape), or
// stores `spec` there. The first job of a shape names the shared spec.
class SpecTable {
 public:
  explicit SpecTable(std::vector<std::shared_ptr<const JobSpec>>* specs) : specs_(specs) {}
  // Index of the spec stored under `key`, or -1.
  int64_t Find(const std::string& key) const;
  uint32_t Add(const std::string& key, JobSpec spec);

 private:
  std::vector<std::shared_ptr<const JobSpec>>* specs_;
  std::unordered_map<std::string, uint32_t> index_;
};

// Problems found while reading, as "<file>:<line>: <field>: <value> <reason>",
// one per line in the final status; after `kMaxShown` only a count is kept.
class ErrorList {
 public:
  static constexpr size_t kMaxShown = 20;
  explicit ErrorList(std::string source) : source_(std::move(source)) {}
  // `value` is shown as written; pass "" to leave it out.
  void Add(int64_t line, std::string_view field, std::string_view value, std::string_view reason);
  // A message already in the "<file>:<line>: ..." form.
  void AddRaw(std::string message);
  bool ok() const { return count_ == 0; }
  size_t count() const { return count_; }  // problems added so far
  // Whether a further problem is only counted: its message is not built
  // (a bad trace of a million lines holds as many problems), and a caller
  // may skip working out an expensive reason (a "did you mean").
  bool full() const { return shown_.size() >= kMaxShown; }
  Status ToStatus() const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<std::string> shown_;
  size_t count_ = 0;
};

// Catalog models of Alibaba's GPU type names (openb node list and gpu_spec):
// the documented mapping in docs/trace-format.md. Empty when unknown.
std::string_view CatalogModelForAlibabaGpu(std::string_view alibaba);

// The readers. Each fills `trace` (format, source already set) or fails.
Status ReadOpenb(const std::string& path, const std::string& nodes_path,
                 const catalog::Catalog& catalog, Trace& trace);
Status ReadDlrm(const std::string& path, const catalog::Catalog& catalog, Trace& trace);
Status ReadJsonl(const std::string& path, const catalog::Catalog& catalog, Trace& trace);
Status ReadSacct(const std::string& path, const TraceOptions& options,
                 const catalog::Catalog& catalog, Trace& trace);
Status ReadK8sJobs(const std::string& path, const TraceOptions& options,
                   const catalog::Catalog& catalog, Trace& trace);

// The whole file, or kNotFound naming it.
Result<std::string> ReadWholeFile(const std::string& path);

// Calls `line(text, number)` for each line of `all` (numbers from 1, a
// trailing '\r' removed) until it returns false.
void ForEachLine(std::string_view all, const std::function<bool(std::string_view, int64_t)>& line);

// ASCII lowercase.
std::string Lowercase(std::string_view s);

// "12,345".
std::string WithThousands(int64_t n);

}  // namespace meridian::sim
