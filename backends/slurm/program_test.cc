#include "backends/slurm/program.h"

#include <gtest/gtest.h>

namespace meridian::backends {
namespace {

TEST(SlurmProgramTest, ArgvReachesTheProgramLiterally) {
  auto o = RunProgram({{"printf", "%s|", "a b", "$HOME", "`id`;", "*"}, {"PATH=/usr/bin:/bin"}});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->exit_code, 0);
  EXPECT_EQ(o->out, "a b|$HOME|`id`;|*|");
}

TEST(SlurmProgramTest, OnlyTheGivenEnvironment) {
  auto o = RunProgram({{"/usr/bin/env"}, {"A=1", "B=two words"}});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->out, "A=1\nB=two words\n");
}

TEST(SlurmProgramTest, ExitCodeStderrAndTimeout) {
  auto o = RunProgram({{"sh", "-c", "echo oops >&2; exit 3"}, {"PATH=/usr/bin:/bin"}});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->exit_code, 3);
  EXPECT_EQ(o->err, "oops\n");
  auto slow = RunProgram({{"sleep", "5"}, {"PATH=/usr/bin:/bin"}, 200});
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().message(), "\"sleep\" did not finish within 200 ms (killed)");
  auto missing = RunProgram({{"no-such-program-x"}, {"PATH=/usr/bin"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "cannot run \"no-such-program-x\": No such file or directory");
}

}  // namespace
}  // namespace meridian::backends
