// The trace readers take a path, not bytes: a fuzz target writes each input
// to a file of its own process and passes that path, so the reader under test
// runs exactly as `meridian simulate` runs it (ReadWholeFile, then the parse).
//
// Millions of inputs go through that file, so it lives in memory where the
// machine has a tmpfs (/dev/shm), stays open between inputs, and is not
// rewritten when an input holds what it already holds.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace meridian::fuzz {

// A file under /dev/shm (else $TMPDIR, else /tmp) named after this process
// and `suffix`, removed when the process exits normally. Write replaces its
// contents.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix) {
    path_ = Directory() + "/meridian-fuzz-" + std::to_string(::getpid()) + "-" + suffix;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) Fail();
  }
  ~ScratchFile() {
    ::close(fd_);
    std::remove(path_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Aborts when the file cannot be written: the harness, not the input, failed.
  const std::string& Write(std::string_view bytes) {
    if (written_ && bytes == contents_) return path_;
    written_ = false;
    if (::ftruncate(fd_, 0) != 0) Fail();
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n <= 0) Fail();
      done += static_cast<size_t>(n);
    }
    contents_.assign(bytes);
    written_ = true;
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  static std::string Directory() {
    struct stat shm {};
    if (::stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode) && ::access("/dev/shm", W_OK) == 0) {
      return "/dev/shm";
    }
    const char* dir = std::getenv("TMPDIR");
    return dir != nullptr && *dir != '\0' ? dir : "/tmp";
  }
  [[noreturn]] void Fail() const {
    std::perror(path_.c_str());
    std::abort();
  }

  std::string path_;
  int fd_ = -1;
  std::string contents_;  // what the file holds when written_
  bool written_ = false;
};

inline std::string_view Bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace meridian::fuzz
