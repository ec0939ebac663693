// Tenant uids: which unprivileged uid and gid each tenant's jobs run as on
// the local backend when the daemon runs as root (docs/backends.md, "Tenant
// isolation").
//
// A tenant gets, in this order: the uid:gid the config maps it to, or else
// `base + index`, where the index is the tenant's position in a file the
// backend keeps (`<state_dir>/tenant-uids`, one "tenant index" line each,
// appended and fsync'ed before the first job of a new tenant starts). So a
// tenant keeps its uid across restarts, and two tenants never share one.
// The file is the daemon's (mode 0600); jobs cannot read it.
//
// Not thread-safe: the local backend calls it under its own lock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace meridian::backends {

struct TenantIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
  bool operator==(const TenantIdentity&) const = default;
};

struct TenantUidOptions {
  uint32_t base = 200000;   // the first uid (and gid) of the range
  uint32_t count = 100000;  // how many tenants the range holds
  std::map<std::string, TenantIdentity> mapped;  // from the config, before the range
};

// Whether the local backend isolates tenants: only a root daemon can run
// jobs as other uids. `euid` is the daemon's effective uid.
struct IsolationDecision {
  bool isolate = false;
  std::string warning;  // what `serve` prints when it does not isolate; "" when it does
};
IsolationDecision DecideIsolation(uid_t euid);

// Checks a mapping: uids and gids must not be 0 (root), the range must not
// reach uid 0 or past 2^32-2, and no two tenants may share a uid.
Status CheckTenantUidOptions(const TenantUidOptions& options);

// Parses "uid" or "uid:gid" (gid = uid when absent), for the config.
Result<TenantIdentity> ParseTenantIdentity(const std::string& text);

class TenantUids {
 public:
  // Reads `path` (missing: no tenant has an index yet).
  static Result<TenantUids> Open(const std::string& path, TenantUidOptions options);

  // The tenant's identity; a tenant new to the range gets the next index,
  // recorded in the file before this returns.
  Result<TenantIdentity> For(const std::string& tenant);

 private:
  TenantUids(std::string path, TenantUidOptions options)
      : path_(std::move(path)), options_(std::move(options)) {}
  std::string path_;
  TenantUidOptions options_;
  std::map<std::string, uint32_t> index_;
};

}  // namespace meridian::backends
