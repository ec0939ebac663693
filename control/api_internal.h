// Internal to control/api*.cc: the API server's state (ApiServer::Impl),
// the caller of a request, and the error answers every handler shares
// (docs/api.md, "Errors"). Handlers are split by resource across
// api_auth.cc, api_jobs.cc, api_nodes.cc, api_fleet.cc, api_metrics.cc;
// routing is in api.cc.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/aggregates.h"
#include "control/api.h"

namespace meridian::control {

struct Caller {
  std::string tenant;
  bool admin = false;
  std::string node;  // a node token's node: it may only heartbeat that node
};

// Text that is not UTF-8 (a request's bytes echoed in a message) is written
// with U+FFFD in its place, so an answer can always be serialized.
void SendJson(httplib::Response& res, int status, const nlohmann::json& body);
void SendError(httplib::Response& res, int status, const std::string& message,
               const std::string& field = "");
// A 500: the answer says "internal error" and an id; the details (SQL text,
// an exception's message) go only to the daemon's log, under the same id.
void SendInternal(httplib::Response& res, const std::string& detail);
// A tenant's token names another tenant in a body (submit or plan): refused.
void RefuseTenant(httplib::Response& res, const std::string& named, const Caller& c);
void SendStatus(httplib::Response& res, const Status& st);
// On a follower (options.role says so), answers `req` with the leader's
// answer, or a 503 when no leader answers, and returns true; false on the
// leader, which answers itself.
bool ForwardToLeader(const ApiOptions& options, const httplib::Request& req,
                     httplib::Response& res);

struct ApiServer::Impl {
  Store* store;
  Reconciler* reconciler;
  control::Metrics* metrics;
  std::shared_ptr<const catalog::Catalog> catalog;
  ApiOptions options;
  std::vector<TenantHome> homes;  // read before any thread starts (aggregates.h)
  std::unique_ptr<GuardedServer> server;
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

  UnixSeconds Now() const;
  // The caller of a /v1 request, or nullopt after answering 401.
  std::optional<Caller> Authenticate(const httplib::Request& req, httplib::Response& res);
  // The job if the caller may see it; otherwise answers 404 and returns nullopt.
  std::optional<JobRow> VisibleJob(const Caller& c, const std::string& id, httplib::Response& res);
  void Submit(const httplib::Request& req, httplib::Response& res, const Caller& c);
  void List(const httplib::Request& req, httplib::Response& res, const Caller& c);
  void Cancel(const std::string& id, httplib::Response& res, const Caller& c);
  void Logs(const httplib::Request& req, const std::string& id, httplib::Response& res,
            const Caller& c);
  void Nodes(httplib::Response& res, const Caller& c);
  // Everything the dashboard aggregates read, as `c` may see it.
  Result<AggregateInput> Gather(const Caller& c);
  void Aggregate(httplib::Response& res, const Caller& c,
                 nlohmann::json (*render)(const AggregateInput&));
  void RegisterNode(const httplib::Request& req, httplib::Response& res);
  void Heartbeat(const std::string& node, httplib::Response& res, const Caller& c);
  void Plan(const httplib::Request& req, httplib::Response& res, const Caller& c);
  void ServeMetrics(const httplib::Request& req, httplib::Response& res);
  void Routes();
};

}  // namespace meridian::control
