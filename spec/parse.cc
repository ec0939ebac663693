// ParseJobSpecs and LoadJobSpecFile: the top level of a spec file and the
// keys of one job; nested blocks are read in blocks.cc.
#include <cctype>
#include <map>

#include <yaml-cpp/yaml.h>

#include "core/enums.h"
#include "spec/blocks.h"
#include "spec/reader.h"
#include "spec/spec.h"
#include "spec/spec_node.h"

namespace meridian::spec {

namespace {

const std::vector<std::string>& JobKeys() {
  static const std::vector<std::string> keys = {
      "name",     "tenant",     "kind",      "model",      "work",     "resources",
      "deadline", "budget_usd", "priority",  "preemptible", "checkpoint", "data",
      "residency", "latency",   "driver",    "command",    "env",      "working_dir",
      "grace_period", "labels", "image"};
  return keys;
}

std::vector<std::string> KindNames() {
  std::vector<std::string> names;
  for (WorkloadKind k : AllWorkloadKinds()) names.emplace_back(ToString(k));
  return names;
}

bool IsEnvName(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

void ReadNameLike(SpecReader& r, const YAML::Node& v, const std::string& p, std::string& out) {
  if (std::optional<std::string> s = r.Name(v, p)) out = *s;
}

void ReadJobKey(SpecReader& r, const std::string& key, const YAML::Node& v, JobSpec& job,
                bool& has_kind) {
  const std::string& p = key;
  if (key == "name") {
    ReadNameLike(r, v, p, job.name);
  } else if (key == "tenant") {
    ReadNameLike(r, v, p, job.tenant);
  } else if (key == "kind") {
    has_kind = true;
    std::optional<std::string> s = r.String(v, p);
    if (!s) return;
    std::optional<WorkloadKind> k = ParseWorkloadKind(*s);
    if (!k) {
      r.Error(v, p, SpecReader::Show(v) + " is not a workload kind; use " +
                        JoinAlternatives(KindNames()));
      return;
    }
    job.kind = *k;
  } else if (key == "model") {
    ReadModel(r, v, p, job.model);
  } else if (key == "work") {
    ReadWork(r, v, p, job.work);
  } else if (key == "resources") {
    ReadResources(r, v, p, job.resources);
  } else if (key == "deadline") {
    ReadDeadline(r, v, p, job.deadline);
  } else if (key == "budget_usd") {
    if (std::optional<double> usd = r.Number(v, p, {0, true})) job.budget = Money::FromDollars(*usd);
  } else if (key == "priority") {
    std::optional<std::string> s = r.String(v, p);
    if (!s) return;
    std::optional<Priority> pr = ParsePriority(*s);
    if (!pr) {
      r.Error(v, p, SpecReader::Show(v) + " is not a priority; use critical, high, normal or low");
      return;
    }
    job.priority = *pr;
  } else if (key == "preemptible") {
    job.preemptible = r.Bool(v, p).value_or(false);
  } else if (key == "checkpoint") {
    ReadCheckpoint(r, v, p, job.checkpoint);
  } else if (key == "data") {
    ReadData(r, v, p, job.data);
  } else if (key == "residency") {
    job.residency = r.StringList(v, p, "[eu] or [eu, gcp:us-central1]");
  } else if (key == "latency") {
    ReadLatency(r, v, p, job.latency);
  } else if (key == "driver") {
    ReadDriver(r, v, p, job.driver);
  } else if (key == "command") {
    job.command = r.StringList(v, p, "[python3, train.py]");
    if (v.IsSequence() && v.size() == 0) r.Error(v, p, "is empty; give the program and its arguments");
  } else if (key == "env") {
    job.env = r.StringMap(v, p);
    for (const auto& [name, _] : job.env) {
      if (!IsEnvName(name)) {
        r.Error(v, JoinPath(p, name),
                "\"" + name + "\" is not an environment variable name (letters, digits and _, "
                "not starting with a digit)");
      } else if (name.starts_with("LD_")) {
        // The dynamic loader reads these in every process that starts with
        // them (LD_PRELOAD runs a library inside it): never a job's to set.
        r.Error(v, JoinPath(p, name),
                "\"" + name + "\": variables starting with LD_ steer the dynamic loader and are "
                "refused; set them inside the job's own command (a wrapper script) instead");
      }
    }
  } else if (key == "working_dir") {
    job.working_dir = r.String(v, p).value_or("");
  } else if (key == "grace_period") {
    job.grace_period_s = r.Duration(v, p, true);
  } else if (key == "labels") {
    job.labels = r.StringMap(v, p);
  } else if (key == "image") {
    job.image = r.String(v, p).value_or("");
  }
}

// work.global_batch_tokens sizes optimizer steps: only kinds that train take them.
void CheckGlobalBatch(SpecReader& r, const YAML::Node& node, const JobSpec& job) {
  if (!job.work.global_batch_tokens || IsTraining(job.kind)) return;
  const YAML::Node value = node["work"]["global_batch_tokens"];
  r.Error(value, "work.global_batch_tokens",
          SpecReader::Show(value) +
              " belongs only with a kind that trains (llm-training, training, fine-tuning), not "
              "with " +
              std::string(ToString(job.kind)) + ", which takes no optimizer steps");
}

void ReadJob(SpecReader& r, const YAML::Node& node, const std::string& prefix,
             const std::string& source, JobSpec& job) {
  job.origin.source = source;
  job.origin.path = prefix;
  r.BeginJob(prefix, &job.origin.marks);
  if (!r.ExpectMap(node, "", JobKeys())) return;
  bool has_kind = false;
  bool has_name = false;
  std::map<std::string, int> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = kv.first.Scalar();
    bool known = false;
    for (const std::string& k : JobKeys()) known = known || k == key;
    if (!known || seen[key]++ > 0 || kv.second.IsNull()) continue;
    has_name = has_name || key == "name";
    ReadJobKey(r, key, kv.second, job, has_kind);
  }
  if (!has_name) r.Error(node, "name", "is required");
  if (!has_kind) r.Error(node, "kind", "is required; use " + JoinAlternatives(KindNames()));
  if (has_kind) CheckGlobalBatch(r, node, job);
}

void CheckUniqueNames(SpecReader& r, const YAML::Node& jobs, const std::vector<JobSpec>& specs) {
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name.empty()) continue;
    auto [it, inserted] = first.emplace(specs[i].name, i);
    if (inserted) continue;
    r.BeginJob(IndexPath("jobs", i), nullptr);
    const YAML::Node& at = jobs[i].IsMap() && jobs[i]["name"] ? jobs[i]["name"] : jobs[i];
    r.Error(at, "name",
            "\"" + specs[i].name + "\" is already used by " + IndexPath("jobs", it->second) +
                "; job names must be unique in a file");
  }
}

// The jobs of a loaded document: one job, or a map whose only key is jobs:.
Result<std::vector<JobSpec>> ReadDocument(SpecReader& r, const YAML::Node& root,
                                          const std::string& source) {
  std::vector<JobSpec> specs;
  if (!root.IsMap()) {
    r.FileError(root.Mark(), SpecReader::Show(root) +
                                 " at the top level; a spec file is one job (a map with name and "
                                 "kind) or a map with jobs: [...]");
    return r.ToStatus();
  }
  if (!root["jobs"]) {
    specs.emplace_back();
    ReadJob(r, root, "", source, specs.back());
    if (!r.ok()) return r.ToStatus();
    return specs;
  }
  for (const auto& kv : root) {
    if (kv.first.IsScalar() && kv.first.Scalar() == "jobs") continue;
    r.Error(kv.first, kv.first.IsScalar() ? kv.first.Scalar() : "key",
            "cannot sit beside jobs:; put it inside each job of the list");
  }
  const YAML::Node& jobs = root["jobs"];
  if (r.ExpectList(jobs, "jobs", "jobs: [{name: a, kind: training}, ...]")) {
    if (jobs.size() == 0) r.Error(jobs, "jobs", "is empty; list at least one job");
    for (size_t i = 0; i < jobs.size(); ++i) {
      specs.emplace_back();
      ReadJob(r, jobs[i], IndexPath("jobs", i), source, specs.back());
    }
    CheckUniqueNames(r, jobs, specs);
  }
  if (!r.ok()) return r.ToStatus();
  return specs;
}

}  // namespace

Result<std::vector<JobSpec>> ParseJobSpecs(std::string_view yaml, std::string_view source_name) {
  const std::string source(source_name);
  SpecReader r(source);
  std::optional<YAML::Node> doc =
      LoadOneDocument(r, yaml, "a spec needs at least name and kind", "list several jobs under jobs:");
  if (!doc) return r.ToStatus();
  return ReadDocument(r, *doc, source);
}

Result<std::vector<JobSpec>> ParseJobSpecNode(const YAML::Node& root,
                                              std::string_view source_name) {
  const std::string source(source_name);
  SpecReader r(source);
  return ReadDocument(r, root, source);
}

Result<std::vector<JobSpec>> LoadJobSpecFile(const std::string& path) {
  Result<std::string> text = ReadSpecFile(path);
  if (!text.ok()) return text.status();
  return ParseJobSpecs(*text, path);
}

std::string LocateField(const JobSpec& job, const std::string& field) {
  return LocateInOrigin(job.origin, field);
}

}  // namespace meridian::spec
