#include "sim/report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace meridian::sim {

namespace {

double Usd(int64_t micros) { return static_cast<double>(micros) / 1e6; }


nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::ordered_json ToJson(const Summary& s) {
  nlohmann::json by_pricing = nlohmann::json::object();
  for (int k = 0; k < kPayKinds; ++k) {
    by_pricing[std::string(ToString(static_cast<PayKind>(k)))] = Usd(s.cost_by_pricing[static_cast<size_t>(k)]);
  }
  nlohmann::json by_region = nlohmann::json::object();
  for (const auto& [region, micros] : s.cost_by_region) by_region[region] = Usd(micros);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["policy"] = s.policy;
  j["jobs"] = s.jobs;
  j["jobs_done"] = s.jobs_done;
  j["jobs_rejected"] = s.jobs_rejected;
  j["jobs_unfinished"] = s.jobs_unfinished;
  j["avg_jct_s"] = s.avg_jct_s;
  j["p50_jct_s"] = s.p50_jct_s;
  j["p99_jct_s"] = s.p99_jct_s;
  j["avg_wait_s"] = s.avg_wait_s;
  j["makespan_s"] = s.makespan_s;
  j["cost_usd"] = Usd(s.cost_micros);
  j["cost_by_pricing"] = by_pricing;
  j["cost_by_region"] = by_region;
  j["reserved_idle_usd"] = Usd(s.reserved_idle_micros);
  j["gpu_hours"] = s.gpu_hours;
  j["co2_kg"] = static_cast<double>(s.co2_g) / 1000.0;
  j["deadline_met_frac"] = Optional(s.deadline_met_frac);
  j["deadline_jobs"] = s.deadline_jobs;
  j["preemptions"] = s.preemptions;
  j["flex_cancels"] = s.flex_cancels;
  j["lost_gpu_hours"] = s.lost_gpu_hours;
  j["migrations"] = s.migrations;
  j["migration_cost_usd"] = Usd(s.migration_cost_micros);
  j["migration_gpu_hours"] = s.migration_gpu_hours;
  j["utilization"] = Optional(s.utilization);
  j["slo_met_frac"] = Optional(s.slo_met_frac);
  j["replica_reclaims"] = s.replica_reclaims;
  j["replicas_replaced_on_spot"] = s.replaced_on_spot;
  j["replicas_replaced_on_demand"] = s.replaced_on_demand;
  j["events"] = s.events;
  j["decisions"] = s.decisions;
  j["mig_drains"] = s.mig_drains;
  j["mig_drain_gpu_hours"] = s.mig_drain_gpu_hours;
  j["mig_free_slices"] = Optional(s.mig_free_slices);
  j["mig_unallocatable_slices"] = Optional(s.mig_unallocatable_slices);
  j["mig_unallocatable_demand_slices"] = Optional(s.mig_unallocatable_demand_slices);
  nlohmann::ordered_json common = nlohmann::ordered_json::object();
  common["jobs"] = s.common.jobs;
  common["avg_jct_s"] = s.common.avg_jct_s;
  common["avg_wait_s"] = s.common.avg_wait_s;
  common["cost_usd"] = Usd(s.common.cost_micros);
  common["co2_kg"] = static_cast<double>(s.common.co2_g) / 1000.0;
  j["common"] = common;
  j["notes"] = s.notes;
  return j;
}

// A note "N x what" (the engine's counted notes) as (N, what); N = 0 when
// the note carries no count.
std::pair<int64_t, std::string> CountedNote(const std::string& note) {
  const size_t x = note.find(" x ");
  if (x == std::string::npos || x == 0) return {0, note};
  int64_t n = 0;
  for (size_t i = 0; i < x; ++i) {
    if (note[i] < '0' || note[i] > '9') return {0, note};
    n = n * 10 + (note[i] - '0');
  }
  return {n, note.substr(x + 3)};
}

bool IsRejection(const std::string& what) {
  return what.starts_with("rejected: ") || what.starts_with("not queued: ");
}

std::string Percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// A CSV field: quoted when it holds a comma, quote or newline.
std::string Field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string Num(int64_t v) { return v < 0 ? "" : std::to_string(v); }

std::string Fixed6(int64_t micros) {
  const int64_t a = micros < 0 ? -micros : micros;
  std::string frac = std::to_string(a % 1000000);
  return (micros < 0 ? "-" : "") + std::to_string(a / 1000000) + "." +
         std::string(6 - frac.size(), '0') + frac;
}

}  // namespace

std::string RejectionWarnings(const Simulation& sim, double share, size_t top) {
  std::string out;
  for (const Summary& s : sim.summaries) {
    if (s.jobs == 0 || static_cast<double>(s.jobs_rejected) <= share * static_cast<double>(s.jobs)) continue;
    std::vector<std::pair<int64_t, std::string>> reasons;
    for (const std::string& n : s.notes) {
      auto counted = CountedNote(n);
      if (IsRejection(counted.second)) reasons.push_back(std::move(counted));
    }
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    out += "warning: " + s.policy + " rejected " + std::to_string(s.jobs_rejected) + " of " +
           std::to_string(s.jobs) + " jobs (" + Percent(s.jobs_rejected, s.jobs) + ")" +
           (reasons.empty() ? "\n" : "; top reasons:\n");
    for (size_t i = 0; i < reasons.size() && i < top; ++i) {
      out += "  " + std::to_string(reasons[i].first) + " x " + reasons[i].second + "\n";
    }
    if (reasons.size() > top) {
      out += "  and " + std::to_string(reasons.size() - top) +
             " more reasons (summary.json notes, report.html)\n";
    }
  }
  return out;
}

std::vector<ExtraSpend> WhatExtraSpendBought(const Simulation& sim) {
  std::vector<ExtraSpend> out;
  if (sim.runs.size() < 2) return out;
  const UnixSeconds start = sim.world->market->options().start;
  auto met = [&](const JobOutcome& o, int64_t deadline) {
    return o.state == JobState::kDone && o.end_s <= deadline;
  };
  for (size_t p = 1; p < sim.runs.size(); ++p) {
    const int64_t extra = sim.summaries[0].cost_micros - sim.summaries[p].cost_micros;
    if (extra <= 0) continue;
    ExtraSpend e;
    e.other = p;
    e.extra_cost_micros = extra;
    for (size_t i = 0; i < sim.trace->jobs.size(); ++i) {
      const TraceJob& tj = sim.trace->jobs[i];
      const std::optional<int64_t> deadline = DeadlineS(tj, *sim.trace->specs[tj.spec], start);
      if (!deadline) continue;
      const bool first = met(sim.runs[0].jobs[i], *deadline);
      const bool other = met(sim.runs[p].jobs[i], *deadline);
      if (first && !other) e.met_only_first.push_back(i);
      if (other && !first) e.met_only_other.push_back(i);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string SummaryJson(const std::vector<Summary>& summaries) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const Summary& s : summaries) all.push_back(ToJson(s));
  return all.dump(2) + "\n";
}

namespace {

// A service's fraction of minutes met, to 6 decimals ("0.999306").
std::string SloFraction(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

}  // namespace

void WriteJobsCsv(const Simulation& sim, std::ostream& out) {
  const catalog::Catalog& cat = *sim.world->catalog;
  const UnixSeconds start = sim.world->market->options().start;
  out << "policy,job,submit_s,start_s,end_s,state,region,gpu_model,gpus,mig,cpu,pricing,"
         "cost_usd,co2_g,preemptions,lost_gpu_h,deadline_s,deadline_met,recorded_on,run_s,"
         "slo_met_frac,moves\n";
  for (const PolicyRun& run : sim.runs) {
    std::vector<std::optional<double>> slo(run.jobs.size());
    for (const ServiceMinutes& m : run.services) {
      if (m.job < slo.size() && m.minutes > 0) slo[m.job] = m.Fraction();
    }
    for (size_t i = 0; i < run.jobs.size(); ++i) {
      const TraceJob& tj = sim.trace->jobs[i];
      const JobOutcome& o = run.jobs[i];
      const bool placed = o.start_s >= 0;
      std::string mig;
      if (o.mig_profile >= 0 && o.gpu_model.valid()) {
        mig = cat.gpus()[o.gpu_model.index()].mig_profiles[static_cast<size_t>(o.mig_profile)].name;
      }
      std::optional<int64_t> deadline = DeadlineS(tj, *sim.trace->specs[tj.spec], start);
      out << Field(run.policy) << ',' << Field(tj.name) << ',' << tj.submit_s << ','
          << Num(o.start_s) << ',' << Num(o.end_s) << ',' << ToString(o.state) << ','
          << (placed && o.region.valid() ? cat.regions()[o.region.index()].id : "") << ','
          << (placed && o.gpu_model.valid() ? cat.gpus()[o.gpu_model.index()].name : "") << ','
          << (placed ? std::to_string(o.gpus) : "") << ',' << mig << ','
          << (placed ? (o.cpu ? "true" : "false") : "") << ','
          << (placed ? PricingOf(o) : "") << ',' << Fixed6(o.cost_micros) << ','
          << o.co2_g << ',' << o.preemptions << ','
          << static_cast<double>(o.lost_gpu_ms) / 3.6e6 << ','
          << (deadline ? std::to_string(*deadline) : "") << ','
          << (deadline ? (o.state == JobState::kDone && o.end_s <= *deadline ? "true" : "false") : "")
          << ',' << Field(sim.trace->specs[tj.spec]->work.recorded_on) << ','
          << (placed && o.run_s >= 0 ? std::to_string(o.run_s) : "") << ','
          << (slo[i] ? SloFraction(*slo[i]) : "") << ',' << o.moves << '\n';
    }
  }
}

Status WriteSimulation(const Simulation& sim, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Invalid(dir + ": cannot create the output folder: " + ec.message());
  auto write = [&](const std::string& name, auto&& body) -> Status {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) return Status::Invalid(path + ": cannot write");
    body(f);
    f.close();
    if (!f) return Status::Invalid(path + ": write failed");
    return Status::Ok();
  };
  MERIDIAN_RETURN_IF_ERROR(write("summary.json", [&](std::ostream& f) { f << SummaryJson(sim.summaries); }));
  MERIDIAN_RETURN_IF_ERROR(write("jobs.csv", [&](std::ostream& f) { WriteJobsCsv(sim, f); }));
  MERIDIAN_RETURN_IF_ERROR(write("report.html", [&](std::ostream& f) { f << ReportHtml(sim); }));
  return Status::Ok();
}

}  // namespace meridian::sim
