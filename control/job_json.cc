#include "control/job_json.h"

#include <cerrno>
#include <cstdlib>

#include "control/replica_set.h"
#include "core/time.h"

namespace meridian::control {

namespace {

nlohmann::json OptTime(const std::optional<UnixSeconds>& t) {
  return t ? nlohmann::json(FormatRfc3339(*t)) : nlohmann::json(nullptr);
}

nlohmann::json PlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const char* b = s.c_str();
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(b, &end, 10);
  if (errno == 0 && end != b && *end == '\0' && s.find_first_of("xX") == std::string::npos) {
    return i;
  }
  errno = 0;
  double d = std::strtod(b, &end);
  if (errno == 0 && end != b && *end == '\0' &&
      s.find_first_of("xXnNiI") == std::string::npos) {
    return d;
  }
  return s;
}

}  // namespace

nlohmann::json JobToJson(const JobRow& j) {
  return JobToJson(j, nlohmann::json::parse(j.spec_json, nullptr, false));
}

nlohmann::json JobToJson(const JobRow& j, nlohmann::json spec) {
  nlohmann::json o;
  o["id"] = j.id;
  o["name"] = j.name;
  o["tenant"] = j.tenant;
  o["kind"] = j.kind;
  o["state"] = JobStateName(j.state);
  o["priority"] = j.priority;
  o["submitted_at"] = FormatRfc3339(j.submitted_at);
  o["created_at"] = FormatRfc3339(j.submitted_at);
  o["started_at"] = OptTime(j.started_at);
  o["ended_at"] = OptTime(j.ended_at);
  o["attempts"] = j.attempts;
  o["exit_code"] = j.exit_code ? nlohmann::json(*j.exit_code) : nlohmann::json(nullptr);
  if (j.placement.node.empty()) {
    o["placement"] = nullptr;
    o["pricing"] = nullptr;
  } else {
    o["placement"] = {{"node", j.placement.node},
                      {"gpus", j.placement.gpus},
                      {"mig", j.placement.mig.empty() ? nlohmann::json(nullptr)
                                                      : nlohmann::json(j.placement.mig)},
                      {"region", j.placement.region},
                      {"pricing", j.placement.pricing}};
    o["pricing"] = j.placement.pricing;
  }
  // A real-time service's replicas (control/replica_set.h).
  // Its shortfall of capacity: replica-seconds down while it ran.
  if (auto set = ParseReplicaSetHandle(j.handle)) {
    o["replicas"] = ReplicasToJson(*set);
    o["short_of_capacity_s"] = ShortOfCapacityS(*set);
    // Its minutes met (estimate/service_slo.h), counted by the daemon.
    if (auto slo = ParseServiceTally(j.handle)) AddServiceTallyJson(*slo, o);
  }
  o["reason"] = j.reason;
  o["cancel_requested"] = j.cancel_requested;
  o["cost_usd"] = static_cast<double>(j.cost_micro_usd) / 1e6;
  o["co2_g"] = static_cast<double>(j.co2_mg) / 1e3;
  o["events_url"] = "/v1/jobs/" + j.id + "/events";
  o["logs_url"] = "/v1/jobs/" + j.id + "/logs";
  o["spec"] = std::move(spec);
  return o;
}

nlohmann::json EventsToJson(const std::vector<EventRow>& events) {
  nlohmann::json arr = nlohmann::json::array();
  for (const EventRow& e : events) {
    nlohmann::json o = {{"seq", e.seq}, {"at", FormatRfc3339(e.at)}, {"type", e.type},
                        {"message", e.message}};
    if (e.type == "state") {
      o["from"] = e.from.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.from);
      o["to"] = e.to;
    }
    arr.push_back(std::move(o));
  }
  return {{"events", std::move(arr)}};
}

nlohmann::json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& v : n) a.push_back(YamlToJson(v));
      return a;
    }
    case YAML::NodeType::Scalar:
      if (n.Tag() == "!") return n.Scalar();  // quoted: a string
      return PlainScalar(n.Scalar());
    default:
      return nullptr;
  }
}

YAML::Node JsonToYaml(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      YAML::Node map(YAML::NodeType::Map);
      for (const auto& [key, value] : j.items()) map.force_insert(key, JsonToYaml(value));
      return map;
    }
    case nlohmann::json::value_t::array: {
      YAML::Node seq(YAML::NodeType::Sequence);
      for (const nlohmann::json& v : j) seq.push_back(JsonToYaml(v));
      return seq;
    }
    case nlohmann::json::value_t::string:
      return YAML::Node(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return YAML::Node(YAML::NodeType::Null);
    default:  // numbers and booleans: their JSON text, as the parser would read it
      return YAML::Node(j.dump());
  }
}

}  // namespace meridian::control
