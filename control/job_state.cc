#include "control/job_state.h"

namespace meridian::control {

std::string_view JobStateName(JobState s) {
  switch (s) {
    case JobState::kQueued: return "queued";
    case JobState::kScheduled: return "scheduled";
    case JobState::kStarting: return "starting";
    case JobState::kRunning: return "running";
    case JobState::kCheckpointing: return "checkpointing";
    case JobState::kSucceeded: return "succeeded";
    case JobState::kFailed: return "failed";
    case JobState::kCancelled: return "cancelled";
    case JobState::kPreempted: return "preempted";
  }
  return "unknown";  // not an enumerator: a cast from a bad integer
}

std::optional<JobState> ParseJobState(std::string_view s) {
  for (JobState state : kJobStates) {
    if (JobStateName(state) == s) return state;
  }
  return std::nullopt;
}

Result<JobState> ParseStoredJobState(const std::string& word, const std::string& job_id) {
  auto parsed = ParseJobState(word);
  if (!parsed) {
    return Status::Internal("job " + job_id + ": stored state \"" + word + "\" is not a job state");
  }
  return *parsed;
}

bool IsTerminal(JobState s) {
  switch (s) {
    case JobState::kSucceeded:
    case JobState::kFailed:
    case JobState::kCancelled: return true;
    case JobState::kQueued:
    case JobState::kScheduled:
    case JobState::kStarting:
    case JobState::kRunning:
    case JobState::kCheckpointing:
    case JobState::kPreempted: return false;
  }
  return false;
}

std::string_view NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kReady: return "ready";
    case NodeState::kDrained: return "drained";
    case NodeState::kDown: return "down";
  }
  return "unknown";
}

std::optional<NodeState> ParseNodeState(std::string_view s) {
  for (NodeState state : kNodeStates) {
    if (NodeStateName(state) == s) return state;
  }
  return std::nullopt;
}

}  // namespace meridian::control
