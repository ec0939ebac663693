#include "control/metrics.h"

#include <cmath>
#include <cstdio>

namespace meridian::control {

namespace {

std::string Num(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", v);
  }
  return buf;
}

void Counter(const std::string& name, const std::string& help, double v, std::string* out) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n";
  *out += name + " " + Num(v) + "\n";
}

}  // namespace

Histogram::Histogram() {
  for (auto& c : counts_) c.store(0);
}

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::llround(seconds * 1e9)), std::memory_order_relaxed);
}

void Histogram::Render(const std::string& name, const std::string& help, std::string* out) const {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cum = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cum += counts_[i].load(std::memory_order_relaxed);
    *out += name + "_bucket{le=\"" + Num(kBounds[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  cum += counts_[kBounds.size()].load(std::memory_order_relaxed);
  *out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cum) + "\n";
  *out += name + "_sum " + Num(static_cast<double>(sum_ns_.load()) / 1e9) + "\n";
  *out += name + "_count " + std::to_string(count_.load()) + "\n";
}

bool IsPerJobLine(const GaugeLine& line) {
  return line.labels.starts_with("job=\"") || line.labels.find(",job=\"") != std::string::npos;
}

std::string RenderMetrics(const Metrics& m, const std::vector<GaugeFamily>& gauges) {
  std::string out;
  Counter("meridian_submissions_total", "Jobs accepted (durable) through POST /v1/jobs.",
          static_cast<double>(m.submissions.load()), &out);
  Counter("meridian_submissions_replayed_total",
          "Submissions answered from an earlier one with the same Idempotency-Key.",
          static_cast<double>(m.submissions_replayed.load()), &out);
  out += "# HELP meridian_decisions_total Scheduling decisions by kind.\n"
         "# TYPE meridian_decisions_total counter\n";
  for (size_t i = 0; i < m.decisions.size(); ++i) {
    out += std::string("meridian_decisions_total{kind=\"") + kDecisionKinds[i] + "\"} " +
           std::to_string(m.decisions[i].load()) + "\n";
  }
  Counter("meridian_kept_verdicts_total",
          "Waiting jobs whose verdict was kept: nothing it depends on changed since it was decided.",
          static_cast<double>(m.kept_verdicts.load()), &out);
  m.decision_seconds.Render("meridian_decision_seconds", "Time of one scheduling decision.", &out);
  m.cycle_seconds.Render("meridian_reconcile_cycle_seconds", "Time of one reconcile cycle.", &out);
  m.submit_seconds.Render("meridian_submit_seconds",
                          "Time to make a submission durable (parse, validate, commit).", &out);
  Counter("meridian_preemptions_total", "Attempts stopped to make room for other jobs.",
          static_cast<double>(m.preemptions.load()), &out);
  Counter("meridian_moves_total",
          "Attempts stopped at a checkpoint to move the job to a better place (migrate).",
          static_cast<double>(m.moves.load()), &out);
  Counter("meridian_launches_total", "Attempts launched through the backend.",
          static_cast<double>(m.launches.load()), &out);
  Counter("meridian_launch_retries_total",
          "Launches that failed transiently and were tried again (backend_retry).",
          static_cast<double>(m.launch_retries.load()), &out);
  Counter("meridian_stop_retries_total",
          "Stops (cancels, preemptions) that failed transiently and were sent again.",
          static_cast<double>(m.stop_retries.load()), &out);
  Counter("meridian_spend_usd_total", "Spend of finished attempts so far, US dollars.",
          static_cast<double>(m.spend_micro_usd.load()) / 1e6, &out);
  Counter("meridian_co2_grams_total", "CO2 of finished attempts so far, grams.",
          static_cast<double>(m.co2_mg.load()) / 1e3, &out);
  if (m.mig_gpus.load() > 0) {
    out += "# HELP meridian_mig_slices MIG memory slices after the last scheduling cycle: free, "
           "unallocatable by any profile, unallocatable by the queue's profiles.\n"
           "# TYPE meridian_mig_slices gauge\n";
    out += "meridian_mig_slices{kind=\"free\"} " + Num(static_cast<double>(m.mig_free_slices.load())) + "\n";
    out += "meridian_mig_slices{kind=\"unallocatable\"} " +
           Num(static_cast<double>(m.mig_unallocatable_slices.load())) + "\n";
    out += "meridian_mig_slices{kind=\"unallocatable_for_queue\"} " +
           Num(static_cast<double>(m.mig_unallocatable_demand_slices.load())) + "\n";
  }
  for (const GaugeFamily& g : gauges) {
    out += "# HELP " + g.name + " " + g.help + "\n# TYPE " + g.name + " gauge\n";
    for (const GaugeLine& l : g.lines) {
      out += g.name + (l.labels.empty() ? "" : "{" + l.labels + "}") + " " + Num(l.value) + "\n";
    }
  }
  return out;
}

}  // namespace meridian::control
