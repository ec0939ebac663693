#include "backends/local/proc.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "backends/local/shim.h"
#include "backends/local/status_file.h"

namespace meridian::backends {
namespace {

TEST(ProcStat, ParsesStateAndStartTimeAfterTheLastParenthesis) {
  // A comm with spaces and parentheses must not shift the fields.
  const char text[] =
      "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 3 1 0 0 20 0 1 0 987654 "
      "1000 200 18446744073709551615\n";
  ProcStat st;
  ASSERT_TRUE(ParseProcStat(text, std::strlen(text), &st));
  EXPECT_EQ(st.state, 'S');
  EXPECT_EQ(st.start_time, 987654u);
}

TEST(ProcStat, RejectsTruncatedText) {
  const char text[] = "4242 (sleep) S 1 4242";
  ProcStat st;
  EXPECT_FALSE(ParseProcStat(text, std::strlen(text), &st));
  EXPECT_FALSE(ParseProcStat("garbage", 7, &st));
}

TEST(ProcStat, ThisProcessIsAliveAndAnotherStartTimeIsNot) {
  ProcStat st;
  ASSERT_TRUE(ReadProcStat(getpid(), &st));
  EXPECT_GT(st.start_time, 0u);
  EXPECT_TRUE(ProcessAlive(getpid(), st.start_time));
  EXPECT_FALSE(ProcessAlive(getpid(), st.start_time + 1));  // a recycled pid
  EXPECT_FALSE(ProcessAlive(0x7ffffff0, st.start_time));
}

TEST(ExecCandidates, SearchesEachPathEntryOrUsesASlashedNameAsIs) {
  EXPECT_EQ(ExecCandidates("train", "/opt/bin::/usr/bin"),
            (std::vector<std::string>{"/opt/bin/train", "train", "/usr/bin/train"}));
  EXPECT_EQ(ExecCandidates("./train.sh", "/usr/bin"), (std::vector<std::string>{"./train.sh"}));
}

TEST(StatusFile, RunRecordRoundTripsAndAnIncompleteRecordIsAnError) {
  std::string dir = testing::TempDir() + "status_file_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  AttemptRun run{"j-00000007", 3, 100, 200, 101, 201, 1700000000};
  ASSERT_TRUE(WriteRunFile(dir + "/a.run", run).ok());
  auto back = ReadRunFile(dir + "/a.run");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ((*back)->job_id, "j-00000007");
  EXPECT_EQ((*back)->attempt, 3);
  EXPECT_EQ((*back)->shim_pid, 100);
  EXPECT_EQ((*back)->job_start, 201u);
  EXPECT_EQ((*back)->started, 1700000000);

  auto missing = ReadStatusFile(dir + "/none.status");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  {
    std::FILE* f = std::fopen((dir + "/cut.status").c_str(), "w");
    std::fputs("meridian-attempt-status 1\njob_pid 5\n", f);
    std::fclose(f);
  }
  EXPECT_FALSE(ReadStatusFile(dir + "/cut.status").ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace meridian::backends
