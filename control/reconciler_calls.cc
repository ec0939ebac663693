// The reconciler's launches and stops: recorded under its lock as
// BackendCalls, made with the lock released, their answers applied under it
// again (see the Threading paragraph of reconciler.h).
#include <iostream>

#include "control/reconciler_state.h"

namespace meridian::control {

namespace {

// The one place the reconciler's launches and stops reach the backend.
void Make(Backend* backend, Reconciler::BackendCall* call) {
  if (call->skipped) return;
  if (call->kind == PendingCall::kLaunch) {
    call->launched = backend->Launch(call->launch);
  } else if (call->kind == PendingCall::kStop) {
    call->stopped = backend->Stop(call->handle, call->grace_s);
  }
  // A replica's process is the backend's attempt under its own name.
  const bool replica = call->replica >= 0;
  const std::string name = replica ? ReplicaRunId(call->job_id, call->replica) : call->job_id;
  const int attempt = replica ? call->replica_attempt : call->attempt;
  if (call->kind == PendingCall::kFind) {
    call->found = backend->FindLaunched(name, attempt);
  } else if (call->kind == PendingCall::kAdopt) {
    call->adopted = backend->Adopt(name, attempt, call->handle);
  }
}

}  // namespace

LaunchRequest LaunchRequestFor(const Reconciler::Active& a, const std::string& checkpoint_dir,
                               const std::string& log_dir) {
  LaunchRequest r;
  r.job_id = a.row.id;
  r.attempt = a.row.attempts;
  r.tenant = a.row.tenant;
  r.argv = a.spec->command;
  r.env = a.spec->env;
  r.working_dir = a.spec->working_dir;
  r.gpus = a.row.placement.gpus;
  r.mig_profile = a.row.placement.mig;
  r.node = a.row.placement.node;
  r.checkpoint_dir = checkpoint_dir;
  r.log_dir = log_dir;
  r.grace_period_s = GraceOf(*a.spec);
  if (a.spec->deadline.at) {
    r.deadline = *a.spec->deadline.at;
  } else if (a.spec->deadline.after_submit_s) {
    r.deadline = a.row.submitted_at + *a.spec->deadline.after_submit_s;
  }
  auto alloc = nlohmann::json::parse(a.row.allocation_json, nullptr, false);
  if (alloc.is_object() && alloc.contains("nodes") && alloc["nodes"].is_array() &&
      !alloc["nodes"].empty()) {
    r.vcpus = alloc["nodes"][0].value("vcpus", 0);
    r.ram_mib = alloc["nodes"][0].value("ram_mib", int64_t{0});
  }
  return r;
}

void Reconciler::RequestLaunch(Active& a) {
  if (a.pending != PendingCall::kNone) return;
  if (!a.replicas.empty()) {
    for (Replica& r : a.replicas) {
      if (r.state != ReplicaState::kStopped) LaunchReplica(a, r);  // beyond the hour's size
    }
    return;
  }
  RecordCall(a, PendingCall::kLaunch, &calls_).launch =
      LaunchRequestFor(a, CheckpointDir(a.row.id), LogDir(a.row.id));
}

void Reconciler::RequestStop(Active& a, std::string on_stopped) {
  if (a.pending != PendingCall::kNone) return;
  BackendCall& call = RecordCall(a, PendingCall::kStop, &calls_);
  call.handle = a.row.handle;
  call.grace_s = GraceOf(a);
  call.on_stopped = std::move(on_stopped);
}

void Reconciler::LaunchAnswered(Active& a, const Result<std::string>& handle, UnixSeconds now,
                                std::vector<JobUpdate>* out) {
  if (!handle.ok()) {
    LaunchFailed(a, handle.status(), now, out);
    return;
  }
  a.launch_retry.reset();
  metrics_->launches++;
  JobUpdate u;
  u.handle = *handle;
  u.started_at = now;
  Transition(a, JobState::kStarting,
             "launched attempt " + std::to_string(a.row.attempts) + " (" + *handle + ")", now, out,
             u);
}

void Reconciler::ApplyCall(const BackendCall& call, UnixSeconds now, std::vector<JobUpdate>* out) {
  if (call.replica >= 0) {
    ReplicaCallAnswered(call, now, out);
    return;
  }
  auto it = call.job_id.empty() ? active_.end() : active_.find(call.job_id);
  Active* a = it == active_.end() ? nullptr : it->second.get();
  // The job as the call left it: still waiting on this call, same attempt.
  const bool waiting = a != nullptr && !a->done && a->pending == call.kind &&
                       a->row.attempts == call.attempt;
  if (waiting) a->pending = PendingCall::kNone;
  if (call.kind == PendingCall::kStop) {
    if (waiting) {
      StopAnswered(*a, call, now, out);
    } else if (!call.stopped.ok()) {
      std::cerr << "meridian serve: stopping " << call.handle << ": " << call.stopped.message()
                << "\n";
    }
    return;
  }
  if (call.skipped) return;  // read again from the store (Resync) before any launch
  if (call.kind == PendingCall::kFind) {
    if (waiting) FindAnswered(*a, call.found, call.when, now, out);
    return;
  }
  if (call.kind == PendingCall::kAdopt) {
    if (waiting) AdoptAnswered(*a, call, now, out);
    return;
  }
  if (waiting && a->row.state == JobState::kScheduled) {
    LaunchAnswered(*a, call.launched, now, out);
    return;
  }
  // The job moved on while the backend launched its attempt: nothing wants
  // what was started, so it is stopped.
  if (!call.launched.ok()) return;
  std::cerr << "meridian serve: " << call.job_id << ": attempt " << call.attempt << " ("
            << *call.launched << ") was launched after its job changed; stopping it\n";
  BackendCall stop;
  stop.kind = PendingCall::kStop;
  stop.handle = *call.launched;
  stop.grace_s = call.launch.grace_period_s;
  calls_.push_back(std::move(stop));
}

Status Reconciler::CallBackend(std::unique_lock<std::mutex>& l) {
  Status result = Status::Ok();
  while (!calls_.empty()) {
    std::vector<BackendCall> calls;
    calls.swap(calls_);
    for (BackendCall& c : calls) {
      // Only what the store took is launched.
      c.skipped = c.kind == PendingCall::kLaunch && resync_.count(c.job_id) > 0;
    }
    l.unlock();
    bool deposed = false;
    for (BackendCall& c : calls) {
      // Asked before each call: a leader paused, or cut off from the
      // database, past its lease makes no launch or stop, as another replica
      // may lead by now and have made it already.
      if (!c.skipped && options_.lease_held && !options_.lease_held()) {
        c.skipped = true;
        c.stopped = Status::Internal("not sent: this replica's lease may have lapsed");
      }
      if (c.kind == PendingCall::kLaunch && options_.epoch) c.launch.epoch = options_.epoch();
      // A launch holds the lease against a takeover until the backend has
      // answered (Store::HoldLaunches), so a replica that takes over next
      // finds this launch by its name rather than launching the job again.
      std::unique_ptr<Store::LaunchHold> hold;
      if (c.kind == PendingCall::kLaunch && !c.skipped && c.launch.epoch > 0) {
        auto h = store_->HoldLaunches(c.launch.epoch);
        if (h.ok()) {
          hold = std::move(h).value();
        } else {
          // Nothing was launched: the job is read again, and launched then
          // if this replica still leads.
          std::cerr << "meridian serve: " << c.job_id << ": not launched: " << h.status().message()
                    << "\n";
          c.skipped = true;
          deposed = deposed || IsDeposed(h.status());
        }
      }
      Make(backend_, &c);
      if (c.kind == PendingCall::kLaunch && !c.skipped && IsDeposed(c.launched.status())) {
        // A newer leader fenced the backend: nothing started; the job is
        // its now, so it is read again rather than retried or failed.
        std::cerr << "meridian serve: " << c.job_id << ": " << c.launched.status().message()
                  << "\n";
        c.skipped = true;
        deposed = true;
      }
    }
    if (deposed && options_.deposed) options_.deposed();
    l.lock();
    for (const BackendCall& c : calls) {
      if (c.skipped && !c.job_id.empty()) resync_.insert(c.job_id);  // read again first
    }
    const UnixSeconds now = Now();  // a call may have taken long
    std::vector<JobUpdate> out;
    for (const BackendCall& c : calls) ApplyCall(c, now, &out);
    // Cancels that came while the backend was busy: an attempt launched
    // meanwhile is stopped in the next round.
    HandleCancels(now, &out);
    Status st = Flush(&out);
    EraseDone();
    if (result.ok()) result = st;
  }
  return result;
}

}  // namespace meridian::control
