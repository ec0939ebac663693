// The trace readers take a path, not bytes: a fuzz target writes each input
// to a file of its own process and passes that path, so the reader under test
// runs exactly as `meridian simulate` runs it (ReadWholeFile, then the parse).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace meridian::fuzz {

// A file under $TMPDIR (else /tmp) named after this process and `suffix`,
// removed when the process exits normally. Write replaces its contents.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/meridian-fuzz-" +
            std::to_string(::getpid()) + "-" + suffix;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Aborts when the file cannot be written: the harness, not the input, failed.
  const std::string& Write(std::string_view bytes) const {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() ||
        std::fclose(f) != 0) {
      std::perror(path_.c_str());
      std::abort();
    }
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string_view Bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace meridian::fuzz
