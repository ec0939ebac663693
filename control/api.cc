#include "control/api.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <unordered_map>

#include "control/aggregates.h"
#include "control/dashboard.h"
#include "control/job_json.h"
#include "control/submission.h"
#include "control/token.h"
#include "control/utilization_json.h"
#include "spec/spec.h"
#include "spec/suggest.h"

namespace meridian::control {

namespace {

using nlohmann::json;

struct Caller {
  std::string tenant;
  bool admin = false;
};

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message,
               const std::string& field = "") {
  const char* code = "internal";
  switch (status) {
    case 400: code = "invalid_argument"; break;
    case 401: code = "unauthenticated"; break;
    case 404: code = "not_found"; break;
    case 409: code = "conflict"; break;
    case 413: code = "too_large"; break;
    default: break;
  }
  json e = {{"code", code}, {"message", message}};
  e["field"] = field.empty() ? json(nullptr) : json(field);
  SendJson(res, status, {{"error", e}});
}

void SendStatus(httplib::Response& res, const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
      SendError(res, 400, st.message(), FieldOfMessage(st.message()));
      return;
    case StatusCode::kNotFound: SendError(res, 404, st.message()); return;
    default: SendError(res, 500, st.message()); return;
  }
}

}  // namespace

struct ApiServer::Impl {
  Store* store;
  Reconciler* reconciler;
  control::Metrics* metrics;
  std::shared_ptr<const catalog::Catalog> catalog;
  ApiOptions options;
  std::vector<TenantHome> homes;  // read before any thread starts (aggregates.h)
  httplib::Server server;
  int port = 0;
  // httplib's stop() only stops a server already listening, so a Stop that
  // comes before Serve has started listening must keep trying (see Stop).
  std::atomic<bool> serving{false}, stopping{false};

  struct CachedToken {
    TokenRow row;
    std::chrono::steady_clock::time_point fetched;
  };
  std::mutex token_mu;
  std::unordered_map<std::string, CachedToken> tokens;

  UnixSeconds Now() const {
    if (options.clock) return options.clock();
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  // The caller of a /v1 request, or nullopt after answering 401.
  std::optional<Caller> Authenticate(const httplib::Request& req, httplib::Response& res) {
    const std::string h = req.get_header_value("Authorization");
    if (h.empty()) {
      SendError(res, 401, "missing Authorization: Bearer <token> header (meridian token create)",
                "Authorization");
      return std::nullopt;
    }
    if (h.compare(0, 7, "Bearer ") != 0 || h.size() <= 7) {
      SendError(res, 401, "Authorization: expected \"Bearer <token>\"", "Authorization");
      return std::nullopt;
    }
    const std::string hash = Sha256Hex(std::string_view(h).substr(7));
    std::optional<TokenRow> row;
    const auto now_steady = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> l(token_mu);
      auto it = tokens.find(hash);
      if (it != tokens.end() && now_steady - it->second.fetched < std::chrono::seconds(1)) {
        row = it->second.row;
      }
    }
    if (!row) {
      auto r = store->LookupToken(hash);
      if (!r.ok()) {
        SendError(res, 500, r.status().message());
        return std::nullopt;
      }
      row = *r;
      if (row) {
        std::lock_guard<std::mutex> l(token_mu);
        tokens[hash] = {*row, now_steady};
      }
    }
    if (!row) {
      SendError(res, 401, "the bearer token is not known", "Authorization");
      return std::nullopt;
    }
    if (row->revoked_at) {
      SendError(res, 401, "the bearer token was revoked at " + FormatRfc3339(*row->revoked_at),
                "Authorization");
      return std::nullopt;
    }
    if (row->expires_at && *row->expires_at <= Now()) {
      SendError(res, 401, "the bearer token expired at " + FormatRfc3339(*row->expires_at),
                "Authorization");
      return std::nullopt;
    }
    return Caller{row->tenant, row->admin};
  }

  // The job if the caller may see it; otherwise answers 404 and returns nullopt.
  std::optional<JobRow> VisibleJob(const Caller& c, const std::string& id, httplib::Response& res) {
    auto j = store->GetJob(id);
    if (!j.ok()) {
      if (j.status().code() == StatusCode::kNotFound) {
        SendError(res, 404, "job " + id + " not found");
      } else {
        SendError(res, 500, j.status().message());
      }
      return std::nullopt;
    }
    if (!c.admin && j->tenant != c.tenant) {
      SendError(res, 404, "job " + id + " not found");
      return std::nullopt;
    }
    return std::move(j).value();
  }

  void Submit(const httplib::Request& req, httplib::Response& res, const Caller& c) {
    const auto t0 = std::chrono::steady_clock::now();
    auto format = FormatFor(req.get_header_value("Content-Type"), req.body);
    if (!format.ok()) return SendError(res, 400, format.status().message(), "Content-Type");
    const std::string key = req.get_header_value("Idempotency-Key");
    if (key.size() > 200) {
      return SendError(res, 400, "Idempotency-Key: longer than 200 characters", "Idempotency-Key");
    }
    auto sub = ParseSubmission(req.body, *format, c.tenant);
    if (!sub.ok()) return SendStatus(res, sub.status());
    if (!c.admin && sub->spec.tenant != c.tenant) {
      return SendError(res, 400,
                       "request: tenant: \"" + sub->spec.tenant + "\" is not this token's tenant \"" +
                           c.tenant + "\"; leave tenant out or use an admin token",
                       "tenant");
    }
    const UnixSeconds now = Now();
    if (Status v = spec::ValidateAgainstCatalog(sub->spec, *catalog, now); !v.ok()) {
      return SendStatus(res, v);
    }
    NewJob nj;
    nj.tenant = sub->spec.tenant;
    nj.name = sub->spec.name;
    nj.kind = std::string(ToString(sub->spec.kind));
    nj.priority = std::string(ToString(sub->spec.priority));
    nj.spec_json = sub->spec_json.dump();
    nj.idempotency_key = key;
    nj.body_hash = key.empty() ? "" : Sha256Hex(req.body);
    nj.submitted_at = now;
    auto r = store->Submit(nj);
    if (!r.ok()) return SendError(res, 500, r.status().message());
    if (r->outcome == SubmitOutcome::kConflict) {
      return SendError(res, 409,
                       "Idempotency-Key \"" + key + "\" was used for job " + r->job_id +
                           " with a different body",
                       "Idempotency-Key");
    }
    if (r->outcome == SubmitOutcome::kCreated) {
      metrics->submissions++;
      reconciler->Notify();
      JobRow row;
      row.seq = SeqFromJobId(r->job_id).value_or(0);
      row.id = r->job_id;
      row.tenant = nj.tenant;
      row.name = nj.name;
      row.kind = nj.kind;
      row.priority = nj.priority;
      row.submitted_at = now;
      row.spec_json = nj.spec_json;
      metrics->submit_seconds.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      return SendJson(res, 201, JobToJson(row));
    }
    metrics->submissions_replayed++;
    auto j = store->GetJob(r->job_id);
    if (!j.ok()) return SendError(res, 500, j.status().message());
    SendJson(res, 200, JobToJson(*j));
  }

  void List(const httplib::Request& req, httplib::Response& res, const Caller& c) {
    static const std::vector<std::string> kKnown = {"tenant", "state", "kind", "limit",
                                                    "page_token", "cursor"};
    for (const auto& [k, v] : req.params) {
      if (std::find(kKnown.begin(), kKnown.end(), k) == kKnown.end()) {
        return SendError(res, 400, k + ": not a filter" + spec::SuggestFrom(k, kKnown, "filters"), k);
      }
    }
    ListFilter f;
    f.tenant = req.get_param_value("tenant");
    f.state = req.get_param_value("state");
    f.kind = req.get_param_value("kind");
    if (!c.admin) {
      if (!f.tenant.empty() && f.tenant != c.tenant) {
        return SendJson(res, 200, {{"jobs", json::array()}, {"next_page_token", nullptr},
                                   {"next_cursor", nullptr}});
      }
      f.tenant = c.tenant;
    }
    if (!f.state.empty() && !IsJobState(f.state)) {
      std::vector<std::string> states(std::begin(kJobStates), std::end(kJobStates));
      return SendError(res, 400, "state: \"" + f.state + "\" is not a job state" +
                                     spec::SuggestFrom(f.state, states, "states"),
                       "state");
    }
    if (!f.kind.empty() && !ParseWorkloadKind(f.kind)) {
      std::vector<std::string> kinds;
      for (WorkloadKind k : AllWorkloadKinds()) kinds.emplace_back(ToString(k));
      return SendError(res, 400, "kind: \"" + f.kind + "\" is not a workload kind" +
                                     spec::SuggestFrom(f.kind, kinds, "kinds"),
                       "kind");
    }
    if (req.has_param("limit")) {
      const std::string l = req.get_param_value("limit");
      char* end = nullptr;
      long v = std::strtol(l.c_str(), &end, 10);
      if (l.empty() || *end != '\0' || v < 1 || v > 1000) {
        return SendError(res, 400, "limit: \"" + l + "\" must be a whole number from 1 to 1000",
                         "limit");
      }
      f.limit = static_cast<int>(v);
    }
    std::string token = req.get_param_value("page_token");
    const char* token_field = "page_token";
    if (token.empty()) {
      token = req.get_param_value("cursor");
      token_field = "cursor";
    }
    if (!token.empty()) {
      auto seq = SeqFromJobId(token);
      if (!seq) {
        return SendError(res, 400, std::string(token_field) + ": \"" + token +
                                       "\" is not a page token from an earlier answer",
                         token_field);
      }
      f.after_seq = *seq;
    }
    auto rows = store->ListJobs(f);
    if (!rows.ok()) return SendError(res, 500, rows.status().message());
    json jobs = json::array();
    for (const JobRow& r : *rows) jobs.push_back(JobToJson(r));
    json next = rows->size() == static_cast<size_t>(f.limit) ? json(rows->back().id) : json(nullptr);
    SendJson(res, 200, {{"jobs", jobs}, {"next_page_token", next}, {"next_cursor", next}});
  }

  void Cancel(const std::string& id, httplib::Response& res, const Caller& c) {
    auto j = VisibleJob(c, id, res);
    if (!j) return;
    if (!IsTerminalState(j->state) && !j->cancel_requested) {
      JobUpdate u;
      u.job_id = id;
      u.cancel_requested = true;
      u.message = "cancel requested";
      u.at = Now();
      auto r = store->Apply({u});
      if (!r.ok()) return SendError(res, 500, r.status().message());
    }
    reconciler->RequestCancel(id);
    // Queued jobs are cancelled in the next cycle; wait briefly for it.
    for (int i = 0; i < 40 && !IsTerminalState(j->state); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      auto again = store->GetJob(id);
      if (!again.ok()) break;
      *j = std::move(again).value();
      if (j->state != "queued") break;
    }
    SendJson(res, 200, JobToJson(*j));
  }

  void Logs(const httplib::Request& req, const std::string& id, httplib::Response& res,
            const Caller& c) {
    auto j = VisibleJob(c, id, res);
    if (!j) return;
    std::string stream = req.has_param("stream") ? req.get_param_value("stream") : "stdout";
    if (stream != "stdout" && stream != "stderr") {
      return SendError(res, 400, "stream: \"" + stream + "\" must be stdout or stderr", "stream");
    }
    int64_t offset = 0;
    if (req.has_param("offset")) {
      const std::string o = req.get_param_value("offset");
      char* end = nullptr;
      long long v = std::strtoll(o.c_str(), &end, 10);
      if (o.empty() || *end != '\0' || v < 0) {
        return SendError(res, 400, "offset: \"" + o + "\" must be a whole number >= 0", "offset");
      }
      offset = v;
    }
    std::string data;
    std::ifstream in(reconciler->LogDir(id) + "/" + stream + ".log", std::ios::binary);
    if (in) {
      in.seekg(0, std::ios::end);
      const int64_t size = in.tellg();
      if (offset < size) {
        const int64_t n = std::min<int64_t>(size - offset, 4 << 20);
        data.resize(static_cast<size_t>(n));
        in.seekg(offset);
        in.read(data.data(), n);
        data.resize(static_cast<size_t>(in.gcount()));
      }
    }
    res.status = 200;
    res.set_header("X-Next-Offset", std::to_string(offset + static_cast<int64_t>(data.size())));
    res.set_header("X-Job-Done", IsTerminalState(j->state) ? "true" : "false");
    res.set_content(data, "text/plain; charset=utf-8");
  }

  void Nodes(httplib::Response& res, const Caller& c) {
    auto nodes = store->Nodes();
    auto active = store->ActiveJobs();
    if (!nodes.ok() || !active.ok()) {
      return SendError(res, 500, (!nodes.ok() ? nodes.status() : active.status()).message());
    }
    json arr = json::array();
    for (const NodeRow& n : *nodes) {
      json jobs = json::array();
      for (const JobRow& j : *active) {
        // Another tenant's job ids stay hidden; the node only counts as busier.
        if (j.placement.node == n.name && (c.admin || j.tenant == c.tenant)) jobs.push_back(j.id);
      }
      arr.push_back({{"name", n.name},
                     {"gpu_model", n.gpu_model.empty() ? json(nullptr) : json(n.gpu_model)},
                     {"gpus", n.gpus},
                     {"vcpus", n.vcpus},
                     {"ram_gib", n.ram_gib},
                     {"state", n.state},
                     {"registered", n.registered},
                     {"schedulable", !n.registered && n.state == "ready"},
                     {"reason", n.registered ? json(kNoAgentReason) : json(nullptr)},
                     {"last_heartbeat", FormatRfc3339(n.last_heartbeat)},
                     {"jobs", jobs}});
    }
    SendJson(res, 200, {{"nodes", arr}});
  }

  // Everything the dashboard aggregates read, as `c` may see it.
  Result<AggregateInput> Gather(const Caller& c) {
    AggregateInput in;
    ListFilter f;
    f.tenant = c.admin ? "" : c.tenant;
    f.limit = 1000;
    while (true) {
      auto rows = store->ListJobs(f);
      if (!rows.ok()) return rows.status();
      for (JobRow& r : *rows) in.jobs.push_back(std::move(r));
      if (rows->size() < static_cast<size_t>(f.limit)) break;
      f.after_seq = in.jobs.back().seq;
    }
    auto active = store->ActiveJobs();
    if (!active.ok()) return active.status();
    in.all_active = std::move(active).value();
    auto nodes = store->Nodes();
    if (!nodes.ok()) return nodes.status();
    in.nodes = std::move(nodes).value();
    // Only a job that ran more than once, or is preempted now, can have been preempted.
    for (const JobRow& j : in.jobs) {
      if (j.attempts < 2 && j.state != "preempted") continue;
      auto ev = store->Events(j.id);
      if (!ev.ok()) return ev.status();
      for (const EventRow& e : *ev) {
        if (e.type == "state" && e.to == "preempted") in.preemptions[j.id]++;
      }
    }
    in.waiting = reconciler->Waiting();
    in.layouts = reconciler->Layouts();
    in.catalog = catalog.get();
    in.options = &reconciler->options();
    in.homes = &homes;
    in.now = Now();
    in.admin = c.admin;
    in.tenant = c.tenant;
    return in;
  }

  void Aggregate(httplib::Response& res, const Caller& c,
                 nlohmann::json (*render)(const AggregateInput&)) {
    auto in = Gather(c);
    if (!in.ok()) return SendError(res, 500, in.status().message());
    SendJson(res, 200, render(*in));
  }

  void RegisterNode(const httplib::Request& req, httplib::Response& res);
  void Plan(const httplib::Request& req, httplib::Response& res, const Caller& c);
  void ServeMetrics(httplib::Response& res);
  void Routes();
};

void ApiServer::Impl::RegisterNode(const httplib::Request& req, httplib::Response& res) {
  json b = json::parse(req.body, nullptr, false);
  if (b.is_discarded() || !b.is_object()) {
    return SendError(res, 400, "request: the body must be a JSON object with name, gpu_model, gpus, vcpus, ram_gib");
  }
  static const std::vector<std::string> kKeys = {"name", "gpu_model", "gpus", "vcpus", "ram_gib"};
  for (const auto& [k, v] : b.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
      return SendError(res, 400, k + ": unknown key" + spec::SuggestFrom(k, kKeys, "keys"), k);
    }
  }
  NodeRow n;
  if (!b.contains("name") || !b["name"].is_string() || b["name"].get<std::string>().empty()) {
    return SendError(res, 400, "name: is required (a text)", "name");
  }
  n.name = b["name"].get<std::string>();
  if (n.name.size() > 63 || n.name.find_first_of("/ ") != std::string::npos) {
    return SendError(res, 400, "name: \"" + n.name + "\" must be 1-63 characters without / or spaces", "name");
  }
  for (const char* k : {"gpus", "vcpus"}) {
    if (b.contains(k) && (!b[k].is_number_integer() || b[k].get<int64_t>() < 0 || b[k].get<int64_t>() > 1024)) {
      return SendError(res, 400, std::string(k) + ": " + b[k].dump() + " must be a whole number from 0 to 1024", k);
    }
  }
  if (b.contains("ram_gib") && (!b["ram_gib"].is_number() || b["ram_gib"].get<double>() < 0)) {
    return SendError(res, 400, "ram_gib: " + b["ram_gib"].dump() + " must be a number >= 0", "ram_gib");
  }
  n.gpus = b.value("gpus", 0);
  n.vcpus = b.value("vcpus", 0);
  n.ram_gib = b.value("ram_gib", 0.0);
  if (b.contains("gpu_model")) {
    if (!b["gpu_model"].is_string()) return SendError(res, 400, "gpu_model: must be a text", "gpu_model");
    n.gpu_model = b["gpu_model"].get<std::string>();
    if (auto why = spec::UnknownGpuModel(*catalog, n.gpu_model)) {
      return SendError(res, 400, "gpu_model: " + *why, "gpu_model");
    }
  }
  if (n.gpus > 0 && n.gpu_model.empty()) {
    return SendError(res, 400, "gpu_model: is required when gpus > 0", "gpu_model");
  }
  if (n.gpus > 16) return SendError(res, 400, "gpus: " + std::to_string(n.gpus) + " is more than 16 per node", "gpus");
  n.state = "ready";
  n.last_heartbeat = Now();
  n.registered = true;
  if (Status st = store->UpsertNode(n); !st.ok()) return SendError(res, 500, st.message());
  reconciler->Notify();
  SendJson(res, 201, {{"name", n.name}, {"gpu_model", n.gpu_model}, {"gpus", n.gpus},
                      {"vcpus", n.vcpus}, {"ram_gib", n.ram_gib}, {"state", n.state},
                      {"jobs", json::array()}});
}

void ApiServer::Impl::Plan(const httplib::Request& req, httplib::Response& res, const Caller& c) {
  auto format = FormatFor(req.get_header_value("Content-Type"), req.body);
  if (!format.ok()) return SendError(res, 400, format.status().message(), "Content-Type");
  auto sub = ParseSubmission(req.body, *format, c.tenant);
  if (!sub.ok()) return SendStatus(res, sub.status());
  if (Status v = spec::ValidateAgainstCatalog(sub->spec, *catalog, Now()); !v.ok()) {
    return SendStatus(res, v);
  }
  auto plan = reconciler->Plan(sub->spec);
  if (!plan.ok()) {
    if (plan.status().code() == StatusCode::kUnschedulable) {
      return SendError(res, 409, plan.status().message());
    }
    return SendStatus(res, plan.status());
  }
  SendJson(res, 200, *plan);
}

void ApiServer::Impl::ServeMetrics(httplib::Response& res) {
  std::vector<GaugeFamily> g;
  GaugeFamily states{"meridian_jobs", "Jobs by state.", {}};
  std::map<std::string, int64_t> counts;
  for (const char* s : kJobStates) counts[s] = 0;
  if (auto c = store->CountByState(); c.ok()) {
    for (const auto& [s, n] : *c) counts[s] = n;
  }
  for (const auto& [s, n] : counts) states.lines.push_back({"state=\"" + s + "\"", static_cast<double>(n)});
  g.push_back(states);
  GaugeFamily queue{"meridian_queue_depth", "Queued jobs by priority tier.", {}};
  std::map<std::string, int64_t> tiers;
  for (Priority p : {Priority::kCritical, Priority::kHigh, Priority::kNormal, Priority::kLow}) {
    tiers[std::string(ToString(p))] = 0;
  }
  if (auto q = store->QueueDepth(); q.ok()) {
    for (const auto& c : *q) tiers[c.tier] += c.queued;
  }
  for (const auto& [t, n] : tiers) queue.lines.push_back({"tier=\"" + t + "\"", static_cast<double>(n)});
  g.push_back(queue);
  if (options.telemetry) {
    for (GaugeFamily& f : options.telemetry->Gauges()) g.push_back(std::move(f));
  }
  res.status = 200;
  res.set_content(RenderMetrics(*metrics, g), "text/plain; version=0.0.4");
}

void ApiServer::Impl::Routes() {
  auto& s = server;
  s.set_payload_max_length(options.max_body_bytes);
  s.set_keep_alive_max_count(100000);
  s.set_read_timeout(30, 0);
  s.set_tcp_nodelay(true);
  const int threads = options.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 413) {
      SendError(res, 413, "the request body is larger than the limit");
    } else if (res.status == 404) {
      SendError(res, 404, "no such route; see docs/api.md");
    } else if (res.status == 405) {
      SendJson(res, 405, {{"error", {{"code", "invalid_argument"}, {"message", "method not allowed"}, {"field", nullptr}}}});
    } else {
      const int st = res.status;
      SendError(res, st >= 500 ? 500 : 400, "bad request (HTTP " + std::to_string(st) + ")");
      res.status = st;
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SendError(res, 500, what);
  });
  using Req = const httplib::Request&;
  using Res = httplib::Response&;
  auto authed = [this](auto fn) {
    return [this, fn](Req req, Res res) {
      auto c = Authenticate(req, res);
      if (c) fn(req, res, *c);
    };
  };
  s.Get("/healthz", [](Req, Res res) { SendJson(res, 200, {{"ok", true}}); });
  // The dashboard: files of the embedded build looked up by exact path, so no
  // path reaches the file system. The build's asset names carry a content
  // hash, so they may be cached for good; the page itself is revalidated.
  auto dashboard = [](Req req, Res res) {
    const WebAsset* a = FindWebAsset(req.path);
    if (!a) return SendError(res, 404, "no such route; see docs/api.md");
    const bool page = a->content_type.starts_with("text/html");
    res.set_header("Cache-Control", page ? "no-cache" : "public, max-age=31536000, immutable");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; img-src 'self' data:; connect-src 'self'; "
                   "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    res.set_content(std::string(a->body), std::string(a->content_type));
  };
  s.Get("/", dashboard);
  s.Get(R"(/assets/[A-Za-z0-9._-]+)", dashboard);
  s.Get("/metrics", [this](Req, Res res) { ServeMetrics(res); });
  s.Post("/v1/jobs", authed([this](Req req, Res res, const Caller& c) { Submit(req, res, c); }));
  s.Get("/v1/jobs", authed([this](Req req, Res res, const Caller& c) { List(req, res, c); }));
  s.Get(R"(/v1/jobs/([^/]+))", authed([this](Req req, Res res, const Caller& c) {
          if (auto j = VisibleJob(c, req.matches[1], res)) SendJson(res, 200, JobToJson(*j));
        }));
  s.Post(R"(/v1/jobs/([^/]+)/cancel)", authed([this](Req req, Res res, const Caller& c) {
           Cancel(req.matches[1], res, c);
         }));
  s.Get(R"(/v1/jobs/([^/]+)/logs)", authed([this](Req req, Res res, const Caller& c) {
          Logs(req, req.matches[1], res, c);
        }));
  s.Get(R"(/v1/jobs/([^/]+)/utilization)", authed([this](Req req, Res res, const Caller& c) {
          auto j = VisibleJob(c, req.matches[1], res);
          if (!j) return;
          const int rows = options.telemetry ? options.telemetry->config().store_rows_per_job : 0;
          auto series = store->Utilization(j->id, std::max(rows, 1));
          if (!series.ok()) return SendError(res, 500, series.status().message());
          std::optional<JobTelemetry> live;
          telemetry::TelemetryConfig config;
          std::string gpu = "telemetry is off";
          if (options.telemetry) {
            if (!IsTerminalState(j->state)) live = options.telemetry->View(j->id);
            config = options.telemetry->config();
            gpu = options.telemetry->gpu_status();
          }
          SendJson(res, 200, UtilizationToJson(*j, live, *series, config, gpu));
        }));
  s.Get(R"(/v1/jobs/([^/]+)/events)", authed([this](Req req, Res res, const Caller& c) {
          auto j = VisibleJob(c, req.matches[1], res);
          if (!j) return;
          auto ev = store->Events(j->id);
          if (!ev.ok()) return SendError(res, 500, ev.status().message());
          SendJson(res, 200, EventsToJson(*ev));
        }));
  s.Get("/v1/tenants", authed([this](Req, Res res, const Caller& c) {
          auto t = store->Tenants();
          if (!t.ok()) return SendError(res, 500, t.status().message());
          json arr = json::array();
          for (const std::string& name : *t) {
            if (c.admin || name == c.tenant) arr.push_back({{"name", name}});
          }
          SendJson(res, 200, {{"tenants", arr}});
        }));
  s.Get("/v1/queues", authed([this](Req, Res res, const Caller& c) {
          auto q = store->QueueDepth();
          if (!q.ok()) return SendError(res, 500, q.status().message());
          json arr = json::array();
          for (const auto& e : *q) {
            if (c.admin || e.tenant == c.tenant) {
              arr.push_back({{"tier", e.tier}, {"tenant", e.tenant}, {"queued", e.queued}});
            }
          }
          SendJson(res, 200, {{"queues", arr}});
        }));
  s.Get("/v1/nodes", authed([this](Req, Res res, const Caller& c) { Nodes(res, c); }));
  s.Get("/v1/overview", authed([this](Req, Res res, const Caller& c) { Aggregate(res, c, OverviewJson); }));
  s.Get("/v1/waiting", authed([this](Req, Res res, const Caller& c) { Aggregate(res, c, WaitingJson); }));
  s.Get("/v1/fleet", authed([this](Req, Res res, const Caller& c) { Aggregate(res, c, FleetJson); }));
  s.Get("/v1/regions", authed([this](Req, Res res, const Caller& c) { Aggregate(res, c, RegionsJson); }));
  s.Post("/v1/nodes", authed([this](Req req, Res res, const Caller& c) {
           if (!c.admin) return SendError(res, 404, "no such route for this token (admin only)");
           RegisterNode(req, res);
         }));
  s.Post(R"(/v1/nodes/([^/]+)/heartbeat)", authed([this](Req req, Res res, const Caller&) {
           if (Status st = store->Heartbeat(req.matches[1], Now()); !st.ok()) return SendStatus(res, st);
           reconciler->Notify();
           SendJson(res, 200, {{"name", std::string(req.matches[1])}, {"ok", true}});
         }));
  s.Post(R"(/v1/nodes/([^/]+)/drain)", authed([this](Req req, Res res, const Caller& c) {
           if (!c.admin) return SendError(res, 404, "no such route for this token (admin only)");
           if (Status st = store->SetNodeState(req.matches[1], "drained"); !st.ok()) {
             return SendStatus(res, st);
           }
           reconciler->Notify();
           SendJson(res, 200, {{"name", std::string(req.matches[1])}, {"state", "drained"}});
         }));
  s.Post("/v1/plan", authed([this](Req req, Res res, const Caller& c) { Plan(req, res, c); }));
}

ApiServer::ApiServer(Store* store, Reconciler* reconciler, Metrics* metrics,
                     std::shared_ptr<const catalog::Catalog> catalog, ApiOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->store = store;
  impl_->reconciler = reconciler;
  impl_->metrics = metrics;
  impl_->catalog = std::move(catalog);
  impl_->options = std::move(options);
  impl_->homes = TenantHomes(reconciler->options().profile);
  impl_->Routes();
}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Bind() {
  auto& s = impl_->server;
  if (impl_->options.port == 0) {
    impl_->port = s.bind_to_any_port(impl_->options.host);
    if (impl_->port < 0) return Status::Invalid("--listen: cannot bind " + impl_->options.host);
  } else {
    if (!s.bind_to_port(impl_->options.host, impl_->options.port)) {
      return Status::Invalid("--listen: cannot bind " + impl_->options.host + ":" +
                             std::to_string(impl_->options.port) + " (in use, or not an address here)");
    }
    impl_->port = impl_->options.port;
  }
  return Status::Ok();
}

int ApiServer::port() const { return impl_->port; }
void ApiServer::Serve() {
  impl_->serving = true;
  if (!impl_->stopping) impl_->server.listen_after_bind();
  impl_->serving = false;
}

void ApiServer::Stop() {
  impl_->stopping = true;
  // A signal right after start can arrive while Serve is between its check
  // and listening; stop() is a no-op until it listens, so repeat it.
  while (impl_->serving) {
    impl_->server.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  impl_->server.stop();
}

}  // namespace meridian::control
