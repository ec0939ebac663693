// The state names against the lists in docs/api.md, copied by hand (the Job
// object's `state` row and the Nodes section): the API's words must not change
// when the enums do.
#include "control/job_state.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace meridian::control {
namespace {

// docs/api.md, "Job object", `state`, in that order.
const std::vector<std::string> kApiJobStates = {"queued",        "scheduled", "starting",
                                                "running",       "checkpointing", "succeeded",
                                                "failed",        "cancelled", "preempted"};
// docs/api.md, "Nodes": "`state` is `ready`, `drained` or `down`".
const std::vector<std::string> kApiNodeStates = {"ready", "drained", "down"};

TEST(JobStateTest, NamesAreTheApiListInItsOrder) {
  std::vector<std::string> names;
  for (JobState s : kJobStates) names.emplace_back(JobStateName(s));
  EXPECT_EQ(names, kApiJobStates);
}

TEST(JobStateTest, EveryNameRoundTrips) {
  for (const std::string& name : kApiJobStates) {
    auto s = ParseJobState(name);
    ASSERT_TRUE(s.has_value()) << name;
    EXPECT_EQ(JobStateName(*s), name);
  }
  std::set<JobState> distinct(kJobStates.begin(), kJobStates.end());
  EXPECT_EQ(distinct.size(), kJobStates.size());
}

TEST(JobStateTest, OtherWordsAreNotStates) {
  for (const char* word : {"", "Queued", "QUEUED", "queued ", " running", "cancelled\n",
                           "canceled", "done", "unknown", "ready", "preempt"}) {
    EXPECT_EQ(ParseJobState(word), std::nullopt) << '"' << word << '"';
  }
}

TEST(JobStateTest, TerminalAreExactlySucceededFailedCancelled) {
  // preempted is not terminal: the job is requeued.
  const std::set<std::string> terminal = {"succeeded", "failed", "cancelled"};
  for (const std::string& name : kApiJobStates) {
    EXPECT_EQ(IsTerminal(*ParseJobState(name)), terminal.count(name) == 1) << name;
  }
}

TEST(NodeStateTest, NamesRoundTripAndAreTheApiList) {
  std::vector<std::string> names;
  for (NodeState s : kNodeStates) names.emplace_back(NodeStateName(s));
  EXPECT_EQ(names, kApiNodeStates);
  for (const std::string& name : kApiNodeStates) {
    auto s = ParseNodeState(name);
    ASSERT_TRUE(s.has_value()) << name;
    EXPECT_EQ(NodeStateName(*s), name);
  }
  for (const char* word : {"", "Ready", "drain", "up", "queued"}) {
    EXPECT_EQ(ParseNodeState(word), std::nullopt) << '"' << word << '"';
  }
}

}  // namespace
}  // namespace meridian::control
