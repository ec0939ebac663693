// The reconciler's answers to a backend that fails: launches and stops tried
// again with backoff (BackendRetryPolicy), and attempts launched under their
// name but not recorded before a restart (Backend::FindLaunched).
#include <chrono>

#include "control/reconciler_state.h"

namespace meridian::control {

namespace {

// "1s", "1.5s", "250ms": a wait as the job's events say it.
std::string FormatWait(int64_t ms) {
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  if (ms > 1000) return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + "s";
  return std::to_string(ms) + "ms";
}

const char kAfterRestart[] = "after a daemon restart";

}  // namespace

int64_t Reconciler::NowMs() const {
  if (options_.steady_ms) return options_.steady_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Reconciler::LaunchFailed(Active& a, const Status& st, UnixSeconds now,
                              std::vector<JobUpdate>* out) {
  const BackendRetryPolicy& policy = options_.backend_retry;
  const int tries = (a.launch_retry ? a.launch_retry->failures : 0) + 1;
  if (IsTransient(st) && tries < policy.launch_attempts) {
    const int64_t wait = policy.BackoffMs(tries);
    a.launch_retry = BackendRetry{tries, NowMs() + wait};
    metrics_->launch_retries++;
    Note(a.row.id,
         "launch try " + std::to_string(tries) + " of " + std::to_string(policy.launch_attempts) +
             " failed: " + st.message() + "; trying again in " + FormatWait(wait),
         now, out);
    return;
  }
  a.launch_retry.reset();
  JobUpdate u;
  u.ended_at = now;
  const std::string how = tries > 1 ? "launch failed after " + std::to_string(tries) + " tries: "
                                    : "launch failed: ";
  Transition(a, JobState::kFailed, how + st.message(), now, out, u);
  ReleaseAttempt(a, now, out);
}

void Reconciler::StopAnswered(Active& a, const BackendCall& call, UnixSeconds now,
                              std::vector<JobUpdate>* out) {
  const std::string what = a.stop_kind == StopKind::kCancel ? "cancel"
                           : a.stop_kind == StopKind::kMove ? "move"
                                                            : "preemption";
  const Status& st = call.stopped;
  if (st.ok()) {
    if (a.stop_retry) {
      Note(a.row.id,
           what + ": the backend took the stop after " + std::to_string(a.stop_retry->failures) +
               " failed tries",
           now, out);
    } else if (!call.on_stopped.empty()) {
      Note(a.row.id, call.on_stopped, now, out);
    }
    a.stop_retry.reset();
    return;
  }
  const int failures = (a.stop_retry ? a.stop_retry->failures : 0) + 1;
  if (!IsTransient(st)) {
    // The backend does not know the attempt: nothing of it is left to stop.
    a.stop_retry.reset();
    RunObservation gone;
    gone.job_id = a.row.id;
    gone.attempt = a.row.attempts;
    gone.handle = a.row.handle;
    gone.phase = RunPhase::kLost;
    gone.message = what + ": the backend cannot stop it (" + st.message() + ")";
    HandleObservation(gone, now, out);
    return;
  }
  const int64_t wait = options_.backend_retry.BackoffMs(failures);
  a.stop_retry = BackendRetry{failures, NowMs() + wait};
  metrics_->stop_retries++;
  Note(a.row.id,
       what + ": stop try " + std::to_string(failures) + " failed: " + st.message() +
           "; trying again in " + FormatWait(wait),
       now, out);
}

void Reconciler::RetryBackendCalls(UnixSeconds now, std::vector<JobUpdate>* out) {
  const int64_t ms = NowMs();
  for (auto& entry : watch_) {  // a job with a retry owed is never Quiet
    Active& a = *entry.second;
    if (a.done || a.pending != PendingCall::kNone) continue;
    if (resync_.count(a.row.id)) continue;  // read again from the store first
    if (a.launch_retry && a.row.state == JobState::kScheduled && ms >= a.launch_retry->next_ms) {
      if (!a.launch_retry->find_first) {
        RequestLaunch(a);
      } else {
        FindUnrecordedLaunch(a, kAfterRestart, now, out);
      }
    } else if (a.stop_retry && a.stop_kind != StopKind::kNone && ms >= a.stop_retry->next_ms) {
      RequestStop(a);
    }
  }
}

void Reconciler::FindUnrecordedLaunch(Active& a, const std::string& when, UnixSeconds now,
                                      std::vector<JobUpdate>* out) {
  if (a.pending != PendingCall::kNone) return;
  if (a.row.attempts == 0) {  // never launched: nothing to look up
    FindAnswered(a, std::optional<std::string>(), when, now, out);
    return;
  }
  RecordCall(a, PendingCall::kFind, &calls_).when = when;
  a.holds = true;  // its placement is kept while the backend is asked
}

void Reconciler::FindAnswered(Active& a, const Result<std::optional<std::string>>& found,
                              const std::string& when, UnixSeconds now, std::vector<JobUpdate>* out) {
  if (found.ok() && found->has_value()) {
    JobUpdate u;
    u.handle = **found;
    u.started_at = now;
    Transition(a, JobState::kStarting,
               "found attempt " + std::to_string(a.row.attempts) + " (" + **found +
                   ") under its name " + when + "; adopted",
               now, out, u);
    AdoptStored(a, when);
    return;
  }
  const int tries = (a.launch_retry ? a.launch_retry->failures : 0) + 1;
  if (!found.ok() && tries < options_.backend_retry.launch_attempts) {
    // Launching again could run it twice: ask again, its GPUs kept for it.
    const int64_t wait = options_.backend_retry.BackoffMs(tries);
    a.launch_retry = BackendRetry{tries, NowMs() + wait, true};
    a.holds = true;
    Note(a.row.id,
         "the backend could not say whether attempt " + std::to_string(a.row.attempts) +
             " was launched: " + found.status().message() + "; asking again in " + FormatWait(wait),
         now, out);
    return;
  }
  a.launch_retry.reset();
  ReleaseAttempt(a, now, out);
  JobUpdate clear;
  clear.placement = Placement{};
  clear.allocation_json = "";
  Transition(a, JobState::kQueued,
             "no launch was recorded " + when + "; requeued" +
                 (found.ok() ? std::string()
                             : " (the backend could not say whether it was launched: " +
                                   found.status().message() + ")"),
             now, out, clear);
}

}  // namespace meridian::control
