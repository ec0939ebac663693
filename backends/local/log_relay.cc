#include "backends/local/log_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "backends/common/log_cap.h"

namespace meridian::backends {

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t w = write(fd, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    size -= static_cast<size_t>(w);
  }
  return true;
}

int64_t NowMonotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void Lines::Add(const char* key, int64_t value) {
  Str(key);
  Str(" ");
  Num(value);
  Str("\n");
}

void Lines::Num(int64_t value) {
  char digits[24];
  int n = 0;
  uint64_t v = value < 0 ? static_cast<uint64_t>(-(value + 1)) + 1 : static_cast<uint64_t>(value);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  if (value < 0) Str("-");
  while (n > 0 && size_ < sizeof(data_)) data_[size_++] = digits[--n];
}

void Lines::Str(const char* s) {
  while (*s != '\0' && size_ < sizeof(data_)) data_[size_++] = *s++;
}

bool OpenLogRelay(LogRelay* relay, int out_file, int err_file, int64_t cap, int* job_out, int* job_err) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return false;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return false;
  }
  relay->in[0] = out_pipe[0];
  relay->in[1] = err_pipe[0];
  relay->file[0] = out_file;
  relay->file[1] = err_file;
  relay->cap = cap;
  struct stat so {}, se {};
  fstat(out_file, &so);
  fstat(err_file, &se);
  relay->room = std::max<int64_t>(0, cap - so.st_size - se.st_size);
  *job_out = out_pipe[1];
  *job_err = err_pipe[1];
  return true;
}

bool PumpLog(LogRelay& r, int i) {
  char buf[65536];
  ssize_t n = read(r.in[i], buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    close(r.in[i]);
    r.in[i] = -1;
    return false;
  }
  const int64_t keep = std::min<int64_t>(n, r.room);
  if (keep > 0) WriteAll(r.file[i], buf, static_cast<size_t>(keep));
  r.room -= keep;
  if (keep < n) {
    if (r.dropped[i] == 0) {
      Lines l;
      l.Str(kLogCapReachedHead);
      l.Num(r.cap);
      l.Str(kLogCapReachedTail);
      WriteAll(r.file[i], l.data(), l.size());
    }
    r.dropped[i] += n - keep;
  }
  return true;
}

void PumpLogsFor(LogRelay& r, int64_t timeout_ms) {
  pollfd fds[2] = {{r.in[0], POLLIN, 0}, {r.in[1], POLLIN, 0}};
  if (poll(fds, 2, static_cast<int>(timeout_ms)) <= 0) return;
  for (int i = 0; i < 2; ++i) {
    if (r.in[i] >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) PumpLog(r, i);
  }
}

void FinishLogRelay(LogRelay& r) {
  const int64_t until = NowMonotonicMs() + 2000;
  while ((r.in[0] >= 0 || r.in[1] >= 0) && NowMonotonicMs() < until) PumpLogsFor(r, 100);
  for (int i = 0; i < 2; ++i) {
    if (r.in[i] >= 0) close(r.in[i]);
    if (r.dropped[i] > 0) {
      Lines l;
      l.Str("[meridian: ");
      l.Num(r.dropped[i]);
      l.Str(" bytes dropped past the log cap of ");
      l.Num(r.cap);
      l.Str(" bytes]\n");
      WriteAll(r.file[i], l.data(), l.size());
    }
    close(r.file[i]);
  }
}

int RunLogRelay(int64_t cap, char* const argv[]) {
  // The files Slurm opened for the job, kept above 2 so the job's dup2 onto
  // 1 and 2 cannot clobber them.
  LogRelay relay;
  int job_out = 1, job_err = 2;
  const int out_file = fcntl(1, F_DUPFD_CLOEXEC, 3);
  const int err_file = fcntl(2, F_DUPFD_CLOEXEC, 3);
  const bool relaying = out_file >= 0 && err_file >= 0 &&
                        OpenLogRelay(&relay, out_file, err_file, cap, &job_out, &job_err);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) signal(s, SIG_IGN);
  pid_t job = fork();
  if (job == 0) {
    for (int s : {SIGTERM, SIGINT, SIGHUP}) signal(s, SIG_DFL);
    if (relaying && (dup2(job_out, 1) < 0 || dup2(job_err, 2) < 0)) _exit(127);
    execvp(argv[0], argv);
    std::fprintf(stderr, "meridian-log-relay: %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  if (job < 0) {
    std::fprintf(stderr, "meridian-log-relay: fork: %s\n", std::strerror(errno));
    return 127 << 8;
  }
  int status = 0;
  if (relaying) {
    close(job_out);
    close(job_err);
    while ((relay.in[0] >= 0 || relay.in[1] >= 0) && waitpid(job, &status, WNOHANG) == 0) {
      PumpLogsFor(relay, 100);
    }
    FinishLogRelay(relay);
  }
  while (waitpid(job, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace meridian::backends
