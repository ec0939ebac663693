// serve.yaml's leader_lease_ms: the default, a value read as written, and
// values out of range refused naming the file, line, key, value and range;
// advertise: host names and addresses with or without a port, and what is
// neither refused.
#include "cli/serve_config.h"

#include <gtest/gtest.h>

namespace meridian::cli {
namespace {

TEST(ServeLeaseConfig, DefaultsToFiveSecondsAndReadsAValueAsWritten) {
  ServeConfig c;
  // 5000 ms renewed every 5000/3 ms: a takeover in about 4/3 * 5 s = 6.7 s, under 10 s.
  EXPECT_EQ(c.leader_lease_ms, 5000);
  ASSERT_TRUE(ParseServeConfig("leader_lease_ms: 2500\n", "serve.yaml", &c).ok());
  EXPECT_EQ(c.leader_lease_ms, 2500);
}

TEST(ServeLeaseConfig, ValuesOutOfRangeAreRefusedNamingTheKey) {
  for (const char* v : {"299", "600001", "0"}) {
    ServeConfig c;
    Status st = ParseServeConfig(std::string("leader_lease_ms: ") + v + "\n", "serve.yaml", &c);
    ASSERT_FALSE(st.ok()) << v;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(std::string("serve.yaml:1:18: leader_lease_ms: \"") + v +
                                "\" must be 300 to 600000"),
              std::string::npos)
        << st.message();
  }
}

TEST(ServeAdvertiseConfig, HostsAndAddressesWithOrWithoutAPortAreRead) {
  for (const char* v : {"meridian-1.internal", "meridian-1.internal:8080", "10.0.0.7", "10.0.0.7:1",
                        "[fd00::7]", "[fd00::7]:65535", "localhost"}) {
    ServeConfig c;
    Status st = ParseServeConfig(std::string("advertise: \"") + v + "\"\n", "serve.yaml", &c);
    ASSERT_TRUE(st.ok()) << v << ": " << st.message();
    EXPECT_EQ(c.advertise, v);
  }
  EXPECT_EQ(ServeConfig{}.advertise, "");  // the listening host, or the machine's name
}

TEST(ServeAdvertiseConfig, WhatIsNeitherAHostNorAnAddressIsRefusedNamingTheKey) {
  for (const char* v : {"", "host:0", "host:65536", "host:", "http://host:80", "a b", "-host",
                        "host:80x", "[fd00::7", "[fd00::7]x", "user@host:80"}) {
    ServeConfig c;
    Status st = ParseServeConfig(std::string("advertise: \"") + v + "\"\n", "serve.yaml", &c);
    ASSERT_FALSE(st.ok()) << v;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(std::string("serve.yaml:1:12: advertise: \"") + v +
                                "\" must be HOST or HOST:PORT"),
              std::string::npos)
        << st.message();
  }
}

// The CPU rates the daemon bills a run on CPUs at: the fleet's defaults
// (GCP N2 list rates) unless given; a negative one is refused naming it.
TEST(ServeCpuRatesConfig, DefaultToTheFleetsAndRefuseANegativeRate) {
  ServeConfig c;
  EXPECT_EQ(c.vcpu_hour_usd, 0.031611);
  EXPECT_EQ(c.ram_gib_hour_usd, 0.004237);
  ASSERT_TRUE(ParseServeConfig("vcpu_hour_usd: 0.05\nram_gib_hour_usd: 0\n", "serve.yaml", &c).ok());
  EXPECT_EQ(c.vcpu_hour_usd, 0.05);
  EXPECT_EQ(c.ram_gib_hour_usd, 0.0);
  for (const char* k : {"vcpu_hour_usd", "ram_gib_hour_usd"}) {
    ServeConfig bad;
    Status st = ParseServeConfig(std::string(k) + ": -0.5\n", "serve.yaml", &bad);
    ASSERT_FALSE(st.ok()) << k;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(std::string(k) + ": \"-0.5\" must be >= 0 (US dollars)"), std::string::npos)
        << st.message();
  }
}

}  // namespace
}  // namespace meridian::cli
