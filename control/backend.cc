#include "control/backend.h"

#include <algorithm>

namespace meridian::control {

std::string_view RunPhaseName(RunPhase p) {
  switch (p) {
    case RunPhase::kStarting: return "starting";
    case RunPhase::kRunning: return "running";
    case RunPhase::kExited: return "exited";
    case RunPhase::kKilled: return "killed";
    case RunPhase::kLost: return "lost";
  }
  return "unknown";
}

bool IsTransient(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kUnresolvable:
      return false;
    default:
      return !st.ok();
  }
}

int64_t BackendRetryPolicy::BackoffMs(int failures) const {
  int64_t wait = initial_backoff_ms;
  for (int i = 1; i < failures && wait < max_backoff_ms; ++i) wait *= 2;
  return std::min(wait, max_backoff_ms);
}

Status BackendRetryPolicy::Validate() const {
  if (launch_attempts < 1 || launch_attempts > 100) {
    return Status::Invalid("backend_retry.launch_attempts: \"" + std::to_string(launch_attempts) +
                           "\" must be 1 (no retry) to 100");
  }
  if (initial_backoff_ms < 10 || initial_backoff_ms > 3'600'000) {
    return Status::Invalid("backend_retry.initial_backoff: " + std::to_string(initial_backoff_ms) +
                           " ms must be from 10ms to 1h");
  }
  if (max_backoff_ms < initial_backoff_ms || max_backoff_ms > 3'600'000) {
    return Status::Invalid("backend_retry.max_backoff: " + std::to_string(max_backoff_ms) +
                           " ms must be from initial_backoff (" + std::to_string(initial_backoff_ms) +
                           " ms) to 1h");
  }
  return Status::Ok();
}

}  // namespace meridian::control
