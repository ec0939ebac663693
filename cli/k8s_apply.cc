// `meridian k8s apply` and `meridian k8s status`: the exported manifests
// applied with kubectl where a kubeconfig says which cluster, and the Job's
// state read back as meridian's run phases.
#include <chrono>
#include <thread>

#include "backends/kubernetes/backend.h"
#include "backends/kubernetes/kubectl.h"
#include "cli/commands.h"
#include "cli/k8s_export.h"

namespace meridian::cli {

namespace {

namespace k8s = backends::k8s;

bool Ended(control::RunPhase p) {
  return p == control::RunPhase::kExited || p == control::RunPhase::kKilled ||
         p == control::RunPhase::kLost;
}

std::string Describe(const k8s::JobState& s) {
  std::string out(control::RunPhaseName(s.phase));
  if (s.exit_code) out += " (exit " + std::to_string(*s.exit_code) + ")";
  if (s.signal) out += " (signal " + std::to_string(*s.signal) + ")";
  if (!s.message.empty()) out += ": " + s.message;
  return out;
}

std::string Namespace(const K8sCommands& c, const ExportedJob& j) {
  for (const auto& m : j.manifests) {
    if (m.kind == "Job") return m.object["metadata"].value("namespace", "default");
  }
  return c.ns.empty() ? "default" : c.ns;
}

// Polls until every Job has ended or the timeout passes; the last phase of each.
int Watch(const K8sCommands& c, const k8s::Kubectl& kubectl,
          const std::vector<ExportedJob>& jobs, std::ostream& out, std::ostream& err) {
  std::vector<std::string> last(jobs.size());
  std::vector<bool> done(jobs.size(), false);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(c.watch_timeout_s);
  int failures = 0;
  while (true) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (done[i]) continue;
      auto s = k8s::ReadJobState(kubectl, Namespace(c, jobs[i]), jobs[i].name);
      std::string now = s.ok() ? Describe(*s) : "unreadable: " + s.status().message();
      if (now != last[i]) out << "job " << jobs[i].name << ": " << now << "\n";
      last[i] = now;
      if (s.ok() && Ended(s->phase)) {
        done[i] = true;
        failures += s->phase == control::RunPhase::kExited && s->exit_code == 0 ? 0 : 1;
      }
    }
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      err << "meridian k8s apply: --watch-timeout: " << c.watch_timeout_s
          << " s passed before every Job ended\n";
      return kExitInternal;
    }
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  return failures == 0 ? kExitOk : kExitInternal;
}

int RunApply(const K8sCommands& c, const std::string& catalog_dir, long long now,
             std::ostream& out, std::ostream& err) {
  auto kubeconfig = k8s::FindKubeconfig(c.kubeconfig);
  if (!kubeconfig.ok()) {
    err << "meridian k8s apply: " << kubeconfig.status().message() << "\n";
    return kExitBadInput;
  }
  auto jobs = ExportJobs(c, catalog_dir, now);
  if (!jobs.ok()) {
    err << "meridian k8s apply: " << jobs.status().message() << "\n";
    return jobs.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitInternal;
  }
  if (kubeconfig->empty()) {
    const std::string dir = c.out_dir.empty() ? "k8s-manifests" : c.out_dir;
    if (Status s = WriteExport(*jobs, dir, out, err); !s.ok()) {
      err << "meridian k8s apply: " << s.message() << "\n";
      return kExitBadInput;
    }
    err << "meridian k8s apply: export-only mode: no kubeconfig (--kubeconfig, $KUBECONFIG and "
           "~/.kube/config name none), so nothing was applied; apply the manifests with "
           "`kubectl apply -f "
        << dir << "`\n";
    return kExitOk;
  }
  k8s::Kubectl kubectl(c.kubectl, *kubeconfig);
  if (!c.out_dir.empty()) {
    if (Status s = WriteExport(*jobs, c.out_dir, out, err); !s.ok()) {
      err << "meridian k8s apply: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  for (const ExportedJob& j : *jobs) {
    auto r = kubectl.Run({"apply", "-f", "-"}, k8s::RenderYaml(j.manifests));
    if (!r.ok()) {
      err << "meridian k8s apply: " << r.status().message() << "\n";
      return kExitBadInput;
    }
    out << r->out;
    if (r->exit_code != 0) {
      err << "meridian k8s apply: job \"" << j.name << "\": kubectl apply failed (exit "
          << r->exit_code << "): " << r->err;
      return kExitInternal;
    }
  }
  return c.watch ? Watch(c, kubectl, *jobs, out, err) : kExitOk;
}

int RunStatus(const K8sCommands& c, std::ostream& out, std::ostream& err) {
  auto kubeconfig = k8s::FindKubeconfig(c.kubeconfig);
  if (!kubeconfig.ok() || kubeconfig->empty()) {
    err << "meridian k8s status: "
        << (kubeconfig.ok() ? "export-only mode: no kubeconfig (--kubeconfig, $KUBECONFIG and "
                              "~/.kube/config name none), so there is no cluster to ask"
                            : kubeconfig.status().message())
        << "\n";
    return kExitBadInput;
  }
  k8s::Kubectl kubectl(c.kubectl, *kubeconfig);
  auto s = k8s::ReadJobState(kubectl, c.ns.empty() ? "default" : c.ns, c.name);
  if (!s.ok()) {
    err << "meridian k8s status: " << s.status().message() << "\n";
    return kExitInternal;
  }
  out << "job " << c.name << ": " << Describe(*s) << "\n";
  return kExitOk;
}

}  // namespace

void AddApplyCommands(K8sCommands& c) {
  c.apply = c.k8s->add_subcommand(
      "apply", "plan each job, then kubectl apply its manifests (export-only without a kubeconfig)");
  AddPlanOptions(c.apply, c);
  c.apply->add_option("-o,--output-dir", c.out_dir,
                      "also write <job>.yaml per job here (export-only default: k8s-manifests)");
  c.apply->add_option("--kubeconfig", c.kubeconfig,
                      "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)");
  c.apply->add_option("--kubectl", c.kubectl, "kubectl program")->capture_default_str();
  c.apply->add_flag("--watch", c.watch, "poll each Job until it ends; exit 0 only if all succeed");
  c.apply->add_option("--watch-timeout", c.watch_timeout_s, "seconds --watch waits at most")
      ->capture_default_str();
  c.status = c.k8s->add_subcommand("status", "a Job's state as meridian's run phase");
  c.status->add_option("NAME", c.name, "the Job's name (the job spec's name)")->required();
  c.status->add_option("--namespace", c.ns, "its namespace (default: default)");
  c.status->add_option("--kubeconfig", c.kubeconfig,
                       "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)");
  c.status->add_option("--kubectl", c.kubectl, "kubectl program")->capture_default_str();
}

int RunApplyCommand(const K8sCommands& c, const std::string& catalog_dir, long long now,
                    std::ostream& out, std::ostream& err) {
  if (c.apply->parsed()) return RunApply(c, catalog_dir, now, out, err);
  return RunStatus(c, out, err);
}

}  // namespace meridian::cli
