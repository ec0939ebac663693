// The savings report (savings.h): the history as a run, the comparison, the
// differences worked out per job, the validation, and their text and HTML.
#include "sim/savings.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "catalog/catalog.h"
#include "sched/cost.h"
#include "sched/fleet.h"
#include "sim/charge.h"
#include "sim/hourly_carbon.h"
#include "sim/html.h"
#include "sim/svg.h"

namespace meridian::sim {

namespace {

using Rows = std::vector<std::vector<std::string>>;
using html::Duration;
using html::Fmt;

// The first cluster with a GPU node of `model` (any model when invalid);
// the node's model through `found`.
const sched::Cluster* ClusterWith(const sched::Fleet& fleet, GpuModelId model, GpuModelId* found) {
  for (const sched::Node& n : fleet.nodes()) {
    if (n.gpus == 0 || (model.valid() && n.gpu_model != model)) continue;
    *found = n.gpu_model;
    return &fleet.cluster(n.cluster);
  }
  return nullptr;
}

// Where a recorded job ran: its recorded model's cluster, else its first
// allowed model the fleet has; nullptr when the fleet has none of them.
const sched::Cluster* WhereItRan(const JobSpec& spec, const sched::Fleet& fleet, GpuModelId* model) {
  std::vector<std::string> names;
  if (!spec.work.recorded_on.empty()) names.push_back(spec.work.recorded_on);
  names.insert(names.end(), spec.resources.gpu_models.begin(), spec.resources.gpu_models.end());
  for (const std::string& name : names) {
    const GpuModelId id = sched::FindGpuModelId(fleet.catalog(), name);
    if (!id.valid()) continue;
    if (const sched::Cluster* c = ClusterWith(fleet, id, model)) return c;
  }
  return names.empty() ? ClusterWith(fleet, GpuModelId(), model) : nullptr;
}

// Charges job `o`'s recorded run of `spec` to `run` as the engine charges a
// run attempt on `cluster` (on CPUs when it holds no GPU: `model` invalid or
// `milli` 0).
void Charge(PolicyRun& run, JobOutcome& o, const JobSpec& spec, const sched::Cluster& cluster,
            GpuModelId model, int64_t milli, HourlyCarbon& carbon, UnixSeconds t0,
            const catalog::Catalog& cat) {
  const UnixSeconds a = t0 + o.start_s, b = t0 + o.end_s;
  const double watts = GpuWatts(model.valid() ? &cat.gpus()[model.index()] : nullptr, milli);
  const Money rate = sched::FleetHourRate(
      cluster, model.valid() ? milli : 0, spec.resources.vcpus.value_or(0), sched::StatedRamMib(spec));
  o.cost_micros = RunCostMicros(rate, a, b);
  o.co2_g = RunCo2Grams(watts, carbon, cluster.region, a, b);
  o.gpu_ms = milli * (b - a);
  o.pay = cluster.pricing == CapacityPricing::kReserved ? PayKind::kReserved : PayKind::kOwned;
  o.region = cluster.region;
  o.gpu_model = model;
  o.gpus = static_cast<uint16_t>(milli / 1000);
  run.cost_by_pricing[static_cast<size_t>(o.pay)] += o.cost_micros;
  const size_t r = cluster.region.index();
  if (run.cost_by_region.size() <= r) {
    run.cost_by_region.resize(r + 1, 0);
    run.co2_by_region.resize(r + 1, 0);
  }
  run.cost_by_region[r] += o.cost_micros;
  run.co2_by_region[r] += o.co2_g;
  run.cost_by_cluster[cluster.id.index()] += o.cost_micros;
  run.fleet_gpu_ms += o.gpu_ms;
}

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

double Value(Metric m, const JobOutcome& o, int64_t submit_s) {
  switch (m) {
    case Metric::kWait: return static_cast<double>(o.start_s - submit_s);
    case Metric::kJct: return static_cast<double>(o.end_s - submit_s);
    case Metric::kCost: return static_cast<double>(o.cost_micros);
    case Metric::kCo2: return static_cast<double>(o.co2_g);
  }
  return 0;
}

const char* NameOf(Metric m) {
  switch (m) {
    case Metric::kWait: return "avg wait";
    case Metric::kJct: return "avg JCT";
    case Metric::kCost: return "cost per job";
    case Metric::kCo2: return "CO2 per job";
  }
  return "";
}

// A figure of `m` as it reads: a duration, dollars or kilograms.
std::string Show(Metric m, double v) {
  switch (m) {
    case Metric::kWait:
    case Metric::kJct: return Duration(v);
    case Metric::kCost: return "$" + Fmt(v / 1e6, 2);
    case Metric::kCo2: return Fmt(v / 1000, 1) + " kg";
  }
  return "";
}

std::string Signed(const std::string& magnitude, double d) {
  return (d < 0 ? "-" : d > 0 ? "+" : "") + magnitude;
}

std::string Percent(double from, double to) {
  return from != 0 ? " (" + Signed(Fmt(std::fabs(100 * (to - from) / from), 1), to - from) + "%)" : "";
}

// The change from `from` to `to`: "-4.1 h (-78.8%)"; the percentage is left
// out when `from` is 0.
std::string ChangeOf(Metric m, double from, double to) {
  return Signed(Show(m, std::fabs(to - from)), to - from) + Percent(from, to);
}

std::string Hours(double h) { return Fmt(h, 1); }

Difference Compare(Metric m, const Trace& trace, const SavingsColumn& a, const SavingsColumn& b) {
  Difference d;
  d.metric = m;
  d.from_name = a.name;
  d.to_name = b.name;
  double largest = -1;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const JobOutcome& x = a.run->jobs[i];
    const JobOutcome& y = b.run->jobs[i];
    if (x.state != JobState::kDone || y.state != JobState::kDone) continue;
    const double from = Value(m, x, trace.jobs[i].submit_s), to = Value(m, y, trace.jobs[i].submit_s);
    ++d.jobs;
    d.from_sum += from;
    d.to_sum += to;
    d.less += to < from ? 1 : 0;
    d.more += to > from ? 1 : 0;
    if (std::fabs(to - from) > largest) {
      largest = std::fabs(to - from);
      d.largest = i;
      d.largest_from = from;
      d.largest_to = to;
    }
  }
  return d;
}

// How big a difference is: relative to the baseline's average, with a floor
// (a minute, a cent, a gram) so that a baseline near 0 does not win alone.
double Weight(const Difference& d) {
  const double floor = d.metric == Metric::kCost ? 1e4 : d.metric == Metric::kCo2 ? 1 : 60;
  return std::fabs(d.to_avg() - d.from_avg()) / std::max(std::fabs(d.from_avg()), floor);
}

std::string Cost(int64_t micros) { return Fmt(static_cast<double>(micros) / 1e6, 2); }
std::string Kg(int64_t grams) { return Fmt(static_cast<double>(grams) / 1000, 1); }

// The comparison table: one row per column, and for each column after the
// baseline a row of its differences to it.
Rows ComparisonRows(const std::vector<SavingsColumn>& cols) {
  Rows rows = {{"", "jobs done", "rejected", "avg wait", "p50 wait", "p99 wait", "avg JCT", "p99 JCT", "GPU-h",
                "cost $", "CO2 kg", "deadlines met"}};
  for (const SavingsColumn& c : cols) {
    const Summary& m = c.summary;
    rows.push_back({c.name, std::to_string(m.jobs_done), std::to_string(m.jobs_rejected), Duration(m.avg_wait_s), Duration(c.waits.p50_s),
                    Duration(c.waits.p99_s), Duration(m.avg_jct_s), Duration(m.p99_jct_s),
                    Hours(m.gpu_hours), Cost(m.cost_micros), Kg(m.co2_g), html::Pct(m.deadline_met_frac)});
  }
  return rows;
}

Rows DeltaRows(const std::vector<SavingsColumn>& cols) {
  Rows rows = {{"against " + cols.front().name, "avg wait", "p99 wait", "avg JCT", "GPU-h", "cost",
                "CO2"}};
  const Summary& b = cols.front().summary;
  for (size_t k = 1; k < cols.size(); ++k) {
    const Summary& m = cols[k].summary;
    const double gpu_h = m.gpu_hours - b.gpu_hours;
    rows.push_back({cols[k].name, ChangeOf(Metric::kWait, b.avg_wait_s, m.avg_wait_s),
                    ChangeOf(Metric::kWait, cols.front().waits.p99_s, cols[k].waits.p99_s),
                    ChangeOf(Metric::kJct, b.avg_jct_s, m.avg_jct_s),
                    Signed(Hours(std::fabs(gpu_h)), gpu_h) + Percent(b.gpu_hours, m.gpu_hours),
                    ChangeOf(Metric::kCost, static_cast<double>(b.cost_micros), static_cast<double>(m.cost_micros)),
                    ChangeOf(Metric::kCo2, static_cast<double>(b.co2_g), static_cast<double>(m.co2_g))});
  }
  return rows;
}

const SavingsColumn* Find(const std::vector<SavingsColumn>& cols, const std::string& name) {
  for (const SavingsColumn& c : cols) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string BurstName(const Savings& s) { return s.burst_base + " + cloud"; }

// Bursting: spend by pricing model and by region, beside the same policy on
// the fleet alone.
Rows BurstRows(const Savings& s, const std::vector<SavingsColumn>& cols) {
  const SavingsColumn* alone = Find(cols, s.burst_base);
  const SavingsColumn* burst = Find(cols, BurstName(s));
  if (!alone || !burst) return {};
  Rows rows = {{"spend $", s.burst_base + " on the fleet", BurstName(s), "difference"}};
  auto add = [&](const std::string& what, int64_t a, int64_t b) {
    if (a == 0 && b == 0) return;
    rows.push_back({what, Cost(a), Cost(b), ChangeOf(Metric::kCost, static_cast<double>(a), static_cast<double>(b))});
  };
  for (int k = 0; k < kPayKinds; ++k) {
    add(std::string(ToString(static_cast<PayKind>(k))), alone->summary.cost_by_pricing[static_cast<size_t>(k)],
        burst->summary.cost_by_pricing[static_cast<size_t>(k)]);
  }
  std::vector<std::pair<std::string, int64_t>> regions = alone->summary.cost_by_region;
  for (const auto& entry : burst->summary.cost_by_region) {
    const std::string& region = entry.first;
    if (std::none_of(regions.begin(), regions.end(), [&](const auto& r) { return r.first == region; })) {
      regions.push_back({region, 0});
    }
  }
  auto of = [](const Summary& m, const std::string& region) {
    for (const auto& [r, v] : m.cost_by_region) {
      if (r == region) return v;
    }
    return int64_t{0};
  };
  for (const auto& [region, micros] : regions) add("region " + region, micros, of(burst->summary, region));
  add("total", alone->summary.cost_micros, burst->summary.cost_micros);
  return rows;
}

std::string BurstSentence(const Savings& s, const std::vector<SavingsColumn>& cols) {
  const SavingsColumn* alone = Find(cols, s.burst_base);
  const SavingsColumn* burst = Find(cols, BurstName(s));
  if (!alone || !burst) return "";
  const Summary &a = alone->summary, &b = burst->summary;
  return "Bursting " + s.burst_base + " to the catalog's cloud offerings: cost $" + Cost(a.cost_micros) +
         " -> $" + Cost(b.cost_micros) + ", " + ChangeOf(Metric::kCost, static_cast<double>(a.cost_micros),
                                                       static_cast<double>(b.cost_micros)) +
         "; avg wait " + Duration(a.avg_wait_s) + " -> " + Duration(b.avg_wait_s) + ", avg JCT " +
         Duration(a.avg_jct_s) + " -> " + Duration(b.avg_jct_s) + ".";
}

// Where and how a job ran in one column, for the arithmetic.
std::string Placement(const Savings& s, const SavingsColumn& c, size_t i) {
  const JobOutcome& o = c.run->jobs[i];
  const catalog::Catalog& cat = *s.world->catalog;
  std::string where = o.gpu_model.valid() ? std::to_string(o.gpus) + " x " + cat.gpus()[o.gpu_model.index()].name
                                          : std::string("no GPU");
  if (o.region.valid()) where += " in " + cat.regions()[o.region.index()].id;
  return "started " + Duration(static_cast<double>(o.start_s - s.trace->jobs[i].submit_s)) +
         " after submission on " + where + ", " + std::string(ToString(o.pay));
}

std::string DifferenceSentence(const Savings& s, const std::vector<SavingsColumn>& cols, const Difference& d) {
  const std::string name = NameOf(d.metric);
  const TraceJob& job = s.trace->jobs[d.largest];
  std::string out = name + " " + Show(d.metric, d.from_avg()) + " -> " + Show(d.metric, d.to_avg()) + " (" +
                    d.from_name + " -> " + d.to_name + ", " + ChangeOf(d.metric, d.from_avg(), d.to_avg()) +
                    "): over the " + std::to_string(d.jobs) + " jobs done in both, " + Show(d.metric, d.from_sum) +
                    " / " + std::to_string(d.jobs) + " = " + Show(d.metric, d.from_avg()) + " -> " +
                    Show(d.metric, d.to_sum) + " / " + std::to_string(d.jobs) + " = " +
                    Show(d.metric, d.to_avg()) + "; it fell for " + std::to_string(d.less) + " jobs and rose for " +
                    std::to_string(d.more) + ". The largest change, job " + job.name + ": " +
                    Show(d.metric, d.largest_from) + " -> " + Show(d.metric, d.largest_to);
  const SavingsColumn* from = Find(cols, d.from_name);
  const SavingsColumn* to = Find(cols, d.to_name);
  if (from && to) {
    out += " (" + d.from_name + ": " + Placement(s, *from, d.largest) + "; " + d.to_name + ": " +
           Placement(s, *to, d.largest) + ")";
  }
  return out + ".";
}

std::string ValidationSentence(const Savings& s) {
  if (s.history.recorded == 0) {
    return "No validation: the trace has no recorded starts (only sacct and k8s-jobs histories do).";
  }
  const std::optional<Validation> v = ValidationOf(s);
  if (!v) return "No validation: " + s.validation_policy + " was not among the policies.";
  if (v->jobs == 0) return "No validation: " + v->policy + " started none of the recorded jobs.";
  std::string out = "As it ran vs " + v->policy + " on the same fleet, over " + std::to_string(v->jobs) +
                    " jobs: mean absolute error of the per-job wait " + Duration(v->mean_abs_error_s) +
                    "; avg wait " + Duration(v->recorded_avg_s) + " recorded, " + Duration(v->replayed_avg_s) +
                    " replayed (ratio " + (v->ratio ? Fmt(*v->ratio, 2) : std::string("-")) + "); " +
                    Fmt(v->within_10min * 100, 1) + "% of jobs within 10 minutes, " + Fmt(v->within_1h * 100, 1) +
                    "% within 1 hour. ";
  if (v->close) return out + "The replay reproduces the recorded queue closely; the other columns can be read against it.";
  return out + "The replay is far from the recorded queue: the history ran beside jobs this trace does not "
               "hold (other partitions, users or accounts outside the query), reservations, down or drained "
               "nodes, priorities, QOS limits and fair share that the replay does not model, so read the "
               "policy columns against " + v->policy + ", not only against as it ran.";
}

std::string TextTable(const Rows& rows) {
  if (rows.empty()) return "";
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      const std::string pad(width[c] - r[c].size(), ' ');
      line += c == 0 ? r[c] + pad : "  " + pad + r[c];
    }
    out += line + "\n";
  }
  return out;
}

std::string HtmlTable(const Rows& rows) {
  if (rows.empty()) return "";
  std::string t = "<table>";
  for (size_t k = 0; k < rows.size(); ++k) {
    const char* cell = k == 0 ? "th" : "td";
    t += "<tr>";
    for (const std::string& v : rows[k]) t += std::string("<") + cell + ">" + svg::Escape(v) + "</" + cell + ">";
    t += "</tr>";
  }
  return t + "</table>\n";
}

std::string Heading(const Savings& s) {
  return "trace " + s.trace->source + ", " + std::to_string(s.trace->jobs.size()) + " jobs (" +
         std::to_string(s.history.recorded) + " with a recorded start); fleet: " + s.fleet_source;
}

std::string HistoryLine(const Savings& s) {
  return s.history.recorded > 0 ? ""
                                : "as it ran: the trace has no recorded starts, so there is no history "
                                  "column; the policies are compared with the first.";
}

// Totals compare different job sets when the columns finish different
// jobs; the per-job arithmetic does not.
std::string DoneLine(const std::vector<SavingsColumn>& cols) {
  for (const SavingsColumn& c : cols) {
    if (c.summary.jobs_done != cols.front().summary.jobs_done) {
      return "The columns finish different numbers of jobs (rejected: no fleet node can ever hold them), so "
             "their totals cover different jobs; the biggest differences below compare only jobs done in both.";
    }
  }
  return "";
}

std::vector<std::string> Sentences(const Savings& s, const std::vector<SavingsColumn>& cols) {
  std::vector<std::string> out;
  for (const Difference& d : BiggestDifferences(s)) out.push_back(DifferenceSentence(s, cols, d));
  return out;
}

std::string CostChart(const std::vector<SavingsColumn>& cols) {
  svg::BarChart cost{"Cost by pricing model", "$", {}, {}, {}};
  for (int k = 0; k < kPayKinds; ++k) cost.segments.emplace_back(ToString(static_cast<PayKind>(k)));
  for (const SavingsColumn& c : cols) {
    cost.rows.push_back(c.name);
    std::vector<double> v;
    for (int64_t m : c.summary.cost_by_pricing) v.push_back(static_cast<double>(m) / 1e6);
    cost.values.push_back(v);
  }
  return svg::Render(cost);
}

}  // namespace

History AsItRan(const Trace& trace, const World& world) {
  History h;
  h.run.policy = "as it ran";
  h.run.jobs.resize(trace.jobs.size());
  const sched::Fleet& fleet = *world.fleet;
  h.run.cost_by_cluster.assign(fleet.clusters().size(), 0);
  const UnixSeconds t0 = world.market->options().start;
  HourlyCarbon carbon(*world.market, t0);
  int64_t unplaced = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& tj = trace.jobs[i];
    if (tj.recorded_wait_s < 0 || tj.duration_s < 0) continue;
    JobOutcome& o = h.run.jobs[i];
    o.start_s = tj.submit_s + tj.recorded_wait_s;
    o.end_s = o.start_s + tj.duration_s;
    o.run_s = tj.duration_s;
    o.state = JobState::kDone;
    ++h.recorded;
    h.run.end_s = std::max(h.run.end_s, o.end_s);
    const JobSpec& spec = *trace.specs[tj.spec];
    GpuModelId model;
    const sched::Cluster* cluster = WhereItRan(spec, fleet, &model);
    if (!cluster) {
      ++unplaced;
      cluster = ClusterWith(fleet, GpuModelId(), &model);
    }
    // The history readers always record the GPU count; "auto" counts as one.
    const int64_t gpus = spec.resources.gpus.value_or(1);
    const int64_t milli = tj.gpu_fraction > 0 ? std::lround(tj.gpu_fraction * 1000.0f) : gpus * 1000;
    if (cluster) Charge(h.run, o, spec, *cluster, model, milli, carbon, t0, *world.catalog);
  }
  if (unplaced > 0) {
    h.notes.push_back(std::to_string(unplaced) +
                      " recorded jobs ran on GPU models the fleet does not have: priced on its first "
                      "GPU cluster");
  }
  return h;
}

WaitSpread WaitsOf(const Trace& trace, const std::vector<JobOutcome>& jobs) {
  std::vector<int64_t> waits;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].start_s >= 0) waits.push_back(jobs[i].start_s - trace.jobs[i].submit_s);
  }
  std::sort(waits.begin(), waits.end());
  return {Percentile(waits, 50), Percentile(waits, 99)};
}

Validation Validate(const Trace& trace, const PolicyRun& history, const PolicyRun& replay) {
  Validation v;
  v.policy = replay.policy;
  double abs_error = 0, recorded = 0, replayed = 0;
  int64_t ten = 0, hour = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const JobOutcome& h = history.jobs[i];
    const JobOutcome& r = replay.jobs[i];
    if (h.start_s < 0 || r.start_s < 0) continue;
    const double a = Value(Metric::kWait, h, trace.jobs[i].submit_s);
    const double b = Value(Metric::kWait, r, trace.jobs[i].submit_s);
    ++v.jobs;
    abs_error += std::fabs(b - a);
    recorded += a;
    replayed += b;
    ten += std::fabs(b - a) <= 600 ? 1 : 0;
    hour += std::fabs(b - a) <= 3600 ? 1 : 0;
  }
  if (v.jobs == 0) return v;
  const double n = static_cast<double>(v.jobs);
  v.mean_abs_error_s = abs_error / n;
  v.recorded_avg_s = recorded / n;
  v.replayed_avg_s = replayed / n;
  if (recorded > 0) v.ratio = replayed / recorded;
  v.within_10min = Share(ten, v.jobs);
  v.within_1h = Share(hour, v.jobs);
  const bool averages_agree = (v.ratio && *v.ratio >= 0.5 && *v.ratio <= 2) ||
                              std::fabs(v.replayed_avg_s - v.recorded_avg_s) <= 600;
  v.close = v.within_1h >= 0.9 && averages_agree;
  return v;
}

std::vector<SavingsColumn> Columns(const Savings& s) {
  std::vector<SavingsColumn> cols;
  auto add = [&](const std::string& name, const PolicyRun& run, const World& world) {
    SavingsColumn c{name, &run, Summarize(*s.trace, world, run), WaitsOf(*s.trace, run.jobs)};
    c.summary.policy = name;
    cols.push_back(std::move(c));
  };
  if (s.history.recorded > 0) add(s.history.run.policy, s.history.run, *s.world);
  for (const PolicyRun& r : s.runs) add(r.policy, r, *s.world);
  if (s.burst && s.burst_world) add(BurstName(s), *s.burst, *s.burst_world);
  return cols;
}

std::vector<Difference> BiggestDifferences(const Savings& s, size_t count) {
  const std::vector<SavingsColumn> cols = Columns(s);
  std::vector<Difference> best;
  if (cols.size() < 2) return best;
  for (Metric m : {Metric::kWait, Metric::kJct, Metric::kCost, Metric::kCo2}) {
    std::optional<Difference> top;
    for (size_t k = 1; k < cols.size(); ++k) {
      Difference d = Compare(m, *s.trace, cols.front(), cols[k]);
      if (d.jobs == 0 || d.from_sum == d.to_sum) continue;
      if (!top || Weight(d) > Weight(*top)) top = d;
    }
    if (top) best.push_back(*top);
  }
  std::stable_sort(best.begin(), best.end(), [](const Difference& a, const Difference& b) { return Weight(a) > Weight(b); });
  if (best.size() > count) best.resize(count);
  return best;
}

std::optional<Validation> ValidationOf(const Savings& s) {
  if (s.history.recorded == 0) return std::nullopt;
  for (const PolicyRun& r : s.runs) {
    if (r.policy == s.validation_policy) return Validate(*s.trace, s.history.run, r);
  }
  return std::nullopt;
}

std::string SavingsText(const Savings& s) {
  const std::vector<SavingsColumn> cols = Columns(s);
  std::string out = "What meridian would have saved: " + Heading(s) + "\n";
  if (const std::string h = HistoryLine(s); !h.empty()) out += h + "\n";
  out += "\n" + TextTable(ComparisonRows(cols));
  if (cols.size() > 1) out += "\n" + TextTable(DeltaRows(cols));
  if (const std::string d = DoneLine(cols); !d.empty()) out += d + "\n";
  if (const std::string b = BurstSentence(s, cols); !b.empty()) out += "\n" + b + "\n" + TextTable(BurstRows(s, cols));
  out += "\nThe biggest differences:\n";
  for (const std::string& line : Sentences(s, cols)) out += "- " + line + "\n";
  out += "\nValidation: " + ValidationSentence(s) + "\n";
  for (const std::string& n : s.history.notes) out += "note: " + n + "\n";
  return out;
}

std::string SavingsHtml(const Savings& s) {
  const std::vector<SavingsColumn> cols = Columns(s);
  std::string page = html::PageHead("meridian report savings: " + s.trace->source);
  page += "<h1>What meridian would have saved</h1><p class=\"meta\">" + svg::Escape(Heading(s)) + "</p>\n";
  page += "<h2>The history as it ran, and each policy on the same fleet</h2>";
  if (const std::string h = HistoryLine(s); !h.empty()) page += "<p>" + svg::Escape(h) + "</p>";
  page += HtmlTable(ComparisonRows(cols));
  if (cols.size() > 1) page += "<h3>Differences</h3>" + HtmlTable(DeltaRows(cols));
  if (const std::string d = DoneLine(cols); !d.empty()) page += "<p>" + svg::Escape(d) + "</p>";
  page += "<h2>The same fleet plus cloud capacity</h2>";
  const std::string burst = BurstSentence(s, cols);
  page += burst.empty() ? "<p>No burst run.</p>" : "<p>" + svg::Escape(burst) + "</p>" + HtmlTable(BurstRows(s, cols));
  page += CostChart(cols);
  page += "<h2>The arithmetic of the biggest differences</h2><ol>";
  for (const std::string& line : Sentences(s, cols)) page += "<li>" + svg::Escape(line) + "</li>";
  page += "</ol>\n<h2>Validation</h2><p>" + svg::Escape(ValidationSentence(s)) + "</p>\n";
  page += "<h2>Notes</h2><ul class=\"notes\">";
  for (const std::string& n : s.history.notes) page += "<li>as it ran: " + svg::Escape(n) + "</li>";
  for (const std::string& n : s.trace->notes) page += "<li>trace: " + svg::Escape(n) + "</li>";
  return page + "</ul>\n</body></html>\n";
}

Status WriteSavings(const Savings& s, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Invalid(dir + ": cannot create the output folder: " + ec.message());
  for (const auto& [name, body] : {std::pair<std::string, std::string>{"savings.txt", SavingsText(s)},
                                   std::pair<std::string, std::string>{"savings.html", SavingsHtml(s)}}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << body;
    f.close();
    if (!f) return Status::Invalid(path + ": cannot write");
  }
  return Status::Ok();
}

}  // namespace meridian::sim
