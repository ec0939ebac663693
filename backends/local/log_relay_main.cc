// meridian-log-relay --cap BYTES -- COMMAND [ARG...]
//
// Runs COMMAND with its stdout and stderr relayed into this process's own
// (the job's log files, opened by whoever started it: Slurm on a compute
// node), both together cut at BYTES and the cut said in the log
// (log_relay.h). Exits as COMMAND did: its exit code, or its signal raised
// again. Bad arguments: a message naming them, exit code 2.
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/local/log_relay.h"

namespace {

int Usage(const char* why) {
  std::fprintf(stderr, "meridian-log-relay: %s\nusage: meridian-log-relay --cap BYTES -- COMMAND [ARG...]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || std::strcmp(argv[1], "--cap") != 0 || std::strcmp(argv[3], "--") != 0) {
    return Usage("expected --cap BYTES -- COMMAND");
  }
  char* end = nullptr;
  errno = 0;
  const long long cap = std::strtoll(argv[2], &end, 10);
  if (errno != 0 || end == argv[2] || *end != '\0' || cap < 1) {
    std::fprintf(stderr, "meridian-log-relay: --cap: \"%s\" must be a whole number of bytes, 1 or more\n",
                 argv[2]);
    return 2;
  }
  const int status = meridian::backends::RunLogRelay(cap, argv + 4);
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    raise(WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}
