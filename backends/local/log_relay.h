// The log cap: a job's stdout and stderr go through pipes, and a relay copies
// them to the log files until both together hold the cap, then drops the
// rest and says so in the log. One implementation for every backend that
// caps logs: the local backend's attempt monitor (shim.cc) relays in its own
// process; on Slurm the batch script execs meridian-log-relay
// (log_relay_main.cc), which relays on the compute node.
//
// Everything here is plain system calls on fixed buffers (no malloc, no
// locks), so the monitor may call it after fork() in a multithreaded daemon.
#pragma once

#include <cstddef>
#include <cstdint>

namespace meridian::backends {

// write() until all of `data` is out; false on an error.
bool WriteAll(int fd, const void* data, size_t size);

int64_t NowMonotonicMs();

// A fixed buffer of text, formatted without the C library.
class Lines {
 public:
  void Add(const char* key, int64_t value);  // "key value\n"
  void Num(int64_t value);
  void Str(const char* s);
  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char data_[1024];
  size_t size_ = 0;
};

// The pipes a job writes into and the log files they are copied to. `room`
// starts at the cap less what the files already hold (earlier attempts).
//
// In the log, where the cut is (once per stream that reached it):
//   "\n[meridian: the job's logs reached their cap of <cap> bytes; what the
//    job writes to this stream from here on is dropped]\n"
// and when the job has ended, for each such stream:
//   "[meridian: <n> bytes dropped past the log cap of <cap> bytes]\n"
struct LogRelay {
  int in[2] = {-1, -1};    // the pipes' read ends: stdout, stderr
  int file[2] = {-1, -1};  // the log files
  int64_t cap = 0;
  int64_t room = 0;        // bytes the files may still take
  int64_t dropped[2] = {0, 0};
};

// Sets up `relay` over the two log files (already open for append) with
// `cap`, and makes the two pipes; the job's ends go to *job_out, *job_err
// (close-on-exec: the job's dup2 onto 1 and 2 keeps them). False when the
// pipes cannot be made (nothing is left open then).
bool OpenLogRelay(LogRelay* relay, int out_file, int err_file, int64_t cap, int* job_out, int* job_err);

// Copies what one pipe holds (stream 0: stdout, 1: stderr); false at its
// end (then the pipe is closed).
bool PumpLog(LogRelay& relay, int stream);

// Copies from both pipes until `timeout_ms` has passed or both have ended.
void PumpLogsFor(LogRelay& relay, int64_t timeout_ms);

// After the job: what is left in the pipes (2 s at most: a process that left
// the job's group may still hold one), then the count of what was dropped;
// closes the pipes and the files.
void FinishLogRelay(LogRelay& relay);

// meridian-log-relay's work: runs argv (a PATH search, as execvp) with its
// stdout and stderr relayed into this process's own stdout and stderr (the
// log files Slurm opened) under `cap`; returns the job's wait status
// (waitpid's; exit code 127 when argv could not be run). While the job runs
// the relay ignores SIGTERM, SIGINT and SIGHUP (Slurm signals every process
// of the job, the job included) so it copies the job's last words.
int RunLogRelay(int64_t cap, char* const argv[]);

}  // namespace meridian::backends
