#include "cli/k8s_cmd.h"

#include <filesystem>
#include <fstream>

#include "backends/kubernetes/manifest.h"
#include "backends/kubernetes/placement.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/k8s_export.h"
#include "cli/plan_queue.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/market.h"
#include "sched/queued_job.h"
#include "sched/scheduler.h"
#include "spec/fleet.h"
#include "spec/spec.h"

namespace meridian::cli {

namespace {

namespace k8s = backends::k8s;

int ExitFor(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kNotFound
             ? kExitBadInput
             : kExitInternal;
}

// The spec field a rejecting filter is about, so a job that can never be
// placed points at what to change.
std::string FieldOfFilter(const std::string& plugin) {
  static const std::map<std::string, std::string> kFields = {
      {"gpu_fit", "resources.gpu_models"},  {"mig_slice", "resources.mig"},
      {"residency", "residency"},           {"driver_pin", "driver"},
      {"cpu_ram", "resources"},             {"latency", "latency.slo_ms"},
      {"single_node", "resources.gpus"},    {"gang_permit", "resources.gpus"},
      {"quota", "tenant"},                  {"pricing_model", "preemptible"},
      {"cpu_fallback", "resources.cpu_fallback"}};
  auto it = kFields.find(plugin);
  return it == kFields.end() ? "resources" : it->second;
}

// The fleet to decide against: the file's, or none of our own (the
// catalog's cloud offerings only).
Result<std::shared_ptr<const sched::Fleet>> OpenFleet(
    const std::shared_ptr<const catalog::Catalog>& cat, const std::string& path) {
  FleetSpec spec;
  if (!path.empty()) {
    auto loaded = spec::LoadFleetFile(path);
    if (!loaded.ok()) return loaded.status();
    MERIDIAN_RETURN_IF_ERROR(spec::ValidateFleetAgainstCatalog(*loaded, *cat));
    spec = std::move(loaded).value();
  }
  auto fleet = sched::Fleet::Build(spec, cat);
  if (!fleet.ok()) return Status::Invalid(path + ": " + fleet.status().message());
  return fleet;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::Internal(path + ": cannot write");
  return Status::Ok();
}

}  // namespace

Result<std::vector<ExportedJob>> ExportJobs(const K8sCommands& c, const std::string& catalog_dir,
                                            long long now) {
  UnixSeconds at = now;
  if (!c.at.empty()) {
    auto parsed = ParseRfc3339(c.at);
    if (!parsed.ok()) return Status::Invalid("--at: " + parsed.status().message());
    at = *parsed;
  }
  auto cat = catalog_dir.empty() ? catalog::Catalog::LoadEmbedded()
                                 : catalog::Catalog::LoadFromDirectory(catalog_dir);
  if (!cat.ok()) return cat.status().WithContext("catalog");
  auto jobs = spec::LoadJobSpecFile(c.spec_path);
  if (!jobs.ok()) return jobs.status();
  std::vector<JobSpec> selected;
  for (const JobSpec& j : *jobs) {
    if (c.job_name.empty() || j.name == c.job_name) selected.push_back(j);
  }
  if (selected.empty()) {
    return Status::Invalid("--job: \"" + c.job_name + "\" is not a job in " + c.spec_path);
  }
  for (const JobSpec& j : selected) {
    MERIDIAN_RETURN_IF_ERROR(spec::ValidateAgainstCatalog(j, **cat, at));
  }
  auto profile = LoadProfile(c.profile);
  if (!profile.ok()) return profile.status().WithContext("--profile");
  auto fleet = OpenFleet(*cat, c.fleet_path);
  if (!fleet.ok()) return fleet.status();
  auto scheduler = sched::Scheduler::Create(*profile, *fleet);
  if (!scheduler.ok()) return scheduler.status().WithContext("--profile");
  auto ledger = (*fleet)->NewLedger();
  if (!ledger.ok()) return Status::Internal(ledger.status().message());

  auto queue = QueueJobs(selected, *cat, **fleet, *ledger, **scheduler, at);
  if (!queue.ok()) return queue.status();
  const sched::Snapshot& snap = (*queue)->snap;

  k8s::ManifestOptions options{"", c.ns, c.image, c.checkpoint_size, c.storage_class};
  std::vector<ExportedJob> out(selected.size());
  for (const sched::QueuedJob* q : (*queue)->order) {
    const JobSpec& job = selected[q->id.index() - 1];
    sched::Decision d = (*scheduler)->Decide(*q, snap);
    if (!d.allocation) {
      std::string field = d.filters.empty() ? "resources" : FieldOfFilter(d.filters.front().plugin);
      std::string why = d.status.ok() ? std::string(sched::ToString(d.kind)) : d.status.message();
      if (!d.filters.empty() && !d.filters.front().examples.empty()) {
        why += " (" + d.filters.front().plugin + ": " + d.filters.front().examples.front() + ")";
      }
      return Status::Invalid(spec::LocateField(job, field) + ": job \"" + job.name +
                             "\" cannot be placed: " + why);
    }
    MERIDIAN_RETURN_IF_ERROR((*scheduler)->Commit(d, snap, &*ledger));
    auto placement = k8s::PlacementOf(d, *q, **fleet);
    if (!placement.ok()) return placement.status().WithContext("job \"" + job.name + "\"");
    auto manifests = k8s::BuildManifests(job, *placement, **cat, options);
    if (!manifests.ok()) {
      // The message starts with the field; a spec field gets its place in the file.
      std::string msg = manifests.status().message();
      size_t colon = msg.find(": ");
      if (colon != std::string::npos && !msg.starts_with("--")) {
        msg = spec::LocateField(job, msg.substr(0, colon)) + msg.substr(colon);
      }
      return Status::Invalid(msg);
    }
    out[q->id.index() - 1] = {job.name, *placement, std::move(manifests).value()};
  }
  return out;
}

Status WriteExport(const std::vector<ExportedJob>& jobs, const std::string& dir, std::ostream& out,
                   std::ostream& err) {
  if (dir.empty()) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (i > 0) out << "---\n";
      out << k8s::RenderYaml(jobs[i].manifests);
    }
    return Status::Ok();
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Invalid("-o: " + dir + ": " + ec.message());
  for (const ExportedJob& j : jobs) {
    const std::string path = (std::filesystem::path(dir) / (j.name + ".yaml")).string();
    MERIDIAN_RETURN_IF_ERROR(WriteFile(path, k8s::RenderYaml(j.manifests)));
    err << "wrote " << path << ":";
    for (const auto& m : j.manifests) err << " " << m.kind << "/" << m.name;
    err << "\n";
  }
  return Status::Ok();
}

void AddPlanOptions(CLI::App* cmd, K8sCommands& c) {
  cmd->add_option("JOB.yaml", c.spec_path, "job spec file (docs/job-spec.md)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--fleet", c.fleet_path,
                  "decide against this fleet file (docs/fleet.md); default: the catalog's cloud "
                  "offerings only")
      ->check(CLI::ExistingFile);
  cmd->add_option("--profile", c.profile, "scheduling profile: a shipped name or a YAML file")
      ->capture_default_str();
  cmd->add_option("--at", c.at, "decision time, RFC 3339 (default: now)");
  cmd->add_option("--job", c.job_name, "only this job of a file with several");
  cmd->add_option("--namespace", c.ns, "namespace of the objects (default: the job's tenant)");
  cmd->add_option("--image", c.image, "container image (default: the job's image:)");
  cmd->add_option("--checkpoint-size", c.checkpoint_size, "storage the checkpoint claim requests")
      ->capture_default_str();
  cmd->add_option("--storage-class", c.storage_class,
                  "storage class of the checkpoint claim (default: the cluster's)");
}

std::unique_ptr<K8sCommands> AddK8sCommands(CLI::App& app) {
  auto c = std::make_unique<K8sCommands>();
  c->k8s = app.add_subcommand("k8s", "Kubernetes manifests (Job + DRA ResourceClaimTemplate) for a "
                                     "job's placement, and applying them");
  c->k8s->require_subcommand(1);
  c->export_cmd = c->k8s->add_subcommand("export", "plan each job and write its manifests");
  AddPlanOptions(c->export_cmd, *c);
  c->export_cmd->add_option("-o,--output-dir", c->out_dir,
                            "write <job>.yaml per job into this folder (default: stdout)");
  AddApplyCommands(*c);
  return c;
}

std::optional<int> RunK8sCommand(const K8sCommands& c, const std::string& catalog_dir,
                                 long long now, std::ostream& out, std::ostream& err) {
  if (c.k8s == nullptr || !c.k8s->parsed()) return std::nullopt;
  if (c.export_cmd->parsed()) {
    auto jobs = ExportJobs(c, catalog_dir, now);
    Status s = jobs.ok() ? WriteExport(*jobs, c.out_dir, out, err) : jobs.status();
    if (!s.ok()) {
      err << "meridian k8s export: " << s.message() << "\n";
      return ExitFor(s);
    }
    return kExitOk;
  }
  return RunApplyCommand(c, catalog_dir, now, out, err);
}

}  // namespace meridian::cli
