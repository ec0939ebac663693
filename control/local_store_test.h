// For reconciler tests on the real local backend and a real SQLite store: a
// temporary directory named for the test, holding the store (m.db) and the
// state directory (state/) the backend and the reconciler share.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "backends/local/local.h"
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
};

}  // namespace meridian::control::testing
