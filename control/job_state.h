// The control plane's closed state vocabularies: a job's state (docs/api.md,
// "Job object") and a node's state (docs/api.md, "Nodes"). In memory they are
// enums, so a misspelled state does not compile and a switch names every
// state; text exists only at the edges (the store's TEXT columns, the JSON
// API, the CLI). *Name gives the API's spelling; Parse* returns nullopt for
// any other word, and the caller turns that into an error naming the field.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/status.h"

namespace meridian::control {

enum class JobState {
  kQueued,
  kScheduled,
  kStarting,
  kRunning,
  kCheckpointing,
  kSucceeded,
  kFailed,
  kCancelled,
  kPreempted,  // then requeued to kQueued
};

// Every job state in the API's order (docs/api.md), for loops such as the
// metrics per state.
inline constexpr std::array<JobState, 9> kJobStates = {
    JobState::kQueued,    JobState::kScheduled, JobState::kStarting,
    JobState::kRunning,   JobState::kCheckpointing, JobState::kSucceeded,
    JobState::kFailed,    JobState::kCancelled, JobState::kPreempted};

std::string_view JobStateName(JobState s);
std::optional<JobState> ParseJobState(std::string_view s);
// A state word read back from the store, for job `job_id`: an internal error
// naming the job and the word when it is not a state.
Result<JobState> ParseStoredJobState(const std::string& word, const std::string& job_id);
// succeeded, failed and cancelled: the job never runs again.
bool IsTerminal(JobState s);

// ready: takes jobs; drained: an admin took it out of scheduling; down: its
// backend says it cannot run jobs, or its heartbeats stopped.
enum class NodeState { kReady, kDrained, kDown };

inline constexpr std::array<NodeState, 3> kNodeStates = {NodeState::kReady, NodeState::kDrained,
                                                         NodeState::kDown};

std::string_view NodeStateName(NodeState s);
std::optional<NodeState> ParseNodeState(std::string_view s);

// JSON carries the names, never nlohmann's default for an enum (its integer):
// putting a state into JSON without its *Name function does not compile.
void to_json(nlohmann::json&, JobState) = delete;
void to_json(nlohmann::json&, NodeState) = delete;

}  // namespace meridian::control
