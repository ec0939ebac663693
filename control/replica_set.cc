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

std::string ReplicaSetHandle(const std::vector<Replica>& set) {
  nlohmann::json arr = ReplicasToJson(set);
  for (size_t i = 0; i < set.size(); ++i) {
    arr[i]["handle"] = set[i].handle;
    arr[i]["down_since"] = set[i].down_since;
  }
  return std::string(kReplicaSetHandlePrefix) + arr.dump();
}

std::optional<std::vector<Replica>> ParseReplicaSetHandle(const std::string& handle) {
  if (!handle.starts_with(kReplicaSetHandlePrefix)) return std::nullopt;
  auto arr = nlohmann::json::parse(handle.substr(kReplicaSetHandlePrefix.size()), nullptr, false);
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
