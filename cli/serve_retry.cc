#include "cli/serve_retry.h"

#include <cmath>
#include <vector>

#include "core/time.h"
#include "spec/suggest.h"

namespace meridian::cli {

namespace {

Status RetryError(const std::string& file, const YAML::Node& n, const std::string& msg) {
  const YAML::Mark m = n.Mark();
  std::string pos = file;
  if (m.line >= 0) pos += ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  return Status::Invalid(pos + ": " + msg);
}

}  // namespace

Result<int64_t> ParseMilliseconds(const std::string& s) {
  if (s.size() > 2 && s.ends_with("ms")) {
    const std::string num = s.substr(0, s.size() - 2);
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (end == num.c_str() || *end != '\0' || !(v >= 0) || v > 1e12) {
      return Status::Invalid("\"" + s + "\" is not a duration");
    }
    return static_cast<int64_t>(std::llround(v));
  }
  // Whole seconds and larger units as everywhere else; "1.5s" as 1500 ms.
  if (s.size() > 1 && s.back() == 's') {
    const std::string num = s.substr(0, s.size() - 1);
    char* end = nullptr;
    const double v = std::strtod(num.c_str(), &end);
    if (end != num.c_str() && *end == '\0' && v >= 0 && v <= 1e9) {
      return static_cast<int64_t>(std::llround(v * 1000));
    }
  }
  auto d = ParseDuration(s);
  if (!d.ok()) return d.status();
  return *d * 1000;
}

Status ReadBackendRetry(const std::string& file, const YAML::Node& v,
                        control::BackendRetryPolicy* policy) {
  static const std::vector<std::string> kKeys = {"launch_attempts", "initial_backoff",
                                                 "max_backoff"};
  if (!v.IsMap()) {
    return RetryError(file, v, "backend_retry: must be a map (launch_attempts, initial_backoff, "
                               "max_backoff)");
  }
  for (const auto& kv : v) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& n = kv.second;
    if (key == "launch_attempts") {
      const int64_t count = n.as<int64_t>();
      if (count < 1 || count > 100) {
        return RetryError(file, n, "backend_retry.launch_attempts: \"" + n.as<std::string>() +
                                       "\" must be 1 (no retry) to 100");
      }
      policy->launch_attempts = static_cast<int>(count);
    } else if (key == "initial_backoff" || key == "max_backoff") {
      auto ms = ParseMilliseconds(n.as<std::string>());
      if (!ms.ok() || *ms < 10 || *ms > 3'600'000) {
        return RetryError(file, n, "backend_retry." + key + ": \"" + n.as<std::string>() +
                                       "\" must be a duration from 10ms to 1h (\"500ms\", \"2s\")");
      }
      (key == "initial_backoff" ? policy->initial_backoff_ms : policy->max_backoff_ms) = *ms;
    } else {
      return RetryError(file, kv.first, "backend_retry." + key + ": unknown key" +
                                            spec::SuggestFrom(key, kKeys, "keys"));
    }
  }
  Status st = policy->Validate();
  return st.ok() ? st : RetryError(file, v, st.message());
}

}  // namespace meridian::cli
