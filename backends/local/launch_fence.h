// The launch fence: which leader may start attempts in a state directory that
// several replicas share (docs/control-plane.md, "Replicas"). A file in the
// state directory holds the highest lease epoch any launch there has carried;
// a launch holds its lock (flock) from before it starts anything until its
// attempt's record is written, and a launch whose epoch is lower than the
// recorded one is refused. So a deposed leader that resumes after its lease
// check starts nothing once its successor has fenced or launched, and a
// successor's own fencing waits for a start already under way, whose record
// it then finds.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace meridian::backends {

// The fence file's name in the state directory.
inline constexpr const char* kLaunchFenceFile = "launch-fence";

// The fence's lock, held while this lives.
class LaunchFenceHold {
 public:
  LaunchFenceHold() = default;
  explicit LaunchFenceHold(int fd) : fd_(fd) {}
  LaunchFenceHold(LaunchFenceHold&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  LaunchFenceHold& operator=(LaunchFenceHold&& o) noexcept;
  LaunchFenceHold(const LaunchFenceHold&) = delete;
  LaunchFenceHold& operator=(const LaunchFenceHold&) = delete;
  ~LaunchFenceHold();

 private:
  int fd_ = -1;
};

// Takes the fence at `path` for a launch (or a new leader's fencing) at
// `epoch`, waiting up to `wait_ms` for another holder: refused (IsDeposed,
// control/backend.h) when a higher epoch is recorded, else that epoch is
// recorded if higher and the lock is held until the hold is dropped.
Result<LaunchFenceHold> EnterLaunchFence(const std::string& path, int64_t epoch, int64_t wait_ms);

// The epoch recorded at `path`; 0 when there is no fence file yet.
Result<int64_t> RecordedLaunchEpoch(const std::string& path);

}  // namespace meridian::backends
