// serve.yaml's `backend_retry:` block: how transient backend failures are
// retried (control::BackendRetryPolicy, docs/backends.md "When a backend
// fails").
//
//   backend_retry:
//     launch_attempts: 5      # tries of a launch in all; 1 = no retry
//     initial_backoff: 1s     # wait after the first failure ("500ms", "2s")
//     max_backoff: 60s        # the wait doubles up to this
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "control/backend.h"
#include "core/status.h"

namespace meridian::cli {

// Errors name the file, line, key, value and the allowed range.
Status ReadBackendRetry(const std::string& file, const YAML::Node& v,
                        control::BackendRetryPolicy* policy);

// "250ms", "2s", "1.5s", "1m": milliseconds; errors name the value.
Result<int64_t> ParseMilliseconds(const std::string& s);

}  // namespace meridian::cli
