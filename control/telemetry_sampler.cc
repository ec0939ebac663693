#include "control/telemetry_sampler.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "control/submission.h"
#include "telemetry/attribution.h"
#include "telemetry/window.h"

namespace meridian::control {

namespace {

// The jobs whose attempts may have processes to sample (starting, running
// or checkpointing), read by state, a page at a time: the queue, however
// long, is not read.
Result<std::vector<JobRow>> JobsWithProcesses(Store* store) {
  constexpr int kPage = 1000;
  std::vector<JobRow> out;
  for (JobState s : {JobState::kStarting, JobState::kRunning, JobState::kCheckpointing}) {
    ListFilter f;
    f.state = s;
    f.limit = kPage;
    for (;;) {
      auto page = store->ListJobs(f);
      if (!page.ok()) return page.status();
      const size_t n = page->size();
      if (n > 0) f.after_seq = page->back().seq;
      for (JobRow& j : *page) out.push_back(std::move(j));
      if (n < static_cast<size_t>(kPage)) break;
    }
  }
  return out;
}

// The process group of a local backend's handle, "pid:<pid>:<start time>"
// (the job's first process leads its own group); 0 for other backends.
pid_t GroupOf(const std::string& handle) {
  if (!handle.starts_with("pid:")) return 0;
  return static_cast<pid_t>(std::strtol(handle.c_str() + 4, nullptr, 10));
}

std::string Label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

telemetry::JobContext ContextFor(const JobRow& job, const std::vector<NodeRow>& nodes,
                                 const SamplerOptions& o) {
  telemetry::JobContext c;
  c.gpus = static_cast<int>(job.placement.gpus.size());
  c.mig_profile = job.placement.mig;
  c.run_region = job.placement.region.empty() ? o.region : job.placement.region;
  c.gpu_hour_usd = o.gpu_hour_usd;
  for (const NodeRow& n : nodes) {
    if (n.name != job.placement.node) continue;
    c.gpu_model = c.gpus > 0 ? n.gpu_model : "";
    c.node_vcpus = n.vcpus;
  }
  auto spec = SpecFromJson(job.spec_json, job.id);
  if (spec.ok()) {
    c.vcpus = spec->resources.vcpus.value_or(0);
    c.data_region = spec->data.region;
    c.data_gb = spec->data.size_gb;
  }
  // What the attempt holds (a measured profile may have raised it): the
  // ledger allocation's vCPUs.
  auto alloc = nlohmann::json::parse(job.allocation_json, nullptr, false);
  if (alloc.is_object() && alloc.contains("nodes") && alloc["nodes"].is_array()) {
    int vcpus = 0;
    for (const auto& n : alloc["nodes"]) vcpus += n.value("vcpus", 0);
    if (vcpus > 0) c.vcpus = vcpus;
  }
  return c;
}

}  // namespace

TelemetrySampler::TelemetrySampler(Store* store, SamplerOptions options)
    : store_(store), options_(std::move(options)), proc_(options_.proc_root) {
  auto n = telemetry::Nvml::Load(options_.config.nvml_library);
  if (n.ok()) {
    nvml_ = std::move(n).value();
  } else {
    gpu_status_ = n.status().message();
    std::cerr << "meridian serve: telemetry: " << gpu_status_ << "; CPU and I/O figures only\n";
  }
}

TelemetrySampler::~TelemetrySampler() { Stop(); }

void TelemetrySampler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void TelemetrySampler::Stop() {
  {
    std::lock_guard<std::mutex> l(loop_mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int64_t TelemetrySampler::NowMs() const {
  if (options_.clock_ms) return options_.clock_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void TelemetrySampler::Loop() {
  for (;;) {
    SampleOnce();
    std::unique_lock<std::mutex> l(loop_mu_);
    cv_.wait_for(l, std::chrono::milliseconds(options_.config.interval_ms), [&] { return stop_; });
    if (stop_) return;
  }
}

void TelemetrySampler::SampleOnce() {
  auto active = JobsWithProcesses(store_);
  auto nodes = store_->Nodes();
  if (!active.ok() || !nodes.ok()) return;
  const int64_t now = NowMs();
  telemetry::NodeSample node;
  const bool node_ok = proc_.ReadNode(&node);
  node.t_ms = now;
  const telemetry::Thresholds& th = options_.config.thresholds;
  const size_t capacity = static_cast<size_t>(
      std::clamp<int64_t>(th.window_s * 1000 / std::max<int64_t>(1, options_.config.interval_ms) + 2, 4, 100000));
  std::lock_guard<std::mutex> l(mu_);
  if (node_ok) {
    node_before_ = node_.t_ms > 0 ? node_ : node;
    node_ = node;
  }
  std::map<std::string, bool> seen;
  for (const JobRow& job : *active) {
    if (seen.count(job.id) != 0) continue;  // read twice: its state changed between the reads
    const pid_t pgid = GroupOf(job.handle);
    if (pgid <= 0) continue;
    auto& slot = jobs_[job.id];
    if (!slot || slot->handle != job.handle) {  // a new attempt starts a new series
      slot = std::make_unique<Tracked>(capacity);
      slot->group = std::make_unique<telemetry::GroupCounters>(pgid);
      slot->handle = job.handle;
    }
    seen[job.id] = true;
    Tracked& t = *slot;
    telemetry::JobSample s = t.group->Sample(proc_, now);
    // The group is gone (the attempt ended; the reconciler has not recorded
    // it yet): no sample, so the last window stays what the job did.
    if (s.processes == 0) continue;
    t.view.context = ContextFor(job, *nodes, options_);
    s.vcpus = t.view.context.vcpus;
    if (nvml_) {  // the node's devices, with this job's processes' per-process figures
      s.gpus = telemetry::JobGpus(nvml_->Read(t.group->pids()), job.placement.gpus,
                                  !job.placement.mig.empty());
    }
    t.ring.Push(std::move(s));
    t.view.job_id = job.id;
    t.view.samples = t.ring.Ordered();
    t.view.classification =
        telemetry::Classify(telemetry::ComputeWindow(t.view.samples, th, node_.online_cpus), th);
    t.view.recommendation = telemetry::Recommend(t.view.classification, t.view.context, th,
                                                 *options_.catalog);
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    it = seen.count(it->first) ? std::next(it) : jobs_.erase(it);
  }
  StoreRows(now);
}

// Under mu_: one row per job per store_every, the means since the last row.
void TelemetrySampler::StoreRows(int64_t now_ms) {
  std::vector<UtilizationRow> rows;
  telemetry::Thresholds span = options_.config.thresholds;
  span.window_s = options_.config.store_every_s;
  for (auto& [id, t] : jobs_) {
    if (t->view.samples.empty()) continue;
    if (t->last_stored_ms == 0) t->last_stored_ms = t->view.samples.front().t_ms;
    if (now_ms - t->last_stored_ms < options_.config.store_every_s * 1000) continue;
    t->last_stored_ms = now_ms;
    telemetry::WindowFigures w = telemetry::ComputeWindow(t->view.samples, span, node_.online_cpus);
    UtilizationRow r;
    r.job_id = id;
    r.at = now_ms / 1000;
    r.cpu_cores = w.cpu_cores;
    r.iowait_frac = w.iowait_frac;
    r.read_mb_per_s = w.read_mb_per_s;
    r.gpu_sm_pct = w.gpu_sm_pct;
    r.gpu_mem_bw_pct = w.gpu_bw_pct;
    r.gpu_mem_used_mib = w.gpu_mem_used_mib;
    r.gpu_power_w = w.gpu_power_w;
    r.job_class = std::string(telemetry::ToString(t->view.classification.job_class));
    rows.push_back(std::move(r));
  }
  if (Status st = store_->AppendUtilization(rows, options_.config.store_rows_per_job); !st.ok()) {
    std::cerr << "meridian serve: telemetry: " << st.message() << "\n";
  }
}

std::optional<JobTelemetry> TelemetrySampler::View(const std::string& job_id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second->view;
}

std::vector<JobTelemetry> TelemetrySampler::Views() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<JobTelemetry> out;
  for (const auto& [id, t] : jobs_) out.push_back(t->view);
  return out;
}

std::string TelemetrySampler::gpu_status() const { return gpu_status_; }

std::vector<GaugeFamily> TelemetrySampler::Gauges() const {
  std::lock_guard<std::mutex> l(mu_);
  GaugeFamily cls{"meridian_job_class", "1 for the class the telemetry classifier gives each running job.", {}};
  GaugeFamily cpu{"meridian_job_cpu_cores", "CPU seconds per second of the job's processes over the window.", {}};
  GaugeFamily iow{"meridian_job_iowait_ratio", "Block-I/O wait seconds per second of the job's processes.", {}};
  GaugeFamily rd{"meridian_job_read_bytes_per_second", "Storage bytes read per second by the job.", {}};
  GaugeFamily wr{"meridian_job_write_bytes_per_second", "Storage bytes written per second by the job.", {}};
  GaugeFamily cs{"meridian_job_context_switches_per_second", "Context switches per second by kind.", {}};
  GaugeFamily sm{"meridian_job_gpu_sm_utilization_percent", "Mean SM utilization of the job's GPUs.", {}};
  GaugeFamily bw{"meridian_job_gpu_memory_bandwidth_utilization_percent", "Mean memory-bandwidth utilization of the job's GPUs.", {}};
  GaugeFamily mem{"meridian_job_gpu_memory_used_mib", "Highest GPU memory used per device by the job.", {}};
  GaugeFamily pw{"meridian_job_gpu_power_watts", "Mean power per device of the job's GPUs.", {}};
  for (const auto& [id, t] : jobs_) {
    const telemetry::Classification& c = t->view.classification;
    const telemetry::WindowFigures& w = c.figures;
    const std::string job = "job=\"" + Label(id) + "\"";
    cls.lines.push_back({job + ",class=\"" + std::string(telemetry::ToString(c.job_class)) + "\"", 1});
    cpu.lines.push_back({job, w.cpu_cores});
    iow.lines.push_back({job, w.iowait_frac});
    rd.lines.push_back({job, w.read_mb_per_s * 1e6});
    wr.lines.push_back({job, w.write_mb_per_s * 1e6});
    cs.lines.push_back({job + ",kind=\"voluntary\"", w.ctx_voluntary_per_s});
    cs.lines.push_back({job + ",kind=\"involuntary\"", w.ctx_involuntary_per_s});
    if (telemetry::Known(w.gpu_sm_pct)) sm.lines.push_back({job, w.gpu_sm_pct});
    if (telemetry::Known(w.gpu_bw_pct)) bw.lines.push_back({job, w.gpu_bw_pct});
    if (telemetry::Known(w.gpu_mem_used_mib)) mem.lines.push_back({job, w.gpu_mem_used_mib});
    if (telemetry::Known(w.gpu_power_w)) pw.lines.push_back({job, w.gpu_power_w});
  }
  std::vector<GaugeFamily> out = {cls, cpu, iow, rd, wr, cs, sm, bw, mem, pw};
  GaugeFamily load{"meridian_node_load1", "The node's 1-minute load average (/proc/loadavg).", {}};
  GaugeFamily busy{"meridian_node_cpu_busy_ratio", "Share of the node's CPU time busy since the last sample.", {}};
  GaugeFamily niow{"meridian_node_cpu_iowait_ratio", "Share of the node's CPU time in I/O wait since the last sample.", {}};
  GaugeFamily gpu_ok{"meridian_telemetry_gpu_available", "1 when NVML loaded and GPU figures are sampled.", {}};
  load.lines.push_back({"", node_.load1});
  const double dt = node_.cpu_total_s - node_before_.cpu_total_s;
  busy.lines.push_back({"", dt > 0 ? (node_.cpu_busy_s - node_before_.cpu_busy_s) / dt : 0});
  niow.lines.push_back({"", dt > 0 ? (node_.cpu_iowait_s - node_before_.cpu_iowait_s) / dt : 0});
  gpu_ok.lines.push_back({"", nvml_ ? 1.0 : 0.0});
  out.push_back(load);
  out.push_back(busy);
  out.push_back(niow);
  out.push_back(gpu_ok);
  return out;
}

}  // namespace meridian::control
