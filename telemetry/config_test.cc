#include "telemetry/config.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace meridian::telemetry {
namespace {

Status Parse(const std::string& yaml, TelemetryConfig* c) {
  return ParseTelemetryConfig(YAML::Load(yaml)["telemetry"], "serve.yaml", c);
}

TEST(TelemetryConfig, ReadsEveryKindOfKey) {
  TelemetryConfig c;
  ASSERT_TRUE(Parse("telemetry:\n  interval: 500ms\n  window: 2m\n  gpu_busy_sm_pct: 70\n"
                    "  min_samples: 4\n  nvml_library: /opt/libnvidia-ml.so.1\n",
                    &c)
                  .ok());
  EXPECT_EQ(c.interval_ms, 500);
  EXPECT_EQ(c.thresholds.window_s, 120);
  EXPECT_DOUBLE_EQ(c.thresholds.gpu_busy_sm_pct, 70);
  EXPECT_EQ(c.thresholds.min_samples, 4);
  EXPECT_EQ(c.nvml_library, "/opt/libnvidia-ml.so.1");
  EXPECT_EQ(TelemetryConfig{}.interval_ms, 5000);  // the default: 5 s
  // A 10-s window without max_gap: gaps of up to the window (not the default 30 s).
  TelemetryConfig short_window;
  ASSERT_TRUE(Parse("telemetry:\n  window: 10s\n", &short_window).ok());
  EXPECT_EQ(short_window.thresholds.max_gap_s, 10);
  // Stated, it must fit in the window.
  EXPECT_FALSE(Parse("telemetry:\n  window: 10s\n  max_gap: 20s\n", &short_window).ok());
}

TEST(TelemetryConfig, ErrorsNameTheFieldValueAndReason) {
  struct Case {
    const char* yaml;
    const char* want;
  };
  const Case cases[] = {
      {"telemetry:\n  gpu_busy_sm_pct: 150\n",
       "serve.yaml:2:20: telemetry.gpu_busy_sm_pct: \"150\" must be a number from 0 to 100"},
      {"telemetry:\n  interval: soon\n",
       "serve.yaml:2:13: telemetry.interval: \"soon\" must be a duration from 100ms to 3600s (\"5s\", \"2m\")"},
      {"telemetry:\n  windw: 60s\n", "serve.yaml:2:3: telemetry.windw: unknown key (known: "},
      {"telemetry:\n  gpu_idle_sm_pct: 70\n", "telemetry.gpu_idle_sm_pct: 70 must be below gpu_busy_sm_pct (60)"},
      {"telemetry: 5\n", "serve.yaml:1:12: telemetry: must be a map of keys"},
  };
  for (const Case& k : cases) {
    TelemetryConfig c;
    Status st = Parse(k.yaml, &c);
    ASSERT_FALSE(st.ok()) << k.yaml;
    EXPECT_EQ(st.message().substr(0, std::string(k.want).size()), k.want) << st.message();
  }
}

}  // namespace
}  // namespace meridian::telemetry
