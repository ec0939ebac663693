#include "cli/telemetry_cmd.h"

#include <CLI/CLI.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "telemetry/attribution.h"
#include "telemetry/classify.h"
#include "telemetry/group.h"
#include "telemetry/nvml.h"
#include "telemetry/recommend.h"
#include "telemetry/series_csv.h"

namespace meridian::cli {

namespace {

using nlohmann::json;
using telemetry::Known;

int Fail(std::ostream& err, const std::string& cmd, const std::string& msg, int code = kExitBadInput) {
  err << "meridian telemetry " << cmd << ": " << msg << "\n";
  return code;
}

std::string Cell(double v, int decimals) { return Known(v) ? Fixed(v, decimals) : "-"; }

Status LoadThresholds(const TelemetryCommands& c, telemetry::Thresholds* t) {
  if (!c.config.empty()) {
    YAML::Node root;
    try {
      root = YAML::LoadFile(c.config);
    } catch (const YAML::Exception& e) {
      return Status::Invalid(c.config + ": " + e.what());
    }
    if (root.IsMap() && root["telemetry"]) {
      telemetry::TelemetryConfig tc;
      MERIDIAN_RETURN_IF_ERROR(telemetry::ParseTelemetryConfig(root["telemetry"], c.config, &tc));
      *t = tc.thresholds;
    }
  }
  if (!c.window.empty()) {
    auto w = telemetry::ParseDurationMs(c.window);
    if (!w.ok() || *w < 1000) {
      return Status::Invalid("--window: \"" + c.window + "\" must be a duration of 1s or more (\"10s\")");
    }
    t->window_s = *w / 1000;
    t->max_gap_s = std::min(t->max_gap_s, t->window_s);  // a gap cannot outlast the window
  }
  return telemetry::ValidateThresholds(*t, "");
}

void PrintVerdict(const telemetry::Classification& k, const telemetry::Recommendation& r,
                  const std::string& output, std::ostream& out) {
  if (output == "json") {
    json ev = json::array();
    for (const auto& e : k.evidence) {
      ev.push_back({{"figure", e.figure}, {"value", e.value}, {"op", e.op},
                    {"threshold", e.threshold}, {"limit", e.limit}});
    }
    out << json{{"class", std::string(telemetry::ToString(k.job_class))},
                {"stall", std::string(telemetry::ToString(k.stall))},
                {"summary", k.summary},
                {"evidence", ev},
                {"recommendation", {{"action", r.action}, {"text", r.text},
                                    {"expected_effect", r.expected_effect}, {"vcpus", r.vcpus},
                                    {"gpu_model", r.gpu_model}, {"mig_profile", r.mig_profile},
                                    {"speedup", r.speedup}}}}
               .dump(2)
        << "\n";
    return;
  }
  out << "class: " << telemetry::ToString(k.job_class) << "\n";
  out << "summary: " << k.summary << "\n";
  out << "evidence:\n";
  for (const auto& e : k.evidence) {
    out << "  " << e.figure << " " << Fixed(e.value, 3) << " " << e.op << " " << e.threshold << " "
        << Fixed(e.limit, 3) << "\n";
  }
  out << "recommendation: " << r.action << ": " << r.text << "\n";
  if (!r.expected_effect.empty()) out << "expected effect: " << r.expected_effect << "\n";
}

std::vector<int> ParseGpus(const std::string& s, bool* ok) {
  std::vector<int> out;
  *ok = true;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    const std::string one = s.substr(i, j - i);
    if (one.empty() || one.find_first_not_of("0123456789") != std::string::npos) *ok = false;
    else out.push_back(std::stoi(one));
    i = j + 1;
  }
  return out;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int RunSample(const TelemetryCommands& c, const catalog::Catalog& cat, std::ostream& out,
              std::ostream& err) {
  telemetry::Thresholds t;
  if (Status st = LoadThresholds(c, &t); !st.ok()) return Fail(err, "sample", st.message());
  auto every = telemetry::ParseDurationMs(c.interval);
  if (!every.ok() || *every < 100) {
    return Fail(err, "sample", "--interval: \"" + c.interval + "\" must be a duration of 100ms or more");
  }
  auto total = telemetry::ParseDurationMs(c.duration);
  if (!total.ok() || *total < *every) {
    return Fail(err, "sample", "--duration: \"" + c.duration + "\" must be a duration of at least --interval");
  }
  bool gpus_ok = true;
  std::vector<int> gpus = ParseGpus(c.gpus, &gpus_ok);
  if (!gpus_ok) return Fail(err, "sample", "--gpus: \"" + c.gpus + "\" must be GPU indexes, e.g. 0,1");
  telemetry::ProcFs fs;
  if (fs.GroupMembers(c.pgid).empty()) {
    return Fail(err, "sample", "--pgid: " + std::to_string(c.pgid) + " is not a running process group");
  }
  auto nvml = telemetry::Nvml::Load();
  if (!nvml.ok()) err << "meridian telemetry sample: " << nvml.status().message() << "\n";
  if (nvml.ok() && gpus.empty()) {
    for (int i = 0; i < (*nvml)->device_count(); ++i) gpus.push_back(i);
  }
  telemetry::NodeSample node;
  (void)fs.ReadNode(&node);
  telemetry::GroupCounters group(c.pgid);
  std::vector<telemetry::JobSample> series;
  telemetry::JobContext ctx;
  ctx.gpu_model = c.gpu_model;
  ctx.gpus = static_cast<int>(gpus.size());
  ctx.vcpus = c.vcpus;
  ctx.node_vcpus = node.online_cpus;
  if (c.output == "csv") out << telemetry::SeriesCsvHeader();
  telemetry::Classification k;
  const int64_t end = NowMs() + *total;
  for (;;) {
    telemetry::JobSample s = group.Sample(fs, NowMs());
    if (s.processes == 0) break;  // the group ended
    s.vcpus = c.vcpus;
    if (nvml.ok()) s.gpus = telemetry::JobGpus((*nvml)->Read(group.pids()), gpus, c.mig);
    series.push_back(s);
    k = telemetry::Classify(telemetry::ComputeWindow(series, t, node.online_cpus), t);
    const auto& w = k.figures;
    if (c.output == "csv") {
      out << telemetry::SeriesCsvRows(s);
    } else if (c.output == "table") {
      out << "t=" << Fixed((s.t_ms - series.front().t_ms) / 1000.0, 1) << "s procs=" << s.processes
          << " cpu=" << Fixed(w.cpu_cores, 2) << " iowait=" << Fixed(w.iowait_frac, 2)
          << " read=" << Fixed(w.read_mb_per_s, 1) << "MB/s gpu_sm=" << Cell(w.gpu_sm_pct, 0)
          << "% mem_bw=" << Cell(w.gpu_bw_pct, 0) << "% gpu_mem=" << Cell(w.gpu_mem_used_mib, 0)
          << "MiB power=" << Cell(w.gpu_power_w, 0) << "W class=" << telemetry::ToString(k.job_class)
          << "\n";
    }
    out.flush();
    if (NowMs() + *every > end) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(*every));
  }
  if (c.output != "csv") PrintVerdict(k, telemetry::Recommend(k, ctx, t, cat), c.output, out);
  return kExitOk;
}

int RunClassify(const TelemetryCommands& c, const catalog::Catalog& cat, std::ostream& out,
                std::ostream& err) {
  telemetry::Thresholds t;
  if (Status st = LoadThresholds(c, &t); !st.ok()) return Fail(err, "classify", st.message());
  auto series = telemetry::ReadSeriesCsv(c.file);
  if (!series.ok()) return Fail(err, "classify", series.status().message());
  telemetry::JobContext ctx;
  ctx.gpu_model = c.gpu_model;
  ctx.vcpus = c.vcpus;
  ctx.gpus = series->empty() || series->back().gpus.empty() ? 0 : 1;
  if (c.vcpus > 0) {
    for (auto& s : *series) s.vcpus = c.vcpus;
  }
  telemetry::Classification k = telemetry::Classify(telemetry::ComputeWindow(*series, t, 0), t);
  PrintVerdict(k, telemetry::Recommend(k, ctx, t, cat), c.output, out);
  return kExitOk;
}

}  // namespace

std::unique_ptr<TelemetryCommands> AddTelemetryCommands(CLI::App& app) {
  auto c = std::make_unique<TelemetryCommands>();
  c->telemetry = app.add_subcommand("telemetry", "sample and classify jobs without the daemon (docs/telemetry.md)");
  c->telemetry->require_subcommand(1);
  auto common = [&](CLI::App* s) {
    s->add_option("--window", c->window, "the classifier's sliding window (default: the config's, 60s)");
    s->add_option("--vcpus", c->vcpus, "the job's vCPU allocation (0: not stated)")->check(CLI::Range(0, 4096));
    s->add_option("--gpu-model", c->gpu_model, "catalog GPU model, for the recommendation");
    s->add_option("--config", c->config, "a serve config whose telemetry: thresholds apply")
        ->check(CLI::ExistingFile);
  };
  c->sample = c->telemetry->add_subcommand("sample", "sample a process group and classify it as it runs");
  c->sample->add_option("--pgid", c->pgid, "the process group (a job's first pid)")->required()->check(CLI::PositiveNumber);
  c->sample->add_option("--interval", c->interval, "time between samples")->capture_default_str();
  c->sample->add_option("--duration", c->duration, "how long to sample")->capture_default_str();
  c->sample->add_option("--gpus", c->gpus, "the job's GPU indexes (default: every GPU NVML sees)");
  c->sample->add_flag("--mig", c->mig, "the job runs on MIG instances of those GPUs");
  c->sample->add_option("-o,--output", c->output, "table, json (the verdict) or csv (the samples)")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  common(c->sample);
  c->classify = c->telemetry->add_subcommand("classify", "classify a recorded sample series (CSV)");
  c->classify->add_option("FILE", c->file, "series file (telemetry/testdata/*.csv format)")->required();
  c->classify->add_option("-o,--output", c->output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  common(c->classify);
  return c;
}

std::optional<int> RunTelemetryCommand(const TelemetryCommands& c, const std::string& catalog_dir,
                                       std::ostream& out, std::ostream& err) {
  if (!c.telemetry->parsed()) return std::nullopt;
  auto cat = catalog_dir.empty() ? catalog::Catalog::LoadEmbedded()
                                 : catalog::Catalog::LoadFromDirectory(catalog_dir);
  if (!cat.ok()) return Fail(err, c.sample->parsed() ? "sample" : "classify", cat.status().message());
  if (c.sample->parsed()) return RunSample(c, **cat, out, err);
  return RunClassify(c, **cat, out, err);
}

}  // namespace meridian::cli
