#include "backends/kubernetes/kubectl.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace meridian::backends::k8s {

namespace {

bool IsFile(const std::string& p) {
  std::error_code ec;
  return !p.empty() && std::filesystem::is_regular_file(p, ec);
}

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
  void Close(int i) {
    if (fd[i] >= 0) close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

Kubectl::Kubectl(std::string program, std::string kubeconfig, int timeout_s)
    : program_(std::move(program)), kubeconfig_(std::move(kubeconfig)), timeout_s_(timeout_s) {}

Result<KubectlResult> Kubectl::Run(const std::vector<std::string>& args,
                                   const std::string& input) const {
  std::vector<std::string> argv = {program_};
  if (!kubeconfig_.empty()) argv.insert(argv.end(), {"--kubeconfig", kubeconfig_});
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> av;
  for (std::string& a : argv) av.push_back(a.data());
  av.push_back(nullptr);

  Pipe in, out, err;
  if (pipe2(in.fd, O_CLOEXEC) != 0 || pipe2(out.fd, O_CLOEXEC) != 0 ||
      pipe2(err.fd, O_CLOEXEC) != 0) {
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, program_.c_str(), &fa, nullptr, av.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    return Status::Invalid("kubectl \"" + program_ + "\" cannot be started: " + std::strerror(rc) +
                           " (install it with tools/install-deps: Debian's kubernetes-client)");
  }
  in.Close(0);
  out.Close(1);
  err.Close(1);
  // Writing stdin while reading both outputs, so no pipe fills up and stalls.
  size_t written = 0;
  if (input.empty()) {
    in.Close(1);
  } else {
    fcntl(in.fd[1], F_SETFL, fcntl(in.fd[1], F_GETFL) | O_NONBLOCK);
  }
  KubectlResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s_);
  bool timed_out = false;
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    pollfd fds[3] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}, {in.fd[1], POLLOUT, 0}};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        (i == 0 ? out : err).Close(0);
      }
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in.fd[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 && errno != EINTR && errno != EAGAIN) written = input.size();
      if (written == input.size()) in.Close(1);
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    r.err += "kubectl: killed after " + std::to_string(timeout_s_) + " s";
    return r;
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

Result<std::string> FindKubeconfig(const std::string& flag) {
  if (!flag.empty()) {
    if (!IsFile(flag)) return Status::NotFound("--kubeconfig: \"" + flag + "\": no such file");
    return flag;
  }
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t colon = list.find(':', start);
      std::string p = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (IsFile(p)) return p;
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    std::string p = std::string(home) + "/.kube/config";
    if (IsFile(p)) return p;
  }
  return std::string();
}

}  // namespace meridian::backends::k8s
