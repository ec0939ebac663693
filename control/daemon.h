// Daemon: `meridian serve` assembled: the store (SQLite in WAL mode, or
// PostgreSQL: OpenStore picks by options.store.path), the
// reconcile loop over a backend, run while this daemon leads the daemons
// serving its database (control/leadership.h), the telemetry sampler, and the
// HTTP API, answered by leader and followers alike. Start binds and starts
// everything; Wait blocks until Stop (from a signal handler's thread, or a
// test). Stop may be called from any thread, more than once.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "control/api.h"
#include "control/backend.h"
#include "control/leadership.h"
#include "control/metrics.h"
#include "control/reconciler.h"
#include "control/store.h"
#include "control/telemetry_sampler.h"

namespace meridian::control {

struct DaemonOptions {
  SqliteOptions store;
  ApiOptions api;
  ReconcilerOptions reconciler;
  telemetry::TelemetryConfig telemetry;
  int64_t lease_ms = 5000;  // the leader's lease (control/leadership.h)
  // The host, or HOST:PORT, other replicas reach this one's API at (the lease
  // row's holder names it, and followers forward /v1/plan and /v1/fleet
  // there). "": the listening host, or the machine's name when it listens on
  // every interface. Without a port: the port the API listens on.
  std::string advertise;
};

// One daemon writes a SQLite file: its job numbers and the leader's view of
// what changed come from that process alone (docs/control-plane.md,
// "PostgreSQL"). `meridian serve` takes this before it touches anything: an
// exclusive flock on "<file>-serve.lock", which notes the holder's pid and
// which the kernel drops when the process exits, however it ends. A second
// daemon on the file is refused (kInvalidArgument, naming --db, the file and
// the holder).
class SqliteServeLock {
 public:
  static Result<std::unique_ptr<SqliteServeLock>> Take(const std::string& path);
  ~SqliteServeLock();
  SqliteServeLock(const SqliteServeLock&) = delete;
  SqliteServeLock& operator=(const SqliteServeLock&) = delete;

 private:
  explicit SqliteServeLock(int fd) : fd_(fd) {}
  int fd_;
};

class Daemon {
 public:
  // Takes the backend; `options.reconciler.catalog` must be set.
  static Result<std::unique_ptr<Daemon>> Start(DaemonOptions options,
                                               std::unique_ptr<Backend> backend);
  ~Daemon();

  int port() const { return api_->port(); }
  Store* store() { return store_.get(); }
  void Wait();
  void Stop();

 private:
  Daemon() = default;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Backend> backend_;
  Metrics metrics_;
  std::unique_ptr<TelemetrySampler> sampler_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<Leadership> leadership_;  // stopped (Stop) before reconciler_ goes
  std::unique_ptr<ApiServer> api_;
  std::thread http_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

}  // namespace meridian::control
