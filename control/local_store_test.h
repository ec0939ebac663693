// For reconciler tests on the real local backend and a real SQLite store: a
// temporary directory named for the test, holding the store (m.db) and the
// state directory (state/) the backend and the reconciler share.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

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

  std::string dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace meridian::control::testing
