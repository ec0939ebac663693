#include "cli/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "core/time.h"
#include "cli/serve_retry.h"
#include "spec/suggest.h"

namespace meridian::cli {

namespace {

Status ConfigError(const std::string& file, const YAML::Node& n, const std::string& msg) {
  const YAML::Mark m = n.Mark();
  std::string pos = file;
  if (m.line >= 0) pos += ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  return Status::Invalid(pos + ": " + msg);
}

// The http: map: connection limits, timeouts and who sees per-job metrics.
Status ReadHttpConfig(const std::string& file, const YAML::Node& v, ServeConfig* c) {
  static const std::vector<std::string> kHttpKeys = {
      "max_connections", "max_connections_per_client", "header_timeout", "body_timeout",
      "keep_alive_timeout", "write_timeout", "public_job_metrics"};
  if (!v.IsMap()) {
    return ConfigError(file, v, "http: must be a map (max_connections, header_timeout, ...)");
  }
  for (const auto& kv : v) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& n = kv.second;
    if (key == "public_job_metrics") {
      c->public_job_metrics = n.as<bool>();
    } else if (key == "max_connections" || key == "max_connections_per_client") {
      const int64_t count = n.as<int64_t>();
      if (count < 1 || count > 100000) {
        return ConfigError(file, n, "http." + key + ": \"" + n.as<std::string>() + "\" must be 1 to 100000");
      }
      (key == "max_connections" ? c->limits.max_connections
                                : c->limits.max_connections_per_client) = static_cast<int>(count);
    } else if (key == "header_timeout" || key == "body_timeout" || key == "keep_alive_timeout" ||
               key == "write_timeout") {
      auto d = ParseDuration(n.as<std::string>());
      if (!d.ok() || *d < 1 || *d > 3600) {
        return ConfigError(file, n, "http." + key + ": \"" + n.as<std::string>() +
                                        "\" must be a duration from 1s to 1h (\"5s\")");
      }
      const int ms = static_cast<int>(*d * 1000);
      if (key == "header_timeout") c->limits.header_timeout_ms = ms;
      else if (key == "body_timeout") c->limits.body_timeout_ms = ms;
      else if (key == "keep_alive_timeout") c->limits.keep_alive_timeout_ms = ms;
      else c->limits.write_timeout_ms = ms;
    } else {
      return ConfigError(file, kv.first, "http." + key + ": unknown key" +
                                             spec::SuggestFrom(key, kHttpKeys, "keys"));
    }
  }
  return Status::Ok();
}

// tenant_uids: {base: 200000, count: 100000, tenants: {team-a: "1500:1500"}}
Status ReadTenantUids(const std::string& file, const YAML::Node& v, backends::TenantUidOptions* o) {
  if (!v.IsMap()) return ConfigError(file, v, "tenant_uids: must be a map (base, count, tenants)");
  static const std::vector<std::string> kKeys = {"base", "count", "tenants"};
  for (const auto& kv : v) {
    const std::string key = kv.first.as<std::string>();
    if (key == "base" || key == "count") {
      const int64_t n = kv.second.as<int64_t>();
      if (n < 1 || n > 4294967294LL) {
        return ConfigError(file, kv.second, "tenant_uids." + key + ": \"" + kv.second.as<std::string>() +
                                                "\" must be from 1 to 4294967294");
      }
      (key == "base" ? o->base : o->count) = static_cast<uint32_t>(n);
    } else if (key == "tenants") {
      if (!kv.second.IsMap()) {
        return ConfigError(file, kv.second, "tenant_uids.tenants: must map tenant names to \"uid\" or \"uid:gid\"");
      }
      for (const auto& t : kv.second) {
        auto id = backends::ParseTenantIdentity(t.second.as<std::string>());
        if (!id.ok()) {
          return ConfigError(file, t.second, "tenant_uids.tenants." + t.first.as<std::string>() + ": " +
                                                 id.status().message());
        }
        o->mapped[t.first.as<std::string>()] = *id;
      }
    } else {
      return ConfigError(file, kv.first, "tenant_uids." + key + ": unknown key" +
                                             spec::SuggestFrom(key, kKeys, "keys"));
    }
  }
  Status st = backends::CheckTenantUidOptions(*o);
  return st.ok() ? st : ConfigError(file, v, st.message());
}

// advertise: a host name or IPv4 address (letters, digits, '.', '-'), or an
// IPv6 address in brackets, with an optional ":PORT" (1 to 65535).
bool ValidAdvertise(const std::string& s) {
  std::string host = s, port;
  if (!s.empty() && s[0] == '[') {
    const size_t close = s.find(']');
    if (close == std::string::npos || close < 3) return false;
    host = s.substr(1, close - 1);
    if (host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) return false;
    if (close + 1 < s.size()) {
      if (s[close + 1] != ':') return false;
      port = s.substr(close + 2);
      if (port.empty()) return false;
    }
  } else {
    const size_t colon = s.find(':');
    if (colon != std::string::npos) {
      host = s.substr(0, colon);
      port = s.substr(colon + 1);
      if (port.empty()) return false;
    }
    if (host.empty() || host.size() > 253 || host.front() == '-' || host.front() == '.' ||
        host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
            std::string::npos) {
      return false;
    }
  }
  if (port.empty()) return true;
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return false;
  const int n = std::stoi(port);
  return n >= 1 && n <= 65535;
}

}  // namespace

Status ReadServeConfig(const std::string& file, ServeConfig* c) {
  std::ifstream in(file, std::ios::binary);
  std::string text;
  if (in) text.assign(std::istreambuf_iterator<char>(in), {});
  if (!in.is_open() || in.bad()) return Status::Invalid(file + ": cannot read the config file");
  return ParseServeConfig(text, file, c);
}

Status ParseServeConfig(const std::string& text, const std::string& file, ServeConfig* c) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(file + ": " + e.what());
  }
  if (!root.IsMap()) return ConfigError(file, root, "the config must be a map of keys");
  static const std::vector<std::string> kKeys = {"profile", "region", "gpu_hour_usd",
                                                 "vcpu_hour_usd", "ram_gib_hour_usd", "state_dir",
                                                 "catalog", "reconcile_interval_ms", "leader_lease_ms", "advertise", "node_timeout",
                                                 "max_body_bytes", "node", "fleet", "telemetry",
                                                 "kubernetes", "http", "tenant_uids",
                                                 "retention", "backend_retry"};
  static const std::vector<std::string> kNodeKeys = {"name",    "gpu_model",    "gpus",
                                                     "vcpus",   "ram_gib",      "pids_per_job",
                                                     "max_log_bytes"};
  static const std::vector<std::string> kKubernetesKeys = {"kubeconfig", "kubectl", "namespace",
                                                           "image"};
  try {
    for (const auto& kv : root) {
      const std::string k = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (k == "profile") c->profile = v.as<std::string>();
      else if (k == "region") c->region = v.as<std::string>();
      else if (k == "gpu_hour_usd") c->gpu_hour_usd = v.as<double>();
      else if (k == "vcpu_hour_usd" || k == "ram_gib_hour_usd") {
        const double usd = v.as<double>();
        if (!(usd >= 0)) {
          return ConfigError(file, v, k + ": \"" + v.as<std::string>() + "\" must be >= 0 (US dollars)");
        }
        (k == "vcpu_hour_usd" ? c->vcpu_hour_usd : c->ram_gib_hour_usd) = usd;
      }
      else if (k == "state_dir") c->state_dir = v.as<std::string>();
      else if (k == "catalog") c->catalog_dir = v.as<std::string>();
      else if (k == "fleet") c->fleet = v.as<std::string>();
      else if (k == "max_body_bytes") c->max_body_bytes = v.as<size_t>();
      else if (k == "reconcile_interval_ms") {
        c->interval_ms = v.as<int64_t>();
        if (c->interval_ms < 1 || c->interval_ms > 60000) {
          return ConfigError(file, v, k + ": \"" + v.as<std::string>() + "\" must be 1 to 60000");
        }
      } else if (k == "leader_lease_ms") {
        // Renewed every third of it: under 300 ms a busy database could
        // depose a live leader; over 10 minutes a dead one stalls the jobs.
        c->leader_lease_ms = v.as<int64_t>();
        if (c->leader_lease_ms < 300 || c->leader_lease_ms > 600000) {
          return ConfigError(file, v, k + ": \"" + v.as<std::string>() + "\" must be 300 to 600000");
        }
      } else if (k == "advertise") {
        c->advertise = v.as<std::string>();
        if (!ValidAdvertise(c->advertise)) {
          return ConfigError(file, v, k + ": \"" + c->advertise +
                                          "\" must be HOST or HOST:PORT (the name or address other "
                                          "replicas reach this one's API at; port 1 to 65535)");
        }
      } else if (k == "node_timeout") {
        auto d = ParseDuration(v.as<std::string>());
        if (!d.ok() || *d <= 0) {
          return ConfigError(file, v, k + ": \"" + v.as<std::string>() + "\" must be a duration > 0 (\"30s\")");
        }
        c->node_timeout_s = *d;
      } else if (k == "retention") {
        // At least an hour: a client that polls its job must still find how it ended.
        auto d = ParseDuration(v.as<std::string>());
        if (!d.ok() || *d < 3600) {
          return ConfigError(file, v, k + ": \"" + v.as<std::string>() +
                                          "\" must be a duration of at least 1h (\"30d\")");
        }
        c->retention.retention_s = *d;
      } else if (k == "kubernetes") {
        if (!v.IsMap()) return ConfigError(file, v, "kubernetes: must be a map (kubeconfig, kubectl, namespace, image)");
        for (const auto& kk : v) {
          const std::string key = kk.first.as<std::string>();
          const std::string s = kk.second.as<std::string>();
          if (key == "kubeconfig") c->kubernetes.kubeconfig = s;
          else if (key == "kubectl") c->kubernetes.kubectl = s;
          else if (key == "namespace") c->kubernetes.ns = s;
          else if (key == "image") c->kubernetes.image = s;
          else return ConfigError(file, kk.first, "kubernetes." + key + ": unknown key" + spec::SuggestFrom(key, kKubernetesKeys, "keys"));
          if (s.empty()) return ConfigError(file, kk.second, "kubernetes." + key + ": must not be empty");
        }
      } else if (k == "http") {
        MERIDIAN_RETURN_IF_ERROR(ReadHttpConfig(file, v, c));
      } else if (k == "backend_retry") {
        MERIDIAN_RETURN_IF_ERROR(ReadBackendRetry(file, v, &c->backend_retry));
      } else if (k == "tenant_uids") {
        MERIDIAN_RETURN_IF_ERROR(ReadTenantUids(file, v, &c->tenant_uids));
      } else if (k == "telemetry") {
        MERIDIAN_RETURN_IF_ERROR(telemetry::ParseTelemetryConfig(v, file, &c->telemetry));
      } else if (k == "node") {
        if (!v.IsMap()) return ConfigError(file, v, "node: must be a map (name, gpu_model, gpus, vcpus, ram_gib, pids_per_job)");
        for (const auto& nk : v) {
          const std::string key = nk.first.as<std::string>();
          if (key == "name") c->node.node_name = nk.second.as<std::string>();
          else if (key == "gpu_model") c->node.gpu_model = nk.second.as<std::string>();
          else if (key == "gpus") c->node.gpus = nk.second.as<int>();
          else if (key == "vcpus") c->node.vcpus = nk.second.as<int>();
          else if (key == "ram_gib") c->node.ram_gib = nk.second.as<double>();
          else if (key == "max_log_bytes") {
            const int64_t cap = nk.second.as<int64_t>();
            if (cap != 0 && (cap < 4096 || cap > (int64_t{1} << 50))) {
              return ConfigError(file, nk.second, "node.max_log_bytes: \"" + nk.second.as<std::string>() +
                                                      "\" must be 0 (no cap) or 4096 to 2^50 bytes");
            }
            c->node.max_log_bytes = cap;
          } else if (key == "pids_per_job") {
            c->pids_per_job = nk.second.as<int64_t>();
            if (c->pids_per_job < 0 || c->pids_per_job > 4194304) {
              return ConfigError(file, nk.second, "node.pids_per_job: \"" + nk.second.as<std::string>() +
                                                      "\" must be 0 (no limit) to 4194304 (Linux's pid_max)");
            }
          }
          else return ConfigError(file, nk.first, "node." + key + ": unknown key" + spec::SuggestFrom(key, kNodeKeys, "keys"));
        }
      } else {
        return ConfigError(file, kv.first, k + ": unknown key" + spec::SuggestFrom(k, kKeys, "keys"));
      }
    }
  } catch (const YAML::BadConversion& e) {
    return ConfigError(file, root, std::string("a value has the wrong type: ") + e.what());
  }
  return Status::Ok();
}


}  // namespace meridian::cli
