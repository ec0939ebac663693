#include "telemetry/procfs.h"

#include <gtest/gtest.h>

namespace meridian::telemetry {
namespace {

TEST(ProcFs, ParsesStatWithSpacesAndParensInTheCommand) {
  // /proc/PID/stat of `python3 (loader) worker`, 100 ticks per second: utime
  // 250 ticks = 2.5 s, stime 50 = 0.5 s, 7 threads, blkio 30 ticks = 0.3 s.
  const std::string stat =
      "4242 (python3 (loader) w) S 4200 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 7 0 "
      "123456 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 30 0 0";
  ProcCounters c;
  ASSERT_TRUE(ParseStat(stat, 100, &c));
  EXPECT_EQ(c.pid, 4242);
  EXPECT_EQ(c.pgrp, 4242);
  EXPECT_DOUBLE_EQ(c.user_s, 2.5);
  EXPECT_DOUBLE_EQ(c.system_s, 0.5);
  EXPECT_EQ(c.threads, 7);
  EXPECT_EQ(c.start_time, 123456u);
  EXPECT_DOUBLE_EQ(c.blkio_s, 0.3);
  EXPECT_FALSE(ParseStat("4242 (x", 100, &c));
}

TEST(ProcFs, ParsesStatusIoAndNode) {
  ProcCounters c;
  ASSERT_TRUE(ParseStatus("Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n", &c));
  EXPECT_EQ(c.ctx_voluntary, 12u);
  EXPECT_EQ(c.ctx_involuntary, 3u);
  ASSERT_TRUE(ParseIo("rchar: 5\nwchar: 6\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n", &c));
  EXPECT_EQ(c.read_bytes, 4096u);
  EXPECT_EQ(c.write_bytes, 8192u);
  NodeSample n;
  // user nice system idle iowait irq softirq steal: busy 100+0+50+0+0+10 = 160
  // ticks = 1.6 s; iowait 0.2 s; total 1.6 + 0.2 + 8 = 9.8 s; two CPUs.
  ASSERT_TRUE(ParseNode("cpu  100 0 50 800 20 0 0 10 0 0\ncpu0 50 0 25 400 10 0 0 5 0 0\n"
                        "cpu1 50 0 25 400 10 0 0 5 0 0\nintr 1\n",
                        "1.50 1.20 0.90 2/300 4242\n", 100, &n));
  EXPECT_DOUBLE_EQ(n.cpu_busy_s, 1.6);
  EXPECT_DOUBLE_EQ(n.cpu_iowait_s, 0.2);
  EXPECT_DOUBLE_EQ(n.cpu_total_s, 9.8);
  EXPECT_EQ(n.online_cpus, 2);
  EXPECT_DOUBLE_EQ(n.load1, 1.5);
}

TEST(ProcFs, ReadsThisMachine) {
  ProcFs fs;
  NodeSample n;
  ASSERT_TRUE(fs.ReadNode(&n));
  EXPECT_GE(n.online_cpus, 1);
  ProcCounters self;
  ASSERT_TRUE(fs.ReadProcess(getpid(), &self));
  EXPECT_EQ(self.pid, getpid());
  EXPECT_GE(self.threads, 1);
  EXPECT_FALSE(fs.ReadProcess(-5, &self));
}

}  // namespace
}  // namespace meridian::telemetry
