// Tenants apart, against the real daemon on loopback (issue 20): the
// daemon's files are its own (0600/0700, tightened at start), a tenant's job
// runs as the tenant's own uid and cannot read the daemon's files nor another
// tenant's checkpoint or logs, a daemon that is not root says that tenants are
// not isolated, registered nodes without an agent take no jobs, and loader
// variables are refused at submission.
#include <grp.h>
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "control/store.h"
#include "control/test_daemon.h"

namespace meridian::control {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;
using testing::GetJob;
using testing::SubmitJob;

struct stat Stat(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st;
}

mode_t Mode(const std::string& path) { return Stat(path).st_mode & 07777; }

json Spec(const std::string& name, std::vector<std::string> command, int gpus = 1) {
  return {{"name", name},
          {"kind", "data-science"},
          {"resources", {{"gpus", gpus}, {"gpu_models", {"T4"}}}},
          {"command", std::move(command)}};
}

class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("isolation");
    daemon_ = std::make_unique<DaemonProcess>(dir_, 4);
    daemon_->Start();
    http_ = daemon_->Client();
  }
  void TearDown() override {
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }
  // Polls until the job reaches a final state (or 15 s pass).
  json WaitEnded(const std::string& token, const std::string& id) {
    json j;
    for (int i = 0; i < 300; ++i) {
      j = GetJob(*http_, token, id);
      if (j["state"] == "succeeded" || j["state"] == "failed" || j["state"] == "cancelled") return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << id << " did not end: " << j.dump() << "\n" << daemon_->Log();
    return j;
  }
  std::string State() const { return dir_ + "/meridian.db.state"; }
  std::string JobDir(const std::string& id) const { return State() + "/jobs/" + id; }
  std::string ReadFile(const std::string& path) const {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

// Every file and directory the daemon made under the test's directory: its
// own files 0600; its directories 0700, or 0711 on the way to tenants'
// directories when it isolates tenants (as root); the jobs' own working and
// checkpoint directories 0700 (as root: the tenant's uid's).
void ExpectDaemonModes(const std::string& dir, bool isolating) {
  const std::set<std::string> tests_own = {dir + "/serve.yaml", dir + "/serve.log"};
  int files = 0, dirs = 0;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string p = it->path().string();
    if (tests_own.count(p)) continue;
    const struct stat st = Stat(p);
    const mode_t mode = st.st_mode & 07777;
    const std::string leaf = it->path().filename().string();
    if (S_ISDIR(st.st_mode) && (leaf == "work" || leaf == "checkpoint")) {
      EXPECT_EQ(mode, 0700u) << p;
      if (isolating) {
        EXPECT_GE(st.st_uid, 200000u) << p;  // the tenant's (default range)
      }
      it.disable_recursion_pending();                      // the job's own files
      continue;
    }
    EXPECT_EQ(st.st_uid, geteuid()) << p;
    if (S_ISDIR(st.st_mode)) {
      ++dirs;
      const bool on_path = leaf != "logs" && leaf != "attempts";
      EXPECT_EQ(mode, isolating && on_path ? 0711u : 0700u) << p;
    } else {
      ++files;
      EXPECT_EQ(mode, 0600u) << p;
    }
  }
  EXPECT_GT(files, 0);
  EXPECT_GT(dirs, 0);
}

TEST_F(IsolationTest, DaemonFilesAreItsOwnAfterStartAfterAJobAndAfterARestart) {
  const bool root = geteuid() == 0;
  ExpectDaemonModes(dir_, false);  // nothing on the way to a tenant's directory yet
  EXPECT_TRUE(fs::exists(daemon_->db() + ".signin"));
  EXPECT_TRUE(fs::exists(daemon_->db() + "-wal"));
  const std::string token = daemon_->Token("team-a");
  const std::string id = SubmitJob(*http_, token, Spec("files", {"/bin/sh", "-c",
      "echo out; echo err >&2; echo x > \"$MERIDIAN_CHECKPOINT_DIR/c\""}));
  EXPECT_EQ(WaitEnded(token, id)["state"], "succeeded");
  ASSERT_TRUE(fs::exists(JobDir(id) + "/logs/stdout.log"));
  ExpectDaemonModes(dir_, root);

  // Looser modes left by an older daemon are tightened at the next start.
  daemon_->Kill(SIGTERM);
  for (const std::string& f : {daemon_->db(), daemon_->db() + ".signin", JobDir(id) + "/logs/stdout.log"}) {
    ASSERT_EQ(chmod(f.c_str(), 0644), 0) << f;
  }
  ASSERT_EQ(chmod(State().c_str(), 0755), 0);
  ASSERT_EQ(chmod((JobDir(id) + "/logs").c_str(), 0755), 0);
  daemon_->Start();
  EXPECT_EQ(Mode(daemon_->db()), 0600u);
  EXPECT_EQ(Mode(daemon_->db() + ".signin"), 0600u);
  EXPECT_EQ(Mode(JobDir(id) + "/logs/stdout.log"), 0600u);
  EXPECT_EQ(Mode(JobDir(id) + "/logs"), root ? 0711u : 0700u);  // 0755 & 0711 = 0711; 0755 & 0700 = 0700
  EXPECT_EQ(Mode(State()), root ? 0711u : 0700u);
  EXPECT_NE(daemon_->Log().find("took group and other permissions away from"), std::string::npos);
}

TEST_F(IsolationTest, ATenantsJobRunsAsItsOwnUidAndReachesNothingElse) {
  if (geteuid() != 0) GTEST_SKIP() << "running jobs as tenants' uids needs a root daemon";
  const std::string a = daemon_->Token("team-a"), b = daemon_->Token("team-b");
  // team-b runs first: index 0 of the default range, uid 200000; team-a then 200001.
  const std::string bid = SubmitJob(*http_, b, Spec("b", {"/bin/sh", "-c",
      "echo b-log-secret; echo b-ckpt-secret > \"$MERIDIAN_CHECKPOINT_DIR/s\"; id -u"}));
  EXPECT_EQ(WaitEnded(b, bid)["state"], "succeeded");
  EXPECT_EQ(ReadFile(JobDir(bid) + "/logs/stdout.log"), "b-log-secret\n200000\n");

  const std::string db = daemon_->db();
  const std::vector<std::pair<std::string, std::string>> targets = {
      {"signin", "$MERIDIAN_CHECKPOINT_DIR/../../../../meridian.db.signin"},
      {"db", db},
      {"wal", db + "-wal"},
      {"uids", State() + "/backend/tenant-uids"},
      {"b-ckpt", JobDir(bid) + "/checkpoint/s"},
      {"b-log", JobDir(bid) + "/logs/stdout.log"},
  };
  std::string script = "id -u; id -g; id -G; ";
  for (const auto& [name, path] : targets) {
    script += "cat \"" + path + "\" >/dev/null 2>&1 && echo read-" + name + " || echo denied-" + name + "; ";
  }
  script += "ls " + State() + "/jobs >/dev/null 2>&1 && echo listed-jobs || echo denied-list; ";
  script += "echo mine > \"$MERIDIAN_CHECKPOINT_DIR/own\" && cat \"$MERIDIAN_CHECKPOINT_DIR/own\"";
  const std::string aid = SubmitJob(*http_, a, Spec("a", {"/bin/sh", "-c", script}));
  EXPECT_EQ(WaitEnded(a, aid)["state"], "succeeded");
  // Each target exists (so "denied" is not "missing").
  EXPECT_TRUE(fs::exists(db + ".signin"));
  EXPECT_TRUE(fs::exists(db + "-wal"));
  EXPECT_TRUE(fs::exists(State() + "/backend/tenant-uids"));
  EXPECT_TRUE(fs::exists(JobDir(bid) + "/checkpoint/s"));
  EXPECT_EQ(ReadFile(JobDir(aid) + "/logs/stdout.log"),
            "200001\n200001\n200001\n"
            "denied-signin\ndenied-db\ndenied-wal\ndenied-uids\ndenied-b-ckpt\ndenied-b-log\n"
            "denied-list\nmine\n");
  const struct stat ckpt = Stat(JobDir(aid) + "/checkpoint");
  EXPECT_EQ(ckpt.st_uid, 200001u);
  EXPECT_EQ(ckpt.st_mode & 07777, 0700u);
  // A restarted daemon keeps each tenant's uid (the index file).
  daemon_->Kill(SIGTERM);
  daemon_->Start();
  http_ = daemon_->Client();  // a new port
  const std::string again = SubmitJob(*http_, b, Spec("b2", {"/usr/bin/id", "-u"}));
  EXPECT_EQ(WaitEnded(b, again)["state"], "succeeded");
  EXPECT_EQ(ReadFile(JobDir(again) + "/logs/stdout.log"), "200000\n");
}

TEST_F(IsolationTest, ADaemonThatIsNotRootSaysTenantsAreNotIsolated) {
  if (geteuid() != 0) {
    EXPECT_NE(daemon_->Log().find("tenants are not isolated on the local backend"), std::string::npos);
    return;
  }
  EXPECT_EQ(daemon_->Log().find("tenants are not isolated"), std::string::npos) << daemon_->Log();
  daemon_->Kill(SIGTERM);
  // The same daemon as "nobody" (65534), in a directory of its own.
  const std::string own = dir_ + "/nobody";
  fs::create_directories(own);
  ASSERT_EQ(chown(own.c_str(), 65534, 65534), 0);
  const std::string log = own + "/serve.log";
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen(log.c_str(), "w");
    if (f == nullptr || setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(125);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    const std::string db = own + "/m.db", cfg = dir_ + "/serve.yaml";
    execl(MERIDIAN_BINARY, MERIDIAN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", db.c_str(),
          "--config", cfg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string text;
  for (int i = 0; i < 400 && text.find("listening on") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    text = ReadFile(log);
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_NE(text.find("listening on"), std::string::npos) << text;
  EXPECT_NE(text.find("meridian serve: warning: tenants are not isolated on the local backend: the "
                      "daemon runs as uid 65534"),
            std::string::npos)
      << text;
}

// As root, a state directory tenants' uids cannot reach (below a 0700
// directory) would fail every launch: serve refuses to start instead, naming
// the directory and its mode, with the exit code of bad input.
TEST_F(IsolationTest, ARootDaemonWhoseStateTenantsCannotReachRefusesToStart) {
  if (geteuid() != 0) GTEST_SKIP() << "tenants' uids need a root daemon";
  const std::string locked = dir_ + "/locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_all, fs::perm_options::replace);  // 0700
  const std::string log = dir_ + "/locked-serve.log";
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen(log.c_str(), "w");
    if (f == nullptr) _exit(125);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    const std::string db = locked + "/m.db", cfg = dir_ + "/serve.yaml";
    execl(MERIDIAN_BINARY, MERIDIAN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", db.c_str(),
          "--config", cfg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string text = ReadFile(log);
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 2) << text;  // kExitBadInput
  EXPECT_NE(text.find("\"" + locked + "\" is mode 0700"), std::string::npos) << text;
  EXPECT_EQ(text.find("listening on"), std::string::npos) << text;
}

TEST_F(IsolationTest, ARegisteredNodeWithoutAnAgentTakesNoJobAndSaysWhy) {
  const std::string admin = daemon_->Token("ops", true);
  auto reg = http_->Post("/v1/nodes", Auth(admin),
                         R"({"name": "gpu-far", "gpu_model": "T4", "gpus": 8, "vcpus": 32, "ram_gib": 128})",
                         "application/json");
  ASSERT_TRUE(reg);
  ASSERT_EQ(reg->status, 201) << reg->body;
  // 8 T4s: only gpu-far has them (testnode has 4).
  const std::string far = SubmitJob(*http_, admin, Spec("far", {"/bin/sh", "-c", "echo ran"}, 8));
  const std::string near = SubmitJob(*http_, admin, Spec("near", {"/bin/sh", "-c", "echo ran"}, 1));
  EXPECT_EQ(WaitEnded(admin, near)["state"], "succeeded");
  EXPECT_EQ(GetJob(*http_, admin, near)["placement"]["node"], "testnode");
  json j;
  for (int i = 0; i < 100; ++i) {  // a few cycles (50 ms each)
    j = GetJob(*http_, admin, far);
    if (j["reason"].get<std::string>().find("gpu-far") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(j["state"], "queued") << j.dump();
  EXPECT_NE(j["reason"].get<std::string>().find("registered node gpu-far: registered through the API: "
                                                "no agent runs jobs there"),
            std::string::npos)
      << j.dump();
  EXPECT_FALSE(fs::exists(JobDir(far) + "/logs/stdout.log"));  // never launched here
  auto nodes = http_->Get("/v1/nodes", Auth(admin));
  ASSERT_TRUE(nodes);
  const json listed = json::parse(nodes->body);
  for (const json& n : listed["nodes"]) {
    if (n["name"] == "gpu-far") {
      EXPECT_EQ(n["schedulable"], false);
      EXPECT_EQ(n["reason"], kNoAgentReason);
    } else {
      EXPECT_EQ(n["name"], "testnode");
      EXPECT_EQ(n["schedulable"], true);
      EXPECT_TRUE(n["reason"].is_null());
    }
  }
}

TEST_F(IsolationTest, LoaderVariablesAreRefusedAtSubmissionNamingTheKey) {
  const std::string token = daemon_->Token("team-a");
  json spec = Spec("preload", {"/bin/true"});
  spec["env"] = {{"LD_PRELOAD", "/tmp/evil.so"}};
  auto r = http_->Post("/v1/jobs", Auth(token), spec.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("env.LD_PRELOAD"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("dynamic loader"), std::string::npos) << r->body;
  auto list = http_->Get("/v1/jobs", Auth(token));
  ASSERT_TRUE(list);
  EXPECT_EQ(json::parse(list->body)["jobs"].size(), 0u);  // nothing stored
}

}  // namespace
}  // namespace meridian::control
