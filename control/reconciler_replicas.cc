// The reconciler's real-time services: each placed as a replica set whose
// members run as processes of their own (control/replica_set.h), launched,
// restarted after a backoff when they end while the service runs, and
// stopped together when it is cancelled or preempted. Their calls go through
// CallBackend like any launch or stop (the Threading paragraph of
// reconciler.h); each replica's changes are events of the job. Recovery's
// side is in reconciler_replica_recovery.cc.
#include <signal.h>

#include <algorithm>
#include <sstream>

#include "control/reconciler_state.h"
#include "estimate/service_slo.h"
#include "sched/fleet.h"
#include "sched/queued_job.h"

namespace meridian::control {

namespace {

// "replica 1 exited with code 3", "replica 1 was killed by signal 9".
std::string ReplicaEnd(const RunObservation& o) {
  const std::string how = DescribeEnd(o);
  return o.phase == RunPhase::kExited ? how : "was " + how;
}

// "1.5": seconds as minutes, to a tenth (rounded down).
std::string Minutes(int64_t s) {
  return std::to_string(s / 60) + "." + std::to_string(s % 60 * 10 / 60);
}

// "replica 1 is back after 90s short of capacity (1.5 replica-minutes; the
// service: 1.5 in all)".
std::string BackAfter(const Reconciler::Active& a, const Replica& r, int64_t short_s) {
  return "replica " + std::to_string(r.index) + " is back after " + std::to_string(short_s) +
         "s short of capacity (" + Minutes(short_s) + " replica-minutes; the service: " +
         Minutes(ShortOfCapacityS(a.replicas)) + " in all)";
}

// The replica no longer serves: the stretch since it was seen running is
// kept for the service's tally (Reconciler::TallyService).
void EndServing(Replica& r, UnixSeconds now) {
  if (r.up_since == 0) return;
  r.served.emplace_back(r.up_since, std::max<int64_t>(r.up_since, now));
  r.up_since = 0;
}

// The replica's process ended while wanted: it is launched again, and the
// service is short of it from now until its replacement runs. An end before
// it served kReplicaSteadyS adds to its failures in a row; a later one
// starts them over.
void MarkDown(Replica& r, UnixSeconds now) {
  if (r.up_since != 0 && now - r.up_since >= kReplicaSteadyS) r.failures = 0;
  r.failures++;
  EndServing(r, now);
  r.restarts++;
  r.state = ReplicaState::kRestarting;
  r.handle.clear();
  if (r.down_since == 0) r.down_since = now;  // a failed launch keeps it down since the end
}

// Adds the time since the replica went down to its shortfall; the seconds added.
int64_t EndShortfall(Replica& r, UnixSeconds now) {
  if (r.down_since == 0) return 0;
  const int64_t s = std::max<int64_t>(0, now - r.down_since);
  r.short_s += s;
  r.down_since = 0;
  return s;
}

std::string Seconds(int64_t ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

// A process ended by a SIGKILL the daemon did not send (it was not being
// stopped), or lost with its node, was taken from outside: a spot reclaim,
// or a node gone. Any other end (an exit code, another signal) is the
// replica's own failure.
bool Reclaimed(const RunObservation& o) {
  return o.phase == RunPhase::kLost || (o.phase == RunPhase::kKilled && o.signal == SIGKILL);
}

}  // namespace

Replica* FindReplica(std::vector<Replica>& set, int index) {
  for (Replica& r : set) {
    if (r.index == index) return &r;
  }
  return nullptr;
}

Reconciler::BackendCall ReplicaCall(PendingCall kind, const Reconciler::Active& a,
                                    const Replica& r) {
  Reconciler::BackendCall call;
  call.kind = kind;
  call.job_id = a.row.id;
  call.attempt = a.row.attempts;
  call.replica = r.index;
  return call;
}

void Reconciler::NoteReplicas(Active& a, const std::string& message, UnixSeconds now,
                              std::vector<JobUpdate>* out) {
  JobUpdate u;
  u.job_id = a.row.id;
  if (a.stop_kind == StopKind::kNone) TallyService(a, now);
  u.handle = ReplicaSetHandle(a.replicas, a.slo);
  u.message = message;
  u.at = now;
  a.row.handle = *u.handle;
  out->push_back(std::move(u));
}

void Reconciler::LaunchReplica(Active& a, Replica& r) {
  BackendCall call = ReplicaCall(PendingCall::kLaunch, a, r);
  call.launch = LaunchRequestFor(a, CheckpointDir(a.row.id), LogDir(a.row.id));
  call.launch.job_id = ReplicaRunId(a.row.id, r.index);
  call.launch.attempt = r.attempt + 1;
  call.launch.node = r.node;
  call.launch.gpus = r.gpus;
  call.launch.env["MERIDIAN_SERVICE_JOB_ID"] = a.row.id;
  call.launch.env["MERIDIAN_REPLICA"] = std::to_string(r.index);
  r.pending = true;
  calls_.push_back(std::move(call));
}

void Reconciler::StopReplica(Active& a, Replica& r) {
  BackendCall call = ReplicaCall(PendingCall::kStop, a, r);
  call.handle = r.handle;
  call.grace_s = GraceOf(a);
  r.pending = true;
  r.state = ReplicaState::kStopping;
  calls_.push_back(std::move(call));
}

void Reconciler::StopAttempt(Active& a, const std::string& on_stopped, UnixSeconds now,
                             std::vector<JobUpdate>* out) {
  if (a.replicas.empty()) {
    RequestStop(a, on_stopped);
  } else {
    StopReplicas(a, on_stopped, now, out);
  }
}

void Reconciler::StopReplicas(Active& a, const std::string& on_stopped, UnixSeconds now,
                              std::vector<JobUpdate>* out) {
  TallyService(a, now);  // the service is due no longer
  for (Replica& r : a.replicas) {
    if (r.pending) continue;  // its answer sees the stop (ReplicaCallAnswered)
    if (r.Live()) {
      StopReplica(a, r);
    } else {
      EndShortfall(r, now);  // short until the service stopped
      r.state = ReplicaState::kStopped;
    }
  }
  NoteReplicas(a, on_stopped, now, out);
  EndReplicaSetIfStopped(a, std::nullopt, now, out);
}

void Reconciler::ReplicaCallAnswered(const BackendCall& call, UnixSeconds now,
                                     std::vector<JobUpdate>* out) {
  auto it = active_.find(call.job_id);
  Active* a = it == active_.end() ? nullptr : it->second.get();
  Replica* r = a != nullptr && a->row.attempts == call.attempt ? FindReplica(a->replicas, call.replica)
                                                               : nullptr;
  if (r == nullptr || a->done) {
    // Nothing wants the process any more: a launch that succeeded is stopped.
    if (call.kind == PendingCall::kLaunch && call.launched.ok()) {
      BackendCall stop;
      stop.kind = PendingCall::kStop;
      stop.handle = *call.launched;
      stop.grace_s = call.launch.grace_period_s;
      calls_.push_back(std::move(stop));
    }
    return;
  }
  r->pending = false;
  if (call.kind == PendingCall::kAdopt || call.kind == PendingCall::kFind) {
    ReplicaRecoveryAnswered(*a, *r, call, now, out);
    return;
  }
  if (call.kind == PendingCall::kStop) {
    ReplicaStopAnswered(*a, *r, call.stopped, now, out);
    return;
  }
  if (!call.launched.ok()) {
    ReplicaLaunchFailed(*a, *r, call.launched.status(), now, out);
    return;
  }
  r->attempt = call.launch.attempt;
  r->handle = *call.launched;
  r->state = ReplicaState::kStarting;
  metrics_->launches++;
  const std::string started = "replica " + std::to_string(r->index) + " started on node " +
                              r->node + " (attempt " + std::to_string(r->attempt) + ", " +
                              r->handle + ")";
  if (a->row.state == JobState::kScheduled) {
    JobUpdate u;
    u.handle = ReplicaSetHandle(a->replicas, a->slo);
    u.started_at = now;
    Transition(*a, JobState::kStarting, started, now, out, u);
  } else {
    NoteReplicas(*a, started, now, out);
  }
  if (a->stop_kind != StopKind::kNone) StopReplica(*a, *r);  // cancelled meanwhile
}

void Reconciler::ReplicaStopAnswered(Active& a, Replica& r, const Status& st, UnixSeconds now,
                                     std::vector<JobUpdate>* out) {
  if (st.ok()) return;  // its end shows up in Poll
  if (IsTransient(st)) {
    r.state = ReplicaState::kRunning;  // sent again by KeepReplicaSets
    r.next_ms = NowMs() + options_.backend_retry.BackoffMs(1);
    return;
  }
  // The backend does not know the process: nothing of it is left to stop.
  EndServing(r, now);
  r.state = ReplicaState::kStopped;
  r.handle.clear();
  NoteReplicas(a, "replica " + std::to_string(r.index) + ": the backend cannot stop it (" +
                      st.message() + ")", now, out);
  EndReplicaSetIfStopped(a, std::nullopt, now, out);
}

void Reconciler::ReplicaLaunchFailed(Active& a, Replica& r, const Status& st, UnixSeconds now,
                                     std::vector<JobUpdate>* out) {
  const std::string what = "replica " + std::to_string(r.index) + ": launch failed: " + st.message();
  if (!IsTransient(st)) {
    // The same launch fails the same way again: the service cannot run.
    r.state = ReplicaState::kStopped;
    a.stop_kind = StopKind::kNone;
    JobUpdate u;
    u.ended_at = now;
    u.handle = ReplicaSetHandle(a.replicas, a.slo);
    Transition(a, JobState::kFailed, what, now, out, u);
    for (Replica& other : a.replicas) {
      if (other.Live() && !other.pending) StopReplica(a, other);
    }
    ReleaseAttempt(a, now, out);
    return;
  }
  ScheduleRestart(a, r, what, now, out);
}

void Reconciler::ScheduleRestart(Active& a, Replica& r, const std::string& why, UnixSeconds now,
                                 std::vector<JobUpdate>* out) {
  MarkDown(r, now);
  const int64_t wait = options_.backend_retry.BackoffMs(r.failures);
  r.next_ms = NowMs() + wait;
  NoteReplicas(a, why + "; restarting in " + Seconds(wait) + " (restart " +
                      std::to_string(r.restarts) + ")", now, out);
}

bool Reconciler::HandleReplicaObservation(const RunObservation& o, UnixSeconds now,
                                          std::vector<JobUpdate>* out) {
  auto ref = ParseReplicaRunId(o.job_id);
  if (!ref) return false;
  auto it = active_.find(ref->job_id);
  Replica* r = it == active_.end() ? nullptr : FindReplica(it->second->replicas, ref->index);
  if (r == nullptr || r->attempt != o.attempt || r->handle != o.handle) return true;
  Active& a = *it->second;
  if (o.phase == RunPhase::kStarting) return true;
  if (o.phase == RunPhase::kRunning) {
    if (r->state == ReplicaState::kStarting) r->state = ReplicaState::kRunning;
    if (r->up_since == 0) r->up_since = now;
    const bool was_down = r->down_since != 0;
    const int64_t short_s = EndShortfall(*r, now);
    if (a.row.state == JobState::kStarting) {
      JobUpdate u;
      u.started_at = o.started ? o.started : now;
      u.handle = ReplicaSetHandle(a.replicas, a.slo);
      Transition(a, JobState::kRunning, "running: replica " + std::to_string(r->index) + " up",
                 now, out, u);
    } else {
      NoteReplicas(a, was_down ? BackAfter(a, *r, short_s) : "", now, out);
    }
    return true;
  }
  const std::string ended = "replica " + std::to_string(r->index) + " " + ReplicaEnd(o);
  if (a.stop_kind != StopKind::kNone || a.done || r->state == ReplicaState::kStopping) {
    EndServing(*r, now);
    r->state = ReplicaState::kStopped;
    r->handle.clear();
    NoteReplicas(a, ended, now, out);
    EndReplicaSetIfStopped(a, o, now, out);
    return true;
  }
  if (Reclaimed(o)) {
    ReplaceReclaimed(a, *r, ended, now, out);
  } else {
    ScheduleRestart(a, *r, ended, now, out);
  }
  return true;
}

void Reconciler::ReplaceReclaimed(Active& a, Replica& r, const std::string& why, UnixSeconds now,
                                  std::vector<JobUpdate>* out) {
  MarkDown(r, now);
  if (r.failures > 1) {
    // Reclaimed again before it served kReplicaSteadyS: a crash loop (the
    // OOM killer's SIGKILL looks like a reclaim) waits as a failure does,
    // one step behind, the first reclaim having gone at once.
    const int64_t wait = options_.backend_retry.BackoffMs(r.failures - 1);
    r.next_ms = NowMs() + wait;
    NoteReplicas(a, why + ": reclaimed, its end " + std::to_string(r.failures) +
                        " in a row before serving " + std::to_string(kReplicaSteadyS) +
                        "s (a crash loop, or the OOM killer); replacing it in " + Seconds(wait) +
                        " (restart " + std::to_string(r.restarts) + ")", now, out);
    return;
  }
  r.next_ms = 0;
  NoteReplicas(a, why + ": reclaimed; replacing it at once (restart " +
                      std::to_string(r.restarts) + ")", now, out);
  LaunchReplica(a, r);
}

void Reconciler::EndReplicaSetIfStopped(Active& a, std::optional<RunObservation> last,
                                        UnixSeconds now, std::vector<JobUpdate>* out) {
  if (a.done || a.stop_kind == StopKind::kNone) return;
  const bool stopped = std::all_of(a.replicas.begin(), a.replicas.end(), [](const Replica& r) {
    return !r.pending && r.state == ReplicaState::kStopped;
  });
  if (!stopped) return;
  // The set ends as one attempt: cancelled, or preempted and requeued.
  RunObservation end = last.value_or(RunObservation{});
  if (!last) {
    end.phase = RunPhase::kKilled;
    end.signal = 15;
    end.ended = now;
  }
  end.job_id = a.row.id;
  end.attempt = a.row.attempts;
  a.replicas.clear();
  HandleObservation(end, now, out);
}

void Reconciler::KeepReplicaSets(UnixSeconds now, std::vector<JobUpdate>* out) {
  const int64_t ms = NowMs();
  for (auto& entry : watch_) {  // a job with replicas is never Quiet
    Active& a = *entry.second;
    if (a.done || a.replicas.empty() || resync_.count(a.row.id)) continue;
    // Scheduled: a set taken back before any launch of it was recorded.
    if (a.row.state != JobState::kScheduled && a.row.state != JobState::kStarting &&
        a.row.state != JobState::kRunning && a.row.state != JobState::kCheckpointing) {
      continue;
    }
    if (a.stop_kind == StopKind::kNone) SizeReplicaSet(a, now, out);
    // The tally is brought up to date once a minute (and started).
    if (a.stop_kind == StopKind::kNone && (a.slo.until == 0 || now - a.slo.until >= 60)) {
      NoteReplicas(a, "", now, out);
    }
    for (Replica& r : a.replicas) {
      if (r.pending || ms < r.next_ms) continue;
      if (r.find_first) {
        FindReplicaLaunch(a, r, "after a daemon restart");
        continue;
      }
      const bool unwanted = a.stop_kind != StopKind::kNone ||
                            (a.replicas_wanted >= 0 && r.index >= a.replicas_wanted);
      if (unwanted) {
        if (r.Live() && r.state != ReplicaState::kStopping) StopReplica(a, r);  // sent again
      } else if (r.state == ReplicaState::kRestarting) {
        LaunchReplica(a, r);
      }
    }
  }
}

const sched::ModelDemand* Reconciler::DemandOn(Active& a, const std::string& node_name) {
  if (!a.spec || !fleet_ || !fleet_->fleet) return nullptr;
  auto node = fleet_->by_name.find(node_name);
  if (node == fleet_->by_name.end()) return nullptr;
  if (!a.queued) {  // after a restart: the demands as the scheduler sized them
    sched::EnqueueRequest req{JobId(static_cast<uint32_t>(a.row.seq)), TenantId(0),
                              a.row.submitted_at, static_cast<uint64_t>(a.row.seq)};
    auto q = sched::MakeQueuedJob(a.spec, *options_.catalog, req);
    if (!q.ok()) return nullptr;
    a.queued = std::move(q).value();
  }
  const sched::ModelDemand* found = nullptr;
  for (const sched::ModelDemand& d : a.queued->demands) {
    if (d.model == fleet_->fleet->node(node->second).gpu_model) found = &d;
  }
  return found;
}

void Reconciler::TallyService(Active& a, UnixSeconds now) {
  if (!a.spec) return;
  if (a.slo.until == 0) a.slo.until = a.row.submitted_at;
  const int64_t to = a.slo.until + std::max<int64_t>(0, now - a.slo.until) / 60 * 60;
  if (to <= a.slo.until) return;
  const RegionId region = sched::FindRegionId(*options_.catalog, options_.region);
  std::vector<estimate::ServingSpan> spans;
  for (const Replica& r : a.replicas) {
    const sched::ModelDemand* d = DemandOn(a, r.node);
    auto span = [&](int64_t from, int64_t until) {
      spans.push_back({from, until, region, d ? d->request_ms : 0, d ? d->replica_rps : 0, 1});
    };
    for (const auto& [from, until] : r.served) span(from, until);
    if (r.up_since != 0) span(r.up_since, std::max<int64_t>(r.up_since, now));
  }
  // Times are Unix seconds: second 0 is the epoch.
  const estimate::SloMinutes m =
      estimate::SloMinutesOf(*a.spec, spans, a.slo.until, to, 0, *options_.catalog);
  a.slo.minutes += m.minutes;
  a.slo.met += m.met;
  a.slo.until = to;
  for (Replica& r : a.replicas) {
    std::erase_if(r.served, [&](const auto& s) { return s.second <= to; });
  }
}

int Reconciler::ReplicasWanted(Active& a, UnixSeconds now) {
  const int placed = static_cast<int>(a.replicas.size());
  if (!a.spec || !a.spec->latency.has_load()) return placed;
  const sched::ModelDemand* d = DemandOn(a, a.replicas[0].node);
  // No fleet, an unknown node or a spec the scheduler cannot size: as placed;
  // no demand on the node's model: capacity unknown.
  if (d == nullptr && (!a.queued || !fleet_ || !fleet_->by_name.count(a.replicas[0].node))) {
    return placed;
  }
  const double replica_rps = d ? d->replica_rps : 0;
  const int hour = static_cast<int>(now % 86400 / 3600);
  const int load = estimate::ReplicasForLoad(a.spec->latency.RpsAt(hour), replica_rps);
  return std::min(placed, estimate::ReplicaSetSize(replica_terms_, load));
}

void Reconciler::SizeReplicaSet(Active& a, UnixSeconds now, std::vector<JobUpdate>* out) {
  const int want = ReplicasWanted(a, now);
  if (want == a.replicas_wanted) return;
  // A launch or stop on its way: sized once its answer is in.
  if (std::any_of(a.replicas.begin(), a.replicas.end(), [](const Replica& r) { return r.pending; })) {
    return;
  }
  a.replicas_wanted = want;
  for (Replica& r : a.replicas) {
    if (r.index >= want && r.Live()) {
      StopReplica(a, r);
    } else if (r.index >= want) {
      EndShortfall(r, now);  // down, and no longer wanted
      r.state = ReplicaState::kStopped;
      r.handle.clear();
    } else if (r.state == ReplicaState::kStopped) {
      r.state = ReplicaState::kRestarting;  // launched now (next_ms passed)
      r.next_ms = 0;
    }
  }
  if (!a.spec->latency.has_load()) return;  // every member, always
  const int hour = static_cast<int>(now % 86400 / 3600);
  std::ostringstream rps;
  rps << a.spec->latency.RpsAt(hour);
  NoteReplicas(a, "UTC hour " + std::to_string(hour) + " (" + rps.str() + " req/s) needs " +
                      std::to_string(want) + " of the " + std::to_string(a.replicas.size()) +
                      " replicas placed", now, out);
}

}  // namespace meridian::control
