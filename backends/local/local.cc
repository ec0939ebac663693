#include "backends/local/local.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "backends/local/cgroup.h"
#include "backends/local/launch_fence.h"
#include "backends/local/proc.h"
#include "backends/local/shim.h"
#include "backends/local/status_file.h"

namespace meridian::backends {

namespace {

namespace fs = std::filesystem;
using control::RunObservation;
using control::RunPhase;

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";
// How long a launch waits for another launch in the shared state directory.
constexpr int64_t kFenceWaitMs = 5000;

// One attempt this backend watches.
struct Attempt {
  AttemptRun run;
  std::string handle;
  bool our_child = false;    // the monitor was forked by this process
  bool shim_reaped = false;  // ... and has been waited for
  bool done = false;         // the observation is final
  std::optional<RunPhase> reported;
  int64_t fallback_kill_ms = -1;  // Stop without a monitor: SIGKILL the group then
  RunObservation obs;
};

std::string MakeHandle(pid_t pid, uint64_t start) {
  return "pid:" + std::to_string(pid) + ":" + std::to_string(start);
}

Result<std::pair<pid_t, uint64_t>> ParseHandle(const std::string& handle) {
  auto bad = [&] {
    return Status::Invalid("handle \"" + handle + "\": expected pid:<pid>:<start time>");
  };
  if (!handle.starts_with("pid:")) return bad();
  size_t colon = handle.find(':', 4);
  if (colon == std::string::npos) return bad();
  std::string pid = handle.substr(4, colon - 4), start = handle.substr(colon + 1);
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() < 20 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(pid) || !digits(start)) return bad();
  long long p = std::stoll(pid);
  if (p <= 0 || p > 0x7fffffff) return bad();
  return std::make_pair(static_cast<pid_t>(p), static_cast<uint64_t>(std::stoull(start)));
}

// A job id as a file name: anything but [A-Za-z0-9._-] becomes '_'.
std::string SafeName(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

void ApplyStatus(const AttemptStatus& s, RunObservation* obs) {
  obs->started = s.started != 0 ? s.started : obs->started;
  obs->ended = s.ended;
  obs->cpu_user_s = static_cast<double>(s.cpu_user_us) / 1e6;
  obs->cpu_system_s = static_cast<double>(s.cpu_system_us) / 1e6;
  obs->max_rss_kib = s.max_rss_kib;
  if (s.exit_code >= 0) {
    obs->phase = RunPhase::kExited;
    obs->exit_code = s.exit_code;
    obs->signal.reset();
    obs->message = "exited with code " + std::to_string(s.exit_code);
  } else {
    obs->phase = RunPhase::kKilled;
    obs->exit_code.reset();
    obs->signal = s.signal;
    const char* abbrev = sigabbrev_np(s.signal);
    obs->message = "killed by signal " + std::to_string(s.signal);
    if (abbrev != nullptr) obs->message += std::string(" (SIG") + abbrev + ")";
  }
  if (s.killed_after_grace) {
    obs->message += " after the grace period ran out";
  } else if (s.stop_requested) {
    obs->message += " after a stop request";
  }
}

std::string ExecFailureMessage(const ShimStarted& s, const std::string& argv0,
                               const std::string& working_dir, const std::string& path) {
  std::string reason = std::strerror(s.error);
  switch (s.stage) {
    case ShimStage::kWorkingDir: return "working_dir \"" + working_dir + "\": " + reason;
    case ShimStage::kExec:
      if (s.error == ENOENT && argv0.find('/') == std::string::npos) {
        return "command \"" + argv0 + "\": not found in PATH \"" + path +
               "\" (commands run without a shell)";
      }
      if (s.error == ENOEXEC) {
        return "command \"" + argv0 +
               "\": not an executable format (a script needs a #! line; commands run without a "
               "shell)";
      }
      return "command \"" + argv0 + "\": " + reason;
    case ShimStage::kFork: return "fork: " + reason;
    case ShimStage::kProcessGroup: return "setpgid: " + reason;
    case ShimStage::kStdio: return "stdout/stderr redirection: " + reason;
    case ShimStage::kIdentity: return "dropping to the tenant's uid and gid: " + reason;
    case ShimStage::kCgroup: return "joining the job's cgroup: " + reason;
    case ShimStage::kOk: break;
  }
  return reason;
}

Status CheckRequest(const control::LaunchRequest& r) {
  if (r.job_id.empty()) return Status::Invalid("job_id: must not be empty");
  if (r.attempt < 1) {
    return Status::Invalid("attempt: \"" + std::to_string(r.attempt) + "\" must be 1 or more");
  }
  if (r.argv.empty() || r.argv[0].empty()) {
    return Status::Invalid("command: must name a program to run");
  }
  for (const auto& a : r.argv) {
    if (a.find('\0') != std::string::npos) return Status::Invalid("command: holds a NUL byte");
  }
  for (const auto& [k, v] : r.env) {
    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos ||
        v.find('\0') != std::string::npos) {
      return Status::Invalid("env: \"" + k + "\" is not a valid variable name");
    }
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Internal(what + " \"" + dir + "\": " + ec.message());
  return Status::Ok();
}

std::string OctalMode(mode_t m) {
  char buf[8];
  snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

Status OpenPathTo(const fs::path& dir, const fs::path& root);

Status NotPassable(const std::string& dir, mode_t mode) {
  return Status::Invalid("state_dir: \"" + dir + "\" is mode " + OctalMode(mode) +
                         ", so tenants' jobs (which run as their own uids) cannot reach their "
                         "directories below it; let others pass (chmod o+x, which does not "
                         "let them list it) or choose a state_dir under such a directory");
}

// Gives a tenant's directory to its uid, mode 0700, and opens the way to it
// from `root` (OpenPathTo). The directory's parent is the daemon's (0711), so
// the tenant cannot have swapped it for a link.
Status GiveToTenant(const std::string& dir, const fs::path& root, const TenantIdentity& id) {
  MERIDIAN_RETURN_IF_ERROR(OpenPathTo(dir, root));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Internal("\"" + dir + "\": not a directory");
  }
  if (lchown(dir.c_str(), id.uid, id.gid) != 0 || chmod(dir.c_str(), 0700) != 0) {
    return Status::Internal("\"" + dir + "\": cannot give it to uid " + std::to_string(id.uid) +
                            ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// Makes every directory between `root` (included) and `dir` (excluded) 0711,
// and checks that those above `root` let others pass, so the tenant's uid
// reaches `dir` and nothing else.
Status OpenPathTo(const fs::path& dir, const fs::path& root) {
  std::error_code ec;
  const std::string top = fs::absolute(root, ec).lexically_normal().string();
  for (fs::path p = fs::absolute(dir, ec).lexically_normal().parent_path();; p = p.parent_path()) {
    const std::string s = p.string();
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) return Status::Internal("\"" + s + "\": " + std::strerror(errno));
    const bool daemons = !top.empty() && (s == top || s.starts_with(top + "/"));
    if (daemons) {
      if (st.st_uid == geteuid() && (st.st_mode & 07777) != 0711 && chmod(p.c_str(), 0711) != 0) {
        return Status::Internal("\"" + s + "\": " + std::strerror(errno));
      }
    } else if ((st.st_mode & S_IXOTH) == 0) {
      return NotPassable(s, st.st_mode);
    }
    if (p == p.parent_path() || p.empty()) break;
  }
  return Status::Ok();
}

class LocalBackend final : public control::Backend {
 public:
  explicit LocalBackend(LocalBackendOptions options)
      : options_(std::move(options)),
        env_(Completed(options_.environment)),
        spawn_(options_.spawn ? options_.spawn : ShimSpawner(SpawnShim)) {}

  // Running jobs keep running (a restarted daemon adopts them); monitors that
  // have ended are reaped.
  ~LocalBackend() override {
    std::lock_guard<std::mutex> lock(mu_);
    ReapZombies();
    for (auto& a : attempts_) {
      if (a->our_child && !a->shim_reaped) waitpid(a->run.shim_pid, nullptr, WNOHANG);
    }
  }

  std::string_view name() const override { return "local"; }

  Result<std::string> Launch(const control::LaunchRequest& request) override;
  Status Stop(const std::string& handle, int64_t grace_s) override;
  std::vector<RunObservation> Poll() override;
  Result<RunObservation> Adopt(const std::string& job_id, int attempt,
                               const std::string& handle) override;
  std::vector<control::BackendNode> Nodes() override;
  Status Retire(const std::string& job_id, int attempts) override;
  // The attempt's record (written before Launch returns) names its process.
  Status Fence(int64_t epoch) override {
    MERIDIAN_RETURN_IF_ERROR(MakeDirs(options_.state_dir, "state_dir"));
    return EnterLaunchFence(FencePath(), epoch, kFenceWaitMs).status();
  }
  Result<std::optional<std::string>> FindLaunched(const std::string& job_id, int attempt) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto run = ReadRunFile(AttemptFile(job_id, attempt, ".run"));
    if (!run.ok()) return run.status();
    if (!run->has_value() || (*run)->job_id != job_id || (*run)->attempt != attempt) {
      return std::optional<std::string>();
    }
    return std::optional<std::string>(MakeHandle((*run)->job_pid, (*run)->job_start));
  }

 private:
  std::string AttemptFile(const std::string& job_id, int attempt, const char* ext) const {
    return (fs::path(options_.state_dir) / "attempts" /
            (SafeName(job_id) + "." + std::to_string(attempt) + ext))
        .string();
  }
  std::string FencePath() const { return (fs::path(options_.state_dir) / kLaunchFenceFile).string(); }
  std::string JobDir(const std::string& job_id, const char* sub) const {
    return (fs::path(options_.state_dir) / "jobs" / SafeName(job_id) / sub).string();
  }
  Attempt* Find(const std::string& handle) {
    for (auto& a : attempts_) {
      if (a->handle == handle) return a.get();
    }
    return nullptr;
  }
  bool ShimAlive(Attempt& a) {
    if (a.our_child) {
      if (!a.shim_reaped) {
        pid_t r = waitpid(a.run.shim_pid, nullptr, WNOHANG);
        if (r == a.run.shim_pid || (r < 0 && errno == ECHILD)) a.shim_reaped = true;
      }
      return !a.shim_reaped;
    }
    if (a.run.shim_pid <= 0) return false;
    // A monitor forked by an earlier backend in this same process is still
    // our child: reap it if it has ended, harmless otherwise.
    waitpid(a.run.shim_pid, nullptr, WNOHANG);
    return ProcessAlive(a.run.shim_pid, a.run.shim_start);
  }
  std::string NodeName() const;
  // The uid and gid the tenant's jobs run as; none without tenant_uids.
  Result<std::optional<TenantIdentity>> IdentityOf(const std::string& tenant) {
    if (!options_.tenant_uids) return std::optional<TenantIdentity>();
    if (!uids_) {
      auto u = TenantUids::Open((fs::path(options_.state_dir) / "tenant-uids").string(),
                                *options_.tenant_uids);
      if (!u.ok()) return u.status();
      uids_.emplace(std::move(u).value());
    }
    auto id = uids_->For(tenant);
    if (!id.ok()) return id.status();
    return std::optional<TenantIdentity>(*id);
  }
  std::string CgroupName(const std::string& job_id, int attempt) const {
    return SafeName(job_id) + "." + std::to_string(attempt);
  }
  // The attempt has ended: whatever is left in its cgroup goes, and the cgroup.
  void EndCgroup(const Attempt& a) {
    if (options_.cgroup_dir.empty()) return;
    (void)KillJobCgroup(options_.cgroup_dir + "/" + CgroupName(a.run.job_id, a.run.attempt));
  }
  bool ReadStatus(Attempt& a);
  void Refresh(Attempt& a);
  void ReapZombies() {
    std::erase_if(zombies_, [](pid_t pid) {
      pid_t r = waitpid(pid, nullptr, WNOHANG);
      return r == pid || r < 0;
    });
  }

  std::mutex mu_;
  const LocalBackendOptions options_;
  const BackendEnvironment env_;
  const ShimSpawner spawn_;
  std::vector<std::unique_ptr<Attempt>> attempts_;
  std::vector<pid_t> zombies_;  // ended monitors not reaped yet
  std::optional<TenantUids> uids_;  // opened at the first launch with tenant_uids
};

Result<std::string> LocalBackend::Launch(const control::LaunchRequest& request) {
  MERIDIAN_RETURN_IF_ERROR(CheckRequest(request));
  if (options_.state_dir.empty()) return Status::Invalid("local backend: state_dir is empty");
  if (!request.node.empty() && request.node != NodeName()) {
    return Status::Invalid("node: \"" + request.node + "\" is not this machine's node \"" +
                           NodeName() +
                           "\": the local backend runs jobs on its own node only (a node "
                           "registered through the API would need an agent, not built yet)");
  }
  std::lock_guard<std::mutex> lock(mu_);
  ReapZombies();
  MERIDIAN_RETURN_IF_ERROR(
      MakeDirs((fs::path(options_.state_dir) / "attempts").string(), "state_dir"));
  // Held until the attempt's record is written (launch_fence.h); no fence at epoch 0.
  LaunchFenceHold fence;
  if (request.epoch > 0) {
    auto entered = EnterLaunchFence(FencePath(), request.epoch, kFenceWaitMs);
    if (!entered.ok()) return entered.status();
    fence = std::move(entered).value();
  }
  auto identity = IdentityOf(request.tenant);
  if (!identity.ok()) return identity.status();
  std::string work = request.working_dir;
  if (work.empty()) {
    work = JobDir(request.job_id, "work");
    MERIDIAN_RETURN_IF_ERROR(MakeDirs(work, "working_dir"));
  }
  std::string ckpt = request.checkpoint_dir.empty() ? JobDir(request.job_id, "checkpoint")
                                                     : request.checkpoint_dir;
  MERIDIAN_RETURN_IF_ERROR(MakeDirs(ckpt, "checkpoint_dir"));
  std::string logs = request.log_dir.empty() ? JobDir(request.job_id, "logs") : request.log_dir;
  MERIDIAN_RETURN_IF_ERROR(MakeDirs(logs, "log_dir"));
  if (*identity) {
    const fs::path root = options_.tenant_root.empty() ? options_.state_dir : options_.tenant_root;
    if (request.working_dir.empty()) MERIDIAN_RETURN_IF_ERROR(GiveToTenant(work, root, **identity));
    MERIDIAN_RETURN_IF_ERROR(GiveToTenant(ckpt, root, **identity));
  }

  // A clean base, then the spec's env, then what meridian sets.
  std::map<std::string, std::string> env;
  const char* path = std::getenv("PATH");
  env["PATH"] = path != nullptr && *path != '\0' ? path : kDefaultPath;
  for (const char* name : {"HOME", "USER", "LANG"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  if (*identity) {  // not the daemon's home or name: the job's own directory
    env.erase("USER");
    env["HOME"] = work;
  }
  for (const auto& [k, v] : request.env) env[k] = v;
  std::string devices;
  if (!request.mig_uuids.empty()) {
    for (const auto& u : request.mig_uuids) devices += (devices.empty() ? "" : ",") + u;
  } else {
    for (int g : request.gpus) devices += (devices.empty() ? "" : ",") + std::to_string(g);
  }
  env["CUDA_VISIBLE_DEVICES"] = devices;
  env["MERIDIAN_JOB_ID"] = request.job_id;
  env["MERIDIAN_ATTEMPT"] = std::to_string(request.attempt);
  env["MERIDIAN_CHECKPOINT_DIR"] = ckpt;

  ShimLaunch launch;
  launch.argv = request.argv;
  for (const auto& [k, v] : env) launch.env.push_back(k + "=" + v);
  launch.exec_paths = ExecCandidates(request.argv[0], env["PATH"]);
  launch.working_dir = work;
  launch.stdout_path = (fs::path(logs) / "stdout.log").string();
  launch.stderr_path = (fs::path(logs) / "stderr.log").string();
  launch.log_cap_bytes = options_.max_log_bytes;
  launch.status_path = AttemptFile(request.job_id, request.attempt, ".status");
  launch.run_as = *identity;
  if (!options_.cgroup_dir.empty()) {
    auto cg = CreateJobCgroup(options_.cgroup_dir, CgroupName(request.job_id, request.attempt),
                              {request.vcpus, request.ram_mib, options_.pids_per_job});
    if (!cg.ok()) return cg.status();
    launch.cgroup_dir = *cg;
  }
  const std::string run_path = AttemptFile(request.job_id, request.attempt, ".run");
  launch.run_path = run_path;
  launch.job_id = request.job_id;
  launch.attempt = request.attempt;
  std::error_code ec;
  fs::remove(launch.status_path, ec);  // a relaunch of the same attempt starts afresh
  fs::remove(run_path, ec);

  auto started = spawn_(launch);
  if (!launch.cgroup_dir.empty() && (!started.ok() || started->stage != ShimStage::kOk)) {
    if (started.ok()) waitpid(started->shim_pid, nullptr, 0);
    (void)KillJobCgroup(launch.cgroup_dir);  // nothing runs there: remove it
  }
  if (!started.ok()) return started.status();
  if (started->stage != ShimStage::kOk) {
    waitpid(started->shim_pid, nullptr, 0);  // it exits once the status is written
    std::string msg = ExecFailureMessage(*started, request.argv[0], work, env["PATH"]);
    if (started->stage == ShimStage::kExec || started->stage == ShimStage::kWorkingDir) {
      return Status::Invalid(msg);
    }
    return Status::Internal(msg);
  }
  auto a = std::make_unique<Attempt>();
  a->run = AttemptRun{request.job_id,     request.attempt,    started->shim_pid,
                      started->shim_start, started->job_pid,   started->job_start,
                      started->started};
  a->handle = MakeHandle(started->job_pid, started->job_start);
  a->our_child = true;
  if (Status w = WriteRunFile(run_path, a->run); !w.ok()) {
    // Without its record a restarted daemon could not adopt it: do not run it.
    union sigval v;
    v.sival_int = 0;
    sigqueue(started->shim_pid, SIGUSR1, v);
    zombies_.push_back(started->shim_pid);
    return w;
  }
  a->obs.job_id = request.job_id;
  a->obs.attempt = request.attempt;
  a->obs.handle = a->handle;
  a->obs.phase = RunPhase::kRunning;
  a->obs.started = started->started;
  a->obs.message = "running as pid " + std::to_string(started->job_pid);
  std::string handle = a->handle;
  attempts_.push_back(std::move(a));
  return handle;
}

bool LocalBackend::ReadStatus(Attempt& a) {
  auto st = ReadStatusFile(AttemptFile(a.run.job_id, a.run.attempt, ".status"));
  if (!st.ok() || !st->has_value()) return false;
  const AttemptStatus& s = **st;
  if (s.job_pid != a.run.job_pid || s.job_start != a.run.job_start) return false;
  ApplyStatus(s, &a.obs);
  a.done = true;
  return true;
}

void LocalBackend::Refresh(Attempt& a) {
  bool shim_alive = ShimAlive(a);  // first: a monitor that ended has written its status
  if (ReadStatus(a)) {
    if (a.our_child && !a.shim_reaped) zombies_.push_back(a.run.shim_pid);
    a.shim_reaped = true;
    return;
  }
  if (shim_alive) return;
  bool job_alive = ProcessAlive(a.run.job_pid, a.run.job_start);
  if (job_alive) {
    // The monitor is gone (killed) but the job runs on: watch its pid.
    if (a.fallback_kill_ms >= 0 && env_.steady_ms() >= a.fallback_kill_ms) {
      kill(-a.run.job_pid, SIGKILL);
      a.fallback_kill_ms = -1;
    }
    return;
  }
  if (ReadStatus(a)) return;  // written just before the monitor ended
  a.obs.phase = RunPhase::kLost;
  a.obs.ended = env_.clock();
  a.obs.message = "process " + std::to_string(a.run.job_pid) +
                  " is gone and left no exit status (its monitor was killed)";
  a.done = true;
}

std::vector<RunObservation> LocalBackend::Poll() {
  std::lock_guard<std::mutex> lock(mu_);
  ReapZombies();
  std::vector<RunObservation> changed;
  for (auto& a : attempts_) {
    if (!a->done) {
      Refresh(*a);
      if (a->done) EndCgroup(*a);
    }
    if (a->reported != a->obs.phase) {
      a->reported = a->obs.phase;
      changed.push_back(a->obs);
    }
  }
  std::erase_if(attempts_, [](const auto& a) { return a->done && a->reported == a->obs.phase; });
  return changed;
}

// The attempt records (.run, .status) and the job's own working directory,
// and a real-time service's replicas' (control::ReplicaRunId, numbered from
// 0, each with attempts 1, 2, ...: both walks stop at the first missing).
Status LocalBackend::Retire(const std::string& job_id, int attempts) {
  std::lock_guard<std::mutex> lock(mu_);
  std::error_code ec;
  auto remove = [&](const std::string& run, int ran) {
    for (int n = 1; n <= ran; ++n) {
      for (const char* ext : {".run", ".status", ".status.tmp"}) fs::remove(AttemptFile(run, n, ext), ec);
    }
  };
  remove(job_id, attempts);
  for (int i = 0;; ++i) {
    const std::string replica = control::ReplicaRunId(job_id, i);
    int ran = 0;
    while (fs::exists(AttemptFile(replica, ran + 1, ".run"))) ++ran;
    if (ran == 0) break;
    remove(replica, ran);
    fs::remove_all(fs::path(options_.state_dir) / "jobs" / SafeName(replica), ec);
  }
  fs::remove_all(fs::path(options_.state_dir) / "jobs" / SafeName(job_id), ec);
  if (ec) return Status::Internal(job_id + ": cannot remove its directory: " + ec.message());
  return Status::Ok();
}

Status LocalBackend::Stop(const std::string& handle, int64_t grace_s) {
  std::lock_guard<std::mutex> lock(mu_);
  Attempt* a = Find(handle);
  if (a == nullptr) {
    MERIDIAN_RETURN_IF_ERROR(ParseHandle(handle).status());
    return Status::NotFound("handle \"" + handle +
                            "\": not an attempt this backend watches (Adopt it first)");
  }
  if (a->done) return Status::Ok();
  int grace = static_cast<int>(std::clamp<int64_t>(grace_s, 0, 0x7fffffff));
  if (ShimAlive(*a)) {
    union sigval v;
    v.sival_int = grace;
    if (sigqueue(a->run.shim_pid, SIGUSR1, v) == 0) return Status::Ok();
  }
  if (!ProcessAlive(a->run.job_pid, a->run.job_start)) return Status::Ok();
  // No monitor to do it: SIGTERM now, SIGKILL from Poll once the grace ends.
  kill(-a->run.job_pid, SIGTERM);
  a->fallback_kill_ms = env_.steady_ms() + static_cast<int64_t>(grace) * 1000;
  return Status::Ok();
}

Result<RunObservation> LocalBackend::Adopt(const std::string& job_id, int attempt,
                                           const std::string& handle) {
  auto parsed = ParseHandle(handle);
  if (!parsed.ok()) return parsed.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (Attempt* known = Find(handle)) return known->obs;
  auto a = std::make_unique<Attempt>();
  a->handle = handle;
  a->run.job_id = job_id;
  a->run.attempt = attempt;
  a->run.job_pid = parsed->first;
  a->run.job_start = parsed->second;
  auto run = ReadRunFile(AttemptFile(job_id, attempt, ".run"));
  if (run.ok() && run->has_value() && (*run)->job_pid == parsed->first &&
      (*run)->job_start == parsed->second) {
    a->run = **run;
  }
  a->obs.job_id = job_id;
  a->obs.attempt = attempt;
  a->obs.handle = handle;
  a->obs.phase = RunPhase::kRunning;
  a->obs.started = a->run.started;
  a->obs.message = "adopted pid " + std::to_string(a->run.job_pid);
  Refresh(*a);
  a->reported = a->obs.phase;
  RunObservation obs = a->obs;
  if (!a->done) attempts_.push_back(std::move(a));
  return obs;
}

std::string LocalBackend::NodeName() const {
  if (!options_.node_name.empty()) return options_.node_name;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return host;
  return "localhost";
}

std::vector<control::BackendNode> LocalBackend::Nodes() {
  control::BackendNode n;
  n.name = NodeName();
  n.gpu_model = options_.gpus > 0 ? options_.gpu_model : "";
  n.gpus = options_.gpus > 0 ? options_.gpus : 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  n.vcpus = options_.vcpus.value_or(cpus > 0 ? static_cast<int>(cpus) : 1);
  if (options_.ram_gib) {
    n.ram_gib = *options_.ram_gib;
  } else {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    long long kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
      if (key == "MemTotal:") {
        n.ram_gib = static_cast<double>(kib) / (1024.0 * 1024.0);
        break;
      }
    }
  }
  return {n};
}

}  // namespace

Status CheckTenantsCanReach(const std::string& state_dir) {
  std::error_code ec;
  const fs::path top = fs::absolute(state_dir, ec).lexically_normal();
  for (fs::path p = top.parent_path(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) return NotPassable(p.string(), st.st_mode);
    if (p == p.parent_path()) break;
  }
  return Status::Ok();
}

std::unique_ptr<control::Backend> MakeLocalBackend(const LocalBackendOptions& options) {
  return std::make_unique<LocalBackend>(options);
}

}  // namespace meridian::backends
