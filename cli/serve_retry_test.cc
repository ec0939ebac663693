// serve.yaml's backend_retry: block: the defaults, values read as written,
// and values out of range refused naming the file, line, key and range.
#include "cli/serve_retry.h"

#include <gtest/gtest.h>

namespace meridian::cli {
namespace {

TEST(ServeRetryConfig, DefaultsAreValidAndDoubleUpToTheCap) {
  control::BackendRetryPolicy p;
  ASSERT_TRUE(p.Validate().ok());
  // 1000 ms doubling: 1000, 2000, 4000, ..., 32000, then 64000 capped at 60000.
  EXPECT_EQ(p.BackoffMs(1), 1000);
  EXPECT_EQ(p.BackoffMs(2), 2000);
  EXPECT_EQ(p.BackoffMs(4), 8000);
  EXPECT_EQ(p.BackoffMs(6), 32000);
  EXPECT_EQ(p.BackoffMs(7), 60000);
  EXPECT_EQ(p.BackoffMs(1000), 60000);
}

TEST(ServeRetryConfig, ValuesAreReadAsWritten) {
  control::BackendRetryPolicy p;
  ASSERT_TRUE(ReadBackendRetry("serve.yaml",
                               YAML::Load("{launch_attempts: 3, initial_backoff: 250ms, "
                                          "max_backoff: 1.5s}"),
                               &p)
                  .ok());
  EXPECT_EQ(p.launch_attempts, 3);
  EXPECT_EQ(p.initial_backoff_ms, 250);
  EXPECT_EQ(p.max_backoff_ms, 1500);
  // 250, 500, 1000, then 2000 capped at 1500.
  EXPECT_EQ(p.BackoffMs(4), 1500);
  ASSERT_TRUE(ReadBackendRetry("serve.yaml", YAML::Load("{max_backoff: 2m}"), &p).ok());
  EXPECT_EQ(p.max_backoff_ms, 120000);
}

TEST(ServeRetryConfig, ValuesOutOfRangeAreRefusedNamingTheKey) {
  struct Case {
    const char* yaml;
    const char* want;
  } cases[] = {
      {"{launch_attempts: 0}", "serve.yaml:1:19: backend_retry.launch_attempts: \"0\" must be 1 (no retry) to 100"},
      {"{launch_attempts: 101}", "backend_retry.launch_attempts: \"101\" must be 1 (no retry) to 100"},
      {"{initial_backoff: 5ms}", "backend_retry.initial_backoff: \"5ms\" must be a duration from 10ms to 1h"},
      {"{max_backoff: 2h}", "backend_retry.max_backoff: \"2h\" must be a duration from 10ms to 1h"},
      {"{initial_backoff: soon}", "backend_retry.initial_backoff: \"soon\" must be a duration"},
      {"{initial_backoff: 10s, max_backoff: 5s}",
       "backend_retry.max_backoff: 5000 ms must be from initial_backoff (10000 ms) to 1h"},
      {"{launch_attempt: 3}", "backend_retry.launch_attempt: unknown key"},
      {"[1, 2]", "backend_retry: must be a map"},
  };
  for (const Case& c : cases) {
    control::BackendRetryPolicy p;
    Status st = ReadBackendRetry("serve.yaml", YAML::Load(c.yaml), &p);
    ASSERT_FALSE(st.ok()) << c.yaml;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.want), std::string::npos) << c.yaml << ": " << st.message();
  }
}

}  // namespace
}  // namespace meridian::cli
