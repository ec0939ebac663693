// meridian's own trace format (docs/trace-format.md): one JSON object per
// line, the trace keys (submit_s, duration_s, deadline_s, gpus, gpu_model,
// gpu_fraction, input_bound_fraction, cpu_sensitivity) beside any job-spec
// key. Job-spec keys go through spec/'s parser; lines of one shape are parsed and validated once.
#include <cmath>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/enums.h"
#include "sim/readers/readers.h"
#include "spec/spec.h"
#include "spec/suggest.h"

namespace meridian::sim {

namespace {

using nlohmann::json;

const std::vector<std::string>& TraceKeys() {
  static const std::vector<std::string> keys = {
      "submit_s",     "duration_s",  "deadline_s",           "gpus",
      "gpu_model",    "gpu_models",  "recorded_on",          "gpu_fraction",
      "input_bound_fraction",        "cpu_sensitivity"};
  return keys;
}

// Job-spec keys read here without the YAML parser.
const std::vector<std::string>& FastSpecKeys() {
  static const std::vector<std::string> keys = {"name", "tenant", "kind", "preemptible",
                                                "priority"};
  return keys;
}

// The other job-spec keys (docs/job-spec.md), read by spec::ParseJobSpecs.
const std::vector<std::string>& SlowSpecKeys() {
  static const std::vector<std::string> keys = {
      "model", "work",    "resources", "deadline", "budget_usd",  "checkpoint", "data",
      "residency", "latency", "driver", "command", "env", "working_dir", "grace_period",
      "labels"};
  return keys;
}

const std::vector<std::string>& AllKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all = TraceKeys();
    for (const auto* list : {&FastSpecKeys(), &SlowSpecKeys()}) {
      all.insert(all.end(), list->begin(), list->end());
    }
    return all;
  }();
  return keys;
}

bool In(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

bool IsValidName(const std::string& s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

std::string Show(const json& v) {
  if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
  return v.dump();
}

// The trace keys of one line.
struct LineKeys {
  std::string name;
  int64_t submit_s = 0;
  int64_t duration_s = -1;
  int64_t deadline_s = -1;
  std::optional<int> gpus;
  std::string gpu_model;
  std::vector<std::string> gpu_models;  // the models the job may use
  std::string recorded_on;              // the model duration_s was measured on
  float gpu_fraction = 0;
  CpuProfile cpu;     // input_bound_fraction, cpu_sensitivity (sim/cpu_model.h)
  bool slow = false;  // has job-spec keys beyond FastSpecKeys
};

// Reads the number `v` of `key` as whole seconds (fractions rounded), at
// least `min`; reports and returns nullopt otherwise.
std::optional<int64_t> Seconds(const json& v, const std::string& key, int64_t min,
                               const std::string& what, int64_t line, ErrorList& errors) {
  if (!v.is_number()) {
    errors.Add(line, key, Show(v), "must be a number of seconds " + what);
    return std::nullopt;
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < static_cast<double>(min) || d > 9.2e15) {
    errors.Add(line, key, Show(v),
               "must be " + std::string(min == 0 ? ">= 0" : "> 0") + " (seconds " + what + ")");
    return std::nullopt;
  }
  return std::llround(d);
}

// A key whose value is one catalog GPU model; `what` says what it must be.
bool ReadGpuModel(const json& v, const std::string& key, const std::string& what,
                  const catalog::Catalog& catalog, int64_t line, ErrorList& errors,
                  std::string& out) {
  if (!v.is_string()) {
    errors.Add(line, key, Show(v), what + " (e.g. \"V100-32GB\")");
    return false;
  }
  out = v.get<std::string>();
  if (catalog.FindGpu(out) != nullptr) return true;
  // The suggestion is an edit distance per catalog model: skipped when the
  // message would only be counted.
  errors.Add(line, key, "", errors.full() ? std::string() : *spec::UnknownGpuModel(catalog, out));
  return false;
}

// `gpu_models`: a non-empty list of catalog GPU models.
bool ReadGpuModels(const json& v, const catalog::Catalog& catalog, int64_t line,
                   ErrorList& errors, LineKeys& out) {
  if (!v.is_array() || v.empty()) {
    errors.Add(line, "gpu_models", Show(v),
               "must be a non-empty list of GPU models the job may use (e.g. [\"A100-80GB\", \"H100-80GB\"])");
    return false;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string field = "gpu_models[" + std::to_string(i) + "]";
    if (!v[i].is_string()) {
      errors.Add(line, field, Show(v[i]), "must be a GPU model name");
      return false;
    }
    const std::string model = v[i].get<std::string>();
    if (catalog.FindGpu(model) == nullptr) {
      errors.Add(line, field, "",
                 errors.full() ? std::string() : *spec::UnknownGpuModel(catalog, model));
      return false;
    }
    out.gpu_models.push_back(model);
  }
  return true;
}

bool ReadTraceKey(const std::string& key, const json& v, const catalog::Catalog& catalog,
                  int64_t line, ErrorList& errors, LineKeys& out) {
  if (key == "submit_s") {
    std::optional<int64_t> s = Seconds(v, key, 0, "from the start of the trace", line, errors);
    out.submit_s = s.value_or(0);
    return s.has_value();
  }
  if (key == "duration_s") {
    std::optional<int64_t> s = Seconds(v, key, 0, "the job runs", line, errors);
    out.duration_s = s.value_or(-1);
    return s.has_value();
  }
  if (key == "deadline_s") {
    std::optional<int64_t> s = Seconds(v, key, 1, "after submission", line, errors);
    out.deadline_s = s.value_or(-1);
    return s.has_value();
  }
  if (key == "gpus") {
    if (v.is_string() && v.get<std::string>() == "auto") return true;
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1'000'000) {
      errors.Add(line, key, Show(v), "must be \"auto\" or a whole number >= 0 (0: CPU only)");
      return false;
    }
    out.gpus = static_cast<int>(v.get<int64_t>());
    return true;
  }
  if (key == "gpu_model") {
    return ReadGpuModel(v, key, "must be a GPU model name", catalog, line, errors, out.gpu_model);
  }
  if (key == "recorded_on") {
    return ReadGpuModel(v, key, "must be the GPU model duration_s was measured on", catalog, line,
                        errors, out.recorded_on);
  }
  if (key == "gpu_models") return ReadGpuModels(v, catalog, line, errors, out);
  if (key == "input_bound_fraction" || key == "cpu_sensitivity") {
    const bool input = key == "input_bound_fraction";
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() < (input ? 1 : 1.0000001))) {
      errors.Add(line, key, Show(v),
                 input ? "must be a fraction from 0 to below 1 (the share of a step the GPU waits for input)"
                       : "must be a fraction from 0 to 1 (the share of input time that scales with vCPUs)");
      return false;
    }
    (input ? out.cpu.input_bound_fraction : out.cpu.cpu_sensitivity) = v.get<double>();
    if (out.cpu.input_bound_fraction < 0) out.cpu.input_bound_fraction = 0;
    return true;
  }
  // gpu_fraction
  if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() < 1)) {
    errors.Add(line, key, Show(v), "must be a fraction of one GPU, between 0 and 1 (exclusive)");
    return false;
  }
  out.gpu_fraction = v.get<float>();
  return true;
}

// The fast-path job-spec keys onto `spec`; false after reporting a problem.
bool ReadFastKey(const std::string& key, const json& v, int64_t line, ErrorList& errors,
                 JobSpec& spec) {
  if (key == "preemptible") {
    if (!v.is_boolean()) {
      errors.Add(line, key, Show(v), "must be true or false");
      return false;
    }
    spec.preemptible = v.get<bool>();
    return true;
  }
  if (!v.is_string()) {
    errors.Add(line, key, Show(v), "must be a string");
    return false;
  }
  const std::string s = v.get<std::string>();
  if (key == "tenant" || key == "name") {
    if (!IsValidName(s)) {
      errors.Add(line, key, Show(v),
                 "must be 1-63 letters, digits, '-', '_' or '.', starting with a letter or digit");
      return false;
    }
    (key == "tenant" ? spec.tenant : spec.name) = s;
  } else if (key == "kind") {
    std::optional<WorkloadKind> k = ParseWorkloadKind(s);
    if (!k) {
      std::vector<std::string> kinds;
      for (WorkloadKind w : AllWorkloadKinds()) kinds.emplace_back(ToString(w));
      errors.Add(line, key, Show(v), "is not a workload kind; use " + JoinAlternatives(kinds));
      return false;
    }
    spec.kind = *k;
  } else if (key == "priority") {
    std::optional<Priority> p = ParsePriority(s);
    if (!p) {
      errors.Add(line, key, Show(v), "is not a priority; use critical, high, normal or low");
      return false;
    }
    spec.priority = *p;
  }
  return true;
}

// spec/'s messages start "<source>:1:<col>: " for the one-line document given
// to it; they become "<source>:<line>: ".
std::string Relocate(const std::string& message, const std::string& source, int64_t line) {
  std::string out;
  size_t start = 0;
  const std::string prefix = source + ":";
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string one = message.substr(start, end - start);
    if (one.rfind(prefix, 0) == 0) {
      size_t pos = prefix.size();
      for (int colons = 0; colons < 2 && pos < one.size(); ++pos) {
        if (one[pos] == ':') ++colons;
        if (!std::isdigit(static_cast<unsigned char>(one[pos])) && one[pos] != ':') break;
      }
      while (pos < one.size() && one[pos] == ' ') ++pos;
      one = prefix + std::to_string(line) + ": " + one.substr(pos);
    } else {
      one = prefix + std::to_string(line) + ": " + one;
    }
    out += (out.empty() ? "" : "\n") + one;
    start = end + 1;
  }
  return out;
}

// The spec for a line with job-spec keys beyond the fast ones: those keys
// through spec::ParseJobSpecs, then the trace keys laid over.
std::optional<JobSpec> SlowSpec(const json& object, const LineKeys& keys,
                                const std::string& source, int64_t line, ErrorList& errors) {
  json doc = json::object();
  for (const auto& [key, value] : object.items()) {
    if (!In(TraceKeys(), key)) doc[key] = value;
  }
  if (!doc.contains("name")) doc["name"] = keys.name;
  if (!doc.contains("kind")) doc["kind"] = "training";
  const json* resources = doc.contains("resources") ? &doc["resources"] : nullptr;
  bool clash = false;
  auto conflict = [&](bool both, const char* key, const char* other) {
    if (!both) return;
    errors.Add(line, key, "", std::string("is given as well as ") + other + "; give one");
    clash = true;
  };
  conflict(keys.gpus && resources && resources->is_object() && resources->contains("gpus"), "gpus",
           "resources.gpus");
  conflict(!keys.gpu_model.empty() && resources && resources->is_object() &&
               resources->contains("gpu_models"),
           "gpu_model", "resources.gpu_models");
  conflict(!keys.gpu_models.empty() && resources && resources->is_object() &&
               resources->contains("gpu_models"),
           "gpu_models", "resources.gpu_models");
  conflict(keys.deadline_s >= 0 && doc.contains("deadline"), "deadline_s", "deadline");
  if (clash) return std::nullopt;
  Result<std::vector<JobSpec>> parsed = spec::ParseJobSpecs(doc.dump(), source);
  if (!parsed.ok()) {
    errors.AddRaw(Relocate(parsed.status().message(), source, line));
    return std::nullopt;
  }
  return std::move(parsed->front());
}

void LayTraceKeys(const LineKeys& keys, JobSpec& spec) {
  if (keys.gpus) spec.resources.gpus = keys.gpus;
  if (!keys.gpu_model.empty()) spec.resources.gpu_models = {keys.gpu_model};
  if (!keys.gpu_models.empty()) spec.resources.gpu_models = keys.gpu_models;
  // A recorded run time belongs to the model it was measured on: recorded_on,
  // else the one pinned model.
  spec.work.recorded_on = !keys.recorded_on.empty() ? keys.recorded_on : keys.gpu_model;
  if (keys.deadline_s >= 0) spec.deadline.after_submit_s = keys.deadline_s;
  if (keys.gpu_fraction > 0) spec.resources.mig = true;
}

// A parse error ("column 5: syntax error ...") or a number beyond a double
// ("number overflow parsing '1e999'"), without nlohmann's "[json.exception...] ".
std::string JsonError(const json::exception& e) {
  std::string what = e.what();
  const std::string marker = "parse error at line 1, ";
  size_t at = what.find(marker);
  if (at != std::string::npos) {
    what = what.substr(at + marker.size());
  } else if (size_t end = what.find("] "); what.starts_with("[json.exception.") && end != std::string::npos) {
    what = what.substr(end + 2);
  }
  return "is not valid JSON: " + what;
}

// Reads one line into `trace`; problems go to `errors`.
class LineReader {
 public:
  LineReader(const std::string& source, const catalog::Catalog& catalog, Trace& trace,
             ErrorList& errors)
      : source_(source), catalog_(catalog), trace_(trace), errors_(errors),
        specs_(&trace.specs) {}

  void Read(std::string_view text, int64_t line) {
    json object;
    try {
      object = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
      errors_.Add(line, "", "", JsonError(e));
      return;
    }
    if (!object.is_object()) {
      errors_.Add(line, "", Show(object), "is not a JSON object; a line is one job {\"name\": ...}");
      return;
    }
    LineKeys keys;
    if (!ReadKeys(object, line, keys)) return;
    if (!keys.gpu_model.empty() && !keys.gpu_models.empty()) {
      errors_.Add(line, "gpu_models", "", "is given as well as gpu_model; give one");
      return;
    }
    if (!CheckName(keys, line)) return;
    object.erase("name");
    object.erase("submit_s");
    object.erase("duration_s");
    object.erase("input_bound_fraction");
    object.erase("cpu_sensitivity");
    const std::string shape = object.dump();
    int64_t index = specs_.Find(shape);
    if (index < 0) {
      std::optional<JobSpec> spec = BuildSpec(object, keys, line);
      if (!spec) return;
      index = specs_.Add(shape, std::move(*spec));
    }
    TraceJob job;
    job.name = std::move(keys.name);
    job.spec = static_cast<uint32_t>(index);
    job.submit_s = keys.submit_s;
    job.duration_s = keys.duration_s;
    job.deadline_s = keys.deadline_s;
    job.gpu_fraction = keys.gpu_fraction;
    job.cpu = keys.cpu;
    trace_.jobs.push_back(std::move(job));
  }

 private:
  bool ReadKeys(const json& object, int64_t line, LineKeys& keys) {
    bool ok = true;
    for (const auto& [key, value] : object.items()) {
      if (In(TraceKeys(), key)) {
        ok = ReadTraceKey(key, value, catalog_, line, errors_, keys) && ok;
      } else if (key == "name") {
        JobSpec scratch;
        ok = ReadFastKey(key, value, line, errors_, scratch) && ok;
        keys.name = scratch.name;
      } else if (In(SlowSpecKeys(), key)) {
        keys.slow = true;
      } else if (!In(FastSpecKeys(), key)) {
        // The suggestion is an edit distance per known key: skipped when
        // the message would only be counted.
        errors_.Add(line, key, "",
                    errors_.full() ? std::string()
                                   : "is not a trace or job-spec key" +
                                         spec::SuggestFrom(key, AllKeys(), "keys"));
        ok = false;
      }
    }
    return ok;
  }

  bool CheckName(LineKeys& keys, int64_t line) {
    if (keys.name.empty()) keys.name = "line-" + std::to_string(line);
    auto [it, inserted] = names_.emplace(keys.name, line);
    if (inserted) return true;
    errors_.Add(line, "name", "\"" + keys.name + "\"",
                "is already used by line " + std::to_string(it->second) +
                    "; job names must be unique in a trace");
    return false;
  }

  std::optional<JobSpec> BuildSpec(const json& object, const LineKeys& keys, int64_t line) {
    std::optional<JobSpec> spec;
    if (keys.slow) {
      spec = SlowSpec(object, keys, source_, line, errors_);
      if (!spec) return std::nullopt;
    } else {
      spec.emplace();
      spec->origin.source = source_;
      bool ok = true;
      for (const auto& [key, value] : object.items()) {
        if (In(FastSpecKeys(), key)) ok = ReadFastKey(key, value, line, errors_, *spec) && ok;
      }
      if (!ok) return std::nullopt;
    }
    spec->name = keys.name;
    spec->origin.path = "line " + std::to_string(line);
    LayTraceKeys(keys, *spec);
    if (Status s = spec::ValidateAgainstCatalog(*spec, catalog_, 0); !s.ok()) {
      errors_.AddRaw(Relocate(s.message(), source_, line));
      return std::nullopt;
    }
    return spec;
  }

  const std::string& source_;
  const catalog::Catalog& catalog_;
  Trace& trace_;
  ErrorList& errors_;
  SpecTable specs_;
  std::unordered_map<std::string, int64_t> names_;
};

}  // namespace

Status ReadJsonl(const std::string& path, const catalog::Catalog& catalog, Trace& trace) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  ErrorList errors(path);
  LineReader reader(path, catalog, trace, errors);
  ForEachLine(*text, [&](std::string_view one, int64_t line) {
    size_t first = one.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && one[first] != '#') reader.Read(one, line);
    return true;
  });
  if (!errors.ok()) return errors.ToStatus();
  if (trace.jobs.empty()) return Status::Invalid(path + ": the trace has no jobs");
  return Status::Ok();
}

}  // namespace meridian::sim
