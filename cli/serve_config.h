// serve.yaml, the daemon's config file (docs/control-plane.md,
// "Configuration"): what it can set and how it is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/local/local.h"
#include "backends/local/tenant_uids.h"
#include "cli/serve_fleet.h"
#include "control/backend.h"
#include "control/http_server.h"
#include "control/retention.h"
#include "core/fleet.h"
#include "core/status.h"
#include "telemetry/config.h"

namespace meridian::cli {

// What a config file (docs/control-plane.md, "Configuration") can set.
struct ServeConfig {
  std::string profile = "default";
  std::string region = "gcp:us-central1";
  double gpu_hour_usd = 0;
  double vcpu_hour_usd = kDefaultVcpuHourUsd;    // a run on CPUs, per vCPU-hour held
  double ram_gib_hour_usd = kDefaultRamGibHourUsd;  // and per GiB-hour of RAM held
  std::string state_dir;
  std::string catalog_dir;
  int64_t interval_ms = 200;
  int64_t leader_lease_ms = 5000;  // replicas: a takeover within about 4/3 of it
  // Replicas: the host (and port) other replicas reach this one's API at, in
  // the lease row; "": the --listen host, or the machine's name when it
  // listens on every interface. Without a port, the port it listens on.
  std::string advertise;
  int64_t node_timeout_s = 30;
  size_t max_body_bytes = 1 << 20;
  backends::LocalBackendOptions node;
  int64_t pids_per_job = 16384;  // node.pids_per_job: pids.max of each job's cgroup
  backends::TenantUidOptions tenant_uids;  // docs/backends.md, "Tenant isolation"
  std::string fleet;  // a fleet file whose one cluster has backend: slurm or kubernetes
  KubernetesServeSettings kubernetes;    // with a kubernetes cluster
  telemetry::TelemetryConfig telemetry;  // docs/telemetry.md
  control::ConnectionLimits limits;      // http: (docs/api.md, "Connection limits")
  bool public_job_metrics = false;       // http.public_job_metrics
  control::RetentionOptions retention;   // retention: (docs/control-plane.md, "Retention")
  control::BackendRetryPolicy backend_retry;  // backend_retry: (docs/backends.md)
};

// Reads the config file `file` into `c` (keys it does not set keep their
// defaults). Errors (kInvalidArgument) name the file, the line and column,
// the key, the value and the reason.
Status ReadServeConfig(const std::string& file, ServeConfig* c);
// The same for a config's text; `file` names it in errors.
Status ParseServeConfig(const std::string& text, const std::string& file, ServeConfig* c);

}  // namespace meridian::cli
