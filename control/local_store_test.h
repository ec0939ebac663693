// For reconciler tests on the real local backend and a real SQLite store: a
// temporary directory named for the test, holding the store (m.db) and the
// state directory (state/) the backend and the reconciler share.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/local/local.h"
#include "backends/local/proc.h"
#include "control/store.h"

namespace meridian::control::testing {

class LocalStoreTest : public ::testing::Test {
 protected:
  // Makes "<tmp>/meridian-<tag>-<test name>-<pid>" afresh and opens its store.
  void OpenStore(const std::string& tag) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (std::filesystem::temp_directory_path() /
            ("meridian-" + tag + "-" + std::string(info->name()) + "-" + std::to_string(getpid())))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/state");
    SqliteOptions so;
    so.path = dir_ + "/m.db";
    auto store = OpenSqliteStore(so);
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(store).value();
  }
  // The local backend of this machine with one T4 declared.
  std::unique_ptr<Backend> OneT4Backend() const {
    backends::LocalBackendOptions bo;
    bo.state_dir = dir_ + "/state";
    bo.gpu_model = "T4";
    bo.gpus = 1;
    return backends::MakeLocalBackend(bo);
  }

  // The end of a test: every job process the local backend started for it
  // is killed, then the directory is removed. Attempts outlive the backend
  // object by design (a restarted daemon adopts them), so a job still
  // running, or one that missed the file the test wrote to end it, would
  // otherwise run on after the test. A job is known by its environment
  // (MERIDIAN_CHECKPOINT_DIR under this directory); its whole session (the
  // backend's monitor and the job's processes) is killed.
  void EndJobsAndRemoveDir() {
    std::set<pid_t> sessions;
    for (pid_t pid : Processes()) {
      if (EnvironMentions(pid, "MERIDIAN_CHECKPOINT_DIR=" + dir_ + "/")) {
        const pid_t sid = ::getsid(pid);
        if (sid > 0 && sid != ::getsid(0)) sessions.insert(sid);
      }
    }
    auto members = [&] {
      std::vector<pid_t> in;
      for (pid_t pid : Processes()) {
        if (sessions.count(::getsid(pid)) > 0 && !Zombie(pid)) in.push_back(pid);
      }
      return in;
    };
    for (int i = 0; i < 100 && !sessions.empty(); ++i) {
      const std::vector<pid_t> left = members();
      if (left.empty()) break;
      for (pid_t pid : left) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(sessions.empty() || members().empty()) << "a job of " << dir_ << " would not end";
    std::filesystem::remove_all(dir_);
  }

  // Until `done` holds (true), or `seconds` pass (what it says then).
  bool WaitFor(const std::function<bool()>& done, int seconds = 20) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  // The stored job (an empty row, with the test failed, when it is not there).
  JobRow Row(const std::string& id) {
    auto row = store_->GetJob(id);
    EXPECT_TRUE(row.ok()) << row.status().message();
    return row.ok() ? *row : JobRow{};
  }
  // The job's events, one message a line.
  std::string Events(const std::string& id) {
    auto events = store_->Events(id);
    std::string all;
    if (events.ok()) {
      for (const EventRow& e : *events) all += e.message + "\n";
    }
    return all;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;

 private:
  static std::vector<pid_t> Processes() {
    std::vector<pid_t> pids;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
        pids.push_back(static_cast<pid_t>(std::stol(name)));
      }
    }
    return pids;
  }
  static bool EnvironMentions(pid_t pid, const std::string& prefix) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/environ");
    std::string var;
    while (std::getline(in, var, '\0')) {
      if (var.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }
  // Gone, or ended and not yet reaped (backends/local/proc.h).
  static bool Zombie(pid_t pid) {
    backends::ProcStat st;
    return !backends::ReadProcStat(pid, &st) || st.state == 'Z' || st.state == 'X';
  }
};

}  // namespace meridian::control::testing
