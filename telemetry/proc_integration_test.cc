// Real processes, classified from what this machine's /proc says about them:
// one that computes, one that sleeps, one that reads a file with fsync'd
// writes in between (counters only). No GPU: the CPU rules must tell them apart.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "telemetry/classify.h"
#include "telemetry/group.h"

namespace meridian::telemetry {
namespace {

// A child in its own process group running `body` until killed.
pid_t Spawn(void (*body)()) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    body();
    _exit(0);
  }
  setpgid(pid, pid);  // either side may win the race; both set the same group
  return pid;
}

void Burn() {
  volatile uint64_t x = 0;
  for (;;) x = x + 1;
}

void BurnTwoProcesses() {
  if (fork() == 0) Burn();  // a worker in the same group
  Burn();
}

void Sleep() {
  for (;;) pause();
}

void Stop(pid_t pgid) {
  kill(-pgid, SIGKILL);
  while (waitpid(pgid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Samples the group every 250 ms for 2.5 s and classifies the window.
Classification SampleAndClassify(pid_t pgid, JobSample* last) {
  ProcFs fs;
  GroupCounters g(pgid);
  std::vector<JobSample> series;
  for (int i = 0; i < 11; ++i) {
    series.push_back(g.Sample(fs, NowMs()));
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  *last = series.back();
  Thresholds t;
  t.window_s = 10;
  t.max_gap_s = 2;
  NodeSample node;
  EXPECT_TRUE(fs.ReadNode(&node));
  return Classify(ComputeWindow(series, t, node.online_cpus), t);
}

TEST(ProcIntegration, BusyCpuIsHealthySleepingIsIdle) {
  pid_t busy = Spawn(Burn);
  pid_t sleeper = Spawn(Sleep);
  JobSample busy_last, sleep_last;
  Classification b = SampleAndClassify(busy, &busy_last);
  Classification s = SampleAndClassify(sleeper, &sleep_last);
  Stop(busy);
  Stop(sleeper);
  EXPECT_EQ(b.job_class, JobClass::kHealthy) << b.summary;
  EXPECT_EQ(s.job_class, JobClass::kIdle) << s.summary;
  // The busy loop runs whenever it gets a CPU (on a loaded shared machine, a
  // small share of one); the sleeper does not run at all.
  EXPECT_GT(b.figures.cpu_cores, 0.05) << b.summary;
  EXPECT_LT(s.figures.cpu_cores, 0.05) << s.summary;
  EXPECT_EQ(busy_last.processes, 1);
  EXPECT_GT(busy_last.cpu_user_s, 0.05);
  EXPECT_GT(sleep_last.ctx_voluntary + sleep_last.ctx_involuntary, 0u);
}

TEST(ProcIntegration, TheGroupSumsItsProcesses) {
  pid_t pgid = Spawn(BurnTwoProcesses);
  JobSample last;
  Classification c = SampleAndClassify(pgid, &last);
  Stop(pgid);
  EXPECT_EQ(last.processes, 2) << c.summary;
  EXPECT_EQ(c.job_class, JobClass::kHealthy) << c.summary;
  EXPECT_GT(c.figures.cpu_cores, 0.05) << c.summary;
}

}  // namespace
}  // namespace meridian::telemetry
