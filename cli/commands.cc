#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "catalog/catalog.h"
#include "cli/catalog_output.h"
#include "cli/client_cmd.h"
#include "cli/fleet_output.h"
#include "cli/plan_output.h"
#include "cli/plan_queue.h"
#include "cli/serve_cmd.h"
#include "cli/mig_cmd.h"
#include "cli/k8s_cmd.h"
#include "cli/savings_cmd.h"
#include "cli/simulate_cmd.h"
#include "cli/telemetry_cmd.h"
#include "cli/top_cmd.h"
#include "cli/workload_cmd.h"
#include "core/time.h"
#include "estimate/plan.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/market.h"
#include "sched/profile.h"
#include "sched/queued_job.h"
#include "sched/scheduler.h"
#include "spec/fleet.h"
#include "spec/spec.h"

namespace meridian::cli {

// A shipped profile by name, or a profile file (a value naming an existing
// file or ending in .yaml/.yml); every plugin built once to check its args.
Result<sched::Profile> LoadProfile(const std::string& name_or_path) {
  std::error_code ec;
  const bool file = std::filesystem::is_regular_file(name_or_path, ec) ||
                    name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml");
  Result<sched::Profile> p = Status::Internal("unset");
  if (file) {
    std::ifstream in(name_or_path);
    if (!in) return Status::NotFound(name_or_path + ": cannot read the profile file");
    std::stringstream text;
    text << in.rdbuf();
    p = sched::ParseProfile(text.str(), name_or_path);
  } else {
    p = sched::EmbeddedProfile(name_or_path);
  }
  if (!p.ok()) return p.status();
  MERIDIAN_RETURN_IF_ERROR(sched::CheckProfile(*p));
  return p;
}

namespace {

struct GlobalFlags {
  std::string catalog_dir;  // empty: the embedded catalog
};

struct PlanFlags {
  std::string spec_path;
  std::string job_name;
  size_t top = 10;
  std::string at;
  std::string output = "table";
  std::string fleet_path;         // --fleet: decide against this fleet
  std::string profile = "default";  // --profile: a shipped name or a YAML file
};

struct ProfilesFlags {
  std::string output = "table";
};

struct CatalogFlags {
  std::string what;
  std::string gpu, region, provider;
  std::string output = "table";
};

int ExitFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound: return kExitBadInput;
    default: return kExitInternal;
  }
}

Result<std::shared_ptr<const catalog::Catalog>> OpenCatalog(const GlobalFlags& g) {
  if (g.catalog_dir.empty()) return catalog::Catalog::LoadEmbedded();
  return catalog::Catalog::LoadFromDirectory(g.catalog_dir);
}

// `plan --fleet`: the jobs of the file queued together at `at` and decided by
// the profile against the fleet in queue order, each placement committed so
// later jobs see it (head-of-line blocking is a cycle rule: every job is
// decided and shown here).
int RunPlanFleet(const std::shared_ptr<const catalog::Catalog>& cat, const PlanFlags& f,
                 UnixSeconds at, const std::vector<JobSpec>& jobs, std::ostream& out,
                 std::ostream& err) {
  auto profile = LoadProfile(f.profile);
  if (!profile.ok()) {
    err << "meridian plan: --profile: " << profile.status().message() << "\n";
    return ExitFor(profile.status());
  }
  auto spec = spec::LoadFleetFile(f.fleet_path);
  if (!spec.ok()) {
    err << "meridian plan: " << spec.status().message() << "\n";
    return ExitFor(spec.status());
  }
  if (Status v = spec::ValidateFleetAgainstCatalog(*spec, *cat); !v.ok()) {
    err << "meridian plan: " << v.message() << "\n";
    return ExitFor(v);
  }
  auto fleet = sched::Fleet::Build(*spec, cat);
  if (!fleet.ok()) {
    err << "meridian plan: " << f.fleet_path << ": " << fleet.status().message() << "\n";
    return kExitBadInput;
  }
  auto scheduler = sched::Scheduler::Create(*profile, *fleet);
  if (!scheduler.ok()) {
    err << "meridian plan: --profile: " << scheduler.status().message() << "\n";
    return ExitFor(scheduler.status());
  }
  auto ledger = (*fleet)->NewLedger();
  if (!ledger.ok()) {
    err << "meridian plan: " << ledger.status().message() << "\n";
    return kExitInternal;
  }
  auto queue = QueueJobs(jobs, cat, **fleet, *ledger, **scheduler, at);
  if (!queue.ok()) {
    err << "meridian plan: " << queue.status().message() << "\n";
    return ExitFor(queue.status());
  }
  const sched::Snapshot& snap = (*queue)->snap;
  FleetRun run{profile->name, profile->source, f.fleet_path, at, fleet->get(), {}, {}};
  for (const sched::QueuedJob* q : (*queue)->order) {
    sched::Decision d = (*scheduler)->Decide(*q, snap);
    if (d.allocation) {
      if (Status st = (*scheduler)->Commit(d, snap, &*ledger); !st.ok()) {
        d.kind = sched::DecisionKind::kError;
        d.status = st;
      }
    }
    run.decisions.push_back({&jobs[q->id.index() - 1], std::move(d)});
  }
  const bool has_mig = std::any_of((*fleet)->nodes().begin(), (*fleet)->nodes().end(),
                                   [](const sched::Node& n) { return n.mig_gpus != 0; });
  if (has_mig) run.mig = sched::MeasureMigFragmentation(**fleet, *ledger, (*queue)->jobs);
  if (f.output == "json") {
    out << FleetRunToJson(run).dump(2) << "\n";
  } else {
    PrintFleetRun(run, out);
  }
  return kExitOk;
}

int RunProfiles(const ProfilesFlags& f, std::ostream& out, std::ostream& err) {
  std::vector<sched::Profile> profiles;
  for (const std::string& name : sched::EmbeddedProfileNames()) {
    auto p = sched::EmbeddedProfile(name);
    if (!p.ok()) {
      err << "meridian profiles: " << p.status().message() << "\n";
      return kExitInternal;
    }
    profiles.push_back(std::move(p).value());
  }
  if (f.output == "json") {
    out << ProfilesToJson(profiles).dump(2) << "\n";
  } else {
    PrintProfiles(profiles, out);
  }
  return kExitOk;
}

int RunPlan(const GlobalFlags& g, const PlanFlags& f, long long now, std::ostream& out,
            std::ostream& err) {
  UnixSeconds at = now;
  if (!f.at.empty()) {
    auto parsed = ParseRfc3339(f.at);
    if (!parsed.ok()) {
      err << "meridian plan: --at: " << parsed.status().message() << "\n";
      return kExitBadInput;
    }
    at = *parsed;
  }
  auto cat = OpenCatalog(g);
  if (!cat.ok()) {
    err << "meridian plan: catalog: " << cat.status().message() << "\n";
    return g.catalog_dir.empty() ? kExitInternal : kExitBadInput;
  }
  auto jobs = spec::LoadJobSpecFile(f.spec_path);
  if (!jobs.ok()) {
    err << "meridian plan: " << jobs.status().message() << "\n";
    return ExitFor(jobs.status());
  }
  std::vector<JobSpec> selected;
  for (const auto& job : *jobs) {
    if (f.job_name.empty() || job.name == f.job_name) selected.push_back(job);
  }
  if (selected.empty()) {
    err << "meridian plan: --job: \"" << f.job_name << "\" is not a job in " << f.spec_path
        << "\n";
    return kExitBadInput;
  }
  for (const auto& job : selected) {
    Status valid = spec::ValidateAgainstCatalog(job, **cat, at);
    if (!valid.ok()) {
      err << "meridian plan: " << valid.message() << "\n";
      return ExitFor(valid);
    }
  }
  if (!f.fleet_path.empty()) return RunPlanFleet(*cat, f, at, selected, out, err);
  std::vector<estimate::Plan> plans;
  for (const auto& job : selected) {
    auto plan = estimate::MakePlan(job, **cat, estimate::PlanRequest{at, 0});
    if (!plan.ok()) {
      err << "meridian plan: job \"" << job.name << "\": " << plan.status().message() << "\n";
      return ExitFor(plan.status());
    }
    plans.push_back(std::move(plan).value());
  }
  if (f.output == "json") {
    auto trimmed = [&](estimate::Plan p) {
      if (f.top > 0 && p.options.size() > f.top) p.options.resize(f.top);
      return PlanToJson(p);
    };
    if (plans.size() == 1) {
      out << trimmed(plans[0]).dump(2) << "\n";
    } else {
      nlohmann::json all = {{"plans", nlohmann::json::array()}};
      for (const auto& p : plans) all["plans"].push_back(trimmed(p));
      out << all.dump(2) << "\n";
    }
    return kExitOk;
  }
  for (size_t i = 0; i < plans.size(); ++i) {
    if (i > 0) out << "\n" << std::string(78, '-') << "\n\n";
    PrintPlanTable(plans[i], PlanTableOptions{f.top}, out);
  }
  return kExitOk;
}

int RunCatalog(const GlobalFlags& g, const CatalogFlags& f, std::ostream& out,
               std::ostream& err) {
  auto cat = OpenCatalog(g);
  if (!cat.ok()) {
    err << "meridian catalog: " << cat.status().message() << "\n";
    return g.catalog_dir.empty() ? kExitInternal : kExitBadInput;
  }
  CatalogFilter filter{f.gpu, f.region, f.provider};
  if (Status s = CheckCatalogFilter(**cat, filter); !s.ok()) {
    err << "meridian catalog: " << s.message() << "\n";
    return kExitBadInput;
  }
  bool json = f.output == "json";
  if (f.what == "gpus") {
    PrintGpus(**cat, filter, json, out);
  } else if (f.what == "regions") {
    PrintRegions(**cat, filter, json, out);
  } else {
    PrintOffers(**cat, filter, json, out);
  }
  return kExitOk;
}

}  // namespace

int RunMeridian(const std::vector<std::string>& args, long long now, std::ostream& out,
                std::ostream& err) {
  CLI::App app{
      "meridian: plans, schedules and runs GPU jobs across clouds, regions and pricing "
      "models, from real prices, specs and grid carbon.",
      "meridian"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "meridian 0.1.0");
  GlobalFlags g;
  app.add_option("--catalog", g.catalog_dir,
                 "catalog folder to use instead of the embedded one (layout of data/catalog)")
      ->check(CLI::ExistingDirectory);

  PlanFlags pf;
  CLI::App* plan = app.add_subcommand(
      "plan", "rank the ways to run a job: GPU model x count x offering x pricing model");
  plan->add_option("JOB.yaml", pf.spec_path, "job spec file (docs/job-spec.md)")
      ->required()
      ->check(CLI::ExistingFile);
  plan->add_option("--top", pf.top, "options to show (0 = all)")->capture_default_str();
  plan->add_option("--at", pf.at, "submission time, RFC 3339 (default: now)");
  plan->add_option("--job", pf.job_name, "plan only this job of a file with several");
  plan->add_option("-o,--output", pf.output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  CLI::Option* fleet_opt =
      plan->add_option("--fleet", pf.fleet_path,
                       "decide each job against this fleet file (docs/fleet.md) with the scheduler")
          ->check(CLI::ExistingFile);
  plan->add_option("--profile", pf.profile,
                   "scheduling profile with --fleet: a shipped name (meridian profiles) or a "
                   "profile YAML file")
      ->capture_default_str()
      ->needs(fleet_opt);

  ProfilesFlags prf;
  CLI::App* profiles =
      app.add_subcommand("profiles", "list the shipped scheduling profiles (docs/scheduler.md)");
  profiles->add_option("-o,--output", prf.output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  CatalogFlags cf;
  CLI::App* cat = app.add_subcommand("catalog", "show the embedded catalog");
  cat->add_option("WHAT", cf.what, "gpus, regions or offers")
      ->required()
      ->check(CLI::IsMember({"gpus", "regions", "offers"}));
  cat->add_option("--gpu", cf.gpu, "only this GPU model (e.g. H100-80GB)");
  cat->add_option("--region", cf.region, "only this region id or geography (e.g. aws:us-east-1, eu)");
  cat->add_option("--provider", cf.provider, "only this provider (aws, gcp, azure, lambda)");
  cat->add_option("-o,--output", cf.output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  std::unique_ptr<ClientCommands> client = AddClientCommands(app);
  std::unique_ptr<ServeCommands> serve = AddServeCommands(app);
  std::unique_ptr<WorkloadCommands> workload = AddWorkloadCommands(app);
  std::unique_ptr<SimulateCommand> simulate = AddSimulateCommand(app);
  std::unique_ptr<SavingsCommand> report = AddReportCommands(app);
  std::unique_ptr<MigCommands> mig = AddMigCommands(app);
  std::unique_ptr<K8sCommands> k8s = AddK8sCommands(app);
  std::unique_ptr<TopCommand> top = AddTopCommand(app);
  std::unique_ptr<TelemetryCommands> tele = AddTelemetryCommands(app);

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitBadInput;
  }
  if (plan->parsed()) return RunPlan(g, pf, now, out, err);
  if (cat->parsed()) return RunCatalog(g, cf, out, err);
  if (profiles->parsed()) return RunProfiles(prf, out, err);
  if (auto rc = RunClientCommand(*client, out, err)) return *rc;
  if (auto rc = RunServeCommand(*serve, now, out, err)) return *rc;
  if (auto rc = RunWorkloadCommand(*workload, out, err)) return *rc;
  if (auto rc = RunSimulateCommand(*simulate, g.catalog_dir, out, err)) return *rc;
  if (auto rc = RunReportCommand(*report, g.catalog_dir, out, err)) return *rc;
  if (auto rc = RunMigCommand(*mig, g.catalog_dir, out, err)) return *rc;
  if (auto rc = RunK8sCommand(*k8s, g.catalog_dir, now, out, err)) return *rc;
  if (auto rc = RunTopCommand(*top, out, err)) return *rc;
  if (auto rc = RunTelemetryCommand(*tele, g.catalog_dir, out, err)) return *rc;
  err << app.help();
  return kExitBadInput;
}

}  // namespace meridian::cli
