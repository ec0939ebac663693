#include "control/utilization_json.h"

namespace meridian::control {

namespace {

using nlohmann::json;

json Figure(double v) { return telemetry::Known(v) ? json(v) : json(nullptr); }

json FiguresToJson(const telemetry::WindowFigures& w) {
  return {{"samples", w.samples},
          {"intervals", w.intervals},
          {"gaps", w.gaps},
          {"covered_s", w.covered_s},
          {"cpu_cores", w.cpu_cores},
          {"cpu_user_cores", w.cpu_user_cores},
          {"cpu_system_cores", w.cpu_system_cores},
          {"cpu_capacity", w.cpu_capacity},
          {"cpu_saturation", w.cpu_saturation},
          {"iowait_frac", w.iowait_frac},
          {"run_delay_frac", w.run_delay_frac},
          {"ctx_voluntary_per_s", w.ctx_voluntary_per_s},
          {"ctx_involuntary_per_s", w.ctx_involuntary_per_s},
          {"read_mb_per_s", w.read_mb_per_s},
          {"write_mb_per_s", w.write_mb_per_s},
          {"threads", w.threads},
          {"vcpus", w.vcpus},
          {"gpu_devices", w.gpu_devices},
          {"mig", w.mig},
          {"gpu_samples", w.gpu_samples},
          {"gpu_sm_pct", Figure(w.gpu_sm_pct)},
          {"gpu_sm_peak_pct", Figure(w.gpu_sm_peak_pct)},
          {"gpu_busy_share", w.gpu_busy_share},
          {"gpu_mem_bw_pct", Figure(w.gpu_bw_pct)},
          {"gpu_mem_used_mib", Figure(w.gpu_mem_used_mib)},
          {"gpu_mem_total_mib", Figure(w.gpu_mem_total_mib)},
          {"gpu_power_w", Figure(w.gpu_power_w)}};
}

}  // namespace

json RecommendationToJson(const telemetry::Recommendation& r) {
  json j = {{"action", r.action}, {"text", r.text}, {"expected_effect", r.expected_effect},
            {"speedup", r.speedup}};
  if (r.vcpus > 0) j["vcpus"] = r.vcpus;
  if (!r.gpu_model.empty()) j["gpu_model"] = r.gpu_model;
  if (!r.mig_profile.empty()) j["mig_profile"] = r.mig_profile;
  if (r.usd_per_hour_before > 0) j["usd_per_hour_before"] = r.usd_per_hour_before;
  if (r.usd_per_hour_after > 0) j["usd_per_hour_after"] = r.usd_per_hour_after;
  if (r.action == "move-data") j["egress_usd"] = r.egress_usd;
  if (r.stall_usd_per_hour > 0) j["stall_usd_per_hour"] = r.stall_usd_per_hour;
  return j;
}

json SampleToJson(const telemetry::JobSample& s) {
  json gpus = json::array();
  for (const telemetry::GpuReading& g : s.gpus) {
    json r = {{"index", g.index},
              {"uuid", g.uuid},
              {"sm_util_pct", Figure(g.sm_util_pct)},
              {"mem_bw_util_pct", Figure(g.mem_bw_util_pct)},
              {"mem_used_mib", Figure(g.mem_used_mib)},
              {"mem_total_mib", Figure(g.mem_total_mib)},
              {"power_w", Figure(g.power_w)},
              {"sm_clock_mhz", Figure(g.sm_clock_mhz)},
              {"mem_clock_mhz", Figure(g.mem_clock_mhz)},
              {"job_mem_used_mib", Figure(g.job_mem_used_mib)},
              {"job_sm_util_pct", Figure(g.job_sm_util_pct)}};
    if (g.mig_gi >= 0) r["mig_gi"] = g.mig_gi;
    gpus.push_back(std::move(r));
  }
  return {{"t_ms", s.t_ms},
          {"cpu_user_s", s.cpu_user_s},
          {"cpu_system_s", s.cpu_system_s},
          {"iowait_s", s.iowait_s},
          {"run_delay_s", s.run_delay_s},
          {"ctx_voluntary", s.ctx_voluntary},
          {"ctx_involuntary", s.ctx_involuntary},
          {"read_bytes", s.read_bytes},
          {"write_bytes", s.write_bytes},
          {"processes", s.processes},
          {"threads", s.threads},
          {"vcpus", s.vcpus},
          {"gpus", gpus}};
}

json UtilizationToJson(const JobRow& job, const std::optional<JobTelemetry>& live,
                       const std::vector<UtilizationRow>& series,
                       const telemetry::TelemetryConfig& config, const std::string& gpu_status) {
  json j = {{"job_id", job.id},
            {"state", JobStateName(job.state)},
            {"interval_s", static_cast<double>(config.interval_ms) / 1000.0},
            {"window_s", config.thresholds.window_s},
            {"gpu_status", gpu_status.empty() ? json(nullptr) : json(gpu_status)}};
  json rows = json::array();
  for (const UtilizationRow& r : series) {
    rows.push_back({{"at", FormatRfc3339(r.at)},
                    {"cpu_cores", r.cpu_cores},
                    {"iowait_frac", r.iowait_frac},
                    {"read_mb_per_s", r.read_mb_per_s},
                    {"gpu_sm_pct", Figure(r.gpu_sm_pct)},
                    {"gpu_mem_bw_pct", Figure(r.gpu_mem_bw_pct)},
                    {"gpu_mem_used_mib", Figure(r.gpu_mem_used_mib)},
                    {"gpu_power_w", Figure(r.gpu_power_w)},
                    {"class", r.job_class}});
  }
  j["series"] = rows;
  if (!live) {
    j["class"] = series.empty() ? "unknown" : series.back().job_class;
    j["stall"] = "none";
    j["summary"] = job.state == JobState::kRunning ? "no samples yet"
                                                   : "not running: the stored series only";
    j["evidence"] = json::array();
    j["figures"] = nullptr;
    j["recommendation"] = nullptr;
    j["samples"] = json::array();
    return j;
  }
  const telemetry::Classification& c = live->classification;
  j["class"] = std::string(telemetry::ToString(c.job_class));
  j["stall"] = std::string(telemetry::ToString(c.stall));
  j["summary"] = c.summary;
  json ev = json::array();
  for (const telemetry::Evidence& e : c.evidence) {
    ev.push_back({{"figure", e.figure}, {"value", e.value}, {"op", e.op},
                  {"threshold", e.threshold}, {"limit", e.limit}});
  }
  j["evidence"] = ev;
  j["figures"] = FiguresToJson(c.figures);
  j["recommendation"] = RecommendationToJson(live->recommendation);
  json samples = json::array();
  for (const telemetry::JobSample& s : live->samples) samples.push_back(SampleToJson(s));
  j["samples"] = samples;
  return j;
}

}  // namespace meridian::control
