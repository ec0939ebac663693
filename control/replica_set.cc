#include "control/replica_set.h"

#include <array>
#include <cstdlib>

namespace meridian::control {

namespace {

constexpr std::array<std::string_view, 5> kStateNames = {"starting", "running", "restarting",
                                                         "stopping", "stopped"};

std::optional<ReplicaState> StateNamed(const std::string& name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == name) return static_cast<ReplicaState>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view ReplicaStateName(ReplicaState s) { return kStateNames[static_cast<size_t>(s)]; }

std::string ReplicaSetHandle(const std::vector<Replica>& set, const ServiceTally& slo) {
  nlohmann::json arr = ReplicasToJson(set);
  for (size_t i = 0; i < set.size(); ++i) {
    arr[i]["handle"] = set[i].handle;
    arr[i]["down_since"] = set[i].down_since;
    arr[i]["up_since"] = set[i].up_since;
    arr[i]["served"] = set[i].served;
    arr[i]["failures"] = set[i].failures;
  }
  const nlohmann::json o = {{"replicas", std::move(arr)},
                            {"slo", {{"until", slo.until}, {"minutes", slo.minutes}, {"met", slo.met}}}};
  return std::string(kReplicaSetHandlePrefix) + o.dump();
}

namespace {

// The stored handle's JSON: an object, or a bare array from before the
// tally was kept; discarded when it is not a replica set's.
nlohmann::json StoredSet(const std::string& handle) {
  if (!handle.starts_with(kReplicaSetHandlePrefix)) return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(handle.substr(kReplicaSetHandlePrefix.size()), nullptr, false);
}

}  // namespace

std::optional<ServiceTally> ParseServiceTally(const std::string& handle) {
  const nlohmann::json o = StoredSet(handle);
  if (!o.is_object() || !o.contains("slo")) return std::nullopt;
  try {
    const nlohmann::json& j = o.at("slo");
    return ServiceTally{j.at("until").get<int64_t>(), j.at("minutes").get<int64_t>(),
                        j.at("met").get<int64_t>()};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

void AddServiceTallyJson(const ServiceTally& slo, nlohmann::json& job) {
  job["slo_minutes"] = slo.minutes;
  job["slo_minutes_met"] = slo.met;
  job["slo_met_frac"] = slo.minutes > 0 ? nlohmann::json(static_cast<double>(slo.met) /
                                                         static_cast<double>(slo.minutes))
                                        : nlohmann::json(nullptr);
  job["slo_counted_until"] = slo.until;
}

std::optional<std::vector<Replica>> ParseReplicaSetHandle(const std::string& handle) {
  const nlohmann::json stored = StoredSet(handle);
  const nlohmann::json& arr = stored.is_object() && stored.contains("replicas") ? stored["replicas"] : stored;
  if (!arr.is_array()) return std::nullopt;
  std::vector<Replica> set;
  try {
    for (const auto& j : arr) {
      Replica r;
      r.index = j.at("index").get<int>();
      r.node = j.at("node").get<std::string>();
      r.gpus = j.at("gpus").get<std::vector<int>>();
      auto state = StateNamed(j.at("state").get<std::string>());
      if (!state) return std::nullopt;
      r.state = *state;
      r.restarts = j.at("restarts").get<int>();
      r.attempt = j.at("attempt").get<int>();
      r.handle = j.at("handle").get<std::string>();
      r.short_s = j.value("short_s", int64_t{0});  // absent in sets stored before it was kept
      r.down_since = j.value("down_since", int64_t{0});
      r.up_since = j.value("up_since", int64_t{0});
      r.served = j.value("served", std::vector<std::pair<int64_t, int64_t>>{});
      r.failures = j.value("failures", 0);
      set.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return set;
}

nlohmann::json ReplicasToJson(const std::vector<Replica>& set) {
  nlohmann::json arr = nlohmann::json::array();
  for (const Replica& r : set) {
    arr.push_back({{"index", r.index},
                   {"node", r.node},
                   {"gpus", r.gpus},
                   {"state", std::string(ReplicaStateName(r.state))},
                   {"restarts", r.restarts},
                   {"attempt", r.attempt},
                   {"short_s", r.short_s}});
  }
  return arr;
}

int64_t ShortOfCapacityS(const std::vector<Replica>& set) {
  int64_t total = 0;
  for (const Replica& r : set) total += r.short_s;
  return total;
}

}  // namespace meridian::control
