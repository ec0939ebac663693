// The client commands end to end: a real `meridian serve` on loopback, real
// jobs run by its local backend, and the `meridian` binary as a user runs it
// (environment, stdout, stderr, exit code).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

extern char** environ;

namespace meridian::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Ran {
  int rc = -1;
  std::string out, err;
};

// Starts `meridian args...` with extra environment, stdout/stderr to files.
pid_t Start(const std::vector<std::string>& args, const std::vector<std::string>& env,
            const fs::path& out, const fs::path& err) {
  std::vector<std::string> argv = {MERIDIAN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> av;
  for (auto& a : argv) av.push_back(a.data());
  av.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string v = *e;
    if (!v.starts_with("MERIDIAN_URL=") && !v.starts_with("MERIDIAN_TOKEN=")) envs.push_back(v);
  }
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> ev;
  for (auto& e : envs) ev.push_back(e.data());
  ev.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, av[0], &fa, nullptr, av.data(), ev.data());
  posix_spawn_file_actions_destroy(&fa);
  EXPECT_EQ(rc, 0) << "cannot start " << av[0];
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A loopback port nothing listens on now.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

class ClientE2eTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(testing::TempDir()) /
           ("meridian_client_e2e_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "meridian.db").string();
    token_ = CreateToken("research");
  }
  void TearDown() override {
    StopDaemon();
    fs::remove_all(dir_);
  }

  std::string CreateToken(const std::string& tenant) {
    Ran r = Run({"token", "create", "--db", db_, "--tenant", tenant}, {});
    EXPECT_EQ(r.rc, 0) << r.err;
    std::string t = r.out;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
    return t;
  }

  // Starts the daemon on `port` (0: any) and waits for its "listening on" line.
  void StartDaemon(int port = 0) {
    // This machine as a node with two declared GPUs (no NVML needed), so
    // the scheduler places the test jobs here.
    fs::path config = dir_ / "serve.yaml";
    std::ofstream(config) << "node: {name: e2e-node, gpu_model: H100-80GB, gpus: 2}\n";
    daemon_ = Start({"serve", "--listen", "127.0.0.1:" + std::to_string(port), "--db", db_,
                     "--config", config.string()},
                    {}, dir_ / "serve.out", dir_ / "serve.err");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::string text = ReadFile(dir_ / "serve.out");
      size_t at = text.find("listening on ");
      size_t end = text.find_first_of(" \n", at + 13);
      if (at != std::string::npos && end != std::string::npos) {
        url_ = text.substr(at + 13, end - at - 13);  // "http://HOST:PORT", then details
        return;
      }
      int status = 0;
      if (waitpid(daemon_, &status, WNOHANG) == daemon_) {
        daemon_ = -1;
        FAIL() << "meridian serve exited: " << ReadFile(dir_ / "serve.err");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << "meridian serve did not say where it listens: " << ReadFile(dir_ / "serve.err");
  }
  void StopDaemon() {
    if (daemon_ <= 0) return;
    kill(daemon_, SIGTERM);
    for (int i = 0; i < 150; ++i) {
      int status = 0;
      if (waitpid(daemon_, &status, WNOHANG) == daemon_) {
        daemon_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(daemon_, SIGKILL);
    Wait(daemon_);
    daemon_ = -1;
  }

  std::vector<std::string> ClientEnv(const std::string& token) const {
    return {"MERIDIAN_URL=" + url_, "MERIDIAN_TOKEN=" + token};
  }
  Ran Run(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    fs::path out = dir_ / ("run" + std::to_string(runs_) + ".out");
    fs::path err = dir_ / ("run" + std::to_string(runs_++) + ".err");
    Ran r;
    r.rc = Wait(Start(args, env, out, err));
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }
  Ran Client(const std::vector<std::string>& args) { return Run(args, ClientEnv(token_)); }

  std::string WriteJob(const std::string& name, const std::string& command) {
    fs::path p = dir_ / (name + ".yaml");
    std::ofstream(p) << "name: " << name << "\n"
                     << "tenant: research\n"
                     << "kind: data-science\n"
                     << "resources: {gpus: 1, gpu_models: [H100-80GB]}\n"
                     << "grace_period: 5s\n"
                     << "command: " << command << "\n";
    return p.string();
  }
  std::string Submit(const std::string& file) {
    Ran r = Client({"submit", file});
    EXPECT_EQ(r.rc, 0) << r.err;
    std::string id = r.out;
    while (!id.empty() && id.back() == '\n') id.pop_back();
    EXPECT_TRUE(id.starts_with("j-")) << id;
    return id;
  }
  json Job(const std::string& id) {
    Ran r = Client({"status", id, "-o", "json"});
    EXPECT_EQ(r.rc, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    return j.is_discarded() ? json::object() : j;
  }
  // Polls `status ID -o json` until the job is in one of `states`.
  json WaitState(const std::string& id, const std::vector<std::string>& states) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    json j;
    while (std::chrono::steady_clock::now() < deadline) {
      j = Job(id);
      std::string s = j.value("state", "");
      for (const auto& want : states) {
        if (s == want) return j;
      }
      if (s == "succeeded" || s == "failed" || s == "cancelled") break;  // final, not the one asked
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << id << " never reached the state asked; last: " << j.dump();
    return j;
  }

  fs::path dir_;
  std::string db_, token_, url_;
  pid_t daemon_ = -1;
  int runs_ = 0;
};

TEST_F(ClientE2eTest, SubmitRunsARealCommandAndStatusAndLogsShowIt) {
  StartDaemon();
  std::string id = Submit(WriteJob("hello", "[sh, -c, \"echo hello from meridian; echo oops >&2\"]"));
  json j = WaitState(id, {"succeeded", "failed"});
  EXPECT_EQ(j.value("state", ""), "succeeded") << j.dump();
  EXPECT_EQ(j.value("exit_code", -1), 0);
  Ran logs = Client({"logs", id});
  EXPECT_EQ(logs.rc, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello from meridian\n");
  Ran err = Client({"logs", id, "--stream", "stderr"});
  EXPECT_EQ(err.out, "oops\n");
  Ran table = Client({"status"});
  EXPECT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find(id), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("succeeded"), std::string::npos) << table.out;
  Ran one = Client({"status", id});
  EXPECT_NE(one.out.find("state:      succeeded"), std::string::npos) << one.out;
  Ran list = Client({"status", "-o", "json", "--state", "succeeded"});
  json all = json::parse(list.out, nullptr, false);
  ASSERT_FALSE(all.is_discarded()) << list.out;
  ASSERT_EQ(all["jobs"].size(), 1u) << list.out;
  EXPECT_EQ(all["jobs"][0]["id"], id);
}

TEST_F(ClientE2eTest, LogsFollowPrintsUntilTheJobEnds) {
  StartDaemon();
  std::string id =
      Submit(WriteJob("ticker", "[sh, -c, \"for i in 1 2 3; do echo line $i; sleep 0.3; done\"]"));
  Ran logs = Client({"logs", id, "-f"});
  EXPECT_EQ(logs.rc, 0) << logs.err;
  EXPECT_EQ(logs.out, "line 1\nline 2\nline 3\n");
  EXPECT_EQ(Job(id).value("state", ""), "succeeded");
}

TEST_F(ClientE2eTest, CancelEndsASleepingJob) {
  StartDaemon();
  std::string id = Submit(WriteJob("sleeper", "[sleep, \"300\"]"));
  WaitState(id, {"running"});
  Ran c = Client({"cancel", id});
  EXPECT_EQ(c.rc, 0) << c.err;
  EXPECT_TRUE(c.out.starts_with(id + " ")) << c.out;
  json j = WaitState(id, {"cancelled"});
  EXPECT_FALSE(j["ended_at"].is_null()) << j.dump();
}

TEST_F(ClientE2eTest, TheSameIdempotencyKeyReturnsTheSameJob) {
  StartDaemon();
  std::string file = WriteJob("once", "[\"true\"]");
  Ran a = Client({"submit", file, "--idempotency-key", "k-once-1"});
  Ran b = Client({"submit", file, "--idempotency-key", "k-once-1"});
  ASSERT_EQ(a.rc, 0) << a.err;
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  Ran list = Client({"status", "-o", "json"});
  EXPECT_EQ(json::parse(list.out)["jobs"].size(), 1u) << list.out;
}

TEST_F(ClientE2eTest, SubmitRetriesUntilTheDaemonIsUpWithoutDuplicating) {
  int port = FreePort();
  url_ = "http://127.0.0.1:" + std::to_string(port);
  std::string file = WriteJob("early", "[\"true\"]");
  pid_t submit = Start({"submit", file, "--retries", "10"}, ClientEnv(token_), dir_ / "early.out",
                       dir_ / "early.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the first tries are refused
  StartDaemon(port);
  EXPECT_EQ(Wait(submit), 0) << ReadFile(dir_ / "early.err");
  EXPECT_TRUE(ReadFile(dir_ / "early.out").starts_with("j-"));
  Ran list = Client({"status", "-o", "json"});
  EXPECT_EQ(json::parse(list.out)["jobs"].size(), 1u) << list.out;
}

TEST_F(ClientE2eTest, DaemonErrorsAreBadInputWithTheServersMessage) {
  StartDaemon();
  Ran missing = Client({"status", "j-99999999"});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("meridian status: "), std::string::npos) << missing.err;
  fs::path bad = dir_ / "bad.yaml";
  std::ofstream(bad) << "name: bad\ntenant: research\nkind: trainig\ncommand: [\"true\"]\n";
  Ran r = Client({"submit", bad.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("trainig"), std::string::npos) << r.err;
  Ran anon = Run({"status"}, ClientEnv(""));
  EXPECT_EQ(anon.rc, 2);
  EXPECT_NE(anon.err.find("MERIDIAN_TOKEN"), std::string::npos) << anon.err;
  Ran wrong = Run({"status"}, ClientEnv("not-a-token"));
  EXPECT_EQ(wrong.rc, 2) << wrong.err;
}

TEST_F(ClientE2eTest, NodesListsThisMachine) {
  StartDaemon();
  // The daemon stores its own node in its first reconcile cycle, which may
  // come after it answers; on a busy machine that takes a while.
  Ran r;
  json nodes;
  for (int i = 0; i < 300; ++i) {
    r = Client({"nodes", "-o", "json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    nodes = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(nodes.is_discarded()) << r.out;
    if (!nodes["nodes"].empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(nodes["nodes"].size(), 1u) << r.out;
  Ran table = Client({"nodes"});
  EXPECT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find(nodes["nodes"][0].value("name", "?")), std::string::npos) << table.out;
}

}  // namespace
}  // namespace meridian::cli
