#include "cli/simulate_cmd.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/spot_map.h"
#include "cli/table.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/spot_traces.h"
#include "sim/trace.h"
#include "spec/fleet.h"

namespace meridian::cli {

namespace {

// A progress bar on stderr for runs that last more than a second, only when
// stderr is a terminal.
class ProgressBar {
 public:
  ProgressBar(std::ostream& err, bool enabled, std::string label)
      : err_(err), enabled_(enabled), label_(std::move(label)),
        begin_(std::chrono::steady_clock::now()) {}
  ~ProgressBar() {
    if (shown_) err_ << "\r\033[K" << std::flush;
  }
  void Update(const sim::Progress& p) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!shown_ && now - begin_ < std::chrono::seconds(1)) return;
    if (shown_ && now - last_ < std::chrono::milliseconds(100) && p.jobs_ended < p.jobs) return;
    shown_ = true;
    last_ = now;
    const double f = p.jobs > 0 ? static_cast<double>(p.jobs_ended) / static_cast<double>(p.jobs) : 1;
    const int width = 30, fill = static_cast<int>(f * width);
    err_ << "\r" << label_ << " [" << std::string(static_cast<size_t>(fill), '#')
         << std::string(static_cast<size_t>(width - fill), ' ') << "] " << Fixed(f * 100, 0)
         << "% " << p.jobs_ended << "/" << p.jobs << " jobs, day " << Fixed(static_cast<double>(p.sim_s) / 86400, 1)
         << std::flush;
  }

 private:
  std::ostream& err_;
  bool enabled_;
  std::string label_;
  std::chrono::steady_clock::time_point begin_, last_;
  bool shown_ = false;
};

std::string Pct(const std::optional<double>& v) { return v ? Fixed(*v * 100, 1) + "%" : "-"; }

// Several policies: their figures over the jobs every one of them finished.
void PrintCommon(const sim::Simulation& s, std::ostream& out) {
  if (s.summaries.size() < 2) return;
  out << "\nOver the " << s.summaries.front().common.jobs << " jobs every policy finished:\n";
  Table t({{"POLICY"}, {"AVG JCT h", Table::Align::kRight}, {"AVG WAIT h", Table::Align::kRight},
           {"COST $", Table::Align::kRight}, {"CO2 kg", Table::Align::kRight}});
  for (const sim::Summary& m : s.summaries) {
    t.AddRow({m.policy, Fixed(m.common.avg_jct_s / 3600, 2), Fixed(m.common.avg_wait_s / 3600, 2),
              Fixed(static_cast<double>(m.common.cost_micros) / 1e6, 2),
              Fixed(static_cast<double>(m.common.co2_g) / 1000, 1)});
  }
  t.Print(out);
}

void PrintComparison(const sim::Simulation& s, const std::vector<double>& wall_s, std::ostream& out) {
  Table t({{"POLICY"}, {"DONE", Table::Align::kRight}, {"REJECTED", Table::Align::kRight},
           {"UNFINISHED", Table::Align::kRight}, {"AVG JCT h", Table::Align::kRight},
           {"P99 JCT h", Table::Align::kRight}, {"AVG WAIT h", Table::Align::kRight},
           {"COST $", Table::Align::kRight}, {"CO2 kg", Table::Align::kRight},
           {"DEADLINES", Table::Align::kRight}, {"PREEMPT", Table::Align::kRight},
           {"UTIL", Table::Align::kRight}, {"WALL s", Table::Align::kRight}});
  for (size_t i = 0; i < s.summaries.size(); ++i) {
    const sim::Summary& m = s.summaries[i];
    t.AddRow({m.policy, std::to_string(m.jobs_done), std::to_string(m.jobs_rejected),
              std::to_string(m.jobs_unfinished), Fixed(m.avg_jct_s / 3600, 2),
              Fixed(m.p99_jct_s / 3600, 2), Fixed(m.avg_wait_s / 3600, 2),
              Fixed(static_cast<double>(m.cost_micros) / 1e6, 2),
              Fixed(static_cast<double>(m.co2_g) / 1000, 1), Pct(m.deadline_met_frac),
              std::to_string(m.preemptions), Pct(m.utilization), Fixed(wall_s[i], 2)});
  }
  t.Print(out);
  PrintCommon(s, out);
  // MIG fleets: drains and fragmentation (docs/mig.md).
  for (const sim::Summary& m : s.summaries) {
    if (!m.mig_free_slices) continue;
    out << "MIG " << m.policy << ": " << m.mig_drains << " drains (" << Fixed(m.mig_drain_gpu_hours, 2)
        << " GPU-h lost); mean free slices " << Fixed(*m.mig_free_slices, 1) << ", unallocatable "
        << Fixed(*m.mig_unallocatable_slices, 1) << " by any profile, "
        << Fixed(*m.mig_unallocatable_demand_slices, 1) << " by the waiting jobs' profiles\n";
  }
}

}  // namespace

int SimulateExitCode(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kNotFound
             ? kExitBadInput
             : kExitInternal;
}

int CommandFailure::operator()(const Status& s) const {
  err << "meridian " << command << ": " << s.message() << "\n";
  return SimulateExitCode(s);
}

int CommandFailure::Internal(const Status& s) const {
  err << "meridian " << command << ": " << s.message() << "\n";
  return kExitInternal;
}

Result<NamedProfiles> LoadProfiles(const std::string& list) {
  NamedProfiles profiles;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty()) continue;
    auto p = LoadProfile(name);
    if (!p.ok()) return p.status().WithContext("--policy " + name);
    profiles.emplace_back(name, std::move(p).value());
  }
  if (profiles.empty()) return Status::Invalid("--policy: no policy named");
  return profiles;
}

Result<sim::Trace> ReadTraceFlags(const TraceFlags& flags, const catalog::Catalog& catalog) {
  auto format = sim::ParseTraceFormat(flags.format);
  if (!format.ok()) return format.status();
  sim::TraceOptions options;
  options.nodes_path = flags.nodes;
  options.gpu_map_path = flags.gpu_map;
  options.time_zone = flags.tz;
  return sim::ReadTrace(flags.trace, *format, catalog, options);
}

Result<std::shared_ptr<const sched::Fleet>> BuildFleet(
    const FleetSpec& spec, const std::shared_ptr<const catalog::Catalog>& catalog) {
  if (Status v = spec::ValidateFleetAgainstCatalog(spec, *catalog); !v.ok()) return v;
  return sched::Fleet::Build(spec, catalog);
}

sim::World MakeWorld(const std::shared_ptr<const catalog::Catalog>& catalog,
                     std::shared_ptr<const sched::Fleet> fleet, const sim::ReplayMarketOptions& market) {
  sim::World world;
  world.catalog = catalog;
  world.fleet = std::move(fleet);
  world.market = std::make_shared<sim::ReplayMarket>(catalog, sim::EmbeddedSpotTraces(), market);
  if (world.fleet->elastic()) world.elastic = std::make_shared<sched::ElasticIndex>(*catalog);
  return world;
}

std::unique_ptr<SimulateCommand> AddSimulateCommand(CLI::App& app) {
  auto cmd = std::make_unique<SimulateCommand>();
  CLI::App* sub = app.add_subcommand(
      "simulate", "replay a trace under each policy and compare cost, time, deadlines and carbon");
  cmd->app = sub;
  sub->add_option("--trace", cmd->trace, "trace file (docs/trace-format.md)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--format", cmd->format, "trace format")
      ->required()
      ->check(CLI::IsMember({"openb", "dlrm", "jsonl", "sacct", "k8s-jobs"}));
  sub->add_option("--nodes", cmd->nodes, "openb node list (default: the one beside the pod list)")
      ->check(CLI::ExistingFile);
  sub->add_option("--fleet", cmd->fleet,
                  "fleet file (docs/fleet.md); default: the trace's own nodes (openb), else the "
                  "catalog's elastic capacity only")
      ->check(CLI::ExistingFile);
  sub->add_option("--policy", cmd->policies,
                  "comma-separated policies: shipped profiles (meridian profiles) or profile files")
      ->capture_default_str();
  sub->add_option("--seed", cmd->seed, "seed of the scheduler and the market's draws")
      ->capture_default_str();
  sub->add_option("--out", cmd->out_dir, "write summary.json, jobs.csv and report.html here");
  sub->add_option("--start", cmd->start, "the trace's second 0, RFC 3339 (carbon hours, prices)")
      ->capture_default_str();
  sub->add_option("--flex-wait-mean-h", cmd->flex_wait_mean_h,
                  "mean flex-start wait in hours (default: the catalog's expected wait)");
  sub->add_flag("--no-mig-drains", cmd->no_mig_drains,
                "never drain running MIG instances on repartitionable clusters (docs/mig.md)");
  sub->add_flag("--no-migrations", cmd->no_migrations,
                "never move running jobs at their checkpoints (the profile's migrate plugin; "
                "docs/simulate.md, \"Moves at checkpoints\")");
  sub->add_option("--node-mtbf-h", cmd->node_mtbf_h,
                  "mean hours between failures of one fleet node (0: none); a failed run "
                  "restarts from its last checkpoint")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--spot-traces", cmd->spot_traces,
                  "your own spot history: a map of catalog offerings to SkyPilot spot-traces JSON "
                  "files (docs/simulate.md, \"Your own spot history\")");
  sub->add_option("--tz", cmd->tz,
                  "sacct: the IANA time zone its local times are in (Europe/Berlin, UTC); "
                  "default: the machine's");
  sub->add_option("--gpu-map", cmd->gpu_map,
                  "sacct, k8s-jobs: map of GRES types, partitions (partition:NAME) and GPU product "
                  "labels to catalog models (docs/trace-format.md)")
      ->check(CLI::ExistingFile);
  sub->add_flag("-q,--quiet", cmd->quiet, "no progress bar; sacct, k8s-jobs: no notes on how the trace was read");
  return cmd;
}

std::optional<int> RunSimulateCommand(const SimulateCommand& cmd, const std::string& catalog_dir,
                                      std::ostream& out, std::ostream& err) {
  if (!cmd.app || !cmd.app->parsed()) return std::nullopt;
  const CommandFailure fail{err, "simulate"};
  auto start = ParseRfc3339(cmd.start);
  if (!start.ok()) return fail(start.status().WithContext("--start"));
  auto cat = catalog_dir.empty() ? catalog::Catalog::LoadEmbedded()
                                 : catalog::Catalog::LoadFromDirectory(catalog_dir);
  if (!cat.ok()) return fail(cat.status().WithContext("catalog"));
  auto profiles = LoadProfiles(cmd.policies);
  if (!profiles.ok()) return fail(profiles.status());
  auto trace = ReadTraceFlags({cmd.trace, cmd.format, cmd.nodes, cmd.gpu_map, cmd.tz}, **cat);
  if (!trace.ok()) return fail(trace.status());
  // A team's own history: what was left out and how its GPUs were read is
  // part of the answer, so it is said up front (every format's notes are in
  // report.html).
  const bool history = trace->format == sim::TraceFormat::kSacct || trace->format == sim::TraceFormat::kK8sJobs;
  if (history && !cmd.quiet) {
    for (const std::string& n : trace->notes) err << "trace: " << n << "\n";
  }

  sim::Simulation result;
  FleetSpec fleet_spec;
  if (!cmd.fleet.empty()) {
    auto f = spec::LoadFleetFile(cmd.fleet);
    if (!f.ok()) return fail(f.status());
    fleet_spec = std::move(f).value();
    result.fleet_source = cmd.fleet;
  } else if (trace->fleet) {
    fleet_spec = *trace->fleet;
    result.fleet_source = "the trace's node list";
  } else {
    fleet_spec.elastic = true;
    result.fleet_source = "the catalog's elastic capacity";
  }
  auto fleet = BuildFleet(fleet_spec, *cat);
  if (!fleet.ok()) return fail(fleet.status());
  if ((*fleet)->elastic() && !cmd.fleet.empty()) result.fleet_source += " plus elastic capacity";

  sim::ReplayMarketOptions mo;
  mo.start = *start;
  mo.seed = cmd.seed;
  mo.flex_wait_mean_h = cmd.flex_wait_mean_h;
  if (!cmd.spot_traces.empty()) {
    auto map = LoadSpotMap(cmd.spot_traces, **cat);
    if (!map.ok()) return fail(map.status());
    mo.other_spot = map->other_spot;
    mo.mapped = std::move(map->mapped);
  }
  const sim::World world = MakeWorld(*cat, *fleet, mo);
  const sim::JobShapes shapes = sim::JobShapes::Make(*trace, **cat);
  result.trace = &*trace;
  result.world = &world;
  result.seed = cmd.seed;

  const bool tty = !cmd.quiet && &err == &std::cerr && isatty(STDERR_FILENO);
  std::vector<double> wall;
  for (const auto& [name, profile] : *profiles) {
    ProgressBar bar(err, tty, "simulate " + name);
    sim::EngineOptions eo;
    eo.seed = cmd.seed;
    eo.node_mtbf_h = cmd.node_mtbf_h;
    eo.mig_repartition = !cmd.no_mig_drains;
    eo.migrations = !cmd.no_migrations;
    eo.on_progress = [&](const sim::Progress& p) { bar.Update(p); };
    const auto t0 = std::chrono::steady_clock::now();
    auto run = sim::Simulate(*trace, shapes, world, profile, name, eo);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!run.ok()) return fail(run.status().WithContext("--policy " + name));
    result.summaries.push_back(sim::Summarize(*trace, world, *run));
    result.runs.push_back(std::move(run).value());
  }
  sim::SetCommonFigures(result);
  PrintComparison(result, wall, out);
  if (!cmd.out_dir.empty()) {
    if (Status s = sim::WriteSimulation(result, cmd.out_dir); !s.ok()) return fail.Internal(s);
    out << "\nwrote " << cmd.out_dir << "/summary.json, jobs.csv, report.html\n";
  }
  out << std::flush;
  err << sim::RejectionWarnings(result);
  return kExitOk;
}

}  // namespace meridian::cli
