// What a backend takes from the world besides its engine: the time and the
// programs it runs. Injected, as the scheduling core takes `now` from its
// snapshot, so a test can hold the clock, record every command a backend
// runs, and answer as a cluster that times out or fails would, without one.
#pragma once

#include <cstdint>
#include <functional>

#include "backends/common/subprocess.h"
#include "core/time.h"

namespace meridian::backends {

struct BackendEnvironment {
  std::function<UnixSeconds()> clock;   // wall clock: attempts' start and end times
  std::function<int64_t()> steady_ms;   // monotonic: refresh throttles, grace timers
  ProcessRunner run;                    // every outside command
};

// The real one: time(), CLOCK_MONOTONIC and RunProcess.
BackendEnvironment SystemEnvironment();

// `env` with each unset member taken from SystemEnvironment().
BackendEnvironment Completed(BackendEnvironment env);

}  // namespace meridian::backends
