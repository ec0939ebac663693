// The local backend against real processes: exec, environment, logs, exit
// status, process-group signals, checkpoint and resume, and adoption by a
// fresh backend (a restarted daemon).
#include "backends/local/local.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "backends/local/proc.h"

namespace meridian::backends {
namespace {

namespace fs = std::filesystem;
using control::LaunchRequest;
using control::RunObservation;
using control::RunPhase;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

class LocalBackendTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(testing::TempDir()) /
            ("meridian_local_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "work");
    backend_ = MakeLocalBackend(Options());
  }
  void TearDown() override {
    backend_.reset();
    fs::remove_all(root_);
  }
  LocalBackendOptions Options() const {
    LocalBackendOptions o;
    o.state_dir = (root_ / "state").string();
    return o;
  }
  LaunchRequest Request(std::vector<std::string> argv, const std::string& job = "j-00000001") {
    LaunchRequest r;
    r.job_id = job;
    r.argv = std::move(argv);
    r.working_dir = Work();
    r.log_dir = (root_ / "logs" / job).string();
    r.checkpoint_dir = (root_ / "ckpt" / job).string();
    return r;
  }
  std::string Work() const { return (root_ / "work").string(); }
  std::string Log(const std::string& job, const std::string& stream) const {
    return (root_ / "logs" / job / (stream + ".log")).string();
  }
  // Polls until the attempt with `handle` reaches a final phase.
  RunObservation WaitEnd(control::Backend& b, const std::string& handle) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& o : b.Poll()) {
        if (o.handle == handle && o.phase != RunPhase::kRunning &&
            o.phase != RunPhase::kStarting) {
          return o;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "attempt " << handle << " did not end";
    return {};
  }
  void WaitForFile(const std::string& path) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!fs::exists(path) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(fs::exists(path)) << path;
  }
  std::string Launch(const LaunchRequest& r) {
    auto h = backend_->Launch(r);
    EXPECT_TRUE(h.ok()) << h.status().message();
    return h.ok() ? *h : std::string();
  }

  fs::path root_;
  std::unique_ptr<control::Backend> backend_;
};

TEST_F(LocalBackendTest, ExitCodeComesBackAndTheFirstPollSaysRunning) {
  std::string h = Launch(Request({"sh", "-c", "exit 3"}));
  EXPECT_TRUE(h.starts_with("pid:"));
  RunObservation o = WaitEnd(*backend_, h);
  EXPECT_EQ(o.phase, RunPhase::kExited);
  ASSERT_TRUE(o.exit_code.has_value());
  EXPECT_EQ(*o.exit_code, 3);
  EXPECT_FALSE(o.signal.has_value());
  EXPECT_EQ(o.job_id, "j-00000001");
  EXPECT_GT(o.ended, 0);
  EXPECT_GE(o.ended, o.started);
  EXPECT_TRUE(backend_->Poll().empty());  // nothing changed since
}

TEST_F(LocalBackendTest, SignalThatEndsTheJobComesBack) {
  std::string h = Launch(Request({"sh", "-c", "kill -USR2 $$"}));
  RunObservation o = WaitEnd(*backend_, h);
  EXPECT_EQ(o.phase, RunPhase::kKilled);
  ASSERT_TRUE(o.signal.has_value());
  EXPECT_EQ(*o.signal, SIGUSR2);
  EXPECT_FALSE(o.exit_code.has_value());
}

TEST_F(LocalBackendTest, StdoutAndStderrAreAppendedAcrossAttempts) {
  LaunchRequest r = Request({"sh", "-c", "echo out $MERIDIAN_ATTEMPT; echo err $MERIDIAN_ATTEMPT >&2"});
  WaitEnd(*backend_, Launch(r));
  r.attempt = 2;
  WaitEnd(*backend_, Launch(r));
  EXPECT_EQ(ReadFile(Log("j-00000001", "stdout")), "out 1\nout 2\n");
  EXPECT_EQ(ReadFile(Log("j-00000001", "stderr")), "err 1\nerr 2\n");
}

TEST_F(LocalBackendTest, ALogPastItsCapIsCutWhereItSaysSoAndEndsWithWhatWasDropped) {
  LocalBackendOptions o = Options();
  o.max_log_bytes = 1000;
  backend_ = MakeLocalBackend(o);
  // 3000 bytes of 'a' on stdout: the first 1000 kept, 3000 - 1000 = 2000 dropped.
  WaitEnd(*backend_, Launch(Request({"sh", "-c", "head -c 3000 /dev/zero | tr '\\0' a"})));
  EXPECT_EQ(ReadFile(Log("j-00000001", "stdout")),
            std::string(1000, 'a') +
                "\n[meridian: the job's logs reached their cap of 1000 bytes; what the job writes "
                "to this stream from here on is dropped]\n"
                "[meridian: 2000 bytes dropped past the log cap of 1000 bytes]\n");
  EXPECT_EQ(ReadFile(Log("j-00000001", "stderr")), "");
}

TEST_F(LocalBackendTest, TheLogCapCoversBothStreamsAndEarlierAttempts) {
  LocalBackendOptions o = Options();
  o.max_log_bytes = 1000;
  backend_ = MakeLocalBackend(o);
  LaunchRequest r = Request({"sh", "-c", "head -c 600 /dev/zero | tr '\\0' o"});
  WaitEnd(*backend_, Launch(r));
  // Attempt 2 writes 600 bytes to stderr: 1000 - 600 = 400 are left, so 400
  // kept and 600 - 400 = 200 dropped.
  r.attempt = 2;
  r.argv = {"sh", "-c", "head -c 600 /dev/zero | tr '\\0' e >&2"};
  WaitEnd(*backend_, Launch(r));
  EXPECT_EQ(ReadFile(Log("j-00000001", "stdout")), std::string(600, 'o'));
  EXPECT_EQ(ReadFile(Log("j-00000001", "stderr")),
            std::string(400, 'e') +
                "\n[meridian: the job's logs reached their cap of 1000 bytes; what the job writes "
                "to this stream from here on is dropped]\n"
                "[meridian: 200 bytes dropped past the log cap of 1000 bytes]\n");
}

TEST_F(LocalBackendTest, EnvironmentIsTheCleanBasePlusTheSpecAndMeridiansVariables) {
  ::setenv("MERIDIAN_LEAK_CHECK", "must not reach the job", 1);
  LaunchRequest r = Request({"env"}, "j-00000009");
  r.env = {{"EPOCHS", "3"}, {"NOTE", "a b;c"}, {"MERIDIAN_ATTEMPT", "overridden?"}};
  r.gpus = {2, 3};
  r.attempt = 4;
  WaitEnd(*backend_, Launch(r));
  std::set<std::string> got;
  std::istringstream lines(ReadFile(Log("j-00000009", "stdout")));
  for (std::string l; std::getline(lines, l);) got.insert(l);
  std::set<std::string> want = {"EPOCHS=3", "NOTE=a b;c", "CUDA_VISIBLE_DEVICES=2,3",
                                "MERIDIAN_JOB_ID=j-00000009", "MERIDIAN_ATTEMPT=4",
                                "MERIDIAN_CHECKPOINT_DIR=" + r.checkpoint_dir,
                                std::string("PATH=") + std::getenv("PATH")};
  for (const char* name : {"HOME", "USER", "LANG"}) {
    if (const char* v = std::getenv(name)) want.insert(std::string(name) + "=" + v);
  }
  EXPECT_EQ(got, want);
  EXPECT_TRUE(fs::is_directory(r.checkpoint_dir));
  ::unsetenv("MERIDIAN_LEAK_CHECK");
}

TEST_F(LocalBackendTest, CudaVisibleDevicesListsMigUuidsOrIsEmptyForACpuJob) {
  LaunchRequest mig = Request({"sh", "-c", "printf '[%s]' \"$CUDA_VISIBLE_DEVICES\""}, "j-mig");
  mig.gpus = {0};
  mig.mig_uuids = {"MIG-1b2c3d4e-0000-5555-aaaa-000000000001",
                   "MIG-1b2c3d4e-0000-5555-aaaa-000000000002"};
  WaitEnd(*backend_, Launch(mig));
  EXPECT_EQ(ReadFile(Log("j-mig", "stdout")),
            "[MIG-1b2c3d4e-0000-5555-aaaa-000000000001,MIG-1b2c3d4e-0000-5555-aaaa-000000000002]");
  LaunchRequest cpu = Request({"sh", "-c", "printf '[%s:%s]' \"${CUDA_VISIBLE_DEVICES-unset}\" x"},
                              "j-cpu");
  WaitEnd(*backend_, Launch(cpu));
  EXPECT_EQ(ReadFile(Log("j-cpu", "stdout")), "[:x]");  // set, and empty
}

TEST_F(LocalBackendTest, RunsInItsWorkingDirectoryOrItsOwnUnderTheStateDir) {
  WaitEnd(*backend_, Launch(Request({"pwd"})));
  EXPECT_EQ(ReadFile(Log("j-00000001", "stdout")), fs::canonical(Work()).string() + "\n");
  LaunchRequest r = Request({"pwd"}, "j-own");
  r.working_dir.clear();
  WaitEnd(*backend_, Launch(r));
  std::string pwd = ReadFile(Log("j-own", "stdout"));
  EXPECT_TRUE(pwd.starts_with(fs::canonical(root_ / "state").string())) << pwd;
  EXPECT_NE(pwd.find("j-own"), std::string::npos) << pwd;
}

TEST_F(LocalBackendTest, ArgvPassesLiterallyWithoutAShell) {
  LaunchRequest r = Request({"printf", "<%s>\\n", "two words", "\"quoted\"", "a;echo injected",
                             "$HOME", "*", "`id`"});
  WaitEnd(*backend_, Launch(r));
  EXPECT_EQ(ReadFile(Log("j-00000001", "stdout")),
            "<two words>\n<\"quoted\">\n<a;echo injected>\n<$HOME>\n<*>\n<`id`>\n");
}

TEST_F(LocalBackendTest, CommandNotFoundAndBadWorkingDirAreClearErrors) {
  auto h = backend_->Launch(Request({"meridian-no-such-command"}));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("command \"meridian-no-such-command\": not found in PATH"),
            std::string::npos)
      << h.status().message();
  LaunchRequest r = Request({"true"});
  r.working_dir = (root_ / "missing").string();
  h = backend_->Launch(r);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("working_dir \"" + r.working_dir +
                                      "\": No such file or directory"),
            std::string::npos)
      << h.status().message();
  WriteFile(Work() + "/noshebang", "echo hi\n");
  fs::permissions(Work() + "/noshebang", fs::perms::owner_all);
  h = backend_->Launch(Request({"./noshebang"}));
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("not an executable format"), std::string::npos)
      << h.status().message();
  EXPECT_FALSE(backend_->Launch(Request({})).ok());
}

TEST_F(LocalBackendTest, RecordsCpuTimeAndMaxRss) {
  std::string h =
      Launch(Request({"sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"}));
  RunObservation o = WaitEnd(*backend_, h);
  EXPECT_EQ(o.phase, RunPhase::kExited);
  EXPECT_GT(o.cpu_user_s + o.cpu_system_s, 0.0);
  EXPECT_GT(o.max_rss_kib, 0);
}

TEST_F(LocalBackendTest, StopReachesGrandchildrenThroughTheProcessGroup) {
  WriteFile(Work() + "/child.sh",
            "trap 'echo term > child.got; exit 0' TERM\n"
            "touch child.ready\n"
            "while :; do sleep 0.05; done\n");
  WriteFile(Work() + "/main.sh",
            "sh child.sh &\n"
            "trap 'wait; exit 0' TERM\n"
            "wait\n");
  std::string h = Launch(Request({"sh", "main.sh"}));
  WaitForFile(Work() + "/child.ready");
  ASSERT_TRUE(backend_->Stop(h, 30).ok());
  RunObservation o = WaitEnd(*backend_, h);
  EXPECT_EQ(o.phase, RunPhase::kExited);
  EXPECT_EQ(o.exit_code.value_or(-1), 0);
  EXPECT_EQ(ReadFile(Work() + "/child.got"), "term\n");
  EXPECT_NE(o.message.find("after a stop request"), std::string::npos) << o.message;
}

TEST_F(LocalBackendTest, CheckpointOnSigtermThenResumeFromItInTheNextAttempt) {
  WriteFile(Work() + "/train.sh",
            "ck=\"$MERIDIAN_CHECKPOINT_DIR/step\"\n"
            "if [ -f \"$ck\" ]; then echo \"resumed at step $(cat \"$ck\")\"; exit 0; fi\n"
            "step=0\n"
            "trap 'echo 42 > \"$ck\"; exit 0' TERM\n"
            "touch ready\n"
            "while :; do sleep 0.05; done\n");
  LaunchRequest r = Request({"sh", "train.sh"}, "j-ckpt");
  std::string h = Launch(r);
  WaitForFile(Work() + "/ready");
  ASSERT_TRUE(backend_->Stop(h, 30).ok());
  RunObservation first = WaitEnd(*backend_, h);
  EXPECT_EQ(first.phase, RunPhase::kExited);
  EXPECT_EQ(ReadFile(r.checkpoint_dir + "/step"), "42\n");
  r.attempt = 2;
  RunObservation second = WaitEnd(*backend_, Launch(r));
  EXPECT_EQ(second.exit_code.value_or(-1), 0);
  EXPECT_EQ(second.attempt, 2);
  EXPECT_EQ(ReadFile(Log("j-ckpt", "stdout")), "resumed at step 42\n");
}

TEST_F(LocalBackendTest, AJobIgnoringSigtermIsKilledAfterTheGracePeriod) {
  WriteFile(Work() + "/stubborn.sh", "trap '' TERM\ntouch ready\nwhile :; do sleep 0.05; done\n");
  std::string h = Launch(Request({"sh", "stubborn.sh"}));
  WaitForFile(Work() + "/ready");
  ASSERT_TRUE(backend_->Stop(h, 1).ok());
  RunObservation o = WaitEnd(*backend_, h);
  EXPECT_EQ(o.phase, RunPhase::kKilled);
  EXPECT_EQ(o.signal.value_or(0), SIGKILL);
  EXPECT_NE(o.message.find("after the grace period ran out"), std::string::npos) << o.message;
}

TEST_F(LocalBackendTest, AFreshBackendAdoptsARunningAttemptAndCanStopIt) {
  std::string h = Launch(Request({"sleep", "300"}, "j-adopt"));
  backend_.reset();  // the daemon goes away; the job does not
  auto fresh = MakeLocalBackend(Options());
  auto o = fresh->Adopt("j-adopt", 1, h);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->phase, RunPhase::kRunning);
  EXPECT_GT(o->started, 0);
  ASSERT_TRUE(fresh->Stop(h, 30).ok());
  RunObservation end = WaitEnd(*fresh, h);
  EXPECT_EQ(end.phase, RunPhase::kKilled);
  EXPECT_EQ(end.signal.value_or(0), SIGTERM);
  EXPECT_EQ(end.job_id, "j-adopt");
}

TEST_F(LocalBackendTest, AFreshBackendAdoptsAFinishedAttemptWithItsExitCode) {
  std::string h = Launch(Request({"sh", "-c", "echo done; exit 7"}, "j-done"));
  WaitForFile((root_ / "state" / "attempts" / "j-done.1.status").string());
  backend_.reset();
  auto fresh = MakeLocalBackend(Options());
  auto o = fresh->Adopt("j-done", 1, h);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->phase, RunPhase::kExited);
  EXPECT_EQ(o->exit_code.value_or(-1), 7);
  EXPECT_EQ(ReadFile(Log("j-done", "stdout")), "done\n");
}

TEST_F(LocalBackendTest, AdoptOfAGoneProcessIsLostAndABadHandleIsAnError) {
  // Our own pid with another start time: a recycled pid must not pass for the job.
  ProcStat self;
  ASSERT_TRUE(ReadProcStat(getpid(), &self));
  std::string stale = "pid:" + std::to_string(getpid()) + ":" + std::to_string(self.start_time + 1);
  auto o = backend_->Adopt("j-gone", 1, stale);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->phase, RunPhase::kLost);
  EXPECT_FALSE(backend_->Adopt("j-gone", 1, "slurm:123").ok());
  EXPECT_FALSE(backend_->Stop("pid:x:1", 1).ok());
}

TEST_F(LocalBackendTest, AJobWhoseMonitorWasKilledIsStillWatchedAndStopped) {
  std::string h = Launch(Request({"sleep", "300"}, "j-orphan"));
  auto run = ReadFile((root_ / "state" / "attempts" / "j-orphan.1.run").string());
  auto at = run.find("shim_pid ");
  ASSERT_NE(at, std::string::npos);
  pid_t shim = static_cast<pid_t>(std::stol(run.substr(at + 9)));
  ASSERT_EQ(kill(shim, SIGKILL), 0);
  backend_.reset();
  auto fresh = MakeLocalBackend(Options());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto o = fresh->Adopt("j-orphan", 1, h);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->phase, RunPhase::kRunning);
  ASSERT_TRUE(fresh->Stop(h, 0).ok());
  RunObservation end = WaitEnd(*fresh, h);
  EXPECT_EQ(end.phase, RunPhase::kLost);  // no monitor: no exit status to read
}

TEST_F(LocalBackendTest, NodesDescribesThisMachine) {
  auto nodes = backend_->Nodes();
  ASSERT_EQ(nodes.size(), 1u);
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(nodes[0].name, host);
  EXPECT_EQ(nodes[0].vcpus, sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_GT(nodes[0].ram_gib, 0.1);
  EXPECT_EQ(nodes[0].gpus, 0);
  EXPECT_EQ(nodes[0].gpu_model, "");
  EXPECT_TRUE(nodes[0].schedulable);
  LocalBackendOptions o = Options();
  o.node_name = "gpu-box";
  o.gpu_model = "H100-80GB";
  o.gpus = 8;
  o.vcpus = 64;
  o.ram_gib = 512;
  auto declared = MakeLocalBackend(o)->Nodes();
  EXPECT_EQ(declared[0].name, "gpu-box");
  EXPECT_EQ(declared[0].gpu_model, "H100-80GB");
  EXPECT_EQ(declared[0].gpus, 8);
  EXPECT_EQ(declared[0].vcpus, 64);
  EXPECT_EQ(declared[0].ram_gib, 512);
}

TEST_F(LocalBackendTest, ARequestForAnotherNodeIsRefusedNamingIt) {
  LocalBackendOptions o = Options();
  o.node_name = "here";
  auto b = MakeLocalBackend(o);
  LaunchRequest r = Request({"/bin/true"});
  r.node = "registered-elsewhere";
  auto h = b->Launch(r);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("node: \"registered-elsewhere\""), std::string::npos)
      << h.status().message();
  r.node = "here";
  auto ok = b->Launch(r);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(WaitEnd(*b, *ok).exit_code, 0);
}

// As root (as in CI): tenants' jobs run as their own uids, in directories only
// that uid can use, and cannot read another tenant's checkpoint.
TEST_F(LocalBackendTest, AsRootEachTenantsJobRunsAsItsOwnUidInItsOwnDirectories) {
  if (geteuid() != 0) GTEST_SKIP() << "dropping to a tenant's uid needs root";
  LocalBackendOptions o = Options();
  o.tenant_uids = TenantUidOptions{};
  o.tenant_uids->base = 210000;
  o.tenant_root = root_.string();
  auto b = MakeLocalBackend(o);
  const std::string other_ckpt = (root_ / "ckpt" / "j-b").string();
  LaunchRequest first = Request({"/bin/sh", "-c", "echo secret > \"$MERIDIAN_CHECKPOINT_DIR/s\""}, "j-b");
  first.tenant = "team-b";  // the first tenant: index 0, uid 210000
  first.working_dir = "";
  auto hb = b->Launch(first);
  ASSERT_TRUE(hb.ok()) << hb.status().message();
  EXPECT_EQ(WaitEnd(*b, *hb).exit_code, 0);

  LaunchRequest r = Request({"/bin/sh", "-c",
                             "id -u; id -g; id -G; pwd; echo mine > \"$MERIDIAN_CHECKPOINT_DIR/own\" "
                             "&& echo wrote; cat " + other_ckpt + "/s || echo denied"},
                            "j-a");
  r.tenant = "team-a";  // the second tenant: index 1, uid 210001
  r.working_dir = "";
  auto ha = b->Launch(r);
  ASSERT_TRUE(ha.ok()) << ha.status().message();
  EXPECT_EQ(WaitEnd(*b, *ha).exit_code, 0);
  const std::string work = (root_ / "state" / "jobs" / "j-a" / "work").string();
  EXPECT_EQ(ReadFile(Log("j-a", "stdout")), "210001\n210001\n210001\n" + work + "\nwrote\ndenied\n");
  EXPECT_NE(ReadFile(Log("j-a", "stderr")).find("Permission denied"), std::string::npos);
  for (const std::string& dir : {work, (root_ / "ckpt" / "j-a").string()}) {
    struct stat st {};
    ASSERT_EQ(stat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_uid, 210001u) << dir;
    EXPECT_EQ(st.st_gid, 210001u) << dir;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << dir;
  }
  struct stat log {};
  ASSERT_EQ(stat(Log("j-a", "stdout").c_str(), &log), 0);
  EXPECT_EQ(log.st_uid, 0u);  // the daemon's, written through the job's descriptor
  EXPECT_EQ(log.st_mode & 07777, 0600u);
}

TEST_F(LocalBackendTest, AsRootAStateDirBehindAClosedDirectoryFailsTheLaunchNamingIt) {
  if (geteuid() != 0) GTEST_SKIP() << "dropping to a tenant's uid needs root";
  const fs::path locked = root_ / "locked";
  fs::create_directories(locked / "state");
  fs::permissions(locked, fs::perms::owner_all);  // 0700: others cannot pass
  LocalBackendOptions o = Options();
  o.state_dir = (locked / "state" / "backend").string();
  o.tenant_uids = TenantUidOptions{};
  o.tenant_root = (locked / "state").string();
  LaunchRequest r = Request({"/bin/true"});
  r.tenant = "team-a";
  r.working_dir = "";
  r.checkpoint_dir = (locked / "state" / "jobs" / "j-00000001" / "checkpoint").string();
  auto h = MakeLocalBackend(o)->Launch(r);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("state_dir: \"" + locked.string() + "\" is mode 0700"),
            std::string::npos)
      << h.status().message();
}

// What a launch asks of the monitor, seen through an injected spawner: the
// job's argv as is, a clean environment with what meridian sets, the
// request's directories; and a monitor that cannot be forked fails the
// launch with the reason and leaves nothing watched.
TEST_F(LocalBackendTest, ALaunchHandsTheInjectedSpawnerTheJobsOwnLaunch) {
  std::vector<ShimLaunch> seen;
  LocalBackendOptions o = Options();
  o.spawn = [&](const ShimLaunch& l) -> Result<ShimStarted> {
    seen.push_back(l);
    return Status::Internal("fork: Resource temporarily unavailable");
  };
  auto b = MakeLocalBackend(o);
  setenv("MERIDIAN_DAEMON_ONLY", "daemon-secret", 1);
  LaunchRequest r = Request({"train", "--lr", "3e-4; rm -rf /"});
  r.gpus = {2, 3};
  r.env = {{"EPOCHS", "3"}, {"PATH", "/opt/tools/bin:/usr/bin"}};
  auto h = b->Launch(r);
  unsetenv("MERIDIAN_DAEMON_ONLY");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().message(), "fork: Resource temporarily unavailable");
  EXPECT_TRUE(b->Poll().empty());
  ASSERT_EQ(seen.size(), 1u);
  const ShimLaunch& l = seen[0];
  EXPECT_EQ(l.argv, (std::vector<std::string>{"train", "--lr", "3e-4; rm -rf /"}));
  std::set<std::string> env(l.env.begin(), l.env.end());
  for (const char* want : {"EPOCHS=3", "PATH=/opt/tools/bin:/usr/bin", "CUDA_VISIBLE_DEVICES=2,3",
                           "MERIDIAN_JOB_ID=j-00000001", "MERIDIAN_ATTEMPT=1"}) {
    EXPECT_TRUE(env.count(want)) << want;
  }
  EXPECT_TRUE(env.count("MERIDIAN_CHECKPOINT_DIR=" + r.checkpoint_dir));
  for (const std::string& e : l.env) EXPECT_EQ(e.find("daemon-secret"), std::string::npos) << e;
  // The PATH search runs over the job's PATH, in its order.
  EXPECT_EQ(l.exec_paths, (std::vector<std::string>{"/opt/tools/bin/train", "/usr/bin/train"}));
  EXPECT_EQ(l.working_dir, Work());
  EXPECT_EQ(l.stdout_path, Log("j-00000001", "stdout"));
  EXPECT_EQ(l.stderr_path, Log("j-00000001", "stderr"));
  EXPECT_FALSE(l.run_as.has_value());  // not isolating tenants here
}

// A job whose monitor and process were both killed (SIGKILL, as the OOM
// killer would) left no exit status: it is lost, at the time of the
// backend's injected clock.
TEST_F(LocalBackendTest, AJobLostWithItsMonitorEndsAtTheInjectedClocksTime) {
  LocalBackendOptions o = Options();
  o.environment.clock = [] { return UnixSeconds{1'900'000'000}; };
  auto b = MakeLocalBackend(o);
  auto h = b->Launch(Request({"sleep", "60"}));
  ASSERT_TRUE(h.ok()) << h.status().message();
  const pid_t job = static_cast<pid_t>(std::stol(h->substr(4)));  // "pid:<pid>:<start>"
  // The monitor is the job's parent: field 4 of /proc/<pid>/stat.
  std::string stat = ReadFile("/proc/" + std::to_string(job) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string state;
  pid_t monitor = 0;
  fields >> state >> monitor;
  ASSERT_GT(monitor, 1);
  ASSERT_EQ(kill(monitor, SIGKILL), 0);
  ASSERT_EQ(kill(-job, SIGKILL), 0);
  RunObservation end = WaitEnd(*b, *h);
  EXPECT_EQ(end.phase, RunPhase::kLost) << end.message;
  EXPECT_EQ(end.ended, 1'900'000'000);
}

}  // namespace
}  // namespace meridian::backends
