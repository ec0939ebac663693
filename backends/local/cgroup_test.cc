// Job cgroups against temporary directories laid out like cgroupfs: the
// detection on v1, hybrid and v2 layouts, the limit files' texts, the
// daemon's move and the controllers it enables, the kill, and a real job
// of the local backend joining its cgroup and leaving limits there. (A real
// cgroup v2 host is not needed, and not what these prove: see
// docs/backends.md, "Limits".)
#include "backends/local/cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "backends/local/local.h"

namespace meridian::backends {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(::testing::TempDir()) /
            ("meridian_cgroup_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // A cgroup directory at `rel` under root_ with these files.
  void Layout(const std::string& rel, const std::map<std::string, std::string>& files) {
    fs::create_directories(root_ / rel);
    for (const auto& [name, text] : files) std::ofstream(root_ / rel / name) << text;
  }
  fs::path root_;
};

constexpr char kV1Mounts[] =
    "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n"
    "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"
    "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n";
constexpr char kHybridMounts[] =
    "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
constexpr char kV2Mounts[] = "proc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nsdelegate 0 0\n";

TEST_F(CgroupTest, DetectionNeedsCgroup2WithCpuAndMemoryAndAWritableSubtreeControl) {
  // This machine's layout: cgroup2 at unified/, its controllers bound to v1.
  Layout("sys/fs/cgroup/unified", {{"cgroup.controllers", ""}, {"cgroup.subtree_control", ""}});
  // A v2 host: the daemon in /system.slice/meridian.service with cpu and memory.
  Layout("sys/fs/cgroup/system.slice/meridian.service",
         {{"cgroup.controllers", "cpuset cpu io memory pids\n"}, {"cgroup.subtree_control", ""}});
  // A v2 host where memory is not delegated to the daemon.
  Layout("sys/fs/cgroup/user.slice", {{"cgroup.controllers", "cpu pids\n"}, {"cgroup.subtree_control", ""}});
  // A v2 host where the daemon's cgroup has no subtree_control to write.
  Layout("sys/fs/cgroup/ro", {{"cgroup.controllers", "cpu memory\n"}});
  const std::string prefix = root_.string();
  struct Case {
    const char* what;
    CgroupProbe probe;
    bool usable;
    std::string dir_or_reason;  // the directory when usable, else a part of the reason
  } cases[] = {
      {"v1", {kV1Mounts, "4:memory:/x\n0::/\n", prefix}, false, "no cgroup2 file system is mounted"},
      {"hybrid", {kHybridMounts, "4:memory:/x\n0::/\n", prefix}, false,
       "cgroup2 at /sys/fs/cgroup/unified offers no cpu and memory controller"},
      {"no v2 path", {kV2Mounts, "4:memory:/x\n", prefix}, false, "no cgroup v2 path"},
      {"v2", {kV2Mounts, "0::/system.slice/meridian.service\n", prefix}, true,
       prefix + "/sys/fs/cgroup/system.slice/meridian.service"},
      {"no memory", {kV2Mounts, "0::/user.slice\n", prefix}, false, "offers no memory controller"},
      {"no subtree_control", {kV2Mounts, "0::/ro\n", prefix}, false,
       "cgroup.subtree_control is not writable by the daemon"},
  };
  for (const Case& c : cases) {
    CgroupSupport s = DetectCgroupV2(c.probe);
    EXPECT_EQ(s.usable, c.usable) << c.what << ": " << s.reason;
    if (c.usable) {
      EXPECT_EQ(s.dir, c.dir_or_reason) << c.what;
    } else {
      EXPECT_NE(s.reason.find(c.dir_or_reason), std::string::npos) << c.what << ": " << s.reason;
    }
  }
}

TEST_F(CgroupTest, LimitTextsAreCpuMaxQuotaPeriodAndMemoryMaxBytes) {
  EXPECT_EQ(CpuMax(1), "100000 100000");  // one CPU: 100 ms of every 100 ms
  EXPECT_EQ(CpuMax(6), "600000 100000");  // 6 x 100000
  EXPECT_EQ(CpuMax(0), "max 100000");
  EXPECT_EQ(MemoryMax(512), "536870912");      // 512 x 1024 x 1024
  EXPECT_EQ(MemoryMax(65536), "68719476736");  // 64 GiB = 65536 x 1048576
  EXPECT_EQ(MemoryMax(0), "max");
}

TEST_F(CgroupTest, PrepareMovesTheDaemonAndEnablesTheControllersThenJobsGetTheirLimits) {
  Layout("d", {{"cgroup.subtree_control", ""}});
  const std::string d = (root_ / "d").string();
  ASSERT_TRUE(PrepareCgroupParent(d, 4242).ok());
  EXPECT_EQ(Read(root_ / "d/meridian-daemon/cgroup.procs"), "4242");
  EXPECT_EQ(Read(root_ / "d/cgroup.subtree_control"), "+cpu +memory");
  auto job = CreateJobCgroup(d, "j-00000007.2", {4, 2048});
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(*job, d + "/j-00000007.2");
  EXPECT_EQ(Read(*job + "/cpu.max"), "400000 100000");
  EXPECT_EQ(Read(*job + "/memory.max"), "2147483648");  // 2048 x 1048576
  EXPECT_EQ(fs::status(*job).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_FALSE(fs::exists(*job + "/pids.max"));  // no pids limit asked: not written
  EXPECT_FALSE(CreateJobCgroup(d, "../escape", {}).ok());
}

// Where the pids controller is offered, detection says so, the daemon enables
// it for its children, and a job's cgroup gets its pids.max.
TEST_F(CgroupTest, WithThePidsControllerEachJobGetsItsPidsMax) {
  Layout("sys/fs/cgroup/system.slice/m.service",
         {{"cgroup.controllers", "cpuset cpu io memory pids\n"}, {"cgroup.subtree_control", ""}});
  CgroupProbe probe{kV2Mounts, "0::/system.slice/m.service\n", root_.string()};
  CgroupSupport s = DetectCgroupV2(probe);
  ASSERT_TRUE(s.usable) << s.reason;
  EXPECT_TRUE(s.pids);
  ASSERT_TRUE(PrepareCgroupParent(s.dir, 4242, s.pids).ok());
  EXPECT_EQ(Read(fs::path(s.dir) / "cgroup.subtree_control"), "+cpu +memory +pids");
  auto job = CreateJobCgroup(s.dir, "j-00000008.1", {2, 1024, 16384});
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(Read(*job + "/pids.max"), "16384");
  // Without it: not offered, not enabled.
  Layout("sys/fs/cgroup/system.slice/n.service",
         {{"cgroup.controllers", "cpu memory\n"}, {"cgroup.subtree_control", ""}});
  probe.self_cgroup = "0::/system.slice/n.service\n";
  EXPECT_FALSE(DetectCgroupV2(probe).pids);
}

// Without cgroup.kill (before Linux 5.14) every pid of cgroup.procs gets
// SIGKILL; with it, "1" is written there.
TEST_F(CgroupTest, KillUsesCgroupKillOrElseEveryPidOfCgroupProcs) {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  Layout("old", {{"cgroup.procs", std::to_string(child) + "\n"}});
  ASSERT_TRUE(KillJobCgroup((root_ / "old").string()).ok());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  Layout("new", {{"cgroup.kill", ""}, {"cgroup.procs", ""}});
  ASSERT_TRUE(KillJobCgroup((root_ / "new").string()).ok());
  EXPECT_EQ(Read(root_ / "new/cgroup.kill"), "1");
  EXPECT_TRUE(KillJobCgroup((root_ / "gone").string()).ok());  // nothing there: nothing to do
}

// The local backend with a cgroup directory: the attempt's cgroup holds its
// limits, the job wrote "0" to its cgroup.procs (which, on cgroupfs, moves
// the writer) before it exec'd, and the monitor wrote cgroup.kill at its end.
TEST_F(CgroupTest, ALocalJobJoinsItsCgroupWithTheRequestsLimits) {
  Layout("jobs", {});
  LocalBackendOptions o;
  o.state_dir = (root_ / "state").string();
  o.cgroup_dir = (root_ / "jobs").string();
  auto backend = MakeLocalBackend(o);
  control::LaunchRequest r;
  r.job_id = "j-00000009";
  r.attempt = 1;
  r.argv = {"/bin/true"};
  r.vcpus = 2;
  r.ram_mib = 1024;
  r.log_dir = (root_ / "logs").string();
  r.checkpoint_dir = (root_ / "ckpt").string();
  // The fake cgroup's files exist before the job, as a real cgroup's do.
  Layout("jobs/j-00000009.1", {{"cgroup.procs", ""}, {"cgroup.kill", ""}});
  auto h = backend->Launch(r);
  ASSERT_TRUE(h.ok()) << h.status().message();
  const fs::path cg = root_ / "jobs/j-00000009.1";
  EXPECT_EQ(Read(cg / "cpu.max"), "200000 100000");  // 2 x 100000
  EXPECT_EQ(Read(cg / "memory.max"), "1073741824");  // 1024 x 1048576
  EXPECT_EQ(Read(cg / "cgroup.procs"), "0");
  bool ended = false;
  for (int i = 0; i < 500 && !ended; ++i) {
    for (const auto& obs : backend->Poll()) ended |= obs.phase == control::RunPhase::kExited;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(ended);
  EXPECT_EQ(Read(cg / "cgroup.kill"), "1");
}

}  // namespace
}  // namespace meridian::backends
