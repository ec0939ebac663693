#include "backends/local/shim.h"

#include <fcntl.h>
#include <signal.h>
#include <grp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "backends/local/log_relay.h"
#include "backends/local/proc.h"
#include "backends/local/status_file.h"

namespace meridian::backends {

namespace {

// Pointers into a ShimLaunch, built before fork() so the child allocates nothing.
struct Prepared {
  std::vector<char*> argv, envp;
  std::vector<const char*> exec_paths;
  const char* working_dir = nullptr;
  const char* status_path = nullptr;
  std::string status_tmp;
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string cgroup_procs, cgroup_kill;  // "" = no cgroup
  int64_t log_cap = 0;
  std::string run_path, run_tmp, job_id;  // the attempt's record, written by the monitor
  int attempt = 0;
};

// What the monitor tells the daemon once the job has exec'd (or failed to).
struct Report {
  int32_t job_pid = 0;
  int32_t stage = 0;
  int32_t error = 0;
  int32_t unused = 0;
  uint64_t job_start = 0;
  int64_t started = 0;
};

struct ExecFailure {
  int32_t stage = 0;
  int32_t error = 0;
};

size_t ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, p + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

int64_t NowUnix() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec;
}

// Writes the status file: to a temporary name, then renamed over the final
// one, so a reader sees the whole record or none.
void WriteStatus(const Prepared& p, const Report& r, int wait_status, const rusage* ru,
                 bool stop_requested, bool killed_after_grace) {
  Lines l;
  l.Str(kStatusFileMagic);
  l.Str("\n");
  l.Add("job_pid", r.job_pid);
  l.Add("job_start", static_cast<int64_t>(r.job_start));
  l.Add("exit_code", WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
  l.Add("signal", WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
  l.Add("started", r.started);
  l.Add("ended", NowUnix());
  if (ru != nullptr) {
    l.Add("cpu_user_us", static_cast<int64_t>(ru->ru_utime.tv_sec) * 1000000 + ru->ru_utime.tv_usec);
    l.Add("cpu_system_us",
          static_cast<int64_t>(ru->ru_stime.tv_sec) * 1000000 + ru->ru_stime.tv_usec);
    l.Add("max_rss_kib", ru->ru_maxrss);
  }
  l.Add("stop_requested", stop_requested ? 1 : 0);
  l.Add("killed_after_grace", killed_after_grace ? 1 : 0);
  l.Add("exec_stage", r.stage);
  l.Add("exec_errno", r.error);
  l.Str(kStatusFileEnd);
  l.Str("\n");
  int fd = open(p.status_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  bool ok = WriteAll(fd, l.data(), l.size());
  close(fd);
  if (ok) rename(p.status_tmp.c_str(), p.status_path);
}

// Writes the attempt's record (WriteRunFile's format, status_file.h) once the
// job has exec'd and before the daemon hears of it: a daemon that dies in
// between finds the running attempt by it when it restarts.
void WriteRun(const Prepared& p, const Report& r) {
  if (p.run_path.empty()) return;
  ProcStat self;
  ReadProcStat(getpid(), &self);
  Lines l;
  l.Str(kRunFileMagic);
  l.Str("\njob_id ");
  l.Str(p.job_id.c_str());
  l.Str("\n");
  l.Add("attempt", p.attempt);
  l.Add("shim_pid", getpid());
  l.Add("shim_start", static_cast<int64_t>(self.start_time));
  l.Add("job_pid", r.job_pid);
  l.Add("job_start", static_cast<int64_t>(r.job_start));
  l.Add("started", r.started);
  l.Str(kStatusFileEnd);
  l.Str("\n");
  int fd = open(p.run_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  bool ok = WriteAll(fd, l.data(), l.size());
  close(fd);
  if (ok) rename(p.run_tmp.c_str(), p.run_path.c_str());
}

void CloseRange(int first, int last) {
  if (first > last) return;
  if (close_range(static_cast<unsigned>(first), static_cast<unsigned>(last), 0) == 0) return;
  long max = sysconf(_SC_OPEN_MAX);
  int top = std::min<long>(last, max < 0 ? 65536 : max);
  for (int fd = first; fd <= top; ++fd) close(fd);
}

// Closes every descriptor above 2 except the three kept ones.
void CloseAllExcept(int a, int b, int c) {
  int keep[3] = {a, b, c};
  std::sort(keep, keep + 3);
  int next = 3;
  for (int k : keep) {
    CloseRange(next, k - 1);
    next = std::max(next, k + 1);
  }
  CloseRange(next, 0x7fffffff);
}

[[noreturn]] void FailJob(int fd, ShimStage stage) {
  ExecFailure f{static_cast<int32_t>(stage), errno};
  WriteAll(fd, &f, sizeof(f));
  _exit(127);
}

// The job itself, in the monitor's child: own process group, default
// signals, stdio, working directory, exec.
[[noreturn]] void RunJob(const Prepared& p, int fail_fd, int out_fd, int err_fd) {
  if (setpgid(0, 0) != 0) FailJob(fail_fd, ShimStage::kProcessGroup);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) FailJob(fail_fd, ShimStage::kStdio);
  close(out_fd);
  close(err_fd);
  if (!p.cgroup_procs.empty()) {  // "0" moves the writer
    int fd = open(p.cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) FailJob(fail_fd, ShimStage::kCgroup);
    close(fd);
  }
  if (p.drop) {
    if (setgroups(0, nullptr) != 0 || setgid(p.gid) != 0 || setuid(p.uid) != 0) {
      FailJob(fail_fd, ShimStage::kIdentity);
    }
    if (setuid(0) == 0 || getuid() != p.uid || geteuid() != p.uid || getgid() != p.gid ||
        getegid() != p.gid) {
      errno = EPERM;
      FailJob(fail_fd, ShimStage::kIdentity);
    }
  }
  umask(077);  // what the job creates is its own uid's only
  if (chdir(p.working_dir) != 0) FailJob(fail_fd, ShimStage::kWorkingDir);
  int error = ENOENT;
  for (const char* path : p.exec_paths) {
    execve(path, p.argv.data(), p.envp.data());
    if (errno == EACCES) {
      error = EACCES;  // as execvp: remembered, the search goes on
    } else if (errno != ENOENT && errno != ENOTDIR) {
      error = errno;
      break;
    }
  }
  errno = error;
  FailJob(fail_fd, ShimStage::kExec);
}

// SIGKILL to the job's process group, and to its cgroup when it has one
// (which also reaches processes that left the group).
void KillJob(const Prepared& p, pid_t job) {
  kill(-job, SIGKILL);
  if (p.cgroup_kill.empty()) return;
  int fd = open(p.cgroup_kill.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;  // no cgroup.kill (before Linux 5.14): the backend kills cgroup.procs
  (void)!write(fd, "1", 1);
  close(fd);
}

// Waits up to `wait_ms` for a stop request, copying the job's output
// meanwhile when it goes through a relay (`sfd`: a signalfd of `set`, so a
// signal ends the wait). Returns the request's grace period in seconds, or
// -1 when none came.
int64_t AwaitStop(const sigset_t& set, int64_t wait_ms, LogRelay* relay, int sfd) {
  if (relay != nullptr) {
    pollfd fds[3] = {{sfd, POLLIN, 0}, {relay->in[0], POLLIN, 0}, {relay->in[1], POLLIN, 0}};
    const int64_t poll_ms = sfd >= 0 ? wait_ms : std::min<int64_t>(wait_ms, 100);
    if (poll(fds, 3, static_cast<int>(poll_ms)) > 0) {
      for (int i = 0; i < 2; ++i) {
        if (relay->in[i] >= 0 && (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
          PumpLog(*relay, i);
        }
      }
    }
    wait_ms = 0;  // a signal, if one is pending, is taken below
  }
  timespec ts{static_cast<time_t>(wait_ms / 1000), static_cast<long>(wait_ms % 1000) * 1000000};
  siginfo_t info{};
  if (sigtimedwait(&set, &info, &ts) == SIGUSR1) return std::max(0, info.si_value.sival_int);
  return -1;
}

// Waits for the job while serving stop requests; returns with the job
// exited but not reaped.
void Watch(const Prepared& p, pid_t job, LogRelay* relay, bool* stop_requested,
           bool* killed_after_grace) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGUSR1);
  const int sfd = relay != nullptr ? signalfd(-1, &set, SFD_CLOEXEC) : -1;
  int64_t deadline_ms = -1;
  for (;;) {
    siginfo_t w{};
    int rc = waitid(P_PID, static_cast<id_t>(job), &w, WEXITED | WNOHANG | WNOWAIT);
    if ((rc != 0 && errno != EINTR) || (rc == 0 && w.si_pid == job)) {
      if (sfd >= 0) close(sfd);
      return;
    }
    int64_t now = NowMonotonicMs();
    if (deadline_ms >= 0 && !*killed_after_grace && now >= deadline_ms) {
      KillJob(p, job);
      *killed_after_grace = true;
    }
    int64_t wait_ms = 1000;
    if (deadline_ms >= 0 && !*killed_after_grace) {
      wait_ms = std::clamp<int64_t>(deadline_ms - now, 1, wait_ms);
    }
    const int64_t grace_s = AwaitStop(set, wait_ms, relay, sfd);
    if (grace_s >= 0) {
      *stop_requested = true;
      kill(-job, SIGTERM);
      int64_t d = NowMonotonicMs() + grace_s * 1000;
      if (deadline_ms < 0 || d < deadline_ms) deadline_ms = d;
    }
  }
}

[[noreturn]] void RunMonitor(const Prepared& p, int report_fd, int out_fd, int err_fd) {
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGCHLD);
  sigaddset(&block, SIGUSR1);
  sigprocmask(SIG_SETMASK, &block, nullptr);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int s : {SIGINT, SIGHUP, SIGQUIT, SIGTERM, SIGPIPE, SIGTTIN, SIGTTOU, SIGTSTP}) {
    sigaction(s, &ign, nullptr);
  }
  setsid();  // out of the daemon's session: a Ctrl-C there does not reach it
  prctl(PR_SET_NAME, "meridian-shim", 0, 0, 0);  // 15 characters at most
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    for (int fd = 0; fd <= 2; ++fd) dup2(devnull, fd);
    if (devnull > 2) close(devnull);
  }
  CloseAllExcept(report_fd, out_fd, err_fd);

  Report r;
  int fail_pipe[2];
  if (pipe2(fail_pipe, O_CLOEXEC) != 0) {
    r.stage = static_cast<int32_t>(ShimStage::kFork);
    r.error = errno;
    WriteAll(report_fd, &r, sizeof(r));
    WriteStatus(p, r, 127 << 8, nullptr, false, false);
    _exit(0);
  }
  // With a cap, the job writes into pipes that the monitor copies from; if
  // they cannot be made, straight into the files as without one.
  LogRelay relay;
  int job_out = out_fd, job_err = err_fd;
  if (p.log_cap > 0) OpenLogRelay(&relay, out_fd, err_fd, p.log_cap, &job_out, &job_err);
  r.started = NowUnix();
  pid_t job = fork();
  if (job == 0) {
    close(fail_pipe[0]);
    RunJob(p, fail_pipe[1], job_out, job_err);
  }
  const int fork_errno = errno;
  close(fail_pipe[1]);
  close(job_out);  // out_fd and err_fd themselves unless relaying
  close(job_err);
  const bool relaying = relay.in[0] >= 0;
  if (relaying && job < 0) {
    for (int fd : {relay.in[0], relay.in[1], out_fd, err_fd}) close(fd);
  }
  if (job < 0) {
    r.stage = static_cast<int32_t>(ShimStage::kFork);
    r.error = fork_errno;
    WriteAll(report_fd, &r, sizeof(r));
    WriteStatus(p, r, 127 << 8, nullptr, false, false);
    _exit(0);
  }
  setpgid(job, job);  // also here, so the group exists before anyone signals it
  ExecFailure f;
  if (ReadAll(fail_pipe[0], &f, sizeof(f)) == sizeof(f)) {
    r.stage = f.stage;
    r.error = f.error;
  }
  close(fail_pipe[0]);
  ProcStat st;
  ReadProcStat(job, &st);  // the job is ours until we reap it: its entry is there
  r.job_pid = job;
  r.job_start = st.start_time;
  if (r.stage == 0) WriteRun(p, r);
  WriteAll(report_fd, &r, sizeof(r));
  close(report_fd);

  bool stop_requested = false, killed_after_grace = false;
  if (r.stage == 0) {
    Watch(p, job, relaying ? &relay : nullptr, &stop_requested, &killed_after_grace);
  }
  KillJob(p, job);  // what is left of the job's process group (and cgroup)
  if (relaying) FinishLogRelay(relay);  // the logs are whole before the status says it ended
  int wait_status = 0;
  rusage ru{};
  while (wait4(job, &wait_status, 0, &ru) < 0 && errno == EINTR) {
  }
  WriteStatus(p, r, wait_status, &ru, stop_requested, killed_after_grace);
  _exit(0);
}

// An fd of at least 3, so the monitor's dup2 onto 0-2 cannot clobber it.
int AboveStdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

Status ErrnoStatus(const std::string& what) {
  return Status::Internal(what + ": " + std::strerror(errno));
}

}  // namespace

std::vector<std::string> ExecCandidates(const std::string& argv0, const std::string& path) {
  if (argv0.find('/') != std::string::npos) return {argv0};
  std::vector<std::string> out;
  size_t begin = 0;
  for (;;) {
    size_t end = path.find(':', begin);
    std::string dir = path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    out.push_back(dir.empty() ? argv0 : dir + "/" + argv0);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return out;
}

Result<ShimStarted> SpawnShim(const ShimLaunch& launch) {
  Prepared p;
  for (const auto& a : launch.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
  p.argv.push_back(nullptr);
  for (const auto& e : launch.env) p.envp.push_back(const_cast<char*>(e.c_str()));
  p.envp.push_back(nullptr);
  for (const auto& c : launch.exec_paths) p.exec_paths.push_back(c.c_str());
  p.working_dir = launch.working_dir.c_str();
  p.status_path = launch.status_path.c_str();
  p.status_tmp = launch.status_path + ".tmp";
  if (!launch.cgroup_dir.empty()) {
    p.cgroup_procs = launch.cgroup_dir + "/cgroup.procs";
    p.cgroup_kill = launch.cgroup_dir + "/cgroup.kill";
  }
  p.log_cap = launch.log_cap_bytes;
  p.run_path = launch.run_path;
  p.run_tmp = launch.run_path + ".tmp";
  p.job_id = launch.job_id;
  p.attempt = launch.attempt;
  if (launch.run_as) {
    p.drop = true;
    p.uid = launch.run_as->uid;
    p.gid = launch.run_as->gid;
  }

  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  // The daemon's files (0600): the job writes them through its descriptors
  // only, so other tenants' uids cannot read them.
  int out_fd = AboveStdio(open(launch.stdout_path.c_str(), flags, 0600));
  if (out_fd < 0) return ErrnoStatus(launch.stdout_path);
  int err_fd = AboveStdio(open(launch.stderr_path.c_str(), flags, 0600));
  if (err_fd < 0) {
    close(out_fd);
    return ErrnoStatus(launch.stderr_path);
  }
  fchmod(out_fd, 0600);  // also a log an older daemon made with looser modes
  fchmod(err_fd, 0600);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    close(out_fd);
    close(err_fd);
    return ErrnoStatus("pipe");
  }
  report[0] = AboveStdio(report[0]);
  report[1] = AboveStdio(report[1]);
  pid_t shim = fork();
  if (shim == 0) {
    close(report[0]);
    RunMonitor(p, report[1], out_fd, err_fd);
  }
  int fork_errno = errno;
  close(report[1]);
  close(out_fd);
  close(err_fd);
  if (shim < 0) {
    close(report[0]);
    errno = fork_errno;
    return ErrnoStatus("fork");
  }
  Report r;
  size_t got = ReadAll(report[0], &r, sizeof(r));
  close(report[0]);
  if (got != sizeof(r)) {
    int ignored = 0;
    waitpid(shim, &ignored, 0);
    return Status::Internal("the attempt monitor ended before it started the job");
  }
  ProcStat shim_stat;
  ReadProcStat(shim, &shim_stat);  // our child: there until we reap it
  ShimStarted s;
  s.shim_pid = shim;
  s.shim_start = shim_stat.start_time;
  s.job_pid = r.job_pid;
  s.job_start = r.job_start;
  s.started = r.started;
  s.stage = static_cast<ShimStage>(r.stage);
  s.error = r.error;
  return s;
}

}  // namespace meridian::backends
