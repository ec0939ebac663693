#include "cli/plan_output.h"

#include <algorithm>

#include "cli/table.h"
#include "core/time.h"

namespace meridian::cli {

namespace {

using nlohmann::json;

double Round(double v, int decimals) {
  double f = 1;
  for (int i = 0; i < decimals; ++i) f *= 10;
  return std::round(v * f) / f;
}

json JobToJson(const JobSpec& job) {
  json j = {{"name", job.name},
            {"tenant", job.tenant},
            {"kind", std::string(ToString(job.kind))},
            {"priority", std::string(ToString(job.priority))},
            {"preemptible", job.preemptible}};
  if (job.budget) j["budget_usd"] = job.budget->dollars();
  if (job.deadline.after_submit_s) j["deadline_after_submit_s"] = *job.deadline.after_submit_s;
  if (job.deadline.at) j["deadline_at"] = FormatRfc3339(*job.deadline.at);
  if (!job.residency.empty()) j["residency"] = job.residency;
  return j;
}

json OptionToJson(const estimate::Option& o) {
  json j = {
      {"gpu", o.gpu},
      {"gpus", o.gpus},
      {"instances", o.instances},
      {"provider", o.offering.provider},
      {"region", o.offering.region},
      {"zone", o.offering.zone},
      {"other_zones", o.other_zones},
      {"instance_type", o.offering.instance_type},
      {"pricing", std::string(ToString(o.pricing))},
      {"price_per_hour_usd", o.price_per_hour.dollars()},
      {"wait_hours", Round(o.wait_hours, 3)},
      {"hours", Round(o.hours, 3)},
      {"billed_hours", Round(o.billed_hours, 3)},
      {"cost_usd", o.cost.dollars()},
      {"egress_usd", o.egress_cost.dollars()},
      {"energy_kwh", Round(o.energy_kwh, 3)},
      {"carbon_gco2_per_kwh", Round(o.carbon_gco2_per_kwh, 1)},
      {"carbon_source",
       o.carbon_source == catalog::CarbonSourceKind::kHourly ? "hourly" : "yearly"},
      {"co2_kg", o.co2.kilograms()},
      {"start", FormatRfc3339(o.start)},
      {"finish", FormatRfc3339(o.finish)},
      {"meets_deadline", o.meets_deadline},
      {"within_budget", o.within_budget},
      {"memory_per_gpu_gib", Round(o.memory_per_gpu_gib, 2)},
      {"notes", o.notes},
  };
  if (!o.image.empty()) j["image"] = o.image;
  return j;
}

json EstimateToJson(const estimate::GpuEstimate& e) {
  const auto& m = e.memory;
  const auto& t = e.throughput;
  json j = {
      {"gpu", e.gpu},
      {"memory",
       {{"weights_gib", Round(m.weights_gib, 2)},
        {"gradients_gib", Round(m.gradients_gib, 2)},
        {"optimizer_gib", Round(m.optimizer_gib, 2)},
        {"activations_gib", Round(m.activations_gib, 2)},
        {"kv_cache_gib", Round(m.kv_cache_gib, 2)},
        {"overhead_gib", Round(m.overhead_gib, 2)},
        {"total_gib", Round(m.total_gib, 2)},
        {"per_gpu_gib", Round(m.per_gpu_gib, 2)},
        {"gpus", m.gpus},
        {"method", m.method},
        {"arithmetic", m.arithmetic}}},
      {"throughput",
       {{"precision", std::string(ToString(t.precision))},
        {"peak_tflops_per_gpu", t.peak_tflops_per_gpu},
        {"efficiency", Round(t.efficiency, 3)},
        {"efficiency_measured", t.efficiency_measured},
        {"bound", t.bound},
        {"run_hours", Round(t.run_hours, 3)},
        {"layout", t.layout},
        {"communication_share", Round(t.communication_share, 4)},
        {"mfu", Round(t.mfu, 4)},
        {"arithmetic", t.arithmetic}}},
  };
  if (e.service) {
    const auto& s = *e.service;
    j["service"] = {{"replica_rps", Round(s.replica_rps, 3)},
                    {"request_ms", Round(s.request_ms, 2)},
                    {"replicas_peak", s.peak_replicas},
                    {"replicas_min", s.min_replicas},
                    {"replica_hours", Round(s.replica_hours, 2)},
                    {"arithmetic", s.arithmetic}};
  }
  if (e.shortfall) {
    const auto& s = *e.shortfall;
    j["vram_shortfall"] = {{"needed_gib", Round(s.needed_gib, 2)},
                           {"available_gib", Round(s.available_gib, 2)},
                           {"reduced_micro_batch", s.reduced_micro_batch},
                           {"slowdown", Round(s.slowdown, 3)},
                           {"explanation", s.explanation}};
  }
  return j;
}

std::string Money2(Money m) { return Fixed(m.dollars(), 2); }

}  // namespace

json PlanToJson(const estimate::Plan& plan) {
  json j;
  j["job"] = JobToJson(plan.job);
  j["at"] = FormatRfc3339(plan.at);
  j["deadline"] = plan.deadline ? json(FormatRfc3339(*plan.deadline)) : json(nullptr);
  j["assumptions"] = json::array();
  for (const auto& a : plan.assumptions) {
    j["assumptions"].push_back({{"field", a.field}, {"value", a.value}, {"reason", a.reason}});
  }
  j["estimates"] = json::array();
  for (const auto& e : plan.estimates) j["estimates"].push_back(EstimateToJson(e));
  j["options"] = json::array();
  for (const auto& o : plan.options) j["options"].push_back(OptionToJson(o));
  j["rejected"] = json::array();
  for (const auto& r : plan.rejected) {
    j["rejected"].push_back({{"gpu", r.gpu}, {"reason", r.reason}});
  }
  j["notes"] = plan.notes;
  return j;
}

namespace {

void PrintHeader(const estimate::Plan& plan, std::ostream& out) {
  const JobSpec& job = plan.job;
  out << "Plan for " << job.name << " (" << ToString(job.kind) << ", tenant " << job.tenant
      << ", priority " << ToString(job.priority) << (job.preemptible ? ", preemptible" : "")
      << ")\n";
  out << "  submitted " << FormatRfc3339(plan.at);
  if (plan.deadline) {
    out << ", deadline " << FormatRfc3339(*plan.deadline) << " ("
        << FormatDuration(*plan.deadline - plan.at) << " after submission)";
  } else {
    out << ", no deadline";
  }
  if (job.budget) out << ", budget $" << Money2(*job.budget);
  out << "\n";
}

void PrintAssumptions(const estimate::Plan& plan, std::ostream& out) {
  if (plan.assumptions.empty()) return;
  out << "\nAssumed (the spec left these out)\n";
  Table t({{"FIELD"}, {"VALUE"}, {"WHY"}});
  for (const auto& a : plan.assumptions) t.AddRow({a.field, a.value, a.reason});
  t.Print(out, "  ");
}

// A real-time service: one replica per GPU model and its set by the hour.
void PrintServices(const estimate::Plan& plan, std::ostream& out) {
  const bool any = std::any_of(plan.estimates.begin(), plan.estimates.end(),
                               [](const estimate::GpuEstimate& e) { return e.service.has_value(); });
  if (!any) return;
  out << "\n  Serving (one replica; the set by the hour, options priced for it)\n";
  Table t({{"GPU"},
           {"REQ/S", Table::Align::kRight},
           {"REQUEST ms", Table::Align::kRight},
           {"REPLICAS", Table::Align::kRight},
           {"BY HOUR", Table::Align::kRight},
           {"REPLICA-h", Table::Align::kRight}});
  for (const auto& e : plan.estimates) {
    if (!e.service) continue;
    const auto& s = *e.service;
    t.AddRow({e.gpu, Fixed(s.replica_rps, 2), Fixed(s.request_ms, 1), std::to_string(s.peak_replicas),
              std::to_string(s.min_replicas) + "-" + std::to_string(s.peak_replicas),
              Fixed(s.replica_hours, 1)});
  }
  t.Print(out, "  ");
  for (const auto& e : plan.estimates) {
    if (e.service) out << "  " << e.gpu << ": " << e.service->arithmetic << "\n";
  }
}

void PrintEstimates(const estimate::Plan& plan, std::ostream& out) {
  if (plan.estimates.empty()) return;
  out << "\nFit and speed per GPU model\n";
  Table t({{"GPU"},
           {"GPUS", Table::Align::kRight},
           {"GiB/GPU", Table::Align::kRight},
           {"PRECISION"},
           {"PEAK TFLOPS", Table::Align::kRight},
           {"EFF", Table::Align::kRight},
           {"BOUND"},
           {"RUN h", Table::Align::kRight}});
  for (const auto& e : plan.estimates) {
    t.AddRow({e.gpu, std::to_string(e.memory.gpus), Fixed(e.memory.per_gpu_gib, 1),
              std::string(ToString(e.throughput.precision)),
              Fixed(e.throughput.peak_tflops_per_gpu, 1), Fixed(e.throughput.efficiency, 2),
              e.throughput.bound, Fixed(e.throughput.run_hours, 2)});
  }
  t.Print(out, "  ");
  out << "\n  Arithmetic\n";
  for (const auto& e : plan.estimates) {
    out << "  " << e.gpu << "\n";
    out << "    memory: " << e.memory.method;
    if (!e.memory.arithmetic.empty()) out << ": " << e.memory.arithmetic;
    out << "\n    speed:  " << e.throughput.arithmetic << "\n";
    if (!e.throughput.layout.empty()) {
      out << "    layout: " << e.throughput.layout << ", communication "
          << Fixed(100 * e.throughput.communication_share, 1) << "% of the run";
      if (e.throughput.mfu > 0) out << ", MFU " << Fixed(100 * e.throughput.mfu, 1) << "%";
      out << "\n";
    }
    if (e.shortfall) out << "    vram:   " << e.shortfall->explanation << "\n";
  }
  PrintServices(plan, out);
}

void PrintOptions(const estimate::Plan& plan, size_t top, std::ostream& out) {
  size_t shown = top == 0 ? plan.options.size() : std::min(top, plan.options.size());
  out << "\nOptions (meets the deadline first, then cheapest, then earliest finish; " << shown
      << " of " << plan.options.size() << ")\n";
  if (plan.options.empty()) {
    out << "  none: every GPU model was rejected (see below)\n";
    return;
  }
  Table t({{"#", Table::Align::kRight},
           {"GPU"},
           {"GPUS", Table::Align::kRight},
           {"REGION"},
           {"ZONE"},
           {"INSTANCE"},
           {"PRICING"},
           {"$/h", Table::Align::kRight},
           {"WAIT h", Table::Align::kRight},
           {"RUN h", Table::Align::kRight},
           {"COST $", Table::Align::kRight},
           {"kWh", Table::Align::kRight},
           {"kg CO2", Table::Align::kRight},
           {"FINISH"},
           {"OK"}});
  for (size_t i = 0; i < shown; ++i) {
    const auto& o = plan.options[i];
    std::string inst = o.offering.instance_type;
    if (o.instances > 1) inst = std::to_string(o.instances) + " x " + inst;
    std::string ok = o.meets_deadline ? "yes" : "late";
    if (!o.within_budget) ok += ",over-budget";
    t.AddRow({std::to_string(i + 1), o.gpu, std::to_string(o.gpus), o.offering.region,
              o.offering.zone.empty() ? "-" : o.offering.zone, inst,
              std::string(ToString(o.pricing)), Money2(o.price_per_hour), Fixed(o.wait_hours, 1),
              Fixed(o.hours, 2), Money2(o.cost), Fixed(o.energy_kwh, 1),
              Fixed(o.co2.kilograms(), 1), FormatRfc3339(o.finish), ok});
  }
  t.Print(out, "  ");
  out << "\n  Why each shown option costs what it does\n";
  for (size_t i = 0; i < shown; ++i) {
    const auto& o = plan.options[i];
    out << "  " << (i + 1) << ". $" << Fixed(o.price_per_hour.dollars(), 4) << "/h x "
        << Fixed(o.billed_hours, 3) << " h";
    if (o.billed_hours != o.hours) out << " paid (" << Fixed(o.hours, 3) << " h used)";
    if (o.egress_cost.micros() > 0) out << " + $" << Money2(o.egress_cost) << " egress";
    out << " = $" << Money2(o.cost) << "; " << Fixed(o.energy_kwh, 2) << " kWh x "
        << Fixed(o.carbon_gco2_per_kwh, 0) << " g/kWh ("
        << (o.carbon_source == catalog::CarbonSourceKind::kHourly ? "hourly" : "yearly")
        << ") = " << Fixed(o.co2.kilograms(), 2) << " kg CO2";
    if (!o.image.empty()) out << "; " << o.image;
    out << "\n";
    for (const auto& n : o.notes) out << "     - " << n << "\n";
  }
}

void PrintRejected(const estimate::Plan& plan, std::ostream& out) {
  if (plan.rejected.empty()) return;
  out << "\nRejected\n";
  Table t({{"GPU"}, {"REASON"}});
  for (const auto& r : plan.rejected) t.AddRow({r.gpu, r.reason});
  t.Print(out, "  ");
}

void PrintNotes(const estimate::Plan& plan, std::ostream& out) {
  if (plan.notes.empty()) return;
  out << "\nNotes\n";
  for (const auto& n : plan.notes) out << "  - " << n << "\n";
}

}  // namespace

void PrintPlanTable(const estimate::Plan& plan, const PlanTableOptions& options,
                    std::ostream& out) {
  PrintHeader(plan, out);
  PrintAssumptions(plan, out);
  PrintEstimates(plan, out);
  PrintOptions(plan, options.top, out);
  PrintRejected(plan, out);
  PrintNotes(plan, out);
}

}  // namespace meridian::cli
