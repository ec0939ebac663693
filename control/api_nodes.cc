// The /v1/nodes handlers: list, register, heartbeat.
#include "control/api_internal.h"

#include "control/job_json.h"
#include "control/node_request.h"
#include "control/token.h"

namespace meridian::control {

using nlohmann::json;

void ApiServer::Impl::Nodes(httplib::Response& res, const Caller& c) {
  auto nodes = store->Nodes();
  auto active = store->ActiveJobs();
  if (!nodes.ok() || !active.ok()) {
    return SendInternal(res, (!nodes.ok() ? nodes.status() : active.status()).ToString());
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
                   {"state", NodeStateName(n.state)},
                   {"registered", n.registered},
                   {"schedulable", !n.registered && n.state == NodeState::kReady},
                   {"reason", n.registered ? json(kNoAgentReason) : json(nullptr)},
                   {"last_heartbeat", FormatRfc3339(n.last_heartbeat)},
                   {"jobs", jobs}});
  }
  SendJson(res, 200, {{"nodes", arr}});
}

void ApiServer::Impl::RegisterNode(const httplib::Request& req, httplib::Response& res) {
  auto decoded = DecodeNodeRegistration(req.body, *catalog);
  if (!decoded.ok()) return SendStatus(res, decoded.status());
  NodeRow n = std::move(decoded).value();
  n.last_heartbeat = Now();
  if (Status st = store->UpsertNode(n); !st.ok()) return SendInternal(res, st.ToString());
  reconciler->Notify();
  // The node's own token, shown only in this answer: it may heartbeat this
  // node and nothing else (docs/api.md, "Rights").
  auto secret = GenerateToken();
  if (!secret.ok()) return SendInternal(res, secret.status().ToString());
  NewToken nt;
  nt.hash = Sha256Hex(*secret);
  nt.tenant = kNodeTokenTenant;
  nt.node = n.name;
  nt.created_at = Now();
  auto token_id = store->CreateToken(nt);
  if (!token_id.ok()) return SendInternal(res, token_id.status().ToString());
  SendJson(res, 201, {{"name", n.name}, {"gpu_model", n.gpu_model}, {"gpus", n.gpus},
                      {"vcpus", n.vcpus}, {"ram_gib", n.ram_gib},
                      {"state", NodeStateName(n.state)},
                      {"jobs", json::array()}, {"token", *secret}, {"token_id", *token_id}});
}

// A heartbeat brings a node back from down to ready, so only the node itself
// (its node token) or an admin may send one.
void ApiServer::Impl::Heartbeat(const std::string& node, httplib::Response& res, const Caller& c) {
  if (!c.admin && c.node != node) {
    return SendError(res, 403,
                     "Authorization: a heartbeat for node " + node +
                         " needs an admin token or that node's token (POST /v1/nodes answers it; "
                         "meridian token create --node " + node + ")",
                     "Authorization");
  }
  if (Status st = store->Heartbeat(node, Now()); !st.ok()) return SendStatus(res, st);
  reconciler->Notify();
  SendJson(res, 200, {{"name", node}, {"ok", true}});
}

}  // namespace meridian::control
