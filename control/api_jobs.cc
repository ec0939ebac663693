// The /v1/jobs handlers: submit, list, cancel, logs.
#include "control/api_internal.h"

#include <chrono>
#include <fstream>
#include <thread>

#include "control/job_json.h"
#include "control/submission.h"
#include "control/token.h"
#include "spec/spec.h"
#include "spec/suggest.h"

namespace meridian::control {

using nlohmann::json;

void ApiServer::Impl::Submit(const httplib::Request& req, httplib::Response& res, const Caller& c) {
  const auto t0 = std::chrono::steady_clock::now();
  auto format = FormatFor(req.get_header_value("Content-Type"), req.body);
  if (!format.ok()) return SendError(res, 400, format.status().message(), "Content-Type");
  const std::string key = req.get_header_value("Idempotency-Key");
  if (key.size() > 200) {
    return SendError(res, 400, "Idempotency-Key: longer than 200 characters", "Idempotency-Key");
  }
  auto sub = ParseSubmission(req.body, *format, c.tenant);
  if (!sub.ok()) return SendStatus(res, sub.status());
  if (!c.admin && sub->spec.tenant != c.tenant) return RefuseTenant(res, sub->spec.tenant, c);
  const UnixSeconds now = Now();
  if (Status v = ValidateSubmission(*sub, req.body, *format, *catalog, now); !v.ok()) {
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
  if (!r.ok()) return SendInternal(res, r.status().ToString());
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
    metrics->submit_seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return SendJson(res, 201, JobToJson(row, std::move(sub->spec_json)));
  }
  metrics->submissions_replayed++;
  auto j = store->GetJob(r->job_id);
  if (!j.ok()) return SendInternal(res, j.status().ToString());
  SendJson(res, 200, JobToJson(*j));
}

void ApiServer::Impl::List(const httplib::Request& req, httplib::Response& res, const Caller& c) {
  static const std::vector<std::string> kKnown = {"tenant", "state", "kind", "limit",
                                                  "page_token", "cursor", "order"};
  for (const auto& [k, v] : req.params) {
    if (std::find(kKnown.begin(), kKnown.end(), k) == kKnown.end()) {
      return SendError(res, 400, k + ": not a filter" + spec::SuggestFrom(k, kKnown, "filters"), k);
    }
  }
  ListFilter f;
  f.tenant = req.get_param_value("tenant");
  const std::string state = req.get_param_value("state");
  f.kind = req.get_param_value("kind");
  if (!c.admin) {
    if (!f.tenant.empty() && f.tenant != c.tenant) {
      return SendJson(res, 200, {{"jobs", json::array()}, {"next_page_token", nullptr},
                                 {"next_cursor", nullptr}});
    }
    f.tenant = c.tenant;
  }
  if (!state.empty()) {
    f.state = ParseJobState(state);
    if (!f.state) {
      std::vector<std::string> states;
      for (JobState s : kJobStates) states.emplace_back(JobStateName(s));
      return SendError(res, 400, "state: \"" + state + "\" is not a job state" +
                                     spec::SuggestFrom(state, states, "states"),
                       "state");
    }
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
  const std::string order = req.get_param_value("order");
  if (!order.empty() && order != "oldest" && order != "newest") {
    return SendError(res, 400, "order: \"" + order + "\" must be oldest or newest", "order");
  }
  f.newest_first = order == "newest";
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
  if (!rows.ok()) return SendInternal(res, rows.status().ToString());
  json jobs = json::array();
  for (const JobRow& r : *rows) jobs.push_back(JobToJson(r));
  json next = rows->size() == static_cast<size_t>(f.limit) ? json(rows->back().id) : json(nullptr);
  SendJson(res, 200, {{"jobs", jobs}, {"next_page_token", next}, {"next_cursor", next}});
}

void ApiServer::Impl::Cancel(const std::string& id, httplib::Response& res, const Caller& c) {
  auto j = VisibleJob(c, id, res);
  if (!j) return;
  if (!IsTerminal(j->state) && !j->cancel_requested) {
    JobUpdate u;
    u.job_id = id;
    u.cancel_requested = true;
    u.message = "cancel requested";
    u.at = Now();
    auto r = store->Apply({u});
    if (!r.ok()) return SendInternal(res, r.status().ToString());
  }
  reconciler->RequestCancel(id);
  // Queued jobs are cancelled in the next cycle; wait briefly for it.
  for (int i = 0; i < 40 && !IsTerminal(j->state); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    auto again = store->GetJob(id);
    if (!again.ok()) break;
    *j = std::move(again).value();
    if (j->state != JobState::kQueued) break;
  }
  SendJson(res, 200, JobToJson(*j));
}

void ApiServer::Impl::Logs(const httplib::Request& req, const std::string& id, httplib::Response& res,
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
  res.set_header("X-Job-Done", IsTerminal(j->state) ? "true" : "false");
  res.set_content(data, "text/plain; charset=utf-8");
}

}  // namespace meridian::control
