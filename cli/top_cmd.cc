#include "cli/top_cmd.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <thread>

#include "cli/client_run.h"
#include "cli/table.h"
#include "control/job_state.h"
#include "core/time.h"

namespace meridian::cli {

namespace {

using nlohmann::json;

std::string Num(const json& obj, const char* key, int decimals, double scale = 1) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return "-";
  return Fixed(obj[key].get<double>() * scale, decimals);
}

std::string Str(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) return "-";
  return obj[key].get<std::string>();
}

// One frame's data: the running jobs and each one's utilization.
int Fetch(ClientRun& run, json* jobs, json* util) {
  int rc = kExitOk;
  const std::string running(control::JobStateName(control::JobState::kRunning));
  auto r = run.client().Get("/v1/jobs" + Query({{"state", running}, {"limit", "1000"}}));
  if (int bad = run.Check(r); bad >= 0) return bad;
  json body;
  if (!run.Json(*r, &body, &rc)) return rc;
  *jobs = body.value("jobs", json::array());
  *util = json::array();
  for (const json& j : *jobs) {
    auto u = run.client().Get(JobPath(j.value("id", ""), "/utilization"));
    if (int bad = run.Check(u); bad >= 0) return bad;
    json one;
    if (!run.Json(*u, &one, &rc)) return rc;
    util->push_back(std::move(one));
  }
  return kExitOk;
}

}  // namespace

void PrintTopFrame(const json& jobs, const json& util, std::ostream& out) {
  std::string gpu;
  for (const json& u : util) {
    if (u.contains("gpu_status") && u["gpu_status"].is_string()) gpu = u["gpu_status"];
  }
  out << "meridian top: " << jobs.size() << " running job" << (jobs.size() == 1 ? "" : "s");
  if (!util.empty()) out << ", window " << Num(util[0], "window_s", 0) << " s";
  out << "\n";
  if (!gpu.empty()) out << "GPU figures: " << gpu << "\n";
  if (jobs.empty()) {
    out << "no running jobs\n";
    return;
  }
  using A = Table::Align;
  Table t({{"JOB"}, {"NAME"}, {"CLASS"}, {"GPU SM%", A::kRight}, {"MEM BW%", A::kRight},
           {"GPU MEM GiB", A::kRight}, {"CPU", A::kRight}, {"VCPUS", A::kRight},
           {"IOWAIT", A::kRight}, {"READ MB/s", A::kRight}, {"ACTION"}});
  std::vector<std::string> notes;
  for (size_t i = 0; i < jobs.size() && i < util.size(); ++i) {
    const json& j = jobs[i];
    const json& u = util[i];
    const json f = u.value("figures", json());
    const json rec = u.value("recommendation", json());
    const std::string vcpus = f.is_object() && f.value("vcpus", 0) > 0 ? std::to_string(f.value("vcpus", 0)) : "-";
    t.AddRow({Str(j, "id"), Str(j, "name"), Str(u, "class"), Num(f, "gpu_sm_pct", 0),
              Num(f, "gpu_mem_bw_pct", 0), Num(f, "gpu_mem_used_mib", 1, 1.0 / 1024),
              Num(f, "cpu_cores", 2), vcpus, Num(f, "iowait_frac", 2), Num(f, "read_mb_per_s", 1),
              Str(rec, "action")});
    std::string note = Str(j, "id") + "  " + Str(u, "summary");
    if (rec.is_object() && rec.value("action", "none") != "none") {
      note += "\n    -> " + Str(rec, "text");
      if (!Str(rec, "expected_effect").empty() && Str(rec, "expected_effect") != "-") {
        note += "\n       " + Str(rec, "expected_effect");
      }
    }
    notes.push_back(note);
  }
  t.Print(out);
  out << "\n";
  for (const std::string& n : notes) out << n << "\n";
}

std::unique_ptr<TopCommand> AddTopCommand(CLI::App& app) {
  auto c = std::make_unique<TopCommand>();
  c->top = app.add_subcommand(
      "top", "running jobs with their telemetry class and recommendation, refreshed live");
  c->top->add_flag("--once", c->once, "print one frame and exit");
  c->top->add_option("--interval", c->interval, "time between frames, e.g. 2s")->capture_default_str();
  c->top->add_option("-o,--output", c->output, "output format (json: one frame's data)")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return c;
}

std::optional<int> RunTopCommand(const TopCommand& c, std::ostream& out, std::ostream& err) {
  if (!c.top->parsed()) return std::nullopt;
  ClientRun run("top", out, err);
  auto every = ParseDuration(c.interval);
  if (!every.ok() || *every < 1 || *every > 3600) {
    return run.Fail("--interval: \"" + c.interval + "\" must be a duration from 1s to 1h (\"2s\")");
  }
  if (!run.Connect()) return kExitBadInput;
  for (;;) {
    json jobs, util;
    if (int rc = Fetch(run, &jobs, &util); rc != kExitOk) return rc;
    if (c.output == "json") {
      json frame = json::array();
      for (size_t i = 0; i < jobs.size(); ++i) frame.push_back({{"job", jobs[i]}, {"utilization", util[i]}});
      out << json{{"jobs", frame}}.dump(2) << "\n";
    } else {
      if (!c.once) out << "\033[H\033[2J";  // home and clear, as top does
      PrintTopFrame(jobs, util, out);
    }
    out.flush();
    if (c.once) return kExitOk;
    std::this_thread::sleep_for(std::chrono::seconds(*every));
  }
}

}  // namespace meridian::cli
