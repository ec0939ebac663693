// For the control plane's tests: `meridian serve` as a real subprocess on a
// loopback port the kernel picks, with a temporary database, tokens made with
// the real `meridian token create`, and a small HTTP client.
#pragma once

#include <httplib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace meridian::control::testing {

inline std::string MakeTempDir(const std::string& tag) {
  std::string tmpl = (std::filesystem::temp_directory_path() / ("meridian-" + tag + "-XXXXXX")).string();
  char* d = mkdtemp(tmpl.data());
  // 0711: a root daemon runs tenants' jobs as their own uids, which must pass
  // through here to their directories (docs/backends.md, "Tenant isolation").
  if (d != nullptr) chmod(d, 0711);
  return d ? std::string(d) : std::string();
}

// Removes a test's directory. A job's supervisor may outlive the daemon by
// a moment (it records the exit status its job ended with), so a file it
// writes while the tree is walked is not an error: the walk is tried again
// for up to 5 s, and what is left after that is reported, not thrown.
inline void RemoveTempDir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  for (int i = 0; i < 50; ++i) {
    ec.clear();
    std::filesystem::remove_all(dir, ec);
    if (!ec && !std::filesystem::exists(dir)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "could not remove " << dir << ": " << ec.message();
}

// Runs `argv` and returns its stdout; the exit status in *rc.
inline std::string RunCommand(const std::vector<std::string>& argv, int* rc) {
  int pipefd[2];
  if (pipe(pipefd) != 0) return "";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    close(pipefd[0]);
    close(pipefd[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipefd[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

class DaemonProcess {
 public:
  // `dir` holds the database, the state and the config.
  // `extra` is more serve.yaml lines ("gpu_hour_usd: 0.5\n").
  explicit DaemonProcess(std::string dir, int gpus = 4, const std::string& extra = "")
      : dir_(std::move(dir)) {
    std::ofstream(dir_ + "/serve.yaml") << "region: gcp:us-central1\n" << extra
                                        << "reconcile_interval_ms: 50\n"
                                        << "node: {name: testnode, gpu_model: T4, gpus: " << gpus
                                        << ", vcpus: 8, ram_gib: 32}\n";
  }
  // With a config of the test's own (serve.yaml's text).
  DaemonProcess(std::string dir, const std::string& config_yaml) : dir_(std::move(dir)) {
    std::ofstream(dir_ + "/serve.yaml") << config_yaml;
  }
  ~DaemonProcess() { Kill(SIGKILL); }

  // The database the daemon and `token create` use: by default a SQLite file
  // in `dir`; UseDb gives another (a PostgreSQL URI), before Start.
  void UseDb(std::string db) { db_ = std::move(db); }
  // The state directory (--state-dir), shared by replicas on one database;
  // by default one in `dir`.
  void UseStateDir(std::string dir) { state_dir_ = std::move(dir); }
  // No --state-dir: the daemon takes its database's default directory under
  // `base` (given as systemd's $STATE_DIRECTORY, so a root test writes
  // nothing under /var/lib).
  void UseDefaultStateDir(std::string base) { default_state_base_ = std::move(base); }
  std::string db() const { return db_.empty() ? dir_ + "/meridian.db" : db_; }
  int port() const { return port_; }

  // Starts the daemon on a port the kernel picks (--listen 127.0.0.1:0, so no
  // other process can take it first), reads the port from the daemon's
  // "listening on" line, and waits until /healthz answers.
  void Start() {
    const std::string log = dir_ + "/serve.log";
    std::error_code ec;
    const auto before = std::filesystem::exists(log) ? std::filesystem::file_size(log, ec) : 0;
    port_ = 0;
    pid_ = fork();
    if (pid_ == 0) {
      // Dies with the test: a test that aborts (a sanitizer report) leaves no
      // daemon behind.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      FILE* f = std::fopen(log.c_str(), "a");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      std::string cfg = dir_ + "/serve.yaml";
      std::string dbp = db();
      // PostgreSQL names no place for the state: the directory's, as SQLite's default.
      std::string state = state_dir_.empty() ? dir_ + "/meridian.db.state" : state_dir_;
      if (!default_state_base_.empty()) {
        setenv("STATE_DIRECTORY", default_state_base_.c_str(), 1);
        execl(MERIDIAN_BINARY, MERIDIAN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db",
              dbp.c_str(), "--config", cfg.c_str(), static_cast<char*>(nullptr));
      } else if (dbp.rfind("postgresql://", 0) == 0) {
        execl(MERIDIAN_BINARY, MERIDIAN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db",
              dbp.c_str(), "--config", cfg.c_str(), "--state-dir", state.c_str(),
              static_cast<char*>(nullptr));
      }
      execl(MERIDIAN_BINARY, MERIDIAN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db",
            dbp.c_str(), "--config", cfg.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const std::string mark = "listening on http://127.0.0.1:";
    for (int i = 0; i < 400; ++i) {
      if (port_ == 0) {
        const std::string text = Log();
        const size_t at = text.find(mark, std::min<size_t>(before, text.size()));
        if (at != std::string::npos) port_ = std::atoi(text.c_str() + at + mark.size());
      }
      if (port_ != 0) {
        httplib::Client c("127.0.0.1", port_);
        c.set_connection_timeout(0, 200000);
        auto r = c.Get("/healthz");
        if (r && r->status == 200) return;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "meridian serve exited early; log:\n" << Log();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    FAIL() << "meridian serve did not answer /healthz; log:\n" << Log();
  }

  bool running() const { return pid_ > 0; }
  // Sends `sig` without waiting for the daemon to end (SIGSTOP, SIGCONT).
  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }

  void Kill(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string Log() const {
    std::ifstream in(dir_ + "/serve.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A new token from `meridian token create`.
  std::string Token(const std::string& tenant, bool admin = false, const std::string& expires = "") {
    std::vector<std::string> argv = {MERIDIAN_BINARY, "token", "create", "--db", db(), "--tenant",
                                     tenant};
    if (admin) argv.push_back("--admin");
    if (!expires.empty()) {
      argv.push_back("--expires");
      argv.push_back(expires);
    }
    int rc = 0;
    std::string out = RunCommand(argv, &rc);
    EXPECT_EQ(rc, 0) << out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  std::unique_ptr<httplib::Client> Client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(10, 0);
    c->set_tcp_nodelay(true);
    return c;
  }

 private:
  std::string dir_, db_, state_dir_, default_state_base_;
  int port_ = 0;
  pid_t pid_ = -1;
};

inline httplib::Headers Auth(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

// POST /v1/jobs as `token`: the new job's id; a test failure and "" when the
// daemon does not answer 201.
inline std::string SubmitJob(httplib::Client& http, const std::string& token,
                             const nlohmann::json& spec) {
  auto r = http.Post("/v1/jobs", Auth(token), spec.dump(), "application/json");
  EXPECT_TRUE(r);
  if (!r) return "";
  EXPECT_EQ(r->status, 201) << r->body;
  return r->status == 201 ? nlohmann::json::parse(r->body)["id"].get<std::string>() : "";
}

// GET /v1/jobs/{id} as `token`; null when the daemon does not answer.
inline nlohmann::json GetJob(httplib::Client& http, const std::string& token, const std::string& id) {
  auto r = http.Get(("/v1/jobs/" + id).c_str(), Auth(token));
  return r ? nlohmann::json::parse(r->body) : nlohmann::json();
}

}  // namespace meridian::control::testing
