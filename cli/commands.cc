#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <sstream>

#include "catalog/catalog.h"
#include "cli/catalog_output.h"
#include "cli/plan_output.h"
#include "core/time.h"
#include "estimate/plan.h"
#include "spec/spec.h"

namespace meridian::cli {

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
  std::vector<estimate::Plan> plans;
  for (const auto& job : selected) {
    Status valid = spec::ValidateAgainstCatalog(job, **cat, at);
    if (!valid.ok()) {
      err << "meridian plan: " << valid.message() << "\n";
      return ExitFor(valid);
    }
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
  err << app.help();
  return kExitBadInput;
}

}  // namespace meridian::cli
