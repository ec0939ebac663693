#include "backends/common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace meridian::backends {

namespace {

int64_t MonotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// argv[0] as execvp would find it, but in the PATH of the command's own
// environment rather than the daemon's.
std::string Resolve(const std::string& name, const std::vector<std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& e : env) {
    if (e.starts_with("PATH=")) path = e.substr(5);
  }
  size_t from = 0;
  for (;;) {
    size_t colon = path.find(':', from);
    std::string dir = path.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) return name;
    from = colon + 1;
  }
}

// Both ends of a pipe, closed when it goes out of scope.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    Close(0);
    Close(1);
  }
  void Close(int i) {
    if (fd[i] >= 0) close(fd[i]);
    fd[i] = -1;
  }
};

enum class Ended { kClosed, kTimeout, kCapped };

// Feeds `input` to the child's stdin while draining stdout and stderr, so no
// pipe fills up and stalls either side, until both outputs close.
Ended Exchange(Pipe& in, Pipe& out, Pipe& err, const ProcessCall& call, int64_t deadline,
               ProcessOutput* o) {
  size_t written = 0;
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    const int64_t left = deadline - MonotonicMs();
    if (left <= 0) return Ended::kTimeout;
    pollfd fds[3] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}, {in.fd[1], POLLOUT, 0}};
    if (poll(fds, 3, static_cast<int>(left)) < 0 && errno != EINTR) return Ended::kClosed;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      Pipe& p = i == 0 ? out : err;
      ssize_t n = read(p.fd[0], buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? o->out : o->err).append(buf, static_cast<size_t>(n));
        if (static_cast<int64_t>(o->out.size() + o->err.size()) > call.max_output_bytes) {
          return Ended::kCapped;
        }
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        p.Close(0);
      }
    }
    if (fds[2].fd >= 0 && fds[2].revents != 0) {
      ssize_t n = write(in.fd[1], call.input.data() + written, call.input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      // The child closed its stdin (or died): what it did not read is its business.
      if (n < 0 && errno != EINTR && errno != EAGAIN) written = call.input.size();
      if (written == call.input.size()) in.Close(1);
    }
  }
  return Ended::kClosed;
}

}  // namespace

Result<ProcessOutput> RunProcess(const ProcessCall& call) {
  if (call.argv.empty() || call.argv[0].empty()) return Status::Invalid("no program to run");
  Pipe in, out, err;
  if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0 ||
      (!call.input.empty() && pipe2(in.fd, O_CLOEXEC) != 0)) {
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (call.input.empty()) {
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&fa, in.fd[0], 0);
  }
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
  // Nothing of the daemon leaks into the command, close-on-exec or not.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<char*> argv, envp;
  for (const std::string& a : call.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : call.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string path = Resolve(call.argv[0], call.env);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, path.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  in.Close(0);
  out.Close(1);
  err.Close(1);
  if (rc != 0) return Status::Invalid("cannot run \"" + call.argv[0] + "\": " + std::strerror(rc));
  if (!call.input.empty()) fcntl(in.fd[1], F_SETFL, fcntl(in.fd[1], F_GETFL) | O_NONBLOCK);

  ProcessOutput o;
  const int64_t deadline = MonotonicMs() + call.timeout_ms;
  Ended ended = Exchange(in, out, err, call, deadline, &o);
  // Its outputs are closed; wait for it to end without reaping it, so that
  // its pid (its group's id) cannot be taken by another process before the
  // group is killed: helpers it left behind go with it.
  for (;;) {
    if (ended != Ended::kClosed) kill(-pid, SIGKILL);
    siginfo_t info{};
    int w = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 || info.si_pid == pid) break;
    if (ended == Ended::kClosed && MonotonicMs() >= deadline) ended = Ended::kTimeout;
    usleep(2000);
  }
  kill(-pid, SIGKILL);
  o.timed_out = ended == Ended::kTimeout;
  o.output_capped = ended == Ended::kCapped;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && ended == Ended::kClosed) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  return o;
}

std::vector<std::string> PassThrough(const std::vector<std::string>& names) {
  std::vector<std::string> env;
  for (const std::string& name : names) {
    if (name.ends_with('*')) {
      const std::string prefix = name.substr(0, name.size() - 1);
      for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view v(*e);
        if (v.starts_with(prefix) && v.find('=') != std::string_view::npos) env.emplace_back(v);
      }
    } else if (const char* v = std::getenv(name.c_str()); v != nullptr) {
      env.push_back(name + "=" + v);
    }
  }
  return env;
}

}  // namespace meridian::backends
