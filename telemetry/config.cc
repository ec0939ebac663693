#include "telemetry/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#include "core/time.h"

namespace meridian::telemetry {

namespace {

std::string Where(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1)
                     : file;
}

// One key: how to read it into the config, or the reason it is wrong.
using Reader = std::function<std::string(const YAML::Node&, TelemetryConfig*)>;

Reader Number(double Thresholds::*field, double lo, double hi) {
  return [=](const YAML::Node& v, TelemetryConfig* c) -> std::string {
    double x = 0;
    try {
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      return "must be a number from " + YAML::Dump(YAML::Node(lo)) + " to " + YAML::Dump(YAML::Node(hi));
    }
    if (!(x >= lo && x <= hi)) {
      return "must be a number from " + YAML::Dump(YAML::Node(lo)) + " to " + YAML::Dump(YAML::Node(hi));
    }
    c->thresholds.*field = x;
    return "";
  };
}

// A duration ("5s", "2m") into `out` seconds-or-milliseconds via `scale`.
Reader Duration(std::function<int64_t&(TelemetryConfig*)> field, int64_t scale, int64_t min_ms,
                int64_t max_ms) {
  return [=](const YAML::Node& v, TelemetryConfig* c) -> std::string {
    std::string text = v.IsScalar() ? v.as<std::string>() : "";
    auto d = ParseDurationMs(text);
    if (!d.ok() || *d < min_ms || *d > max_ms) {
      return "must be a duration from " + std::to_string(min_ms) + "ms to " +
             std::to_string(max_ms / 1000) + "s (\"5s\", \"2m\")";
    }
    field(c) = *d / scale;
    return "";
  };
}

Reader WholeNumber(std::function<int&(TelemetryConfig*)> field, int lo, int hi) {
  return [=](const YAML::Node& v, TelemetryConfig* c) -> std::string {
    long long x = 0;
    try {
      x = v.as<long long>();
    } catch (const YAML::Exception&) {
      return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    }
    if (x < lo || x > hi) {
      return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    }
    field(c) = static_cast<int>(x);
    return "";
  };
}

const std::map<std::string, Reader>& Readers() {
  static const std::map<std::string, Reader> r = {
      {"interval", Duration([](TelemetryConfig* c) -> int64_t& { return c->interval_ms; }, 1, 100,
                            3600'000)},
      {"store_every", Duration([](TelemetryConfig* c) -> int64_t& { return c->store_every_s; },
                               1000, 1000, 86400'000)},
      {"store_rows_per_job",
       WholeNumber([](TelemetryConfig* c) -> int& { return c->store_rows_per_job; }, 1, 1000000)},
      {"nvml_library",
       [](const YAML::Node& v, TelemetryConfig* c) -> std::string {
         if (!v.IsScalar() || v.as<std::string>().empty()) return "must be a library name or path";
         c->nvml_library = v.as<std::string>();
         return "";
       }},
      {"window", Duration([](TelemetryConfig* c) -> int64_t& { return c->thresholds.window_s; },
                          1000, 1000, 86400'000)},
      {"max_gap", Duration([](TelemetryConfig* c) -> int64_t& { return c->thresholds.max_gap_s; },
                           1000, 1000, 86400'000)},
      {"min_samples",
       WholeNumber([](TelemetryConfig* c) -> int& { return c->thresholds.min_samples; }, 2, 100000)},
      {"gpu_busy_sm_pct", Number(&Thresholds::gpu_busy_sm_pct, 0, 100)},
      {"gpu_idle_sm_pct", Number(&Thresholds::gpu_idle_sm_pct, 0, 100)},
      {"mem_bound_bw_pct", Number(&Thresholds::mem_bound_bw_pct, 0, 100)},
      {"mem_bound_sm_below_pct", Number(&Thresholds::mem_bound_sm_below_pct, 0, 100)},
      {"cpu_saturated_frac", Number(&Thresholds::cpu_saturated_frac, 0.01, 1)},
      {"cpu_active_cores", Number(&Thresholds::cpu_active_cores, 0, 1024)},
      {"cpu_idle_cores", Number(&Thresholds::cpu_idle_cores, 0, 1024)},
      {"iowait_dominant_frac", Number(&Thresholds::iowait_dominant_frac, 0.01, 1024)},
      {"run_delay_frac", Number(&Thresholds::run_delay_frac, 0.01, 1024)},
      {"target_gpu_sm_pct", Number(&Thresholds::target_gpu_sm_pct, 1, 100)},
      {"mig_headroom", Number(&Thresholds::mig_headroom, 1, 10)},
  };
  return r;
}

}  // namespace

Result<int64_t> ParseDurationMs(const std::string& text) {
  if (text.size() > 2 && text.ends_with("ms")) {
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() + text.size() - 2 && v >= 0) return static_cast<int64_t>(v);
    return Status::Invalid("not a duration");
  }
  auto s = ParseDuration(text);
  if (!s.ok()) return s.status();
  return *s * 1000;
}

Status ParseTelemetryConfig(const YAML::Node& node, const std::string& file, TelemetryConfig* out) {
  if (!node.IsMap()) {
    return Status::Invalid(Where(file, node) + ": telemetry: must be a map of keys (docs/telemetry.md)");
  }
  std::vector<std::string> known;
  for (const auto& [k, r] : Readers()) known.push_back(k);
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    auto it = Readers().find(key);
    if (it == Readers().end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return Status::Invalid(Where(file, kv.first) + ": telemetry." + key +
                             ": unknown key (known: " + list + ")");
    }
    const std::string why = it->second(kv.second, out);
    if (!why.empty()) {
      const std::string text = kv.second.IsScalar() ? kv.second.as<std::string>() : "(not a value)";
      return Status::Invalid(Where(file, kv.second) + ": telemetry." + key + ": \"" + text + "\" " + why);
    }
  }
  // A window shorter than the default gap: gaps are at most the window, unless stated.
  if (!node["max_gap"]) out->thresholds.max_gap_s = std::min(out->thresholds.max_gap_s, out->thresholds.window_s);
  return ValidateThresholds(out->thresholds);
}

namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Status ValidateThresholds(const Thresholds& t, const std::string& prefix) {
  if (t.gpu_idle_sm_pct >= t.gpu_busy_sm_pct) {
    return Status::Invalid(prefix + "gpu_idle_sm_pct: " + Num(t.gpu_idle_sm_pct) +
                           " must be below gpu_busy_sm_pct (" + Num(t.gpu_busy_sm_pct) + ")");
  }
  if (t.cpu_idle_cores >= t.cpu_active_cores) {
    return Status::Invalid(prefix + "cpu_idle_cores: " + Num(t.cpu_idle_cores) +
                           " must be below cpu_active_cores (" + Num(t.cpu_active_cores) + ")");
  }
  if (t.max_gap_s > t.window_s) {
    return Status::Invalid(prefix + "max_gap: " + Num(t.max_gap_s) +
                           "s must not exceed window (" + Num(t.window_s) + "s)");
  }
  return Status::Ok();
}

}  // namespace meridian::telemetry
