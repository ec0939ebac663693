// A real-time service's replica set as `meridian serve` keeps it: one process
// per member of the service's allocation (the scheduler places a set as a
// gang of n members in n distinct nodes, sched/plugins/realtime_replicas.h),
// each launched by the backend as an attempt of its own under the name
// "<job id>.r<index>" (ReplicaRunId), so that the backend watches, stops and
// reports each replica apart. The daemon restarts a replica whose process
// ends while the service runs, after a backoff that grows with the replica's
// restarts (BackendRetryPolicy::BackoffMs), and replaces one that was
// reclaimed (killed by SIGKILL it was not sent, or lost with its node) at
// once. The time each replica is down while the service runs is its
// shortfall of capacity (short_s); docs/control-plane.md, "Real-time
// services".
//
// The set is stored in the job's `handle` column as "replicas:" and a JSON
// array (ReplicaSetHandle), so the API shows each replica's node, state and
// restarts (ReplicasToJson) without a table of its own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/backend.h"

namespace meridian::control {

enum class ReplicaState {
  kStarting,    // launched, not yet seen running
  kRunning,
  kRestarting,  // its process ended; launched again at Replica::next_ms
  kStopping,    // told to stop (the service is cancelled or preempted)
  kStopped,
};
std::string_view ReplicaStateName(ReplicaState s);

struct Replica {
  int index = 0;
  std::string node;
  std::vector<int> gpus;
  ReplicaState state = ReplicaState::kStarting;
  int restarts = 0;   // launches after its first
  int attempt = 0;    // the backend attempt of its current process: 1, 2, ...
  std::string handle; // the backend's handle of that process; "" until launched
  // Seconds the replica was down while the service ran (ended until its
  // replacement ran), and since when it is down now (0: up or not wanted).
  int64_t short_s = 0;
  int64_t down_since = 0;
  // Not stored: a launch or stop on its way (Reconciler::BackendCall), and
  // when a restarting replica is launched again (steady clock, ms).
  bool pending = false;
  int64_t next_ms = 0;
  // Its last launch may have been made without being recorded, and the
  // backend could not say: looked up by name before it is launched again.
  bool find_first = false;
  // Whether its process may still be alive (launched and not seen ending).
  bool Live() const {
    return !handle.empty() && state != ReplicaState::kRestarting && state != ReplicaState::kStopped;
  }
};

// ReplicaRunId and ParseReplicaRunId (control/backend.h) name replica i's
// process "<job id>.r<i>".

inline constexpr std::string_view kReplicaSetHandlePrefix = "replicas:";
std::string ReplicaSetHandle(const std::vector<Replica>& set);
// The set a stored handle holds; nullopt when it is not a replica set's.
std::optional<std::vector<Replica>> ParseReplicaSetHandle(const std::string& handle);
// The API's view: [{"index", "node", "gpus", "state", "restarts", "attempt",
// "short_s"}].
nlohmann::json ReplicasToJson(const std::vector<Replica>& set);
// The set's shortfall of capacity so far: the replicas' short_s summed.
int64_t ShortOfCapacityS(const std::vector<Replica>& set);

}  // namespace meridian::control
