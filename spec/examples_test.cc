// Every file in examples/ parses and validates against the test catalog, and
// there is one example per workload kind, named after it.
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "core/enums.h"
#include "spec/spec.h"
#include "spec/test_catalog.h"

namespace meridian::spec {
namespace {

namespace fs = std::filesystem;

// 2026-01-01T00:00:00Z: before every absolute deadline in the examples.
constexpr UnixSeconds kSubmitted = 1767225600;

TEST(Examples, EveryFileParsesAndValidates) {
  auto cat = testing::SpecTestCatalog();
  ASSERT_NE(cat, nullptr);
  std::set<std::string> kinds_seen;
  int files = 0;
  for (const auto& entry : fs::directory_iterator("examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const std::string path = entry.path().string();
    auto specs = LoadJobSpecFile(path);
    ASSERT_TRUE(specs.ok()) << specs.status().message();
    for (const JobSpec& job : *specs) {
      Status st = ValidateAgainstCatalog(job, *cat, kSubmitted);
      EXPECT_TRUE(st.ok()) << st.message();
      EXPECT_EQ(std::string(ToString(job.kind)) + ".yaml", entry.path().filename().string())
          << path << " should be named after its kind";
      kinds_seen.insert(std::string(ToString(job.kind)));
    }
  }
  EXPECT_GE(files, 8);
  for (WorkloadKind k : AllWorkloadKinds()) {
    EXPECT_EQ(kinds_seen.count(std::string(ToString(k))), 1u) << "no example for " << ToString(k);
  }
}

TEST(Examples, FineTuningMatchesTheDocumentedJob) {
  auto specs = LoadJobSpecFile("examples/fine-tuning.yaml");
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  const JobSpec& job = specs->at(0);
  EXPECT_EQ(job.name, "llama-70b-sft");
  EXPECT_EQ(job.model.params_b, 70);
  EXPECT_EQ(job.work.tokens, 2.0e9);
  EXPECT_EQ(job.deadline.after_submit_s, 72 * 3600);
  EXPECT_EQ(job.budget, Money::FromDollars(5000));
}

TEST(LoadJobSpecFile, MissingFileNamesThePath) {
  auto specs = LoadJobSpecFile("examples/no-such-file.yaml");
  ASSERT_FALSE(specs.ok());
  EXPECT_NE(specs.status().message().find("examples/no-such-file.yaml: cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace meridian::spec
