// The /v1/nodes handlers: list, register, heartbeat.
#include "control/api_internal.h"

#include "control/job_json.h"
#include "control/token.h"
#include "control/utf8.h"
#include "spec/spec.h"
#include "spec/suggest.h"

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
  if (Status u = CheckUtf8Body(req.body, true); !u.ok()) return SendStatus(res, u);
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
  n.state = NodeState::kReady;
  n.last_heartbeat = Now();
  n.registered = true;
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
