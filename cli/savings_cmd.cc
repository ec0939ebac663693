#include "cli/savings_cmd.h"

#include <CLI/CLI.hpp>
#include <optional>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/simulate_cmd.h"
#include "sim/savings.h"
#include "core/time.h"
#include "spec/fleet.h"

namespace meridian::cli {

namespace {

// The inputs every column shares.
struct Inputs {
  std::shared_ptr<const catalog::Catalog> catalog;
  NamedProfiles profiles;
  sim::Trace trace;
  FleetSpec fleet;
  sim::ReplayMarketOptions market;
};

Result<Inputs> Load(const SavingsCommand& cmd, const std::string& catalog_dir) {
  Inputs in;
  auto start = ParseRfc3339(cmd.start);
  if (!start.ok()) return start.status().WithContext("--start");
  in.market.start = *start;
  in.market.seed = cmd.seed;
  auto cat = catalog_dir.empty() ? catalog::Catalog::LoadEmbedded()
                                 : catalog::Catalog::LoadFromDirectory(catalog_dir);
  if (!cat.ok()) return cat.status().WithContext("catalog");
  in.catalog = *cat;
  auto profiles = LoadProfiles(cmd.policies);
  if (!profiles.ok()) return profiles.status();
  in.profiles = std::move(profiles).value();
  auto trace = ReadTraceFlags({cmd.trace, cmd.format, cmd.nodes, cmd.gpu_map, cmd.tz}, *in.catalog);
  if (!trace.ok()) return trace.status();
  in.trace = std::move(trace).value();
  auto fleet = spec::LoadFleetFile(cmd.fleet);
  if (!fleet.ok()) return fleet.status();
  in.fleet = std::move(fleet).value();
  return in;
}

// The fleet of the file with its elastic flag set to `elastic`.
Result<sim::World> WorldOf(const Inputs& in, bool elastic) {
  FleetSpec spec = in.fleet;
  spec.elastic = elastic;
  auto fleet = BuildFleet(spec, in.catalog);
  if (!fleet.ok()) return fleet.status();
  return MakeWorld(in.catalog, *fleet, in.market);
}

Result<sim::PolicyRun> Run(const Inputs& in, const sim::JobShapes& shapes, const sim::World& world,
                           const sched::Profile& profile, const std::string& name, uint64_t seed) {
  sim::EngineOptions eo;
  eo.seed = seed;
  auto run = sim::Simulate(in.trace, shapes, world, profile, name, eo);
  if (!run.ok()) return run.status().WithContext("--policy " + name);
  return run;
}

}  // namespace

std::unique_ptr<SavingsCommand> AddReportCommands(CLI::App& app) {
  auto cmd = std::make_unique<SavingsCommand>();
  CLI::App* report = app.add_subcommand("report", "reports on a team's own history (docs/savings.md)");
  report->require_subcommand(1);
  CLI::App* sub = report->add_subcommand(
      "savings", "what meridian would have saved: the history as it ran beside each policy on the "
                 "same fleet and with cloud capacity");
  cmd->app = sub;
  sub->add_option("--trace", cmd->trace, "the history (docs/trace-format.md)")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", cmd->format, "trace format")
      ->required()
      ->check(CLI::IsMember({"openb", "dlrm", "jsonl", "sacct", "k8s-jobs"}));
  sub->add_option("--fleet", cmd->fleet, "the fleet the history ran on (docs/fleet.md)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--policy", cmd->policies, "comma-separated policies to set beside the history")
      ->capture_default_str();
  sub->add_option("--burst-policy", cmd->burst_policy,
                  "the policy run on the fleet plus the catalog's cloud capacity (none: no burst run)")
      ->capture_default_str();
  sub->add_option("--nodes", cmd->nodes, "openb node list")->check(CLI::ExistingFile);
  sub->add_option("--gpu-map", cmd->gpu_map, "sacct, k8s-jobs: map of GPU names to catalog models")
      ->check(CLI::ExistingFile);
  sub->add_option("--tz", cmd->tz, "sacct: the IANA time zone of its local times; default: the machine's");
  sub->add_option("--start", cmd->start, "the trace's second 0, RFC 3339 (carbon hours, prices)")
      ->capture_default_str();
  sub->add_option("--seed", cmd->seed, "seed of the scheduler and the market's draws")->capture_default_str();
  sub->add_option("-o,--out", cmd->out_dir, "write savings.html and savings.txt here")->required();
  sub->add_flag("-q,--quiet", cmd->quiet, "no notes on how the trace was read");
  return cmd;
}

std::optional<int> RunReportCommand(const SavingsCommand& cmd, const std::string& catalog_dir,
                                    std::ostream& out, std::ostream& err) {
  if (!cmd.app || !cmd.app->parsed()) return std::nullopt;
  const CommandFailure fail{err, "report savings"};
  auto in = Load(cmd, catalog_dir);
  if (!in.ok()) return fail(in.status());
  if (!cmd.quiet) {
    for (const std::string& n : in->trace.notes) err << "trace: " << n << "\n";
  }
  auto world = WorldOf(*in, false);
  if (!world.ok()) return fail(world.status());
  const sim::JobShapes shapes = sim::JobShapes::Make(in->trace, *in->catalog);
  sim::Savings s;
  s.trace = &in->trace;
  s.world = &*world;
  s.fleet_source = cmd.fleet;
  s.history = sim::AsItRan(in->trace, *world);
  for (const auto& [name, profile] : in->profiles) {
    auto run = Run(*in, shapes, *world, profile, name, cmd.seed);
    if (!run.ok()) return fail(run.status());
    s.runs.push_back(std::move(run).value());
  }
  std::optional<sim::World> burst_world;
  if (cmd.burst_policy != "none") {
    auto profile = LoadProfile(cmd.burst_policy);
    if (!profile.ok()) return fail(profile.status().WithContext("--burst-policy " + cmd.burst_policy));
    auto elastic = WorldOf(*in, true);
    if (!elastic.ok()) return fail(elastic.status());
    burst_world = std::move(elastic).value();
    auto run = Run(*in, shapes, *burst_world, *profile, cmd.burst_policy, cmd.seed);
    if (!run.ok()) return fail(run.status());
    s.burst = std::move(run).value();
    s.burst_world = &*burst_world;
    s.burst_base = cmd.burst_policy;
  }
  out << sim::SavingsText(s);
  if (Status w = sim::WriteSavings(s, cmd.out_dir); !w.ok()) return fail.Internal(w);
  out << "\nwrote " << cmd.out_dir << "/savings.txt, savings.html\n" << std::flush;
  return kExitOk;
}

}  // namespace meridian::cli
