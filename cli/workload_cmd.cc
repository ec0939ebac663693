#include "cli/workload_cmd.h"

#include <fstream>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "sim/workload/generator.h"
#include "spec/suggest.h"

namespace meridian::cli {

std::unique_ptr<WorkloadCommands> AddWorkloadCommands(CLI::App& app) {
  auto c = std::make_unique<WorkloadCommands>();
  c->workload = app.add_subcommand("workload", "synthetic workloads for meridian simulate");
  c->workload->require_subcommand(1);
  CLI::App* g = c->generate = c->workload->add_subcommand(
      "generate",
      "write a JSONL trace (docs/trace-format.md) shaped like a public cluster trace: arrivals "
      "with daily and weekly cycles, GPU counts, run times, CPU-only share and tenants, "
      "calibrated as docs/workload.md says; the same --seed gives the same bytes");
  g->add_option("--jobs", c->jobs, "jobs to generate")->capture_default_str();
  g->add_option("--seed", c->seed, "random seed")->capture_default_str();
  g->add_option("--like", c->like, "trace to resemble: philly, helios, pai or acme-seren")
      ->capture_default_str();
  g->add_option("-o,--output", c->output, "file to write (default: standard output)");
  g->add_option("--tenants", c->tenants,
                "N tenants t0..t(N-1) with equal shares (default: the trace's own: Philly and "
                "Helios virtual clusters, else one)");
  g->add_option("--deadline-slack", c->deadline_slack,
                "give each job deadline_s = duration_s x SLACK, rounded up to the hour (>= 1)");
  g->add_option("--preemptible-frac", c->preemptible_frac, "share of jobs marked preemptible (0-1)")
      ->capture_default_str();
  g->add_option("--rate-scale", c->rate_scale, "multiply the trace's arrival rate")
      ->capture_default_str();
  g->add_option("--gpu-model", c->gpu_model, "pin every GPU job to this catalog GPU model");
  return c;
}

std::optional<int> RunWorkloadCommand(const WorkloadCommands& c, std::ostream& out,
                                      std::ostream& err) {
  if (!c.generate->parsed()) return std::nullopt;
  Result<sim::WorkloadLike> like = sim::ParseWorkloadLike(c.like);
  if (!like.ok()) {
    err << "meridian workload generate: " << like.status().message() << "\n";
    return kExitBadInput;
  }
  sim::WorkloadOptions o;
  o.jobs = c.jobs;
  o.seed = c.seed;
  o.like = *like;
  o.tenants = c.tenants;
  o.deadline_slack = c.deadline_slack;
  o.preemptible_frac = c.preemptible_frac;
  o.rate_scale = c.rate_scale;
  o.gpu_model = c.gpu_model;
  if (Status s = sim::CheckWorkloadOptions(o); !s.ok()) {
    err << "meridian workload generate: " << s.message() << "\n";
    return kExitBadInput;
  }
  if (!o.gpu_model.empty()) {
    Result<std::shared_ptr<const catalog::Catalog>> cat = catalog::Catalog::LoadEmbedded();
    if (!cat.ok()) {
      err << "meridian workload generate: " << cat.status().message() << "\n";
      return kExitInternal;
    }
    if (std::optional<std::string> why = spec::UnknownGpuModel(**cat, o.gpu_model)) {
      err << "meridian workload generate: --gpu-model: " << *why << "\n";
      return kExitBadInput;
    }
  }
  std::ofstream file;
  if (!c.output.empty()) {
    file.open(c.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      err << "meridian workload generate: -o: \"" << c.output << "\" cannot be written\n";
      return kExitBadInput;
    }
  }
  Status s = sim::GenerateWorkload(o, c.output.empty() ? out : file);
  if (s.ok() && !c.output.empty()) {
    file.close();
    if (!file) s = Status::Internal("cannot write " + c.output);
  }
  if (!s.ok()) {
    err << "meridian workload generate: " << s.message() << "\n";
    return s.code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitInternal;
  }
  return kExitOk;
}

}  // namespace meridian::cli
