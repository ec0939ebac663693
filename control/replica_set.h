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
// object {"replicas": [...], "slo": {...}} (ReplicaSetHandle; a set stored
// before the tally was kept is a bare array), so the API shows each
// replica's node, state and restarts (ReplicasToJson) and the service's
// minutes met without a table of its own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  // Since when it serves (seen running; 0: not serving), and the stretches
  // it served that ended after the service's tally was last brought up to
  // date (ServiceTally::until), [from, to) on the daemon's clock.
  int64_t up_since = 0;
  std::vector<std::pair<int64_t, int64_t>> served;
  // Its ends in a row, each before it had served kReplicaSteadyS: the
  // exponent of its next restart's backoff. 0 once it serves that long.
  int failures = 0;
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

// A replica that serves this long (on the daemon's clock) is steady: its next
// end starts its failures over.
inline constexpr int64_t kReplicaSteadyS = 300;

// The service's whole minutes due and met (estimate/service_slo.h) from its
// submission until `until`, a whole number of minutes after it; 0: not yet
// counted (until is then the submission).
struct ServiceTally {
  int64_t until = 0;
  int64_t minutes = 0;
  int64_t met = 0;
};

// ReplicaRunId and ParseReplicaRunId (control/backend.h) name replica i's
// process "<job id>.r<i>".

inline constexpr std::string_view kReplicaSetHandlePrefix = "replicas:";
std::string ReplicaSetHandle(const std::vector<Replica>& set, const ServiceTally& slo);
// The set a stored handle holds; nullopt when it is not a replica set's.
std::optional<std::vector<Replica>> ParseReplicaSetHandle(const std::string& handle);
// The tally a stored handle holds; nullopt when it is not a replica set's
// or holds none.
std::optional<ServiceTally> ParseServiceTally(const std::string& handle);
// The API's view of a tally: slo_minutes, slo_minutes_met, slo_met_frac
// (null before a minute is counted) and slo_counted_until, added to `job`.
void AddServiceTallyJson(const ServiceTally& slo, nlohmann::json& job);
// The API's view: [{"index", "node", "gpus", "state", "restarts", "attempt",
// "short_s"}].
nlohmann::json ReplicasToJson(const std::vector<Replica>& set);
// The set's shortfall of capacity so far: the replicas' short_s summed.
int64_t ShortOfCapacityS(const std::vector<Replica>& set);

}  // namespace meridian::control
