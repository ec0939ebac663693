#include "backends/kubernetes/backend.h"

#include <fstream>
#include <map>
#include <vector>

#include "backends/kubernetes/manifest.h"
#include "backends/kubernetes/pod_logs.h"

namespace meridian::backends::k8s {

namespace {

struct Attempt {
  std::string job_id;
  int attempt = 1;
  std::string ns, name;
  control::RunObservation last;
  std::string log_dir;       // "" = the pod log is not copied
  bool log_copied = false;   // copied once, when it ends or is stopped
};

// The label every object of a service replica's attempt carries, with the
// service's RunName as its value, so that retiring the service finds its
// replicas' objects without knowing how many replicas or restarts it had.
constexpr char kServiceLabel[] = "meridian.dev/service";

// "k8s:research/j-00000042-1" -> {"research", "j-00000042-1"}.
bool ParseHandle(const std::string& h, std::string* ns, std::string* name) {
  if (!h.starts_with("k8s:")) return false;
  size_t slash = h.find('/', 4);
  if (slash == std::string::npos) return false;
  *ns = h.substr(4, slash - 4);
  *name = h.substr(slash + 1);
  return !ns->empty() && !name->empty();
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A run's name in Kubernetes names (DNS-1123 labels: no '.'): a job id
// lower-cased ("j-00000042"), a service replica's "j-00000042.r1" as
// "j-00000042-r1" (no job id has an "-r", so no two runs share a name).
std::string RunName(const std::string& run_id) {
  std::string s = Lower(run_id);
  for (char& c : s) {
    if (c == '.') c = '-';
  }
  return s;
}

// The Job of one attempt of a run: "j-00000042-2", "j-00000042-r1-3".
std::string AttemptJobName(const std::string& run_id, int attempt) {
  return RunName(run_id) + "-" + std::to_string(attempt);
}

// A failed Job's exit code, from its pods (the Job does not say it).
void FillExitCode(const Kubectl& kubectl, const std::string& ns, const std::string& job,
                  JobState* s) {
  if (s->phase != control::RunPhase::kExited || s->exit_code) return;
  auto pods = kubectl.Run(
      {"get", "pods", "-n", ns, "-l", "batch.kubernetes.io/job-name=" + job, "-o", "json"});
  if (pods.ok() && pods->exit_code == 0) {
    auto code = ParsePodExitCode(pods->out);
    if (code.ok() && code->has_value()) s->exit_code = **code;
  }
  if (!s->exit_code) s->exit_code = 1;  // failed, no container status left to say how
}

class KubernetesBackend : public control::Backend {
 public:
  explicit KubernetesBackend(const KubernetesBackendOptions& o)
      : options_(o),
        env_(Completed(o.environment)),
        kubectl_(o.kubectl, o.kubeconfig, 60, env_.run),
        lister_(o.kubectl, o.kubeconfig, o.status_timeout_s, env_.run) {}

  std::string_view name() const override { return "kubernetes"; }

  Result<std::string> Launch(const control::LaunchRequest& r) override {
    if (options_.kubeconfig.empty()) {
      return Status::Invalid("kubernetes backend: export-only (no kubeconfig); write the "
                             "manifests with `meridian k8s export` and apply them yourself");
    }
    JobSpec job;
    job.name = AttemptJobName(r.job_id, r.attempt);
    if (auto replica = control::ParseReplicaRunId(r.job_id)) {
      job.labels[kServiceLabel] = RunName(replica->job_id);
    }
    job.tenant = r.tenant;
    job.command = r.argv;
    job.env = r.env;
    job.env["MERIDIAN_JOB_ID"] = r.job_id;
    job.env["MERIDIAN_ATTEMPT"] = std::to_string(r.attempt);
    job.working_dir = r.working_dir;
    job.grace_period_s = r.grace_period_s;
    job.checkpoint.interval_s = 1;  // every attempt mounts the job's checkpoint claim
    Placement p;
    p.node = r.node;
    p.owned = true;
    p.gpu_model = options_.gpu_model;
    p.gpus_per_pod = static_cast<int>(r.mig_uuids.empty() ? r.gpus.size() : r.mig_uuids.size());
    p.mig_uuids = r.mig_uuids;
    if (r.mig_uuids.empty() && !r.mig_profile.empty()) {
      p.mig_profile = r.mig_profile;
      p.gpus_per_pod = 1;  // one instance
    }
    if (p.gpus_per_pod == 0) p.gpu_model.clear();
    ManifestOptions mo;
    mo.ns = options_.ns;
    mo.image = options_.image;
    auto manifests = BuildManifests(job, p, *options_.catalog, mo);
    if (!manifests.ok()) return manifests.status().WithContext("kubernetes backend");
    // The checkpoint claim is the run's, not the attempt's: every attempt mounts the same one.
    const std::string claim = RunName(r.job_id) + "-checkpoint";
    for (Manifest& m : *manifests) {
      if (m.kind == "PersistentVolumeClaim") m.object["metadata"]["name"] = claim;
      if (m.kind == "Job") {
        m.object["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] =
            claim;
        if (!r.log_dir.empty()) m.object["metadata"]["annotations"][kLogDirAnnotation] = r.log_dir;
      }
    }
    auto res = kubectl_.Run({"apply", "-f", "-"}, RenderYaml(*manifests));
    if (!res.ok()) return res.status();
    if (res->exit_code != 0) return KubectlFailure("kubectl apply failed", *res);
    const std::string handle = "k8s:" + options_.ns + "/" + job.name;
    Attempt a{r.job_id, r.attempt, options_.ns, job.name, {}, r.log_dir, false};
    a.last.job_id = r.job_id;
    a.last.attempt = r.attempt;
    a.last.handle = handle;
    attempts_[handle] = a;
    listed_ms_ = -1;  // looked at in the next Poll
    return handle;
  }

  Status Stop(const std::string& handle, int64_t grace_s) override {
    (void)grace_s;  // the pods' terminationGracePeriodSeconds, set at launch
    std::string ns, job;
    if (!ParseHandle(handle, &ns, &job)) return Status::Invalid("not a kubernetes handle: " + handle);
    // Suspending deletes the pods, and their logs with them: copied first.
    if (auto it = attempts_.find(handle); it != attempts_.end()) CopyLogOnce(it->second);
    auto res = kubectl_.Run({"patch", "job", job, "-n", ns, "--type=merge", "-p",
                             R"({"spec":{"suspend":true}})"});
    if (!res.ok()) return res.status();
    if (res->exit_code != 0) return KubectlFailure("kubectl patch job " + job + " failed", *res);
    return Status::Ok();
  }

  Result<std::optional<std::string>> FindLaunched(const std::string& job_id, int attempt) override {
    if (options_.kubeconfig.empty()) return std::optional<std::string>();
    const std::string name = AttemptJobName(job_id, attempt);
    auto res = kubectl_.Run({"get", "job", name, "-n", options_.ns, "-o", "name"});
    if (!res.ok()) return res.status();
    if (res->exit_code != 0) {
      Status st = KubectlFailure("kubectl get job " + name + " failed", *res);
      if (st.code() == StatusCode::kNotFound) return std::optional<std::string>();
      return st;
    }
    return std::optional<std::string>("k8s:" + options_.ns + "/" + name);
  }

  std::vector<control::RunObservation> Poll() override {
    const int64_t now = env_.steady_ms();
    if (listed_ms_ >= 0 && now - listed_ms_ < options_.status_refresh_ms) return {};
    listed_ms_ = now;
    std::map<std::string, std::vector<Attempt*>> live;  // by namespace
    for (auto& [handle, a] : attempts_) {
      if (Ended(a.last.phase)) continue;
      live[a.ns].push_back(&a);
    }
    std::vector<control::RunObservation> changed;
    for (auto& [ns, attempts] : live) {
      auto states = ReadJobStates(lister_, ns);
      if (!states.ok()) continue;  // the server did not answer: asked again next time
      for (Attempt* a : attempts) {
        control::RunObservation o = a->last;
        auto it = states->find(a->name);
        if (it == states->end()) {
          o.phase = control::RunPhase::kLost;
          o.ended = env_.clock();
          o.message = "Job " + a->name + " is no longer in namespace " + ns;
        } else {
          FillExitCode(lister_, ns, a->name, &it->second);  // live attempts only
          if (a->log_dir.empty() && IsRunsLogDir(it->second.log_dir, a->job_id)) {
            a->log_dir = it->second.log_dir;  // adopted unread
          }
          o = FromState(a->job_id, a->attempt, ns, a->name, it->second);
        }
        if (o.phase != a->last.phase) changed.push_back(o);
        a->last = o;
        if (o.phase == control::RunPhase::kExited || o.phase == control::RunPhase::kKilled) {
          CopyLogOnce(*a);
        }
      }
    }
    // An ended attempt has been reported: nothing more to watch or keep.
    std::erase_if(attempts_, [](const auto& kv) { return Ended(kv.second.last.phase); });
    return changed;
  }

  // The attempts' Jobs (if their ttlSecondsAfterFinished has not removed
  // them yet), their GPU claim templates (a GPU node group only: a cluster
  // without DRA has no such kind) and the job's checkpoint claim, which
  // nothing else deletes.
  Status Retire(const std::string& job_id, int attempts) override {
    if (options_.kubeconfig.empty()) return Status::Ok();  // export-only: nothing was created
    std::vector<std::string> jobs = {"delete", "job", "-n", options_.ns, "--ignore-not-found",
                                     "--wait=false"};
    std::vector<std::string> claims = {"delete", "resourceclaimtemplates.resource.k8s.io", "-n",
                                       options_.ns, "--ignore-not-found", "--wait=false"};
    for (int n = 1; n <= attempts; ++n) {
      jobs.push_back(AttemptJobName(job_id, n));
      claims.push_back(jobs.back() + "-gpu");
    }
    if (attempts > 0) MERIDIAN_RETURN_IF_ERROR(Delete(jobs));
    if (attempts > 0 && options_.gpus > 0) MERIDIAN_RETURN_IF_ERROR(Delete(claims));
    MERIDIAN_RETURN_IF_ERROR(Delete({"delete", "pvc", RunName(job_id) + "-checkpoint", "-n",
                                     options_.ns, "--ignore-not-found", "--wait=false"}));
    // A service's replicas ran as runs of their own (<id>.r<i>, each with
    // its attempts and checkpoint claim): every object labelled with the
    // service, in one call, however many replicas and restarts there were.
    const std::string kinds =
        options_.gpus > 0 ? "jobs,pvc,resourceclaimtemplates.resource.k8s.io" : "jobs,pvc";
    return Delete({"delete", kinds, "-n", options_.ns, "-l",
                   std::string(kServiceLabel) + "=" + RunName(job_id), "--ignore-not-found",
                   "--wait=false"});
  }

  Result<control::RunObservation> Adopt(const std::string& job_id, int attempt,
                                        const std::string& handle) override {
    std::string ns, job;
    if (!ParseHandle(handle, &ns, &job)) return Status::Invalid("not a kubernetes handle: " + handle);
    Attempt a{job_id, attempt, ns, job, {}, "", false};
    auto s = ReadJobState(kubectl_, ns, job);
    if (s.ok()) {
      a.last = FromState(job_id, attempt, ns, job, *s);
      if (IsRunsLogDir(s->log_dir, job_id)) a.log_dir = s->log_dir;
    } else {  // not known yet: asked again at the next poll
      a.last = FromState(job_id, attempt, ns, job, JobState{});
      a.last.message = s.status().message();
    }
    const control::RunPhase p = a.last.phase;
    if (p == control::RunPhase::kExited || p == control::RunPhase::kKilled) CopyLogOnce(a);
    attempts_[handle] = a;
    return a.last;
  }

  std::vector<control::BackendNode> Nodes() override {
    std::vector<control::BackendNode> out;
    for (int i = 0; i < options_.nodes; ++i) {
      out.push_back({"k8s-" + std::to_string(i), options_.gpu_model, options_.gpus, options_.vcpus,
                     options_.ram_gib, options_.mig, !options_.kubeconfig.empty(),
                     options_.kubeconfig.empty() ? "export-only: no kubeconfig" : ""});
    }
    return out;
  }

 private:
  static bool Ended(control::RunPhase p) {
    return p == control::RunPhase::kExited || p == control::RunPhase::kKilled ||
           p == control::RunPhase::kLost;
  }

  Status Delete(const std::vector<std::string>& args) {
    auto res = kubectl_.Run(args);
    if (!res.ok()) return res.status();
    if (res->exit_code != 0) {
      return Status::Internal("kubectl " + args[0] + " " + args[1] + " failed: " + res->err);
    }
    return Status::Ok();
  }

  // The attempt's pod log into its log directory (pod_logs.h), once: when
  // it is stopped (before the pods go) or seen ending. A log that cannot be
  // read (the pods are gone) is said in stderr.log instead.
  void CopyLogOnce(Attempt& a) {
    if (a.log_copied || a.log_dir.empty()) return;
    a.log_copied = true;
    Status st = CopyPodLog(kubectl_, a.ns, a.name, a.log_dir, options_.max_log_bytes);
    if (st.ok()) return;
    std::ofstream err(a.log_dir + "/stderr.log", std::ios::app);
    err << "[meridian: attempt " << a.attempt << "'s output could not be copied from Kubernetes: "
        << st.message() << "]\n";
  }

  static control::RunObservation FromState(const std::string& job_id, int attempt,
                                           const std::string& ns, const std::string& job,
                                           const JobState& s) {
    control::RunObservation o;
    o.job_id = job_id;
    o.attempt = attempt;
    o.handle = "k8s:" + ns + "/" + job;
    o.phase = s.phase;
    o.exit_code = s.exit_code;
    o.signal = s.signal;
    o.started = s.started;
    o.ended = s.ended;
    o.message = s.message;
    return o;
  }

  KubernetesBackendOptions options_;
  BackendEnvironment env_;
  Kubectl kubectl_;
  Kubectl lister_;        // Poll's list, with its own (shorter) timeout
  int64_t listed_ms_ = -1;
  std::map<std::string, Attempt> attempts_;
};

}  // namespace

Result<JobState> ReadJobState(const Kubectl& kubectl, const std::string& ns,
                              const std::string& job) {
  auto res = kubectl.Run({"get", "job", job, "-n", ns, "-o", "json"});
  if (!res.ok()) return res.status();
  if (res->exit_code != 0) {
    if (res->err.find("NotFound") != std::string::npos) {
      JobState gone;
      gone.phase = control::RunPhase::kLost;
      gone.message = res->err;
      return gone;
    }
    return Status::Internal("kubectl get job " + job + " failed: " + res->err);
  }
  auto s = ParseJobStatus(res->out);
  if (!s.ok()) return s.status();
  FillExitCode(kubectl, ns, job, &*s);
  return s;
}

Result<std::map<std::string, JobState>> ReadJobStates(const Kubectl& kubectl,
                                                      const std::string& ns) {
  auto res = kubectl.Run({"get", "jobs", "-n", ns, "-l", "app.kubernetes.io/managed-by=meridian",
                          "-o", "json"});
  if (!res.ok()) return res.status();
  if (res->exit_code != 0) return KubectlFailure("kubectl get jobs -n " + ns + " failed", *res);
  auto states = ParseJobList(res->out);
  if (!states.ok()) return states.status();
  return states;
}

std::unique_ptr<control::Backend> MakeKubernetesBackend(const KubernetesBackendOptions& options) {
  return std::make_unique<KubernetesBackend>(options);
}

}  // namespace meridian::backends::k8s
