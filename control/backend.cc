#include "control/backend.h"

namespace meridian::control {

std::string_view RunPhaseName(RunPhase p) {
  switch (p) {
    case RunPhase::kStarting: return "starting";
    case RunPhase::kRunning: return "running";
    case RunPhase::kExited: return "exited";
    case RunPhase::kKilled: return "killed";
    case RunPhase::kLost: return "lost";
  }
  return "unknown";
}

}  // namespace meridian::control
