// ParseJobStatus and ParsePodExitCode on the Job and pod-list JSON in
// testdata/status, written in the shape `kubectl get job -o json` and
// `kubectl get pods -o json` print (and checked against the batch/v1 and v1
// schemas by the k8s_schema_* tests).
#include "backends/kubernetes/job_status.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <sstream>

namespace meridian::backends::k8s {
namespace {

using control::RunPhase;

std::string Read(const std::string& name) {
  std::ifstream f("backends/kubernetes/testdata/status/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Case {
  std::string file;
  RunPhase phase;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string message;  // contained
};

TEST(JobStatus, RecordedJobsMapIntoRunPhases) {
  Case cases[] = {
      {"job-pending.json", RunPhase::kStarting, {}, {}, ""},
      {"job-running.json", RunPhase::kRunning, {}, {}, ""},
      {"job-complete.json", RunPhase::kExited, 0, {}, "CompletionsReached"},
      // Failed: the exit code comes from the pods (ParsePodExitCode).
      {"job-failed.json", RunPhase::kExited, {}, {}, "BackoffLimitExceeded"},
      {"job-deadline.json", RunPhase::kKilled, {}, SIGKILL, "DeadlineExceeded"},
      {"job-suspended.json", RunPhase::kKilled, {}, SIGTERM, "JobSuspended"},
      // Suspended, but a pod is still in its grace period: not ended yet.
      {"job-suspending.json", RunPhase::kRunning, {}, {}, ""},
  };
  for (const Case& c : cases) {
    auto s = ParseJobStatus(Read(c.file));
    ASSERT_TRUE(s.ok()) << c.file << ": " << s.status().message();
    EXPECT_EQ(s->phase, c.phase) << c.file;
    EXPECT_EQ(s->exit_code, c.exit_code) << c.file;
    EXPECT_EQ(s->signal, c.signal) << c.file;
    EXPECT_NE(s->message.find(c.message), std::string::npos) << c.file << ": " << s->message;
    EXPECT_EQ(s->started, *ParseRfc3339("2026-03-02T09:00:05Z")) << c.file;
  }
  auto done = ParseJobStatus(Read("job-complete.json"));
  EXPECT_EQ(done->ended, *ParseRfc3339("2026-03-02T11:30:41Z"));
}

TEST(JobStatus, FailedPodsExitCode) {
  auto code = ParsePodExitCode(Read("pods-failed.json"));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 3);
  auto none = ParsePodExitCode(R"({"apiVersion":"v1","kind":"List","items":[]})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(JobStatus, NotAJob) {
  EXPECT_FALSE(ParseJobStatus("no json").ok());
  EXPECT_NE(ParseJobStatus(R"({"kind":"Pod"})").status().message().find("\"Pod\" is not a Job"),
            std::string::npos);
  EXPECT_FALSE(ParsePodExitCode(R"({"kind":"Pod"})").ok());
}

}  // namespace
}  // namespace meridian::backends::k8s
