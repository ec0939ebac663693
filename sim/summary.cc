// Summarize (engine.h): a run's outcomes as summary.json's figures; and
// SetCommonFigures (report.h): each run's figures over the jobs all finished.
#include <algorithm>

#include "sim/engine.h"
#include "sim/report.h"

namespace meridian::sim {

namespace {

// Reservations are paid for the whole simulated window, used or not: per
// cluster, the committed rate x its GPUs x the window, less what jobs were
// charged for running there.
struct Reserved {
  int64_t idle_micros = 0;
  std::vector<int64_t> idle_by_region;
};

Reserved ReservedIdle(const World& world, const PolicyRun& run) {
  Reserved r;
  const sched::Fleet& fleet = *world.fleet;
  const double window_h = static_cast<double>(run.end_s) / 3600.0;
  for (const sched::Cluster& c : fleet.clusters()) {
    if (c.pricing != CapacityPricing::kReserved) continue;
    int64_t gpus = 0;
    for (uint32_t i = 0; i < c.node_count; ++i) {
      gpus += fleet.node(NodeId(c.first_node.value() + i)).gpus;
    }
    const int64_t committed = c.gpu_hour.Times(static_cast<double>(gpus) * window_h).micros();
    const int64_t idle = std::max<int64_t>(0, committed - run.cost_by_cluster[c.id.index()]);
    r.idle_micros += idle;
    if (r.idle_by_region.size() <= c.region.index()) r.idle_by_region.resize(c.region.index() + 1, 0);
    r.idle_by_region[c.region.index()] += idle;
  }
  return r;
}

// Service-minutes met over service-minutes due (sim/service_slo.h);
// nullopt without services.
std::optional<double> ServiceMinutesMet(const std::vector<ServiceMinutes>& services) {
  int64_t due = 0, met = 0;
  for (const ServiceMinutes& m : services) {
    due += m.minutes;
    met += m.met;
  }
  if (services.empty() || due <= 0) return std::nullopt;
  return static_cast<double>(met) / static_cast<double>(due);
}

std::vector<int64_t> Submissions(const Trace& trace) {
  std::vector<int64_t> out;
  out.reserve(trace.jobs.size());
  for (const TraceJob& j : trace.jobs) out.push_back(j.submit_s);
  return out;
}

}  // namespace

Summary Summarize(const Trace& trace, const World& world, const PolicyRun& run) {
  Summary s;
  s.policy = run.policy;
  s.jobs = static_cast<int64_t>(trace.jobs.size());
  s.events = run.events;
  s.replica_reclaims = run.replica_reclaims;
  s.replaced_on_spot = run.replaced_on_spot;
  s.replaced_on_demand = run.replaced_on_demand;
  s.decisions = run.decisions;
  const UnixSeconds start = world.market->options().start;
  std::vector<int64_t> jct;
  int64_t waits = 0, started = 0, deadline_met = 0, gpu_ms = 0, lost_ms = 0, move_ms = 0;
  int64_t first_submit = INT64_MAX, last_end = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& tj = trace.jobs[i];
    const JobOutcome& o = run.jobs[i];
    const JobSpec& spec = *trace.specs[tj.spec];
    first_submit = std::min(first_submit, tj.submit_s);
    s.jobs_rejected += o.state == JobState::kRejected ? 1 : 0;
    s.jobs_unfinished += o.state == JobState::kUnfinished ? 1 : 0;
    if (o.start_s >= 0) {
      waits += o.start_s - tj.submit_s;
      ++started;
    }
    const bool done = o.state == JobState::kDone;
    if (done) {
      ++s.jobs_done;
      jct.push_back(o.JctS(tj.submit_s));
      last_end = std::max(last_end, o.end_s);
    }
    if (std::optional<int64_t> d = DeadlineS(tj, spec, start)) {
      ++s.deadline_jobs;
      deadline_met += done && o.end_s <= *d ? 1 : 0;
    }
    s.cost_micros += o.cost_micros;
    s.co2_g += o.co2_g;
    s.preemptions += o.preemptions;
    s.flex_cancels += o.flex_cancels;
    gpu_ms += o.gpu_ms;
    lost_ms += o.lost_gpu_ms;
    s.migrations += o.moves;
    s.migration_cost_micros += o.move_cost_micros;
    move_ms += o.move_gpu_ms;
  }
  std::sort(jct.begin(), jct.end());
  if (!jct.empty()) {
    double sum = 0;
    for (int64_t v : jct) sum += static_cast<double>(v);
    s.avg_jct_s = sum / static_cast<double>(jct.size());
    s.p50_jct_s = Percentile(jct, 50);
    s.p99_jct_s = Percentile(jct, 99);
    s.makespan_s = last_end - first_submit;
  }
  s.avg_wait_s = started > 0 ? static_cast<double>(waits) / static_cast<double>(started) : 0;
  s.gpu_hours = static_cast<double>(gpu_ms) / 1000.0 / 3600.0;
  s.lost_gpu_hours = static_cast<double>(lost_ms) / 1000.0 / 3600.0;
  s.migration_gpu_hours = static_cast<double>(move_ms) / 1000.0 / 3600.0;
  if (s.deadline_jobs > 0) {
    s.deadline_met_frac = static_cast<double>(deadline_met) / static_cast<double>(s.deadline_jobs);
  }
  s.slo_met_frac = ServiceMinutesMet(run.services);
  s.mig_drains = run.mig.drains;
  s.mig_drain_gpu_hours = static_cast<double>(run.mig.drain_gpu_s) / 3600.0;
  if (run.mig.samples > 0) {
    const double n = static_cast<double>(std::max<int64_t>(1, run.mig.span_s));
    s.mig_free_slices = static_cast<double>(run.mig.free_slice_s) / n;
    s.mig_unallocatable_slices = static_cast<double>(run.mig.unallocatable_any_s) / n;
    s.mig_unallocatable_demand_slices = static_cast<double>(run.mig.unallocatable_demand_s) / n;
  }

  // Fleet utilization over the window the trace spans, from its first
  // submission to the last event.
  int64_t capacity = 0;
  for (const sched::Node& n : world.fleet->nodes()) capacity += n.gpus;
  const int64_t window = run.end_s - (first_submit == INT64_MAX ? 0 : first_submit);
  if (capacity > 0 && window > 0) {
    s.utilization = static_cast<double>(run.fleet_gpu_ms) / 1000.0 /
                    (static_cast<double>(capacity) * static_cast<double>(window));
  }

  const Reserved reserved = ReservedIdle(world, run);
  s.reserved_idle_micros = reserved.idle_micros;
  s.cost_micros += reserved.idle_micros;
  s.cost_by_pricing = run.cost_by_pricing;
  s.cost_by_pricing[static_cast<size_t>(PayKind::kReserved)] += reserved.idle_micros;
  const auto& regions = world.catalog->regions();
  const size_t n = std::max(run.cost_by_region.size(), reserved.idle_by_region.size());
  for (size_t r = 0; r < n; ++r) {
    int64_t v = (r < run.cost_by_region.size() ? run.cost_by_region[r] : 0) +
                (r < reserved.idle_by_region.size() ? reserved.idle_by_region[r] : 0);
    if (v != 0 || (r < run.cost_by_region.size() && run.co2_by_region[r] != 0)) {
      s.cost_by_region.push_back({regions[r].id, v});
    }
  }
  std::sort(s.cost_by_region.begin(), s.cost_by_region.end());
  s.common = CommonToAll({&run.jobs}, Submissions(trace)).front();
  s.notes = run.notes;
  return s;
}

void SetCommonFigures(Simulation& sim) {
  std::vector<const std::vector<JobOutcome>*> runs;
  for (const PolicyRun& r : sim.runs) runs.push_back(&r.jobs);
  const std::vector<CommonFigures> common = CommonToAll(runs, Submissions(*sim.trace));
  for (size_t p = 0; p < common.size() && p < sim.summaries.size(); ++p) sim.summaries[p].common = common[p];
}

}  // namespace meridian::sim
