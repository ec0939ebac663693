#include "backends/kubernetes/job_status.h"

#include <signal.h>

#include <nlohmann/json.hpp>

namespace meridian::backends::k8s {

namespace {

using Json = nlohmann::json;

UnixSeconds Time(const Json& obj, const char* key) {
  if (!obj.contains(key) || !obj[key].is_string()) return 0;
  auto t = ParseRfc3339(obj[key].get<std::string>());
  return t.ok() ? *t : 0;
}

const Json* Condition(const Json& status, const std::string& type) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) return nullptr;
  for (const Json& c : status["conditions"]) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return &c;
  }
  return nullptr;
}

std::string Why(const Json& c) {
  std::string s = c.value("reason", "");
  std::string m = c.value("message", "");
  return m.empty() ? s : s + ": " + m;
}

int Int(const Json& status, const char* key) {
  return status.contains(key) && status[key].is_number_integer() ? status[key].get<int>() : 0;
}

}  // namespace

// One Job object, as kubectl prints it.
static Result<JobState> ParseJob(const Json& j) {
  if (j.value("kind", "") != "Job") {
    return Status::Invalid("job status: kind \"" + j.value("kind", "") + "\" is not a Job");
  }
  const Json status = j.contains("status") && j["status"].is_object() ? j["status"] : Json::object();
  JobState s;
  s.started = Time(status, "startTime");
  if (j.contains("metadata") && j["metadata"].is_object() &&
      j["metadata"].contains("annotations") && j["metadata"]["annotations"].is_object()) {
    const Json& notes = j["metadata"]["annotations"];
    if (notes.contains(kLogDirAnnotation) && notes[kLogDirAnnotation].is_string()) {
      s.log_dir = notes[kLogDirAnnotation].get<std::string>();
    }
  }
  if (const Json* c = Condition(status, "Complete")) {
    s.phase = control::RunPhase::kExited;
    s.exit_code = 0;
    s.ended = status.contains("completionTime") ? Time(status, "completionTime")
                                                 : Time(*c, "lastTransitionTime");
    s.message = Why(*c);
  } else if (const Json* c = Condition(status, "Failed")) {
    s.ended = Time(*c, "lastTransitionTime");
    s.message = Why(*c);
    if (c->value("reason", "") == "DeadlineExceeded") {
      s.phase = control::RunPhase::kKilled;
      s.signal = SIGKILL;
    } else {
      s.phase = control::RunPhase::kExited;  // the exit code comes from the pods
    }
  } else if (const Json* c = Condition(status, "Suspended"); c != nullptr && Int(status, "active") == 0) {
    s.phase = control::RunPhase::kKilled;
    s.signal = SIGTERM;
    s.ended = Time(*c, "lastTransitionTime");
    s.message = Why(*c);
  } else if (Int(status, "active") > 0 && Int(status, "ready") > 0) {
    s.phase = control::RunPhase::kRunning;
  }
  return s;
}

Result<JobState> ParseJobStatus(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Invalid("job status: not JSON");
  return ParseJob(j);
}

Result<std::map<std::string, JobState>> ParseJobList(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Invalid("job list: not JSON");
  const std::string kind = j.value("kind", "");
  if ((kind != "List" && kind != "JobList") || !j.contains("items") || !j["items"].is_array()) {
    return Status::Invalid("job list: kind \"" + kind + "\" with items is not a list of Jobs");
  }
  std::map<std::string, JobState> out;
  for (const Json& item : j["items"]) {
    const std::string name = item.contains("metadata") && item["metadata"].is_object()
                                 ? item["metadata"].value("name", "")
                                 : "";
    if (name.empty()) return Status::Invalid("job list: an item has no metadata.name");
    auto s = ParseJob(item);
    if (!s.ok()) return s.status().WithContext("job list: " + name);
    out[name] = std::move(s).value();
  }
  return out;
}

Result<std::optional<int>> ParsePodExitCode(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("items") || !j["items"].is_array()) {
    return Status::Invalid("pod list: not a list of pods");
  }
  for (const Json& pod : j["items"]) {
    const Json& st = pod.contains("status") ? pod["status"] : Json::object();
    if (!st.contains("containerStatuses") || !st["containerStatuses"].is_array()) continue;
    for (const Json& cs : st["containerStatuses"]) {
      if (!cs.contains("state") || !cs["state"].contains("terminated")) continue;
      const Json& t = cs["state"]["terminated"];
      if (t.contains("exitCode") && t["exitCode"].is_number_integer()) {
        return std::optional<int>(t["exitCode"].get<int>());
      }
    }
  }
  return std::optional<int>();
}

}  // namespace meridian::backends::k8s
