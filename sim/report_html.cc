// ReportHtml (report.h): one page, inline CSS and SVG, no script and no
// network, so it opens from disk anywhere.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "core/time.h"
#include "sim/html.h"
#include "sim/report.h"
#include "sim/svg.h"

namespace meridian::sim {

namespace html {

namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1120px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 9px;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f6f6f6}
.meta{color:#555}.notes{font-size:12px;color:#555;white-space:pre-wrap}
.chart{display:block;margin:8px 0;max-width:100%;height:auto}
.grid2{display:flex;flex-wrap:wrap;gap:8px}
)";

}  // namespace

std::string PageHead(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         svg::Escape(title) + "</title><style>" + kStyle + "</style></head><body>\n";
}

std::string Fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Pct(const std::optional<double>& v) { return v ? Fmt(*v * 100, 1) + "%" : "-"; }

std::string Duration(double s) {
  if (s < 120) return Fmt(s, 0) + " s";
  if (s < 7200) return Fmt(s / 60, 1) + " min";
  if (s < 172800) return Fmt(s / 3600, 1) + " h";
  return Fmt(s / 86400, 1) + " d";
}

}  // namespace html

namespace {

using svg::Escape;

using html::Duration;
using html::Fmt;
using html::Pct;

std::string SummaryTable(const Simulation& sim) {
  std::string t =
      "<table><tr><th>policy</th><th>done</th><th>rejected</th><th>unfinished</th><th>avg JCT</th>"
      "<th>p50 JCT</th><th>p99 JCT</th><th>avg wait</th><th>makespan</th><th>cost $</th>"
      "<th>CO2 kg</th><th>GPU-h</th><th>deadlines met</th><th>SLO met</th><th>preemptions</th>"
      "<th>lost GPU-h</th><th>utilization</th></tr>";
  for (const Summary& s : sim.summaries) {
    t += "<tr><td>" + Escape(s.policy) + "</td><td>" + std::to_string(s.jobs_done) + "</td><td>" +
         std::to_string(s.jobs_rejected) + "</td><td>" + std::to_string(s.jobs_unfinished) +
         "</td><td>" + Duration(s.avg_jct_s) + "</td><td>" + Duration(s.p50_jct_s) + "</td><td>" +
         Duration(s.p99_jct_s) + "</td><td>" + Duration(s.avg_wait_s) + "</td><td>" +
         Duration(static_cast<double>(s.makespan_s)) + "</td><td>" +
         Fmt(static_cast<double>(s.cost_micros) / 1e6, 2) + "</td><td>" +
         Fmt(static_cast<double>(s.co2_g) / 1000, 1) + "</td><td>" + Fmt(s.gpu_hours, 1) +
         "</td><td>" + Pct(s.deadline_met_frac) + "</td><td>" + Pct(s.slo_met_frac) + "</td><td>" +
         std::to_string(s.preemptions) + "</td><td>" + Fmt(s.lost_gpu_hours, 1) + "</td><td>" +
         Pct(s.utilization) + "</td></tr>";
  }
  t += "</table>";
  // MIG fleets: drains and fragmentation (docs/mig.md).
  std::string mig;
  for (const Summary& s : sim.summaries) {
    if (!s.mig_free_slices) continue;
    mig += "<tr><td>" + Escape(s.policy) + "</td><td>" + std::to_string(s.mig_drains) + "</td><td>" +
           Fmt(s.mig_drain_gpu_hours, 2) + "</td><td>" + Fmt(*s.mig_free_slices, 1) + "</td><td>" +
           Fmt(*s.mig_unallocatable_slices, 1) + "</td><td>" +
           Fmt(*s.mig_unallocatable_demand_slices, 1) + "</td></tr>";
  }
  if (!mig.empty()) {
    t += "<h3>MIG</h3><table><tr><th>policy</th><th>drains</th><th>drain GPU-h lost</th>"
         "<th>mean free slices</th><th>unallocatable (any profile)</th>"
         "<th>unallocatable (waiting jobs)</th></tr>" + mig + "</table>";
  }
  return t;
}

// The figures over the jobs every policy finished: the same job set for each.
std::string CommonTable(const Simulation& sim) {
  if (sim.summaries.size() < 2) return "";
  std::string t = "<h3>Over the " + std::to_string(sim.summaries.front().common.jobs) +
                  " jobs every policy finished</h3><table><tr><th>policy</th><th>jobs</th>"
                  "<th>avg JCT</th><th>avg wait</th><th>cost $</th><th>CO2 kg</th></tr>";
  for (const Summary& s : sim.summaries) {
    const CommonFigures& c = s.common;
    t += "<tr><td>" + Escape(s.policy) + "</td><td>" + std::to_string(c.jobs) + "</td><td>" +
         Duration(c.avg_jct_s) + "</td><td>" + Duration(c.avg_wait_s) + "</td><td>" +
         Fmt(static_cast<double>(c.cost_micros) / 1e6, 2) + "</td><td>" +
         Fmt(static_cast<double>(c.co2_g) / 1000, 1) + "</td></tr>";
  }
  return t + "</table>";
}

// Where the first policy spent more than another: the deadlines that bought.
std::string ExtraSpendTable(const Simulation& sim) {
  const std::vector<ExtraSpend> all = WhatExtraSpendBought(sim);
  if (all.empty()) return "";
  const std::string& first = sim.runs.front().policy;
  auto names = [&](const std::vector<size_t>& jobs) {
    std::string s;
    for (size_t k = 0; k < jobs.size() && k < 5; ++k) {
      s += (k ? ", " : " (") + sim.trace->jobs[jobs[k]].name;
    }
    if (jobs.size() > 5) s += ", ...";
    return jobs.empty() ? s : Escape(s) + ")";
  };
  std::string t = "<h3>What " + Escape(first) + "'s extra spend bought</h3><table><tr><th>against</th>"
                  "<th>extra $</th><th>deadlines met only by " + Escape(first) + "</th>"
                  "<th>deadlines met only by the other</th></tr>";
  for (const ExtraSpend& e : all) {
    t += "<tr><td>" + Escape(sim.runs[e.other].policy) + "</td><td>" +
         Fmt(static_cast<double>(e.extra_cost_micros) / 1e6, 2) + "</td><td>" +
         std::to_string(e.met_only_first.size()) + names(e.met_only_first) + "</td><td>" +
         std::to_string(e.met_only_other.size()) + names(e.met_only_other) + "</td></tr>";
  }
  return t + "</table>";
}

// Policies that rejected more than 1% of the jobs, with the reasons in full.
std::string Rejections(const Simulation& sim) {
  const std::string w = RejectionWarnings(sim);
  return w.empty() ? "" : "<pre class=\"notes\">" + Escape(w) + "</pre>";
}

std::string CostAndCarbon(const Simulation& sim) {
  svg::BarChart cost{"Cost per policy, by pricing model", "$", {}, {}, {}};
  for (int k = 0; k < kPayKinds; ++k) cost.segments.emplace_back(ToString(static_cast<PayKind>(k)));
  svg::BarChart co2{"CO2 per policy", "kg", {}, {"CO2"}, {}};
  for (const Summary& s : sim.summaries) {
    cost.rows.push_back(s.policy);
    std::vector<double> v;
    for (int64_t m : s.cost_by_pricing) v.push_back(static_cast<double>(m) / 1e6);
    cost.values.push_back(v);
    co2.rows.push_back(s.policy);
    co2.values.push_back({static_cast<double>(s.co2_g) / 1000.0});
  }
  return svg::Render(cost) + svg::Render(co2);
}

std::string JctCdf(const Simulation& sim) {
  svg::LineChart c{"Job completion time, CDF", "JCT (seconds, log scale)", "share of jobs done", true, 0, {}};
  for (size_t p = 0; p < sim.runs.size(); ++p) {
    std::vector<int64_t> jct;
    for (size_t i = 0; i < sim.runs[p].jobs.size(); ++i) {
      int64_t v = sim.runs[p].jobs[i].JctS(sim.trace->jobs[i].submit_s);
      if (v >= 0) jct.push_back(std::max<int64_t>(v, 1));
    }
    std::sort(jct.begin(), jct.end());
    svg::Line l{sim.runs[p].policy, {}, svg::Color(p), false};
    const size_t n = jct.size(), points = std::min<size_t>(n, 200);
    for (size_t k = 1; k <= points; ++k) {
      const size_t i = k * n / points - 1;
      l.points.push_back({static_cast<double>(jct[i]), static_cast<double>(i + 1) / static_cast<double>(n)});
    }
    c.lines.push_back(std::move(l));
  }
  return svg::Render(c);
}

// Hours or days on the x axis, whichever reads better for the span.
struct TimeAxis {
  double unit_s;
  std::string label;
};
TimeAxis AxisFor(const Simulation& sim) {
  int64_t end = 0;
  for (const PolicyRun& r : sim.runs) end = std::max(end, r.end_s);
  return end > 4 * 86400 ? TimeAxis{86400, "days from the trace's start"}
                         : TimeAxis{3600, "hours from the trace's start"};
}

svg::Line SeriesLine(const PolicyRun& run, Timeline::Series s, double scale, size_t color,
                     const TimeAxis& axis) {
  svg::Line l{run.policy, {}, svg::Color(color), false};
  const Timeline& t = run.timeline;
  for (size_t i = 0; i < t.buckets(); ++i) {
    const double mid = (static_cast<double>(i) + 0.5) * static_cast<double>(t.bucket_s());
    l.points.push_back({mid / axis.unit_s, t.Value(s, i) * scale});
  }
  return l;
}

std::string QueueAndUtilization(const Simulation& sim) {
  const TimeAxis axis = AxisFor(sim);
  svg::LineChart queue{"Jobs waiting in the queue (mean per interval)", axis.label, "jobs", false, 0, {}};
  int64_t capacity = 0;
  for (const sched::Node& n : sim.world->fleet->nodes()) capacity += n.gpus;
  const bool fleet = capacity > 0;
  svg::LineChart util{fleet ? "Fleet utilization (owned and reserved GPUs running work)"
                            : "Cloud GPUs running work (no fleet)",
                      axis.label, fleet ? "share of fleet GPUs" : "GPUs", false, 0, {}};
  for (size_t p = 0; p < sim.runs.size(); ++p) {
    queue.lines.push_back(SeriesLine(sim.runs[p], Timeline::kQueued, 1, p, axis));
    util.lines.push_back(fleet ? SeriesLine(sim.runs[p], Timeline::kFleetGpus,
                                            1.0 / static_cast<double>(capacity), p, axis)
                               : SeriesLine(sim.runs[p], Timeline::kCloudGpus, 1, p, axis));
  }
  return svg::Render(queue) + svg::Render(util);
}

std::string SpendOverTime(const Simulation& sim) {
  const TimeAxis axis = AxisFor(sim);
  std::string out = "<div class=\"grid2\">";
  for (const PolicyRun& run : sim.runs) {
    svg::LineChart c{"Spend rate by pricing model: " + run.policy, axis.label, "$ per hour", false, 0, {}};
    const double per_hour = 3600.0 / static_cast<double>(run.timeline.bucket_s()) / 1e6;
    for (int k = 0; k < kPayKinds; ++k) {
      auto s = static_cast<Timeline::Series>(Timeline::kSpend + k);
      svg::Line l = SeriesLine(run, s, per_hour, static_cast<size_t>(k), axis);
      l.name = std::string(ToString(static_cast<PayKind>(k)));
      bool any = std::any_of(l.points.begin(), l.points.end(), [](auto p) { return p.second != 0; });
      if (any) c.lines.push_back(std::move(l));
    }
    if (run.cost_by_pricing == std::array<int64_t, kPayKinds>{}) continue;
    out += svg::Render(c);
  }
  return out + "</div>";
}

// Running jobs moved at checkpoints per interval, one line per policy; ""
// when no policy moved any.
std::string MovesOverTime(const Simulation& sim) {
  const bool any = std::any_of(sim.summaries.begin(), sim.summaries.end(),
                               [](const Summary& s) { return s.migrations > 0; });
  if (!any) return "";
  const TimeAxis axis = AxisFor(sim);
  svg::LineChart c{"Running jobs moved at checkpoints (per interval)", axis.label, "moves", false, 0, {}};
  for (size_t p = 0; p < sim.runs.size(); ++p) {
    c.lines.push_back(SeriesLine(sim.runs[p], Timeline::kMoves, 1, p, axis));
  }
  return "<h2>Moves of running work over time</h2>" + svg::Render(c) + "\n";
}

std::string WhereAndWhen(const Simulation& sim) {
  const catalog::Catalog& cat = *sim.world->catalog;
  std::string out;
  for (const PolicyRun& run : sim.runs) {
    const auto& rows = run.region_hours.by_region();
    std::vector<size_t> order;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (std::accumulate(rows[r].begin(), rows[r].end(), 0.0) > 0) order.push_back(r);
    }
    auto total = [&](size_t r) { return std::accumulate(rows[r].begin(), rows[r].end(), 0.0); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return total(a) > total(b); });
    if (order.size() > 16) order.resize(16);
    if (order.empty()) continue;
    svg::Heatmap h{"Where work ran, by UTC hour of day: " + run.policy, {}, {}, {}, "GPU-hours"};
    for (int c = 0; c < 24; ++c) h.columns.push_back(std::to_string(c));
    for (size_t r : order) {
      h.rows.push_back(cat.regions()[r].id);
      h.values.emplace_back(rows[r].begin(), rows[r].end());
    }
    out += svg::Render(h);
  }
  return out;
}

std::string Notes(const Simulation& sim) {
  std::string out = "<ul class=\"notes\">";
  for (const std::string& n : sim.trace->notes) out += "<li>trace: " + Escape(n) + "</li>";
  for (const PolicyRun& run : sim.runs) {
    for (const std::string& n : run.notes) out += "<li>" + Escape(run.policy) + ": " + Escape(n) + "</li>";
  }
  return out + "</ul>";
}

}  // namespace

std::string ReportHtml(const Simulation& sim) {
  const UnixSeconds start = sim.world->market->options().start;
  std::string html = html::PageHead("meridian simulate: " + sim.trace->source);
  html += "<h1>meridian simulate</h1><p class=\"meta\">trace " + Escape(sim.trace->source) + ", " +
          std::to_string(sim.trace->jobs.size()) + " jobs; fleet: " + Escape(sim.fleet_source) +
          "; second 0 = " + FormatRfc3339(start) + "; seed " + std::to_string(sim.seed) + "</p>\n";
  html += "<h2>Summary</h2>" + SummaryTable(sim) + CommonTable(sim) + ExtraSpendTable(sim) +
          Rejections(sim) + "\n";
  html += "<h2>Cost and carbon</h2>" + CostAndCarbon(sim) + "\n";
  html += "<h2>Job completion time</h2>" + JctCdf(sim) + "\n";
  html += "<h2>Queue and utilization over time</h2>" + QueueAndUtilization(sim) + "\n";
  html += "<h2>Spend by pricing model over time</h2>" + SpendOverTime(sim) + "\n";
  html += MovesOverTime(sim);
  html += "<h2>Where work ran, by region and hour of day</h2>" + WhereAndWhen(sim) + "\n";
  html += "<h2>Notes</h2>" + Notes(sim) + "\n</body></html>\n";
  return html;
}

}  // namespace meridian::sim
