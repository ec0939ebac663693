// The Kubernetes Jobs reader (`--format k8s-jobs`): the List of batch/v1
// Jobs of `kubectl get jobs -A -o json` becomes one job per Job that
// started. docs/trace-format.md says what each field maps to and what is
// left out.
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "sim/readers/gpu_map.h"
#include "sim/readers/history.h"
#include "sim/readers/readers.h"

namespace meridian::sim {

namespace {

using nlohmann::json;

constexpr const char* kGpuResource = "nvidia.com/gpu";
constexpr const char* kProductLabels[] = {"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator"};
constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";

// The value at a '/'-free path of object keys, or null.
const json* At(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::string Text(const json* j) { return j && j->is_string() ? j->get<std::string>() : ""; }

// What one Job holds, read before its spec is built.
struct K8sJob {
  std::string name;  // namespace/name
  std::string tenant;
  UnixSeconds submit = 0, start = 0, end = 0;
  int gpus = 0;               // whole job: per pod x pods
  int pods = 1;
  int claims = 0;             // DRA claims counted as GPUs
  std::vector<std::string> products;  // GPU product label values asked for
};

// Why Jobs were left out, and what was read, for the notes.
struct K8sCounts {
  int64_t never_started = 0, unfinished = 0, malformed = 0, dra = 0, gangs = 0, queue_tenants = 0;
  std::map<std::string, int64_t> gpu_names;
};

class JobsReader {
 public:
  JobsReader(const std::string& source, const catalog::Catalog& catalog, const GpuMap& map,
             Trace& trace)
      : source_(source), catalog_(catalog), map_(map), named_(catalog), trace_(trace),
        specs_(&trace.specs) {}

  Status Read(const json& list);

 private:
  void Error(size_t item, const std::string& field, const std::string& message) {
    errors_.push_back(source_ + ": items[" + std::to_string(item) + "]" +
                      (current_.empty() ? "" : " (" + current_ + ")") + ": " + field + ": " + message);
  }
  std::optional<UnixSeconds> Time(const json& job, std::initializer_list<const char*> path,
                                  const std::string& field, size_t item);
  std::optional<UnixSeconds> End(const json& job, size_t item);
  std::optional<int> PodGpus(const json& pod, size_t item);
  std::optional<int> Quantity(const json& v, const std::string& field, size_t item);
  void Products(const json& pod, K8sJob& out);
  void Item(const json& job, size_t item);
  uint32_t Spec(const K8sJob& job);
  void Notes(UnixSeconds first);

  const std::string& source_;
  const catalog::Catalog& catalog_;
  const GpuMap& map_;
  NamedModelsCache named_;
  Trace& trace_;
  SpecTable specs_;
  std::vector<std::string> errors_;
  std::string current_;  // namespace/name of the item being read
  K8sCounts counts_;
  std::vector<std::pair<K8sJob, uint32_t>> jobs_;
};

std::optional<UnixSeconds> JobsReader::Time(const json& job, std::initializer_list<const char*> path,
                                            const std::string& field, size_t item) {
  const json* v = At(job, path);
  if (v == nullptr || v->is_null()) return std::nullopt;
  Result<UnixSeconds> t = ParseRfc3339(Text(v));
  if (!t.ok()) {
    Error(item, field, v->is_string() ? t.status().message() : v->dump() + " is not an RFC 3339 time");
    return std::nullopt;
  }
  return *t;
}

// completionTime, else the lastTransitionTime of a true Failed condition.
std::optional<UnixSeconds> JobsReader::End(const json& job, size_t item) {
  if (std::optional<UnixSeconds> done = Time(job, {"status", "completionTime"}, "status.completionTime", item)) {
    return done;
  }
  const json* conditions = At(job, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return std::nullopt;
  for (size_t i = 0; i < conditions->size(); ++i) {
    const json& c = (*conditions)[i];
    if (Text(At(c, {"type"})) == "Failed" && Text(At(c, {"status"})) == "True") {
      return Time(c, {"lastTransitionTime"},
                  "status.conditions[" + std::to_string(i) + "].lastTransitionTime", item);
    }
  }
  return std::nullopt;
}

// A GPU count: "2" or 2; fractions ("500m") are an error.
std::optional<int> JobsReader::Quantity(const json& v, const std::string& field, size_t item) {
  int64_t n = -1;
  if (v.is_number_integer()) n = v.get<int64_t>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (!s.empty() && s.size() < 8 && std::all_of(s.begin(), s.end(), ::isdigit)) n = std::stoll(s);
  }
  if (n < 0) {
    Error(item, field, v.dump() + " is not a whole number of GPUs");
    return std::nullopt;
  }
  return static_cast<int>(n);
}

// One pod's GPUs: the containers' nvidia.com/gpu limits (else requests)
// summed, or the largest init container's when larger.
std::optional<int> JobsReader::PodGpus(const json& pod, size_t item) {
  int sum = 0, init = 0;
  for (const char* list : {"containers", "initContainers"}) {
    const json* containers = At(pod, {list});
    if (containers == nullptr || !containers->is_array()) continue;
    for (size_t i = 0; i < containers->size(); ++i) {
      const json& c = (*containers)[i];
      const std::string base = std::string("spec.template.spec.") + list + "[" + std::to_string(i) +
                               "].resources.";
      const json* v = At(c, {"resources", "limits", kGpuResource});
      const char* kind = "limits";
      if (v == nullptr) v = At(c, {"resources", "requests", kGpuResource}), kind = "requests";
      if (v == nullptr) continue;
      std::optional<int> n = Quantity(*v, base + kind + "[\"" + kGpuResource + "\"]", item);
      if (!n) return std::nullopt;
      if (std::string_view(list) == "containers") sum += *n;
      else init = std::max(init, *n);
    }
  }
  return std::max(sum, init);
}

// The GPU product a pod asks for: nodeSelector, or the required node
// affinity's `In` terms, on the GFD and GKE labels.
void JobsReader::Products(const json& pod, K8sJob& out) {
  for (const char* label : kProductLabels) {
    const std::string v = Text(At(pod, {"nodeSelector", label}));
    if (!v.empty()) out.products.push_back(v);
  }
  const json* terms = At(pod, {"affinity", "nodeAffinity",
                               "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
  if (terms == nullptr || !terms->is_array()) return;
  for (const json& term : *terms) {
    const json* exprs = At(term, {"matchExpressions"});
    if (exprs == nullptr || !exprs->is_array()) continue;
    for (const json& e : *exprs) {
      const std::string key = Text(At(e, {"key"}));
      const bool product = std::any_of(std::begin(kProductLabels), std::end(kProductLabels),
                                       [&](const char* l) { return key == l; });
      const json* values = At(e, {"values"});
      if (!product || Text(At(e, {"operator"})) != "In" || values == nullptr || !values->is_array()) continue;
      for (const json& v : *values) {
        if (v.is_string()) out.products.push_back(v.get<std::string>());
      }
    }
  }
}

void JobsReader::Item(const json& job, size_t item) {
  const size_t before = errors_.size();
  K8sJob out;
  const std::string ns = Text(At(job, {"metadata", "namespace"}));
  out.name = (ns.empty() ? "" : ns + "/") + Text(At(job, {"metadata", "name"}));
  current_ = out.name;
  const std::string queue = Text(At(job, {"metadata", "labels", kQueueLabel}));
  out.tenant = !queue.empty() ? queue : !ns.empty() ? ns : "default";
  std::optional<UnixSeconds> submit = Time(job, {"metadata", "creationTimestamp"},
                                           "metadata.creationTimestamp", item);
  if (!submit && errors_.size() == before) Error(item, "metadata.creationTimestamp", "is missing");
  std::optional<UnixSeconds> start = Time(job, {"status", "startTime"}, "status.startTime", item);
  std::optional<UnixSeconds> end = End(job, item);
  const json* pod = At(job, {"spec", "template", "spec"});
  std::optional<int> gpus = pod ? PodGpus(*pod, item) : std::optional<int>(0);
  if (errors_.size() != before) return void(++counts_.malformed);
  if (!start) return void(++counts_.never_started);
  if (!end) return void(++counts_.unfinished);
  if (*end < *start) {
    Error(item, "status.completionTime", "is before status.startTime");
    return void(++counts_.malformed);
  }
  const json* claims = pod ? At(*pod, {"resourceClaims"}) : nullptr;
  if (*gpus == 0 && claims != nullptr && claims->is_array() && !claims->empty()) {
    out.claims = static_cast<int>(claims->size());
    gpus = out.claims;
    ++counts_.dra;
  }
  const json* parallelism = At(job, {"spec", "parallelism"});
  const json* completions = At(job, {"spec", "completions"});
  int64_t pods = parallelism && parallelism->is_number_integer() ? parallelism->get<int64_t>() : 1;
  if (completions && completions->is_number_integer()) pods = std::min(pods, completions->get<int64_t>());
  out.pods = static_cast<int>(std::clamp<int64_t>(pods, 1, 10'000));
  if (out.pods > 1 && *gpus > 0) ++counts_.gangs;
  out.gpus = *gpus * out.pods;
  if (pod) Products(*pod, out);
  if (!queue.empty()) ++counts_.queue_tenants;
  out.submit = *submit;
  out.start = *start;
  out.end = *end;
  const uint32_t spec = Spec(out);
  jobs_.emplace_back(std::move(out), spec);
}

uint32_t JobsReader::Spec(const K8sJob& job) {
  std::vector<std::string> models;
  bool unknown = false;
  for (const std::string& product : job.products) {
    const std::vector<std::string>* mapped = map_.Find(product);
    const std::vector<std::string>& named = mapped ? *mapped : named_.Of(product);
    unknown = unknown || named.empty();
    models.insert(models.end(), named.begin(), named.end());
  }
  if (unknown) models.clear();
  const GpuChoice gpu = ChoiceOf(std::move(models), catalog_);
  std::string products;
  for (const std::string& p : job.products) products += (products.empty() ? "" : ",") + p;
  if (job.gpus > 0) {
    ++counts_.gpu_names[(products.empty() ? "no GPU product label" : "product " + products) + " -> " +
                        DescribeChoice(gpu, unknown)];
  }
  std::string key = std::to_string(job.gpus) + "|" + std::to_string(job.pods) + "|" + job.tenant;
  for (const std::string& m : gpu.models) key += "|" + m;
  if (int64_t found = specs_.Find(key); found >= 0) return static_cast<uint32_t>(found);
  JobSpec spec;
  spec.name = job.name;
  spec.tenant = job.tenant;
  spec.kind = WorkloadKind::kTraining;
  spec.resources.gpus = job.gpus;
  if (job.gpus > 0) spec.resources.gpu_models = gpu.models;
  spec.work.recorded_on = job.gpus > 0 ? gpu.recorded_on : "";
  if (job.pods > 1) spec.labels["k8s.pods"] = std::to_string(job.pods);
  spec.origin.source = source_;
  spec.origin.path = job.name;
  return specs_.Add(key, std::move(spec));
}

void JobsReader::Notes(UnixSeconds first) {
  HistoryNotes notes(trace_.notes);
  notes.SecondZero("the earliest creationTimestamp", first);
  notes.GpuNames(counts_.gpu_names);
  notes.Count(counts_.never_started, "Jobs never started (no status.startTime): not replayed");
  notes.Count(counts_.unfinished, "Jobs not finished (no completionTime, not Failed): not replayed");
  notes.Count(counts_.dra, "Jobs with DRA resourceClaims and no nvidia.com/gpu: one GPU per claim");
  notes.Count(counts_.gangs, "Jobs with parallelism > 1: one gang of all their pods' GPUs");
  notes.Count(counts_.queue_tenants, "Jobs take their tenant from " + std::string(kQueueLabel));
  if (counts_.malformed > 0) {
    notes.Count(counts_.malformed, "malformed Jobs skipped; the first: " + errors_.front());
  }
}

Status JobsReader::Read(const json& list) {
  const json* items = At(list, {"items"});
  if (items == nullptr || !items->is_array()) {
    return Status::Invalid(source_ + ": items: is missing; expected the List of `kubectl get jobs -A -o json`");
  }
  for (size_t i = 0; i < items->size(); ++i) Item((*items)[i], i);
  if (jobs_.empty() && !errors_.empty()) {
    std::string m;
    for (size_t i = 0; i < errors_.size() && i < ErrorList::kMaxShown; ++i) m += (m.empty() ? "" : "\n") + errors_[i];
    return Status::Invalid(m);
  }
  if (jobs_.empty()) {
    return Status::Invalid(source_ + ": no Job in the file started and finished (" +
                           WithThousands(counts_.never_started) + " never started, " +
                           WithThousands(counts_.unfinished) + " not finished); nothing to replay");
  }
  UnixSeconds first = jobs_.front().first.submit;
  for (const auto& [j, spec] : jobs_) first = std::min(first, j.submit);
  for (auto& [j, spec] : jobs_) {
    TraceJob tj;
    tj.name = std::move(j.name);
    tj.spec = spec;
    tj.submit_s = j.submit - first;
    tj.duration_s = j.end - j.start;
    tj.recorded_wait_s = RecordedWait(j.submit, j.start);
    trace_.jobs.push_back(std::move(tj));
  }
  Notes(first);
  return Status::Ok();
}

}  // namespace

Status ReadK8sJobs(const std::string& path, const TraceOptions& options,
                   const catalog::Catalog& catalog, Trace& trace) {
  Result<HistoryFile> history = LoadHistory(path, options, catalog);
  if (!history.ok()) return history.status();
  json list;
  try {
    list = json::parse(history->text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    return Status::Invalid(path + ": is not valid JSON: " + e.what());
  }
  JobsReader reader(path, catalog, history->map, trace);
  return reader.Read(list);
}

}  // namespace meridian::sim
