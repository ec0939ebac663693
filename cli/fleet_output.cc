#include "cli/fleet_output.h"

#include <bit>

#include "cli/table.h"
#include "core/time.h"

namespace meridian::cli {

namespace {

using nlohmann::json;
using sched::CandidateKind;
using sched::Decision;
using sched::DecisionKind;
using sched::ScoredCandidate;

std::string StatusCodeName(StatusCode c) {
  switch (c) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kUnschedulable: return "unschedulable";
    case StatusCode::kUnresolvable: return "unresolvable";
    case StatusCode::kInternal: return "internal";
  }
  return "internal";
}

json GpuIndexes(uint64_t mask) {
  json out = json::array();
  for (int i = 0; i < 64; ++i) {
    if ((mask >> i) & 1) out.push_back(i);
  }
  return out;
}

// The MIG profile name of the chosen candidate's slice, or "".
std::string MigProfileName(const sched::Fleet& fleet, const sched::Candidate& c) {
  if (c.kind != CandidateKind::kMigSlice) return "";
  const sched::Node& n = fleet.node(c.node);
  const auto& gpu = fleet.catalog().gpus()[n.gpu_model.index()];
  return c.mig_profile < gpu.mig_profiles.size() ? gpu.mig_profiles[c.mig_profile].name : "";
}

json AllocationToJson(const sched::Fleet& fleet, const Decision& d) {
  const Allocation& a = *d.allocation;
  json j = {{"start", FormatRfc3339(a.start)}, {"end", FormatRfc3339(a.end)}};
  json nodes = json::array();
  for (const NodeShare& sh : a.nodes) {
    const sched::Node& n = fleet.node(sh.node);
    json x = {{"node", n.name},
              {"cluster", fleet.cluster(n.cluster).name},
              {"region", fleet.catalog().regions()[n.region.index()].id},
              {"gpu_model", n.gpu_model.valid() ? fleet.catalog().gpus()[n.gpu_model.index()].name
                                                : ""},
              {"gpus", GpuIndexes(sh.gpus)},
              {"vcpus", sh.vcpus},
              {"ram_gib", static_cast<double>(sh.ram_mib) / 1024.0}};
    if (sh.mig) {
      x["mig"] = {{"gpu", sh.mig->gpu},
                  {"profile", d.chosen ? MigProfileName(fleet, d.chosen->candidate) : ""},
                  {"first_slice", sh.mig->shape.start},
                  {"slices", sh.mig->shape.span}};
    }
    nodes.push_back(std::move(x));
  }
  j["nodes"] = std::move(nodes);
  if (a.elastic) {
    const catalog::Offering& o = fleet.catalog().offerings()[a.elastic->offering.index()];
    j["elastic"] = {{"provider", o.provider},
                    {"region", o.region},
                    {"zone", o.zone},
                    {"instance_type", o.instance_type},
                    {"gpu_model", o.gpu_model},
                    {"instances", a.elastic->instances},
                    {"pricing", std::string(ToString(a.elastic->pricing))},
                    {"price_per_hour_usd", a.elastic->price_per_hour.dollars()}};
  }
  return j;
}

json ScoredToJson(const ScoredCandidate& s) {
  json scores = json::array();
  for (const sched::ScoreLine& l : s.scores) {
    scores.push_back({{"plugin", std::string(l.plugin)},
                      {"raw", l.raw},
                      {"normalized", l.normalized},
                      {"weight", l.weight},
                      {"weighted", l.weighted()},
                      {"note", l.note}});
  }
  return {{"where", s.where}, {"total", s.total}, {"scores", std::move(scores)}};
}

json DecisionToJson(const FleetRun& run, const FleetDecision& fd) {
  const Decision& d = fd.decision;
  const JobSpec& job = *fd.job;
  json j = {{"job",
             {{"id", d.job.value()},
              {"name", job.name},
              {"tenant", job.tenant},
              {"kind", std::string(ToString(job.kind))},
              {"priority", std::string(ToString(job.priority))},
              {"preemptible", job.preemptible}}},
            {"decision", std::string(ToString(d.kind))},
            {"status", StatusCodeName(d.status.code())},
            {"status_message", d.status.message()},
            {"start", d.start > 0 ? json(FormatRfc3339(d.start)) : json(nullptr)},
            {"start_reason", d.start_reason},
            {"pricing", d.pricing ? json(std::string(ToString(*d.pricing))) : json(nullptr)},
            {"pricing_reason", d.pricing_reason},
            {"allocation", d.allocation ? AllocationToJson(*run.fleet, d) : json(nullptr)},
            {"chosen", d.chosen ? ScoredToJson(*d.chosen) : json(nullptr)},
            {"runner_up", d.runner_up ? ScoredToJson(*d.runner_up) : json(nullptr)},
            {"candidates", d.candidates},
            {"feasible", d.feasible},
            {"ever_pass", d.ever_pass}};
  json victims = json::array();
  for (JobId v : d.victims) victims.push_back(v.value());
  j["victims"] = std::move(victims);
  json filters = json::array();
  for (const sched::FilterLine& f : d.filters) {
    filters.push_back({{"plugin", f.plugin}, {"rejected", f.rejected}, {"examples", f.examples}});
  }
  j["filters"] = std::move(filters);
  return j;
}

std::string Headline(const FleetRun& run, const FleetDecision& fd) {
  const Decision& d = fd.decision;
  std::string s = std::string(ToString(d.kind));
  if (d.chosen && !d.chosen->where.empty()) s += " on " + d.chosen->where;
  if (d.start > 0 && d.kind != DecisionKind::kReject) s += ", start " + FormatRfc3339(d.start);
  (void)run;
  return s;
}

// The score table: one row per score plugin, the chosen candidate's and the
// runner-up's normalized score x weight.
void PrintScores(const Decision& d, std::ostream& out) {
  if (!d.chosen) return;
  const ScoredCandidate& c = *d.chosen;
  const ScoredCandidate* r = d.runner_up ? &*d.runner_up : nullptr;
  if (c.scores.empty()) {
    out << "  scores: the profile has no score plugins\n";
    return;
  }
  out << "  scores (chosen total " << c.total;
  if (r) out << "; runner-up " << r->where << ", total " << r->total;
  out << "):\n";
  using A = Table::Align;
  Table t({{"plugin"}, {"weight", A::kRight}, {"raw", A::kRight}, {"score", A::kRight},
           {"weighted", A::kRight}, {"runner-up", A::kRight}, {"why (chosen)"}});
  for (size_t i = 0; i < c.scores.size(); ++i) {
    const sched::ScoreLine& l = c.scores[i];
    std::string ru = r && i < r->scores.size() ? std::to_string(r->scores[i].weighted()) : "-";
    t.AddRow({std::string(l.plugin), std::to_string(l.weight), std::to_string(l.raw),
              std::to_string(l.normalized), std::to_string(l.weighted()), ru, l.note});
  }
  t.Print(out, "    ");
  if (r) {  // the runner-up's arithmetic where it differs from the chosen's
    for (size_t i = 0; i < r->scores.size(); ++i) {
      const sched::ScoreLine& l = r->scores[i];
      if (l.note.empty() || (i < c.scores.size() && c.scores[i].note == l.note)) continue;
      out << "    runner-up " << l.plugin << ": " << l.note << "\n";
    }
  }
}

void PrintDecision(const FleetRun& run, const FleetDecision& fd, std::ostream& out) {
  const Decision& d = fd.decision;
  out << "Job " << fd.job->name << " (" << ToString(fd.job->kind) << ", "
      << ToString(fd.job->priority) << (fd.job->preemptible ? ", preemptible" : "")
      << "): " << Headline(run, fd) << "\n";
  if (!d.status.ok()) out << "  status: " << d.status.ToString() << "\n";
  if (d.allocation) {
    const Allocation& a = *d.allocation;
    out << "  allocation: until " << FormatRfc3339(a.end) << " (expected)";
    for (const NodeShare& sh : a.nodes) {
      out << "; " << run.fleet->node(sh.node).name;
      if (sh.gpus) out << " " << std::popcount(sh.gpus) << " GPU(s)";
      if (sh.mig) {
        out << " GPU " << int(sh.mig->gpu) << " MIG "
            << (d.chosen ? MigProfileName(*run.fleet, d.chosen->candidate) : "") << " slices "
            << int(sh.mig->shape.start) << "-" << int(sh.mig->shape.start + sh.mig->shape.span - 1);
      }
      if (sh.vcpus) out << ", " << sh.vcpus << " vCPUs";
    }
    if (a.elastic) {
      const catalog::Offering& o = run.fleet->catalog().offerings()[a.elastic->offering.index()];
      out << "; " << a.elastic->instances << " x " << o.instance_type << " in " << o.region
          << (o.zone.empty() ? "" : "/" + o.zone) << " at " << a.elastic->price_per_hour.ToString()
          << " $/h";
    }
    out << "\n";
  }
  if (!d.start_reason.empty()) out << "  start: " << d.start_reason << "\n";
  if (!d.pricing_reason.empty()) out << "  pricing: " << d.pricing_reason << "\n";
  if (!d.victims.empty()) {
    out << "  preempts:";
    for (JobId v : d.victims) out << " job " << v.value();
    out << "\n";
  }
  PrintScores(d, out);
  if (!d.filters.empty()) {
    out << "  rejections:\n";
    Table t({{"filter"}, {"rejected", Table::Align::kRight}, {"for example"}});
    for (const sched::FilterLine& f : d.filters) {
      t.AddRow({f.plugin, std::to_string(f.rejected), f.examples.empty() ? "" : f.examples[0]});
      for (size_t i = 1; i < f.examples.size(); ++i) t.AddRow({"", "", f.examples[i]});
    }
    t.Print(out, "    ");
  }
  out << "  candidates: " << d.candidates << " examined, " << d.feasible << " feasible"
      << (d.ever_pass ? " (including the can-it-ever-run pass)" : "") << "\n";
}

}  // namespace

json FleetRunToJson(const FleetRun& run) {
  json decisions = json::array();
  for (const FleetDecision& fd : run.decisions) decisions.push_back(DecisionToJson(run, fd));
  json j = {{"profile", run.profile},
            {"profile_source", run.profile_source},
            {"fleet", run.fleet_path},
            {"at", FormatRfc3339(run.at)},
            {"nodes", run.fleet->nodes().size()},
            {"decisions", std::move(decisions)}};
  if (run.mig) {
    const mig::Fragmentation& a = run.mig->structural;
    const mig::Fragmentation& d = run.mig->demand;
    j["mig"] = {{"gpus", a.gpus},
                {"free_memory_slices", a.free_memory},
                {"free_compute_slices", a.free_compute},
                {"unallocatable_memory_slices", a.unallocatable_memory()},
                {"unallocatable_compute_slices", a.unallocatable_compute()},
                {"unallocatable_memory_slices_for_jobs", d.unallocatable_memory()},
                {"unallocatable_compute_slices_for_jobs", d.unallocatable_compute()},
                {"jobs_take_mig", run.mig->has_demand}};
  }
  return j;
}

void PrintFleetRun(const FleetRun& run, std::ostream& out) {
  out << "Fleet " << run.fleet_path << " (" << run.fleet->nodes().size() << " nodes, "
      << run.fleet->clusters().size() << (run.fleet->clusters().size() == 1 ? " cluster" : " clusters")
      << "), profile " << run.profile << ", at "
      << FormatRfc3339(run.at) << "\n\n";
  for (size_t i = 0; i < run.decisions.size(); ++i) {
    if (i > 0) out << "\n";
    PrintDecision(run, run.decisions[i], out);
  }
  if (run.mig) {
    const mig::Fragmentation& a = run.mig->structural;
    const mig::Fragmentation& d = run.mig->demand;
    out << "\nMIG after these placements: " << a.gpus << " GPUs in MIG mode, " << a.free_memory
        << " memory / " << a.free_compute << " compute slices free; unallocatable: "
        << a.unallocatable_memory() << " / " << a.unallocatable_compute() << " by any profile";
    if (run.mig->has_demand) {
      out << ", " << d.unallocatable_memory() << " / " << d.unallocatable_compute()
          << " by the profiles these jobs use";
    } else {
      out << " (no job here takes a MIG slice)";
    }
    out << " (docs/mig.md)\n";
  }
}

json ProfilesToJson(const std::vector<sched::Profile>& profiles) {
  json list = json::array();
  for (const sched::Profile& p : profiles) {
    json plugins = json::array();
    for (const sched::PluginConfig& c : p.plugins) plugins.push_back(c.name);
    list.push_back({{"name", p.name},
                    {"description", p.description},
                    {"source", p.source},
                    {"plugins", std::move(plugins)}});
  }
  return {{"profiles", std::move(list)}};
}

void PrintProfiles(const std::vector<sched::Profile>& profiles, std::ostream& out) {
  Table t({{"PROFILE"}, {"DESCRIPTION"}, {"PLUGINS"}});
  for (const sched::Profile& p : profiles) {
    std::string plugins;
    for (const sched::PluginConfig& c : p.plugins) {
      plugins += (plugins.empty() ? "" : ", ") + c.name;
      if (c.weight_given) plugins += " x" + std::to_string(c.weight);
    }
    t.AddRow({p.name, p.description, plugins});
  }
  t.Print(out);
}

}  // namespace meridian::cli
