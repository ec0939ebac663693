// Helpers for the trace tests: a scratch file per test, the real traces in
// the public data folder (MERIDIAN_DATA_DIR, ../shared/data by default), and
// lookups into a read Trace.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "sim/trace.h"

namespace meridian::sim {

// Writes `text` to a file named after the running test, in the system's
// temporary folder, and returns its path.
inline std::string ScratchFile(const std::string& text, const std::string& suffix = ".jsonl") {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("meridian-" + std::string(info->test_suite_name()) + "-" +
                             info->name() + suffix);
  std::ofstream(p) << text;
  return p.string();
}

// A file of the public data folder. A missing file fails the test that needs
// it, naming the path and how to point the build elsewhere; it never skips.
inline std::string DataFile(const std::string& relative) {
  const std::string path = std::string(MERIDIAN_DATA_DIR) + "/" + relative;
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << path << " not found: configure with -DMERIDIAN_DATA_DIR=<the folder holding traces/>";
  }
  return path;
}

inline const catalog::Catalog& EmbeddedCatalog() {
  static const auto c = catalog::Catalog::LoadEmbedded();
  return **c;
}

// The job named `name`; fails the test (and returns null) when there is none.
inline const TraceJob* FindJob(const Trace& t, const std::string& name) {
  for (const TraceJob& j : t.jobs) {
    if (j.name == name) return &j;
  }
  ADD_FAILURE() << "no job " << name;
  return nullptr;
}

// The notes, one a line, and whether one of them holds `text`.
inline std::string NotesOf(const Trace& t) {
  std::string all;
  for (const std::string& n : t.notes) all += n + "\n";
  return all;
}
inline bool HasNote(const Trace& t, const std::string& text) {
  for (const std::string& n : t.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

inline const char* kOpenbPods = "traces/alibaba-gpu-v2023/csv/openb_pod_list_default.csv";
inline const char* kOpenbGpuSpec = "traces/alibaba-gpu-v2023/csv/openb_pod_list_gpuspec33.csv";
inline const char* kDlrmTrace = "traces/alibaba-gpu-v2025-dlrm/disaggregated_DLRM_trace.csv";

}  // namespace meridian::sim
