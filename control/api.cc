// The API's routing (which handler answers which route, with what
// authentication) and the server's life: bind, serve, stop. The handlers are
// in api_auth.cc, api_jobs.cc, api_nodes.cc, api_fleet.cc and api_metrics.cc.
#include "control/api.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "control/aggregates.h"
#include "control/api_internal.h"
#include "control/dashboard.h"
#include "control/job_json.h"
#include "control/utilization_json.h"

namespace meridian::control {

using nlohmann::json;

void ApiServer::Impl::Routes() {
  auto& s = *server;
  s.set_payload_max_length(options.max_body_bytes);
  s.set_tcp_nodelay(true);
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
    std::string what = "an exception of unknown type";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SendInternal(res, what);
  });
  using Req = const httplib::Request&;
  using Res = httplib::Response&;
  // Routes for tenant and admin tokens; a node token may only heartbeat.
  auto authed = [this](auto fn) {
    return [this, fn](Req req, Res res) {
      auto c = Authenticate(req, res);
      if (!c) return;
      if (!c->node.empty()) {
        return SendError(res, 403, "this is node " + c->node +
                                       "'s token; it may only POST /v1/nodes/" + c->node + "/heartbeat",
                         "Authorization");
      }
      fn(req, res, *c);
    };
  };
  s.Get("/healthz", [this](Req, Res res) {
    SendJson(res, 200, {{"ok", true}, {"role", options.role ? options.role() : "leader"}});
  });
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
  s.Get("/metrics", [this](Req req, Res res) { ServeMetrics(req, res); });
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
          if (!series.ok()) return SendInternal(res, series.status().ToString());
          std::optional<JobTelemetry> live;
          telemetry::TelemetryConfig config;
          std::string gpu = "telemetry is off";
          if (options.telemetry) {
            if (!IsTerminal(j->state)) live = options.telemetry->View(j->id);
            config = options.telemetry->config();
            gpu = options.telemetry->gpu_status();
          }
          SendJson(res, 200, UtilizationToJson(*j, live, *series, config, gpu));
        }));
  s.Get(R"(/v1/jobs/([^/]+)/events)", authed([this](Req req, Res res, const Caller& c) {
          auto j = VisibleJob(c, req.matches[1], res);
          if (!j) return;
          auto ev = store->Events(j->id);
          if (!ev.ok()) return SendInternal(res, ev.status().ToString());
          SendJson(res, 200, EventsToJson(*ev));
        }));
  s.Get("/v1/tenants", authed([this](Req, Res res, const Caller& c) {
          auto t = store->Tenants();
          if (!t.ok()) return SendInternal(res, t.status().ToString());
          json arr = json::array();
          for (const std::string& name : *t) {
            if (c.admin || name == c.tenant) arr.push_back({{"name", name}});
          }
          SendJson(res, 200, {{"tenants", arr}});
        }));
  s.Get("/v1/queues", authed([this](Req, Res res, const Caller& c) {
          auto q = store->QueueDepth();
          if (!q.ok()) return SendInternal(res, q.status().ToString());
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
  s.Get("/v1/fleet", authed([this](Req req, Res res, const Caller& c) {
    if (!ForwardToLeader(options, req, res)) Aggregate(res, c, FleetJson);
  }));
  s.Get("/v1/regions", authed([this](Req, Res res, const Caller& c) { Aggregate(res, c, RegionsJson); }));
  s.Post("/v1/nodes", authed([this](Req req, Res res, const Caller& c) {
           if (!c.admin) return SendError(res, 404, "no such route for this token (admin only)");
           RegisterNode(req, res);
         }));
  s.Post(R"(/v1/nodes/([^/]+)/heartbeat)", [this](Req req, Res res) {
    auto c = Authenticate(req, res);
    if (c) Heartbeat(req.matches[1], res, *c);
  });
  s.Post(R"(/v1/nodes/([^/]+)/drain)", authed([this](Req req, Res res, const Caller& c) {
           if (!c.admin) return SendError(res, 404, "no such route for this token (admin only)");
           if (Status st = store->SetNodeState(req.matches[1], NodeState::kDrained); !st.ok()) {
             return SendStatus(res, st);
           }
           reconciler->Notify();
           SendJson(res, 200, {{"name", std::string(req.matches[1])},
                               {"state", NodeStateName(NodeState::kDrained)}});
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
  impl_->server = std::make_unique<GuardedServer>(impl_->options.limits);
  impl_->homes = TenantHomes(reconciler->options().profile);
  impl_->Routes();
}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Bind() {
  auto& s = *impl_->server;
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
  if (!s.WidenBacklog(1024)) {
    return Status::Internal("--listen: cannot set the listen backlog: " + std::string(std::strerror(errno)));
  }
  return Status::Ok();
}

int ApiServer::port() const { return impl_->port; }
void ApiServer::Serve() {
  impl_->serving = true;
  if (!impl_->stopping) impl_->server->listen_after_bind();
  impl_->serving = false;
}

void ApiServer::Stop() {
  impl_->stopping = true;
  // A signal right after start can arrive while Serve is between its check
  // and listening; stop() is a no-op until it listens, so repeat it.
  while (impl_->serving) {
    impl_->server->stop();
    impl_->server->CloseAll();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  impl_->server->stop();
  impl_->server->CloseAll();
}

}  // namespace meridian::control
