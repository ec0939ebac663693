#include "backends/common/environment.h"

#include <time.h>

namespace meridian::backends {

BackendEnvironment SystemEnvironment() {
  BackendEnvironment env;
  env.clock = [] { return static_cast<UnixSeconds>(::time(nullptr)); };
  env.steady_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  };
  env.run = RunProcess;
  return env;
}

BackendEnvironment Completed(BackendEnvironment env) {
  BackendEnvironment system = SystemEnvironment();
  if (!env.clock) env.clock = system.clock;
  if (!env.steady_ms) env.steady_ms = system.steady_ms;
  if (!env.run) env.run = system.run;
  return env;
}

}  // namespace meridian::backends
