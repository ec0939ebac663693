// serve.yaml's leader_lease_ms: the default, a value read as written, and
// values out of range refused naming the file, line, key, value and range.
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

}  // namespace
}  // namespace meridian::cli
