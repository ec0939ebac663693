#include "backends/local/launch_fence.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "control/backend.h"

namespace meridian::backends {

namespace {

std::string Errno() { return std::strerror(errno); }

// Exclusive lock on `fd`, trying every 20 ms for up to `wait_ms`.
Status LockWithin(int fd, const std::string& path, int64_t wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return Status::Internal("launch fence \"" + path + "\": lock: " + Errno());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Internal("launch fence \"" + path + "\": still held after " +
                              std::to_string(wait_ms) + " ms (a launch under way elsewhere)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::Ok();
}

// The decimal epoch the file holds; 0 when empty.
Result<int64_t> ReadEpoch(int fd, const std::string& path) {
  char buf[32] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n < 0) return Status::Internal("launch fence \"" + path + "\": read: " + Errno());
  if (n == 0) return int64_t{0};
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(buf, &end, 10);
  if (errno != 0 || end == buf || v < 0) {
    return Status::Internal("launch fence \"" + path + "\": holds \"" + std::string(buf, n) +
                            "\", not an epoch");
  }
  return static_cast<int64_t>(v);
}

Status WriteEpoch(int fd, const std::string& path, int64_t epoch) {
  const std::string text = std::to_string(epoch) + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
      fdatasync(fd) != 0) {
    return Status::Internal("launch fence \"" + path + "\": write: " + Errno());
  }
  return Status::Ok();
}

}  // namespace

LaunchFenceHold& LaunchFenceHold::operator=(LaunchFenceHold&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

LaunchFenceHold::~LaunchFenceHold() {
  if (fd_ >= 0) close(fd_);  // closing the last descriptor releases the flock
}

Result<LaunchFenceHold> EnterLaunchFence(const std::string& path, int64_t epoch,
                                         int64_t wait_ms) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("launch fence \"" + path + "\": open: " + Errno());
  LaunchFenceHold hold(fd);
  MERIDIAN_RETURN_IF_ERROR(LockWithin(fd, path, wait_ms));
  auto recorded = ReadEpoch(fd, path);
  if (!recorded.ok()) return recorded.status();
  if (epoch < *recorded) {
    return control::Deposed("launch at lease epoch " + std::to_string(epoch) +
                            " refused: epoch " + std::to_string(*recorded) +
                            " is recorded in \"" + path + "\" (another replica leads)");
  }
  if (epoch > *recorded) MERIDIAN_RETURN_IF_ERROR(WriteEpoch(fd, path, epoch));
  return hold;
}

Result<int64_t> RecordedLaunchEpoch(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return int64_t{0};
    return Status::Internal("launch fence \"" + path + "\": open: " + Errno());
  }
  LaunchFenceHold hold(fd);
  return ReadEpoch(fd, path);
}

}  // namespace meridian::backends
