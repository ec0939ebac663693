// ApiServer: the HTTP/JSON API under /v1 (docs/api.md), /healthz and
// /metrics, on cpp-httplib's threaded server. Every /v1 route needs a bearer
// token (Authorization: Bearer ...); a token belongs to one tenant, which sees
// only its own jobs (others' answer 404), or is an admin, who sees all.
// Node tokens may only heartbeat their node. Errors are {"error": {"code",
// "message", "field"}} with 400, 401, 403, 404, 409, 413 or 503; a 500 says
// "internal error" and an id, and the details go to the daemon's log.
//
// Threading: handlers run on the server's worker threads; they read and
// write through the Store (thread-safe) and talk to the Reconciler through
// its thread-safe calls.
#pragma once

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "control/http_server.h"
#include "control/metrics.h"
#include "control/reconciler.h"
#include "control/store.h"
#include "control/telemetry_sampler.h"
#include "core/status.h"

namespace meridian::control {

struct ApiOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                  // 0: any free port (see ApiServer::port)
  size_t max_body_bytes = 1 << 20;  // larger requests get 413
  ConnectionLimits limits;          // http_server.h; docs/api.md, "Connection limits"
  // true: /metrics shows per-job series to anyone; false: to admin tokens only.
  bool public_job_metrics = false;
  std::function<UnixSeconds()> clock;  // default: the system clock
  // The daemon's telemetry sampler, for /metrics and /v1/jobs/{id}/utilization;
  // null: those answer without telemetry.
  TelemetrySampler* telemetry = nullptr;
  // This daemon's role among the replicas, for /healthz ("leader" or
  // "follower"); null: "leader" (it serves its database alone).
  std::function<std::string()> role;
  // On a follower, the leader's API address ("host:port"; "" while none
  // leads): /v1/plan and /v1/fleet, which read the reconcile loop's memory,
  // are answered by forwarding them there. Null: never forwarded.
  std::function<std::string()> leader_address;
};

class ApiServer {
 public:
  ApiServer(Store* store, Reconciler* reconciler, Metrics* metrics,
            std::shared_ptr<const catalog::Catalog> catalog, ApiOptions options);
  ~ApiServer();

  // Binds the socket (errors name the address); then Serve blocks until Stop.
  Status Bind();
  int port() const;
  void Serve();
  void Stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace meridian::control
