// The dashboard aggregates (/v1/overview, waiting, fleet, regions) and
// /v1/plan. On a follower, /v1/fleet and /v1/plan are the leader's answers
// (ForwardToLeader): they read the reconcile loop's fleet, waiting reasons
// and layouts, which only the leader keeps.
#include "control/api_internal.h"

#include <cstdlib>

#include "control/submission.h"
#include "spec/spec.h"

namespace meridian::control {

using nlohmann::json;

// Everything the dashboard aggregates read, as `c` may see it.
Result<AggregateInput> ApiServer::Impl::Gather(const Caller& c) {
  AggregateInput in;
  in.now = Now();
  const std::string tenant = c.admin ? "" : c.tenant;
  auto active = store->ActiveJobs();
  if (!active.ok()) return active.status();
  in.all_active = std::move(active).value();
  for (const JobRow& j : in.all_active) {
    if (c.admin || j.tenant == c.tenant) in.jobs.push_back(j);
  }
  auto ended = store->EndedSince(tenant, StripStart(in.now));
  if (!ended.ok()) return ended.status();
  for (JobRow& j : *ended) in.jobs.push_back(std::move(j));
  auto totals = store->JobTotals(tenant);
  if (!totals.ok()) return totals.status();
  in.totals = std::move(totals).value();
  auto preemptions = store->Preemptions(tenant);
  if (!preemptions.ok()) return preemptions.status();
  in.preemptions = *preemptions;
  auto nodes = store->Nodes();
  if (!nodes.ok()) return nodes.status();
  in.nodes = std::move(nodes).value();
  in.waiting = reconciler->Waiting();
  in.layouts = reconciler->Layouts();
  in.catalog = catalog.get();
  in.options = &reconciler->options();
  in.homes = &homes;
  in.admin = c.admin;
  in.tenant = c.tenant;
  return in;
}

void ApiServer::Impl::Aggregate(httplib::Response& res, const Caller& c,
               nlohmann::json (*render)(const AggregateInput&)) {
  auto in = Gather(c);
  if (!in.ok()) return SendInternal(res, in.status().ToString());
  SendJson(res, 200, render(*in));
}

bool ForwardToLeader(const ApiOptions& options, const httplib::Request& req,
                     httplib::Response& res) {
  if (!options.role || !options.leader_address || options.role() == "leader") return false;
  const std::string leader = options.leader_address();
  const size_t colon = leader.rfind(':');
  if (colon == std::string::npos) {
    SendError(res, 503, "this replica follows and no replica leads yet; retry in a few seconds");
    return true;
  }
  httplib::Client client(leader.substr(0, colon), std::atoi(leader.c_str() + colon + 1));
  client.set_connection_timeout(2);
  client.set_read_timeout(30);
  httplib::Headers headers;
  for (const char* h : {"Authorization", "Content-Type"}) {
    if (req.has_header(h)) headers.emplace(h, req.get_header_value(h));
  }
  const std::string target =
      req.path + (req.params.empty() ? "" : "?" + httplib::detail::params_to_query_str(req.params));
  auto answer = req.method == "POST"
                    ? client.Post(target, headers, req.body, req.get_header_value("Content-Type"))
                    : client.Get(target, headers);
  if (!answer) {
    SendError(res, 503, "this replica follows and the leader at " + leader +
                            " does not answer (" + httplib::to_string(answer.error()) +
                            "); retry in a few seconds");
    return true;
  }
  res.status = answer->status;
  res.set_content(answer->body, answer->get_header_value("Content-Type"));
  return true;
}

void ApiServer::Impl::Plan(const httplib::Request& req, httplib::Response& res, const Caller& c) {
  if (ForwardToLeader(options, req, res)) return;
  auto format = FormatFor(req.get_header_value("Content-Type"), req.body);
  if (!format.ok()) return SendError(res, 400, format.status().message(), "Content-Type");
  auto sub = ParseSubmission(req.body, *format, c.tenant);
  if (!sub.ok()) return SendStatus(res, sub.status());
  if (!c.admin && sub->spec.tenant != c.tenant) return RefuseTenant(res, sub->spec.tenant, c);
  if (Status v = ValidateSubmission(*sub, req.body, *format, *catalog, Now()); !v.ok()) {
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

}  // namespace meridian::control
