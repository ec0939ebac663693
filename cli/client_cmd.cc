#include "cli/client_cmd.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/api_client.h"
#include "cli/client_run.h"
#include "cli/commands.h"
#include "cli/table.h"

namespace meridian::cli {


namespace {

using nlohmann::json;

// A field as table text: strings as they are, null or absent as "-".
std::string Text(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return "-";
  const json& v = obj[key];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : e.dump());
    return s.empty() ? "-" : s;
  }
  if (v.is_number_float()) return Fixed(v.get<double>(), 1);
  return v.dump();
}

std::string PlacementText(const json& job) {
  if (!job.contains("placement") || !job["placement"].is_object()) return "-";
  const json& p = job["placement"];
  std::string s = Text(p, "node");
  std::string gpus = Text(p, "gpus");
  if (gpus != "-") s += " gpus " + gpus;
  if (Text(p, "mig") != "-") s += " mig " + Text(p, "mig");
  return s;
}

int RunSubmit(const ClientCommands& c, std::ostream& out, std::ostream& err) {
  ClientRun run("submit", out, err);
  std::ifstream in(c.file, std::ios::binary);
  if (!in) return run.Fail(c.file + ": cannot read the job spec file");
  std::stringstream text;
  text << in.rdbuf();
  if (!run.Connect()) return kExitBadInput;
  std::string type = c.file.ends_with(".json") ? "application/json" : "application/yaml";
  std::string key = c.idempotency_key.empty() ? NewIdempotencyKey() : c.idempotency_key;
  // A retry carries the same key, so a submission that reached the daemon
  // before the connection broke comes back as the same job, never a second one.
  Result<ApiResponse> r = Status::Internal("unset");
  for (int attempt = 0;; ++attempt) {
    r = run.client().Post("/v1/jobs", text.str(), type, {{"Idempotency-Key", key}});
    bool transient = !r.ok() || r->status == 502 || r->status == 503 || r->status == 504;
    if (!transient || attempt >= c.retries) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(200 << attempt, 2000)));
  }
  if (int rc = run.Check(r); rc >= 0) return rc;
  json job;
  int rc = kExitOk;
  if (!run.Json(*r, &job, &rc)) return rc;
  if (c.output == "json") {
    out << job.dump(2) << "\n";
  } else {
    out << Text(job, "id") << "\n";
  }
  return kExitOk;
}

int RunStatus(const ClientCommands& c, std::ostream& out, std::ostream& err) {
  ClientRun run("status", out, err);
  if (!run.Connect()) return kExitBadInput;
  int rc = kExitOk;
  if (!c.id.empty()) {
    auto r = run.client().Get(JobPath(c.id));
    if (int bad = run.Check(r); bad >= 0) return bad;
    json job;
    if (!run.Json(*r, &job, &rc)) return rc;
    if (c.output == "json") {
      out << job.dump(2) << "\n";
    } else {
      PrintJob(job, out);
    }
    return kExitOk;
  }
  json all = json::array();
  std::string token;
  while (static_cast<int>(all.size()) < c.limit) {
    int page = std::min(c.limit - static_cast<int>(all.size()), 1000);
    auto r = run.client().Get("/v1/jobs" + Query({{"tenant", c.tenant},
                                                  {"state", c.state},
                                                  {"kind", c.kind},
                                                  {"limit", std::to_string(page)},
                                                  {"page_token", token}}));
    if (int bad = run.Check(r); bad >= 0) return bad;
    json body;
    if (!run.Json(*r, &body, &rc)) return rc;
    if (!body.contains("jobs") || !body["jobs"].is_array()) {
      return run.Fail("the daemon's job list has no \"jobs\" array", kExitInternal);
    }
    for (auto& j : body["jobs"]) all.push_back(std::move(j));
    const json next = body.value("next_page_token", json());
    if (!next.is_string() || next.get<std::string>().empty() || body["jobs"].empty()) break;
    token = next.get<std::string>();
  }
  if (static_cast<int>(all.size()) > c.limit) all.erase(all.begin() + c.limit, all.end());
  if (c.output == "json") {
    out << json{{"jobs", all}}.dump(2) << "\n";
  } else {
    PrintJobTable(all, out);
  }
  return kExitOk;
}

int RunCancel(const ClientCommands& c, std::ostream& out, std::ostream& err) {
  ClientRun run("cancel", out, err);
  if (!run.Connect()) return kExitBadInput;
  auto r = run.client().Post(JobPath(c.id, "/cancel"), "", "application/json");
  if (int bad = run.Check(r); bad >= 0) return bad;
  json job;
  int rc = kExitOk;
  if (!run.Json(*r, &job, &rc)) return rc;
  if (c.output == "json") {
    out << job.dump(2) << "\n";
  } else {
    out << Text(job, "id") << " " << Text(job, "state") << "\n";
  }
  return kExitOk;
}

// The offset protocol: each answer carries X-Next-Offset; with -f, polls
// until X-Job-Done says the job has ended and nothing is left to read.
int RunLogs(const ClientCommands& c, std::ostream& out, std::ostream& err) {
  ClientRun run("logs", out, err);
  if (!run.Connect()) return kExitBadInput;
  long long offset = 0;
  for (;;) {
    auto r = run.client().Get(JobPath(c.id, "/logs") +
                              Query({{"stream", c.stream}, {"offset", std::to_string(offset)}}));
    if (int bad = run.Check(r); bad >= 0) return bad;
    out << r->body;
    out.flush();
    std::string next = r->Header("x-next-offset");
    long long advanced = offset + static_cast<long long>(r->body.size());
    if (!next.empty() && next.find_first_not_of("0123456789") == std::string::npos) {
      advanced = std::stoll(next);
    }
    bool moved = advanced != offset;
    offset = advanced;
    bool done = r->Header("x-job-done") == "true";
    if (moved) continue;  // more may be waiting: read until nothing comes
    if (!c.follow || done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(c.poll_ms));
  }
  return kExitOk;
}

int RunNodes(const ClientCommands& c, std::ostream& out, std::ostream& err) {
  ClientRun run("nodes", out, err);
  if (!run.Connect()) return kExitBadInput;
  auto r = run.client().Get("/v1/nodes");
  if (int bad = run.Check(r); bad >= 0) return bad;
  json body;
  int rc = kExitOk;
  if (!run.Json(*r, &body, &rc)) return rc;
  if (c.output == "json") {
    out << body.dump(2) << "\n";
  } else {
    PrintNodes(body.value("nodes", json::array()), out);
  }
  return kExitOk;
}

void AddOutput(CLI::App* cmd, ClientCommands& c) {
  cmd->add_option("-o,--output", c.output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

}  // namespace

void PrintJobTable(const json& jobs, std::ostream& out) {
  Table t({{"ID"}, {"NAME"}, {"TENANT"}, {"KIND"}, {"STATE"},
           {"ATTEMPTS", Table::Align::kRight}, {"PLACEMENT"}, {"SUBMITTED"}, {"REASON"}});
  for (const auto& j : jobs) {
    t.AddRow({Text(j, "id"), Text(j, "name"), Text(j, "tenant"), Text(j, "kind"), Text(j, "state"),
              Text(j, "attempts"), PlacementText(j), Text(j, "submitted_at"), Text(j, "reason")});
  }
  if (t.rows() == 0) {
    out << "no jobs\n";
    return;
  }
  t.Print(out);
}

void PrintJob(const json& job, std::ostream& out) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"id", Text(job, "id")},
      {"name", Text(job, "name")},
      {"tenant", Text(job, "tenant")},
      {"kind", Text(job, "kind")},
      {"state", Text(job, "state")},
      {"priority", Text(job, "priority")},
      {"submitted", Text(job, "submitted_at")},
      {"started", Text(job, "started_at")},
      {"ended", Text(job, "ended_at")},
      {"attempts", Text(job, "attempts")},
      {"exit code", Text(job, "exit_code")},
      {"placement", PlacementText(job)},
      {"pricing", job.contains("placement") && job["placement"].is_object()
                      ? Text(job["placement"], "pricing")
                      : Text(job, "pricing")},
      {"region", job.contains("placement") && job["placement"].is_object()
                     ? Text(job["placement"], "region")
                     : "-"},
      {"reason", Text(job, "reason")},
  };
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.first.size());
  for (const auto& [k, v] : rows) out << k << ":" << std::string(width - k.size() + 2, ' ') << v << "\n";
}

void PrintNodes(const json& nodes, std::ostream& out) {
  Table t({{"NAME"}, {"GPU MODEL"}, {"GPUS", Table::Align::kRight},
           {"VCPUS", Table::Align::kRight}, {"RAM GIB", Table::Align::kRight}, {"STATE"}, {"JOBS"}});
  for (const auto& n : nodes) {
    std::string ram = n.contains("ram_gib") && n["ram_gib"].is_number()
                          ? Fixed(n["ram_gib"].get<double>(), 1)
                          : "-";
    t.AddRow({Text(n, "name"), Text(n, "gpu_model"), Text(n, "gpus"), Text(n, "vcpus"), ram,
              Text(n, "state"), Text(n, "jobs")});
  }
  if (t.rows() == 0) {
    out << "no nodes\n";
    return;
  }
  t.Print(out);
}

std::unique_ptr<ClientCommands> AddClientCommands(CLI::App& app) {
  auto c = std::make_unique<ClientCommands>();
  c->submit = app.add_subcommand(
      "submit", "submit a job spec to the daemon at $MERIDIAN_URL; prints the job id");
  c->submit->add_option("FILE", c->file, "job spec, YAML or JSON (.json) (docs/job-spec.md)")
      ->required();
  c->submit->add_option("--idempotency-key", c->idempotency_key,
                        "the same key and spec return the same job (default: a random key, "
                        "reused by this command's retries)");
  c->submit->add_option("--retries", c->retries, "retries when the daemon cannot be reached")
      ->check(CLI::Range(0, 20))
      ->capture_default_str();
  AddOutput(c->submit, *c);

  c->status = app.add_subcommand("status", "list jobs, or show one job");
  c->status->add_option("ID", c->id, "job id (e.g. j-00000042)");
  c->status->add_option("--state", c->state, "only jobs in this state");
  c->status->add_option("--tenant", c->tenant, "only this tenant's jobs (admin)");
  c->status->add_option("--kind", c->kind, "only jobs of this kind");
  c->status->add_option("--limit", c->limit, "at most this many jobs")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  AddOutput(c->status, *c);

  c->cancel = app.add_subcommand("cancel", "cancel a job (SIGTERM, grace period, SIGKILL)");
  c->cancel->add_option("ID", c->id, "job id")->required();
  AddOutput(c->cancel, *c);

  c->logs = app.add_subcommand("logs", "print a job's output");
  c->logs->add_option("ID", c->id, "job id")->required();
  c->logs->add_flag("-f,--follow", c->follow, "keep printing until the job ends");
  c->logs->add_option("--stream", c->stream, "which output")
      ->check(CLI::IsMember({"stdout", "stderr"}))
      ->capture_default_str();

  c->nodes = app.add_subcommand("nodes", "list the daemon's nodes");
  AddOutput(c->nodes, *c);
  return c;
}

std::optional<int> RunClientCommand(const ClientCommands& c, std::ostream& out,
                                    std::ostream& err) {
  if (c.submit->parsed()) return RunSubmit(c, out, err);
  if (c.status->parsed()) return RunStatus(c, out, err);
  if (c.cancel->parsed()) return RunCancel(c, out, err);
  if (c.logs->parsed()) return RunLogs(c, out, err);
  if (c.nodes->parsed()) return RunNodes(c, out, err);
  return std::nullopt;
}

}  // namespace meridian::cli
