// The Slurm accounting reader (`--format sacct`): the pipe-separated output
// of `sacct --parsable2 --allocations` becomes one job per allocation that
// started. docs/trace-format.md says how each column maps and what is left
// out.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>

#include "sim/readers/gpu_map.h"
#include "sim/readers/history.h"
#include "sim/readers/local_time.h"
#include "sim/readers/readers.h"
#include "sim/readers/sacct_fields.h"

namespace meridian::sim {

namespace {

std::vector<std::string_view> SplitPipes(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = line.find('|', start);
    out.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The columns read, by the names sacct's header gives them.
enum class Col { kJobIdRaw, kJobId, kUser, kAccount, kPartition, kQos, kSubmit, kStart, kEnd,
                 kElapsed, kTimelimit, kState, kAllocTres, kReqTres, kCount };
constexpr std::string_view kColumnNames[] = {
    "JobIDRaw", "JobID",     "User",  "Account", "Partition", "QOS",       "Submit",
    "Start",    "End",       "Elapsed", "Timelimit", "State", "AllocTRES", "ReqTRES"};
static_assert(std::size(kColumnNames) == static_cast<size_t>(Col::kCount));

std::string_view NameOf(Col c) { return kColumnNames[static_cast<size_t>(c)]; }

// Where each column is, found by header name (case-insensitive); -1: absent.
class Columns {
 public:
  Status Read(std::string_view header, const std::string& source) {
    std::vector<std::string> names;
    for (std::string_view name : SplitPipes(header)) names.push_back(Lowercase(name));
    size_ = names.size();
    for (size_t c = 0; c < std::size(kColumnNames); ++c) {
      auto it = std::find(names.begin(), names.end(), Lowercase(kColumnNames[c]));
      index_[c] = it == names.end() ? -1 : static_cast<int>(it - names.begin());
    }
    for (Col need : {Col::kSubmit, Col::kStart, Col::kEnd, Col::kState}) {
      if (!Has(need)) return Missing(NameOf(need), source);
    }
    if (!Has(Col::kJobIdRaw) && !Has(Col::kJobId)) return Missing("JobIDRaw", source);
    if (!Has(Col::kAllocTres) && !Has(Col::kReqTres)) return Missing("AllocTRES", source);
    return Status::Ok();
  }
  int Index(Col c) const { return index_[static_cast<size_t>(c)]; }
  bool Has(Col c) const { return Index(c) >= 0; }
  size_t size() const { return size_; }

 private:
  static Status Missing(std::string_view name, const std::string& source) {
    return Status::Invalid(source + ":1: header: lacks the column " + std::string(name) +
                           "; run sacct --parsable2 with --format=JobIDRaw,...,Submit,Start,End,"
                           "State,AllocTRES (docs/trace-format.md)");
  }
  int index_[static_cast<size_t>(Col::kCount)] = {};
  size_t size_ = 0;
};

// One usable allocation, before submit_s is counted from the earliest.
struct SacctJob {
  std::string name;
  UnixSeconds submit = 0;
  UnixSeconds start = 0;
  int64_t run_s = 0;
  int64_t limit_s = -1;
  uint32_t spec = 0;
};

// Why rows were left out, and what was read, for the notes.
struct SacctCounts {
  int64_t steps = 0, never_started = 0, running = 0, malformed = 0, renamed = 0, cpu_only = 0;
  std::map<std::string, int64_t> states;      // of the replayed jobs
  std::map<std::string, int64_t> gpu_names;   // "type a100 -> A100-40GB or A100-80GB" -> jobs
};

struct SacctShape;

class SacctReader {
 public:
  SacctReader(const std::string& source, const catalog::Catalog& catalog, const GpuMap& map,
              const ZoneScope& zone, Trace& trace)
      : source_(source), catalog_(catalog), map_(map), named_(catalog), zone_(zone), trace_(trace),
        specs_(&trace.specs), errors_(source) {}

  Status Read(std::string_view all);

 private:
  std::string_view Field(const std::vector<std::string_view>& row, Col c) const {
    const int i = columns_.Index(c);
    return i < 0 ? std::string_view() : row[static_cast<size_t>(i)];
  }
  void Row(std::string_view text, int64_t line);
  std::optional<UnixSeconds> Time(const std::vector<std::string_view>& row, Col column, int64_t line,
                                  bool* bad);
  std::optional<int64_t> RunSeconds(const std::vector<std::string_view>& row,
                                    UnixSeconds start, std::optional<UnixSeconds> end,
                                    int64_t line);
  std::optional<uint32_t> Spec(const std::vector<std::string_view>& row, const std::string& name,
                               int64_t line);
  std::vector<std::string> Models(const Tres& tres, std::string_view partition,
                                  bool* unknown);
  void NoteGpuReading(const SacctShape& shape, bool unknown);
  std::string UniqueName(std::string_view id);
  void Finish();

  const std::string& source_;
  const catalog::Catalog& catalog_;
  const GpuMap& map_;
  NamedModelsCache named_;
  const ZoneScope& zone_;
  Trace& trace_;
  SpecTable specs_;
  ErrorList errors_;
  Columns columns_;
  SacctCounts counts_;
  std::vector<SacctJob> jobs_;
  std::map<std::string, int64_t> names_;
};

std::optional<UnixSeconds> SacctReader::Time(const std::vector<std::string_view>& row, Col column,
                                             int64_t line, bool* bad) {
  const std::string_view value = Field(row, column);
  if (value.empty() || value == "Unknown" || value == "None") return std::nullopt;
  std::optional<CivilTime> wall = ParseWallTime(value);
  if (!wall) {
    errors_.Add(line, NameOf(column), Quote(value),
                "is not a sacct time (YYYY-MM-DDTHH:MM:SS; leave SLURM_TIME_FORMAT unset)");
    *bad = true;
    return std::nullopt;
  }
  return zone_.ToUnix(*wall);
}

std::optional<int64_t> SacctReader::RunSeconds(const std::vector<std::string_view>& row,
                                               UnixSeconds start, std::optional<UnixSeconds> end,
                                               int64_t line) {
  const std::string_view elapsed = Field(row, Col::kElapsed);
  if (!elapsed.empty()) {
    std::optional<int64_t> s = ParseSlurmDuration(elapsed);
    if (!s) errors_.Add(line, "Elapsed", Quote(elapsed), "is not a duration ([D-]HH:MM:SS)");
    return s;
  }
  if (!end) {
    errors_.Add(line, "End", Quote(Field(row, Col::kEnd)),
                "is unknown and the row has no Elapsed: the run time cannot be told");
    return std::nullopt;
  }
  if (*end < start) {
    errors_.Add(line, "End", Quote(Field(row, Col::kEnd)), "is before Start");
    return std::nullopt;
  }
  return *end - start;
}

// The models a job may use: the map's entry for its GRES type, else for its
// partition, else the type read as a catalog model or family (gpu_map.h).
// `*unknown`: a type that names nothing (the job may use any model).
std::vector<std::string> SacctReader::Models(const Tres& tres, std::string_view partition,
                                             bool* unknown) {
  const std::vector<std::string>* by_partition =
      map_.Find("partition:" + std::string(partition));
  if (tres.gpu_types.empty()) return by_partition ? *by_partition : std::vector<std::string>();
  std::vector<std::string> models;
  for (const std::string& type : tres.gpu_types) {
    const std::vector<std::string>* mapped = map_.Find(type);
    const std::vector<std::string>& named = mapped         ? *mapped
                                            : by_partition ? *by_partition
                                                           : named_.Of(type);
    if (named.empty()) {
      *unknown = true;
      return {};
    }
    models.insert(models.end(), named.begin(), named.end());
  }
  return models;
}

// One allocation's shape, as read from its row.
struct SacctShape {
  Tres tres;
  GpuChoice gpu;
  std::string tenant, partition, qos;
  std::string Key() const {
    std::string key = std::to_string(tres.gpus.value_or(0)) + "|" + std::to_string(tres.nodes) + "|" +
                      std::to_string(tres.vcpus) + "|" + std::to_string(std::llround(tres.ram_gib * 1024)) + "|" + tenant +
                      "|" + partition + "|" + qos;
    for (const std::string& m : gpu.models) key += "|" + m;
    return key;
  }
};

JobSpec SpecOf(const SacctShape& shape) {
  JobSpec spec;
  const int gpus = shape.tres.gpus.value_or(0);
  spec.tenant = shape.tenant;
  spec.kind = WorkloadKind::kTraining;
  spec.resources.gpus = gpus;
  if (gpus > 0) spec.resources.gpu_models = shape.gpu.models;
  spec.work.recorded_on = gpus > 0 ? shape.gpu.recorded_on : "";
  if (shape.tres.vcpus > 0) spec.resources.vcpus = shape.tres.vcpus;
  if (shape.tres.ram_gib > 0) spec.resources.ram_gib = shape.tres.ram_gib;
  if (!shape.partition.empty()) spec.labels["slurm.partition"] = shape.partition;
  if (!shape.qos.empty()) spec.labels["slurm.qos"] = shape.qos;
  if (shape.tres.nodes > 1) spec.labels["slurm.nodes"] = std::to_string(shape.tres.nodes);
  return spec;
}

std::optional<uint32_t> SacctReader::Spec(const std::vector<std::string_view>& row,
                                          const std::string& name, int64_t line) {
  const Col column = Field(row, Col::kAllocTres).empty() ? Col::kReqTres : Col::kAllocTres;
  std::string why;
  std::optional<Tres> tres = ParseTres(Field(row, column), &why);
  if (!tres) {
    errors_.Add(line, NameOf(column), Quote(Field(row, column)), why);
    return std::nullopt;
  }
  SacctShape shape{*tres, {}, std::string(Field(row, Col::kAccount)), std::string(Field(row, Col::kPartition)),
                   std::string(Field(row, Col::kQos))};
  if (shape.tenant.empty()) shape.tenant = Field(row, Col::kUser);
  if (shape.tenant.empty()) shape.tenant = "default";
  bool unknown = false;
  shape.gpu = ChoiceOf(Models(*tres, shape.partition, &unknown), catalog_);
  NoteGpuReading(shape, unknown);
  const std::string key = shape.Key();
  if (int64_t found = specs_.Find(key); found >= 0) return static_cast<uint32_t>(found);
  JobSpec spec = SpecOf(shape);
  spec.name = name;
  spec.origin.source = source_;
  spec.origin.path = "line " + std::to_string(line);
  return specs_.Add(key, std::move(spec));
}

void SacctReader::NoteGpuReading(const SacctShape& shape, bool unknown) {
  if (shape.tres.gpus.value_or(0) == 0) return void(++counts_.cpu_only);
  std::string types;
  for (const std::string& t : shape.tres.gpu_types) types += (types.empty() ? "" : ",") + t;
  ++counts_.gpu_names[(types.empty() ? "untyped" : "type " + types) +
                      (shape.partition.empty() ? "" : " in partition " + shape.partition) + " -> " +
                      DescribeChoice(shape.gpu, unknown)];
}

std::string SacctReader::UniqueName(std::string_view id) {
  const int64_t n = ++names_[std::string(id)];
  if (n == 1) return std::string(id);
  ++counts_.renamed;
  return std::string(id) + "#" + std::to_string(n);
}

void SacctReader::Row(std::string_view text, int64_t line) {
  const std::vector<std::string_view> row = SplitPipes(text);
  if (row.size() != columns_.size()) {
    errors_.Add(line, "", "", "has " + std::to_string(row.size()) + " fields; the header has " +
                                  std::to_string(columns_.size()));
    ++counts_.malformed;
    return;
  }
  std::string_view id = Field(row, Col::kJobId);
  if (id.empty()) id = Field(row, Col::kJobIdRaw);
  if (IsJobStep(id)) return void(++counts_.steps);
  const size_t before = errors_.count();
  bool bad = id.empty();
  if (bad) errors_.Add(line, "JobIDRaw", "", "is empty");
  std::optional<UnixSeconds> submit = Time(row, Col::kSubmit, line, &bad);
  std::optional<UnixSeconds> start = Time(row, Col::kStart, line, &bad);
  std::optional<UnixSeconds> end = Time(row, Col::kEnd, line, &bad);
  const std::string state = StateWord(Field(row, Col::kState));
  if (!bad && !submit) errors_.Add(line, "Submit", Quote(Field(row, Col::kSubmit)), "is unknown");
  if (!bad && state.empty()) errors_.Add(line, "State", "", "is empty");
  if (errors_.count() == before && !start) return void(++counts_.never_started);
  std::optional<int64_t> limit = ParseTimeLimit(Field(row, Col::kTimelimit));
  if (!limit) errors_.Add(line, "Timelimit", Quote(Field(row, Col::kTimelimit)), "is not a time limit");
  std::optional<int64_t> run =
      errors_.count() == before ? RunSeconds(row, *start, end, line) : std::optional<int64_t>(0);
  std::optional<uint32_t> spec;
  if (errors_.count() == before) spec = Spec(row, std::string(id), line);
  if (errors_.count() != before) return void(++counts_.malformed);
  if (!end) ++counts_.running;
  ++counts_.states[state];
  jobs_.push_back({UniqueName(id), *submit, *start, *run, *limit, *spec});
}

void SacctReader::Finish() {
  UnixSeconds first = jobs_.front().submit;
  for (const SacctJob& j : jobs_) first = std::min(first, j.submit);
  for (SacctJob& j : jobs_) {
    TraceJob tj;
    tj.name = std::move(j.name);
    tj.spec = j.spec;
    tj.submit_s = j.submit - first;
    tj.duration_s = j.run_s;
    tj.recorded_wait_s = RecordedWait(j.submit, j.start);
    // Past 68 years a limit is no limit.
    tj.time_limit_s = j.limit_s > INT32_MAX ? -1 : static_cast<int32_t>(j.limit_s);
    trace_.jobs.push_back(std::move(tj));
  }
  HistoryNotes notes(trace_.notes);
  notes.SecondZero("the earliest Submit", first,
                   zone_.name().empty() ? "the machine's time zone" : zone_.name());
  std::string states;
  for (const auto& [s, n] : counts_.states) states += (states.empty() ? "" : ", ") + WithThousands(n) + " " + s;
  trace_.notes.push_back("replayed by state: " + states);
  notes.GpuNames(counts_.gpu_names);
  notes.Count(counts_.never_started, "jobs never started (Start Unknown/None): not replayed");
  notes.Count(counts_.steps, "job step rows (123.batch, 123.0): skipped, the allocation row stands for the job");
  notes.Count(counts_.running, "jobs still running at the end of the query: replayed for their Elapsed so far");
  notes.Count(counts_.cpu_only, "jobs without GPUs in their TRES: replayed as CPU-only jobs");
  notes.Count(counts_.renamed, "rows repeat a job ID (requeued runs): named ID#2, ID#3, ...");
  if (counts_.malformed > 0) {
    const std::string first_error = errors_.ToStatus().message();
    notes.Count(counts_.malformed, "malformed rows skipped; the first: " +
                                       first_error.substr(0, first_error.find('\n')));
  }
}

Status SacctReader::Read(std::string_view all) {
  bool header = true;
  Status bad_header;
  ForEachLine(all, [&](std::string_view one, int64_t line) {
    if (one.empty()) return true;
    if (!header) {
      Row(one, line);
      return true;
    }
    header = false;
    bad_header = columns_.Read(one, source_);
    return bad_header.ok();
  });
  if (!bad_header.ok()) return bad_header;
  if (header) return Status::Invalid(source_ + ": is empty; expected sacct --parsable2 output with its header line");
  if (jobs_.empty() && !errors_.ok()) return errors_.ToStatus();
  if (jobs_.empty()) {
    return Status::Invalid(source_ + ": no job in the file started (" +
                           WithThousands(counts_.never_started) + " never started, " +
                           WithThousands(counts_.steps) + " step rows); nothing to replay");
  }
  Finish();
  return Status::Ok();
}

}  // namespace

Status ReadSacct(const std::string& path, const TraceOptions& options,
                 const catalog::Catalog& catalog, Trace& trace) {
  Result<std::unique_ptr<ZoneScope>> zone = ZoneScope::Open(options.time_zone);
  if (!zone.ok()) return zone.status();
  Result<HistoryFile> history = LoadHistory(path, options, catalog);
  if (!history.ok()) return history.status();
  SacctReader reader(path, catalog, history->map, **zone, trace);
  return reader.Read(history->text);
}

}  // namespace meridian::sim
