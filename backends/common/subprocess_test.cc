#include "backends/common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace meridian::backends {
namespace {

const std::string kPath = "PATH=/usr/bin:/bin";

ProcessCall Call(std::vector<std::string> argv, std::vector<std::string> env = {kPath},
                 int timeout_ms = 15000, std::string input = "") {
  ProcessCall c;
  c.argv = std::move(argv);
  c.env = std::move(env);
  c.timeout_ms = timeout_ms;
  c.input = std::move(input);
  return c;
}

// Whether `pid` still runs: a process that is gone or a zombie does not.
bool Runs(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

bool EndsWithin(pid_t pid, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (Runs(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(SubprocessTest, ArgvReachesTheProgramLiterally) {
  auto o = RunProcess(Call({"printf", "%s|", "a b", "$HOME", "`id`;", "*"}));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->exit_code, 0);
  EXPECT_EQ(o->out, "a b|$HOME|`id`;|*|");
}

TEST(SubprocessTest, OnlyTheGivenEnvironment) {
  setenv("MERIDIAN_SUBPROCESS_SECRET", "x", 1);
  auto o = RunProcess(Call({"/usr/bin/env"}, {"A=1", "B=two words"}));
  unsetenv("MERIDIAN_SUBPROCESS_SECRET");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->out, "A=1\nB=two words\n");
}

TEST(SubprocessTest, ExitCodeStderrAndAProgramThatIsNotThere) {
  auto o = RunProcess(Call({"sh", "-c", "echo oops >&2; exit 3"}));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->exit_code, 3);
  EXPECT_EQ(o->err, "oops\n");
  EXPECT_FALSE(o->timed_out);
  auto missing = RunProcess(Call({"no-such-program-x"}, {"PATH=/usr/bin"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot run \"no-such-program-x\": No such file or directory");
  EXPECT_FALSE(RunProcess(Call({})).ok());
}

TEST(SubprocessTest, TheTimeoutKillsTheCommandAndEveryProcessItStarted) {
  // The shell prints its background child's pid, then waits for it: both
  // would run 30 s.
  const auto t0 = std::chrono::steady_clock::now();
  auto o = RunProcess(Call({"sh", "-c", "sleep 30 & echo $!; wait"}, {kPath}, 300));
  ASSERT_TRUE(o.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_TRUE(o->timed_out);
  EXPECT_EQ(o->exit_code, -1);
  EXPECT_EQ(o->signal, SIGKILL);
  const pid_t child = std::atoi(o->out.c_str());
  ASSERT_GT(child, 1) << o->out;
  EXPECT_TRUE(EndsWithin(child, std::chrono::seconds(5))) << "sleep " << child << " still runs";
}

TEST(SubprocessTest, ACommandThatExitedLeavesNothingRunning) {
  // The helper keeps no output open, so the command looks finished at once.
  auto o = RunProcess(Call({"sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"}));
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->exit_code, 0);
  const pid_t child = std::atoi(o->out.c_str());
  ASSERT_GT(child, 1) << o->out;
  EXPECT_TRUE(EndsWithin(child, std::chrono::seconds(5))) << "sleep " << child << " still runs";
}

TEST(SubprocessTest, OnlyStandardDescriptorsReachTheCommand) {
  // A descriptor of this process without close-on-exec, as a careless
  // library might leave one.
  int fd = open("/dev/null", O_RDONLY);
  ASSERT_GT(fd, 2);
  auto leaked = RunProcess(Call({"/usr/bin/test", "-e", "/proc/self/fd/" + std::to_string(fd)}));
  // The same check on stderr, which the command does have: it can succeed.
  auto stderr_there = RunProcess(Call({"/usr/bin/test", "-e", "/proc/self/fd/2"}));
  close(fd);
  ASSERT_TRUE(leaked.ok() && stderr_there.ok());
  EXPECT_EQ(leaked->exit_code, 1);
  EXPECT_EQ(stderr_there->exit_code, 0);
}

TEST(SubprocessTest, IgnoredAndBlockedSignalsOfTheDaemonAreNotInherited) {
  struct sigaction old_pipe{};
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  sigset_t usr2, old_mask;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, &old_mask);
  auto o = RunProcess(Call({"grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"}));
  // The check can fail: this process has SIGPIPE (13, bit 12) ignored now.
  std::ifstream self("/proc/self/status");
  std::string line;
  unsigned long long own_ignored = 0;
  while (std::getline(self, line)) {
    if (line.starts_with("SigIgn:")) own_ignored = std::stoull(line.substr(8), nullptr, 16);
  }
  EXPECT_NE(own_ignored & (1ULL << 12), 0u);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  ASSERT_TRUE(o.ok());
  // Bit n-1 of each mask is signal n. Only the standard signals 1-31 are
  // compared: glibc keeps 32 and 33 for itself, and posix_spawn leaves them.
  unsigned long long blocked = 0, ignored = 0;
  ASSERT_EQ(std::sscanf(o->out.c_str(), "SigBlk:\t%llx\nSigIgn:\t%llx", &blocked, &ignored), 2) << o->out;
  EXPECT_EQ(blocked & 0x7fffffffULL, 0u) << o->out;
  EXPECT_EQ(ignored & 0x7fffffffULL, 0u) << o->out;

}

TEST(SubprocessTest, InputAndBothOutputsFlowWithoutStalling) {
  // 1 MiB in and out, and 200 KB on stderr: far more than a pipe holds, so
  // a runner that wrote all input before reading would stall until the timeout.
  std::string input(1 << 20, 'x');
  for (size_t i = 0; i < input.size(); i += 1000) input[i] = '\n';
  auto o = RunProcess(Call({"sh", "-c", "head -c 200000 /dev/zero >&2; cat"}, {kPath}, 20000, input));
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->timed_out);
  EXPECT_EQ(o->exit_code, 0);
  EXPECT_EQ(o->out, input);
  EXPECT_EQ(o->err.size(), 200000u);
}

TEST(SubprocessTest, OutputPastTheCapKillsTheCommand) {
  ProcessCall call = Call({"cat", "/dev/zero"}, {kPath}, 20000);
  call.max_output_bytes = 1 << 20;
  auto o = RunProcess(call);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->output_capped);
  EXPECT_FALSE(o->timed_out);
  EXPECT_EQ(o->exit_code, -1);
  EXPECT_GT(o->out.size(), size_t{1} << 20);
  EXPECT_LE(o->out.size(), (size_t{1} << 20) + 65536);  // at most one read past it
}

TEST(SubprocessTest, PassThroughTakesNamesAndPrefixesThatAreSet) {
  setenv("MERIDIAN_PT_ONE", "1", 1);
  setenv("MERIDIAN_PTX_A", "a=b", 1);
  setenv("MERIDIAN_PTX_B", "", 1);
  std::vector<std::string> env = PassThrough({"MERIDIAN_PT_ONE", "MERIDIAN_PTX_*", "MERIDIAN_PT_UNSET"});
  unsetenv("MERIDIAN_PT_ONE");
  unsetenv("MERIDIAN_PTX_A");
  unsetenv("MERIDIAN_PTX_B");
  std::sort(env.begin(), env.end());
  EXPECT_EQ(env, (std::vector<std::string>{"MERIDIAN_PTX_A=a=b", "MERIDIAN_PTX_B=", "MERIDIAN_PT_ONE=1"}));
}

}  // namespace
}  // namespace meridian::backends
