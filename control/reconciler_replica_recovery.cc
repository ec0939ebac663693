// A stored replica set taken back after a restart (or after the store did
// not take a change): each replica's process adopted by its stored handle,
// and each other replica's next attempt looked up by its name, in case the
// daemon stopped between the backend's launch and its commit. Both are
// BackendCalls, made with the reconciler's lock released (the Threading
// paragraph of reconciler.h).
#include "control/reconciler_state.h"

namespace meridian::control {

void Reconciler::AdoptReplicaSet(Active& a, std::vector<Replica> set, const std::string& when,
                                 UnixSeconds now, std::vector<JobUpdate>* out) {
  a.replicas = std::move(set);
  a.holds = true;
  if (a.row.state == JobState::kCheckpointing) a.stop_kind = StopKind::kPreempt;
  if (a.row.cancel_requested) a.stop_kind = StopKind::kCancel;
  NoteReplicas(a, "re-adopted its " + std::to_string(a.replicas.size()) + " replicas " + when,
               now, out);
  // The answers stop what a service being stopped still runs.
  for (Replica& r : a.replicas) {
    if (r.Live()) {
      AdoptReplica(a, r, when);
    } else {
      FindReplicaLaunch(a, r, when);
    }
  }
}

namespace {

Reconciler::BackendCall RecoveryCall(PendingCall kind, const Reconciler::Active& a, Replica& r,
                                     int attempt, const std::string& when) {
  Reconciler::BackendCall call = ReplicaCall(kind, a, r);
  call.replica_attempt = attempt;
  call.handle = r.handle;
  call.when = when;
  r.pending = true;
  return call;
}

}  // namespace

void Reconciler::AdoptReplica(Active& a, Replica& r, const std::string& when) {
  calls_.push_back(RecoveryCall(PendingCall::kAdopt, a, r, r.attempt, when));
}

void Reconciler::FindReplicaLaunch(Active& a, Replica& r, const std::string& when) {
  calls_.push_back(RecoveryCall(PendingCall::kFind, a, r, r.attempt + 1, when));
}

void Reconciler::ReplicaRecoveryAnswered(Active& a, Replica& r, const BackendCall& call,
                                         UnixSeconds now, std::vector<JobUpdate>* out) {
  if (call.skipped) return;  // the job is read again from the store (Resync)
  if (call.kind == PendingCall::kFind) {
    ReplicaFindAnswered(a, r, call, now, out);
    return;
  }
  RunObservation o;
  if (call.adopted.ok()) {
    o = *call.adopted;
  } else {
    o.phase = RunPhase::kLost;
    o.message = call.adopted.status().message();
  }
  o.job_id = ReplicaRunId(a.row.id, r.index);
  o.attempt = r.attempt;
  o.handle = r.handle;
  const bool alive = o.phase == RunPhase::kStarting || o.phase == RunPhase::kRunning;
  HandleReplicaObservation(o, now, out);  // running, or ended meanwhile
  if (alive && a.stop_kind != StopKind::kNone && r.Live() && !r.pending) StopReplica(a, r);
}

void Reconciler::ReplicaFindAnswered(Active& a, Replica& r, const BackendCall& call,
                                     UnixSeconds now, std::vector<JobUpdate>* out) {
  const std::string which = "replica " + std::to_string(r.index) + "'s attempt " +
                            std::to_string(call.replica_attempt);
  if (!call.found.ok()) {
    // Launching it again could run it twice: asked again after a backoff.
    r.find_first = true;
    r.next_ms = NowMs() + options_.backend_retry.BackoffMs(1);
    NoteReplicas(a, "the backend could not say whether " + which + " was launched: " +
                        call.found.status().message() + "; asking again",
                 now, out);
    return;
  }
  r.find_first = false;
  if (call.found->has_value()) {
    r.attempt = call.replica_attempt;
    r.handle = **call.found;
    r.state = ReplicaState::kStarting;
    const std::string found =
        "found " + which + " (" + r.handle + ") under its name " + call.when + "; adopted";
    if (a.row.state == JobState::kScheduled) {
      JobUpdate u;
      u.handle = ReplicaSetHandle(a.replicas, a.slo);
      u.started_at = now;
      Transition(a, JobState::kStarting, found, now, out, u);
    } else {
      NoteReplicas(a, found, now, out);
    }
    AdoptReplica(a, r, call.when);
    return;
  }
  // Never launched: one that was to run is launched now (KeepReplicaSets).
  if (r.state == ReplicaState::kStarting) {
    r.state = ReplicaState::kRestarting;
    r.next_ms = 0;
  }
  if (a.stop_kind == StopKind::kNone) return;
  r.state = ReplicaState::kStopped;
  EndReplicaSetIfStopped(a, std::nullopt, now, out);
}

}  // namespace meridian::control
