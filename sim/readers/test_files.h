// Helpers for the reader tests: a scratch file per test, and the real traces
// in ../shared/data (tests run from the project root).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace meridian::sim {

// Writes `text` to a file named after the running test, in the system's
// temporary folder, and returns its path.
inline std::string ScratchFile(const std::string& text, const std::string& suffix = ".jsonl") {
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("meridian-" + std::string(info->test_suite_name()) + "-" +
                             info->name() + suffix);
  std::ofstream(p) << text;
  return p.string();
}

inline const char* kOpenbPods = "../shared/data/traces/alibaba-gpu-v2023/csv/openb_pod_list_default.csv";
inline const char* kDlrmTrace =
    "../shared/data/traces/alibaba-gpu-v2025-dlrm/disaggregated_DLRM_trace.csv";

}  // namespace meridian::sim
