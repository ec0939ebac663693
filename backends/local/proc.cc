#include "backends/local/proc.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace meridian::backends {

bool ParseProcStat(const char* text, size_t size, ProcStat* out) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the
  // fields start after the last ')'.
  size_t close = size;
  for (size_t i = 0; i < size; ++i) {
    if (text[i] == ')') close = i;
  }
  if (close == size) return false;
  size_t i = close + 1;
  int field = 2;  // the comm field ends at `close`
  while (i < size) {
    while (i < size && text[i] == ' ') ++i;
    if (i >= size) break;
    ++field;
    size_t begin = i;
    while (i < size && text[i] != ' ' && text[i] != '\n') ++i;
    if (field == 3) out->state = text[begin];
    if (field == 22) {
      uint64_t v = 0;
      for (size_t k = begin; k < i; ++k) {
        if (text[k] < '0' || text[k] > '9') return false;
        v = v * 10 + static_cast<uint64_t>(text[k] - '0');
      }
      out->start_time = v;
      return true;
    }
    if (i < size && text[i] == '\n') break;
  }
  return false;
}

bool ReadProcStat(pid_t pid, ProcStat* out) {
  if (pid <= 0) return false;
  char path[64] = "/proc/";
  // Digits of pid, written without snprintf (this runs after fork too).
  char digits[24];
  int n = 0;
  for (pid_t v = pid; v > 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  size_t len = 6;
  while (n > 0) path[len++] = digits[--n];
  const char suffix[] = "/stat";
  for (size_t k = 0; k < sizeof(suffix); ++k) path[len++] = suffix[k];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  size_t got = 0;
  while (got < sizeof(buf)) {
    ssize_t r = read(fd, buf + got, sizeof(buf) - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(fd);
  return ParseProcStat(buf, got, out);
}

bool ProcessAlive(pid_t pid, uint64_t start_time) {
  ProcStat st;
  if (!ReadProcStat(pid, &st)) return false;
  return st.start_time == start_time && st.state != 'Z' && st.state != 'X';
}

}  // namespace meridian::backends
