#include "backends/local/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace meridian::backends {

namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Status WriteText(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_CREAT, 0600);
  if (fd < 0) return Status::Internal(path + ": " + std::strerror(errno));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int saved = errno;
  close(fd);
  if (!ok) return Status::Internal(path + ": cannot write \"" + text + "\": " + std::strerror(saved));
  return Status::Ok();
}

std::set<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

}  // namespace

CgroupProbe ProbeThisProcess() {
  return {ReadText("/proc/self/mounts"), ReadText("/proc/self/cgroup"), ""};
}

CgroupSupport DetectCgroupV2(const CgroupProbe& probe) {
  CgroupSupport s;
  std::string mount;
  std::istringstream mounts(probe.mounts);
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream f(line);
    std::string device, point, type;
    f >> device >> point >> type;
    if (type == "cgroup2") {
      mount = point;
      break;
    }
  }
  if (mount.empty()) {
    s.reason = "no cgroup2 file system is mounted (a cgroup v1 host)";
    return s;
  }
  std::string own;  // the "0::/path" line of /proc/self/cgroup
  std::istringstream lines(probe.self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("0::")) own = line.substr(3);
  }
  if (own.empty()) {
    s.reason = "this process has no cgroup v2 path in /proc/self/cgroup";
    return s;
  }
  const std::string dir = probe.prefix + mount + (own == "/" ? "" : own);
  const std::set<std::string> controllers = Words(ReadText(dir + "/cgroup.controllers"));
  std::string missing;
  for (const char* c : {"cpu", "memory"}) {
    if (!controllers.count(c)) missing += std::string(missing.empty() ? "" : " and ") + c;
  }
  if (!missing.empty()) {
    s.reason = "cgroup2 at " + mount + " offers no " + missing +
               " controller in " + dir + "/cgroup.controllers (a hybrid host: they are bound to "
               "cgroup v1 hierarchies)";
    return s;
  }
  if (access((dir + "/cgroup.subtree_control").c_str(), W_OK) != 0) {
    s.reason = dir + "/cgroup.subtree_control is not writable by the daemon (" +
               std::strerror(errno) + "): delegate the cgroup to it";
    return s;
  }
  s.usable = true;
  s.pids = controllers.count("pids") > 0;
  s.dir = dir;
  return s;
}

Status PrepareCgroupParent(const std::string& dir, int pid, bool pids) {
  const std::string daemon = dir + "/meridian-daemon";
  if (mkdir(daemon.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Internal(daemon + ": " + std::strerror(errno));
  }
  MERIDIAN_RETURN_IF_ERROR(WriteText(daemon + "/cgroup.procs", std::to_string(pid)));
  return WriteText(dir + "/cgroup.subtree_control", pids ? "+cpu +memory +pids" : "+cpu +memory");
}

std::string CpuMax(int vcpus) {
  if (vcpus <= 0) return "max 100000";
  return std::to_string(static_cast<int64_t>(vcpus) * 100000) + " 100000";
}

std::string MemoryMax(int64_t ram_mib) {
  if (ram_mib <= 0) return "max";
  return std::to_string(ram_mib * 1024 * 1024);
}

Result<std::string> CreateJobCgroup(const std::string& dir, const std::string& name,
                                    const CgroupLimits& limits) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return Status::Invalid("cgroup name \"" + name + "\": must be one path component");
  }
  const std::string path = dir + "/" + name;
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Internal(path + ": " + std::strerror(errno));
  }
  MERIDIAN_RETURN_IF_ERROR(WriteText(path + "/cpu.max", CpuMax(limits.vcpus)));
  MERIDIAN_RETURN_IF_ERROR(WriteText(path + "/memory.max", MemoryMax(limits.ram_mib)));
  if (limits.pids > 0) MERIDIAN_RETURN_IF_ERROR(WriteText(path + "/pids.max", std::to_string(limits.pids)));
  return path;
}

Status KillJobCgroup(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Status::Ok();  // gone already
  const std::string kill_file = path + "/cgroup.kill";
  if (access(kill_file.c_str(), F_OK) == 0) {
    MERIDIAN_RETURN_IF_ERROR(WriteText(kill_file, "1"));
  } else {
    std::istringstream pids(ReadText(path + "/cgroup.procs"));
    for (long long pid; pids >> pid;) {
      if (pid > 0) kill(static_cast<pid_t>(pid), SIGKILL);
    }
  }
  rmdir(path.c_str());  // EBUSY while processes remain; the next stop tries again
  return Status::Ok();
}

}  // namespace meridian::backends
