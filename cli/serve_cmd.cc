#include "cli/serve_cmd.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <csignal>
#include <fstream>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "backends/local/cgroup.h"
#include "backends/local/local.h"
#include "catalog/catalog.h"
#include "cli/commands.h"
#include "cli/fleet_output.h"
#include "cli/serve_config.h"
#include "cli/serve_fleet.h"
#include "cli/serve_retry.h"
#include "cli/serve_signin.h"
#include "cli/serve_state_dir.h"
#include "control/daemon.h"
#include "control/file_modes.h"
#include "control/pg.h"
#include "control/token.h"
#include "core/time.h"
#include "sched/profile.h"
#include "spec/fleet.h"
#include "telemetry/config.h"
#include "spec/suggest.h"

namespace meridian::cli {


namespace {

volatile sig_atomic_t g_stop_fd = -1;

void OnStopSignal(int) {
  const char c = 's';
  if (g_stop_fd >= 0) (void)!write(g_stop_fd, &c, 1);
}

Result<std::pair<std::string, int>> ParseListen(const std::string& s) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return Status::Invalid("--listen: \"" + s + "\" must be HOST:PORT, e.g. 127.0.0.1:8080");
  }
  const std::string port = s.substr(colon + 1);
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return Status::Invalid("--listen: port \"" + port + "\" must be a number from 0 to 65535");
  }
  return std::make_pair(s.substr(0, colon), static_cast<int>(p));
}

// The same profile lookup as plan and simulate: a file, or a shipped name.
Result<sched::Profile> LoadServeProfile(const std::string& name_or_path) {
  return LoadProfile(name_or_path);
}

int Fail(std::ostream& err, const std::string& cmd, const Status& st) {
  err << "meridian " << cmd << ": " << st.message() << "\n";
  return st.code() == StatusCode::kInternal ? kExitInternal : kExitBadInput;
}

// The local backend as this daemon can run it: tenants' jobs as their own
// uids when it is root, cgroup limits when cgroup v2 is usable; it says at
// start (on `err`) what it cannot enforce. Isolating tenants opens the
// daemon's directories to passage (`tighten`'s dir_mode).
std::unique_ptr<control::Backend> MakeServeLocalBackend(const ServeConfig& c, const std::string& state,
                                                        std::ostream& err,
                                                        control::TightenOptions* tighten) {
  backends::LocalBackendOptions bo = c.node;
  bo.state_dir = state + "/backend";
  const backends::IsolationDecision iso = backends::DecideIsolation(geteuid());
  if (iso.isolate) {
    bo.tenant_uids = c.tenant_uids;
    bo.tenant_root = state;
    tighten->dir_mode = control::kTenantPathDirMode;
  } else {
    err << "meridian serve: warning: " << iso.warning << std::endl;
  }
  const backends::CgroupSupport cg = backends::DetectCgroupV2(backends::ProbeThisProcess());
  const Status prepared =
      cg.usable ? backends::PrepareCgroupParent(cg.dir, getpid(), cg.pids) : Status::Ok();
  if (cg.usable && prepared.ok()) {
    bo.cgroup_dir = cg.dir;
    bo.pids_per_job = cg.pids ? c.pids_per_job : 0;
  } else {
    err << "meridian serve: warning: jobs' vCPU and RAM limits are not enforced on the local "
           "backend: "
        << (cg.usable ? prepared.message() : cg.reason) << " (docs/backends.md, \"Limits\")"
        << std::endl;
  }
  return backends::MakeLocalBackend(bo);
}

int RunServe(const ServeCommands& f, std::ostream& out, std::ostream& err) {
  umask(077);  // the daemon's files are its own (control/file_modes.h)
  ServeConfig c;
  if (!f.config.empty()) {
    if (Status st = ReadServeConfig(f.config, &c); !st.ok()) return Fail(err, "serve", st);
  }
  auto listen = ParseListen(f.listen);
  if (!listen.ok()) return Fail(err, "serve", listen.status());
  auto cat = c.catalog_dir.empty() ? catalog::Catalog::LoadEmbedded()
                                   : catalog::Catalog::LoadFromDirectory(c.catalog_dir);
  if (!cat.ok()) return Fail(err, "serve", cat.status().WithContext("catalog"));
  if (auto why = spec::UnknownRegion(**cat, c.region)) {
    return Fail(err, "serve", Status::Invalid(f.config + ": region: " + *why));
  }
  if (c.node.gpus > 0) {
    if (auto why = spec::UnknownGpuModel(**cat, c.node.gpu_model)) {
      return Fail(err, "serve", Status::Invalid(f.config + ": node.gpu_model: " + *why));
    }
  }
  auto profile = LoadServeProfile(c.profile);
  if (!profile.ok()) return Fail(err, "serve", profile.status().WithContext("profile"));

  control::DaemonOptions o;
  o.store.path = f.db;
  o.store.synchronous = f.sync == "normal" ? "NORMAL" : "FULL";
  o.api.host = listen->first;
  o.api.port = listen->second;
  o.api.max_body_bytes = c.max_body_bytes;
  o.api.limits = c.limits;
  o.api.public_job_metrics = c.public_job_metrics;
  if (control::IsPostgresUri(f.db) && f.serve->get_option("--sync")->count() > 0) {
    return Fail(err, "serve",
                Status::Invalid("--sync: \"" + f.sync +
                                "\" applies to a SQLite --db only; with PostgreSQL, durability is "
                                "the server's synchronous_commit"));
  }
  // Before anything is made or changed: a second daemon on a SQLite file
  // stops here. Held until this function returns, after the daemon's end.
  std::unique_ptr<control::SqliteServeLock> sqlite_lock;
  if (!control::IsPostgresUri(f.db)) {
    auto lock = control::SqliteServeLock::Take(f.db);
    if (!lock.ok()) return Fail(err, "serve", lock.status());
    sqlite_lock = std::move(lock).value();
  }
  std::string state = !f.state_dir.empty() ? f.state_dir
                      : !c.state_dir.empty() ? c.state_dir
                                             : f.db + ".state";
  if (control::IsPostgresUri(f.db) && f.state_dir.empty() && c.state_dir.empty()) {
    // One directory per database on this host, shared by its replicas here.
    auto dir = DefaultPgStateDir(f.db, StateHomeOfThisProcess());
    if (!dir.ok()) return Fail(err, "serve", dir.status());
    const bool isolate = backends::DecideIsolation(geteuid()).isolate;
    if (Status st = MakeStateDir(*dir, isolate ? control::kTenantPathDirMode : control::kDaemonDirMode);
        !st.ok()) {
      return Fail(err, "serve", st);
    }
    state = *dir;
    out << "meridian serve: state directory " << state
        << " (this database's default on this host; --state-dir overrides)" << std::endl;
  }
  o.reconciler.catalog = *cat;
  o.reconciler.profile = *profile;
  o.reconciler.region = c.region;
  o.reconciler.gpu_hour_usd = c.gpu_hour_usd;
  o.reconciler.vcpu_hour_usd = c.vcpu_hour_usd;
  o.reconciler.ram_gib_hour_usd = c.ram_gib_hour_usd;
  o.reconciler.state_dir = state;
  o.reconciler.interval_ms = c.interval_ms;
  o.lease_ms = c.leader_lease_ms;
  o.advertise = c.advertise;
  o.reconciler.node_timeout_s = c.node_timeout_s;
  o.reconciler.retention = c.retention;
  o.reconciler.backend_retry = c.backend_retry;
  o.telemetry = c.telemetry;
  o.reconciler.plan_renderer = [](const JobSpec& job, const sched::Decision& d,
                                  const sched::Fleet& fleet, const sched::Profile& p,
                                  UnixSeconds at) {
    FleetRun run{p.name, p.source, "(the daemon's fleet)", at, &fleet, {}, {}};
    run.decisions.push_back({&job, d});
    return FleetRunToJson(run);
  };
  std::unique_ptr<control::Backend> backend;
  std::string backend_note;
  control::TightenOptions tighten;
  if (!c.fleet.empty()) {
    if (c.node.gpus > 0 || !c.node.node_name.empty()) {
      return Fail(err, "serve", Status::Invalid(f.config + ": node: and fleet: exclude each other "
                                                "(with a fleet, the nodes come from its cluster)"));
    }
    auto fb = BackendFromFleet(f.config, c.fleet, c.kubernetes, *cat, state + "/backend",
                               c.node.max_log_bytes, &o.reconciler);
    if (!fb.ok()) return Fail(err, "serve", fb.status());
    backend = std::move(fb->backend);
    backend_note = fb->note;
  } else {
    if (backends::DecideIsolation(geteuid()).isolate) {
      if (Status st = backends::CheckTenantsCanReach(state); !st.ok()) return Fail(err, "serve", st);
    }
    backend = MakeServeLocalBackend(c, state, err, &tighten);
  }
  tighten.db = control::IsPostgresUri(f.db) ? "" : f.db;
  tighten.state_dir = state;
  auto tightened = control::TightenDaemonFiles(tighten);
  if (!tightened.ok()) return Fail(err, "serve", tightened.status());
  if (!tightened->empty()) {
    out << "meridian serve: took group and other permissions away from " << tightened->size()
        << " of the daemon's files (first: " << tightened->front() << ")" << std::endl;
  }

  auto daemon = control::Daemon::Start(std::move(o), std::move(backend));
  if (!daemon.ok()) return Fail(err, "serve", daemon.status());
  out << "meridian serve: listening on http://" << listen->first << ":" << (*daemon)->port()
      << " (db " << DbForOutput(f.db)
      << (control::IsPostgresUri(f.db)
              ? std::string(", PostgreSQL")
              : std::string(", WAL, synchronous=") + (f.sync == "normal" ? "NORMAL" : "FULL"))
      << ", state " << state << ")" << std::endl;
  if (!backend_note.empty()) out << "meridian serve: " << backend_note << std::endl;
  const std::string url = "http://" + listen->first + ":" + std::to_string((*daemon)->port()) + "/";
  const std::string signin_path = SignInPath(f.db, state);
  auto signin = SignInToken((*daemon)->store(), signin_path);
  if (!signin.ok()) return Fail(err, "serve", signin.status());
  if (signin->empty()) {
    out << "meridian serve: dashboard at " << url << " (sign in with a token from `meridian token create --db "
        << DbForOutput(f.db) << " --tenant NAME`; " << url << "#token=TOKEN signs in directly)" << std::endl;
  } else if (&out == &std::cout && isatty(STDOUT_FILENO)) {
    // The fragment (#token=...) never reaches the server: not in its logs, not in a query string.
    out << "meridian serve: dashboard at " << url << "\n"
        << "meridian serve: open " << url << "#token=" << *signin
        << " to sign in as admin (the token is also in " << signin_path << ")" << std::endl;
  } else {
    out << "meridian serve: dashboard at " << url << " (the admin sign-in link is " << url
        << "#token= followed by the token in " << signin_path << ", mode 0600; "
        << "not printed because this output is not a terminal)" << std::endl;
  }
  // SIGINT/SIGTERM: the handler writes to a pipe; a thread reads it and stops
  // the daemon. (No signal mask is changed, so launched jobs get SIGTERM as usual.)
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Fail(err, "serve", Status::Internal("pipe failed"));
  g_stop_fd = fds[1];
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  std::thread stopper([&] {
    char c;
    while (read(fds[0], &c, 1) < 0 && errno == EINTR) {
    }
    (*daemon)->Stop();
  });
  (*daemon)->Wait();
  const char wake = 'q';
  (void)!write(fds[1], &wake, 1);
  stopper.join();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  g_stop_fd = -1;
  close(fds[0]);
  close(fds[1]);
  return kExitOk;
}

bool ValidTenant(const std::string& t) {
  if (t.empty() || t.size() > 63 || !std::isalnum(static_cast<unsigned char>(t[0]))) return false;
  for (char ch : t) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') {
      return false;
    }
  }
  return true;
}

// `token list`: one line per token, oldest first; never the secret or its hash.
int RunTokenList(control::Store& store, long long now, bool as_json, std::ostream& out,
                 std::ostream& err) {
  auto rows = store.Tokens();
  if (!rows.ok()) return Fail(err, "token list", rows.status());
  auto state = [now](const control::TokenRow& t) -> std::string {
    if (t.revoked_at) return "revoked";
    if (t.expires_at && *t.expires_at <= now) return "expired";
    return "active";
  };
  if (as_json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const control::TokenRow& t : *rows) {
      nlohmann::json j = {{"id", t.id}, {"tenant", t.node.empty() ? t.tenant : ""},
                          {"role", t.admin ? "admin" : !t.node.empty() ? "node" : "tenant"},
                          {"node", t.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.node)},
                          {"created", FormatRfc3339(t.created_at)}, {"state", state(t)}};
      j["expires"] = t.expires_at ? nlohmann::json(FormatRfc3339(*t.expires_at)) : nlohmann::json(nullptr);
      arr.push_back(j);
    }
    out << nlohmann::json{{"tokens", arr}}.dump(2) << "\n";
    return kExitOk;
  }
  out << "ID                    TENANT           ROLE    NODE             CREATED               STATE\n";
  for (const control::TokenRow& t : *rows) {
    char line[256];
    std::snprintf(line, sizeof line, "%-21s %-16s %-7s %-16s %-21s %s\n", t.id.c_str(),
                  t.node.empty() ? t.tenant.c_str() : "-",
                  t.admin ? "admin" : !t.node.empty() ? "node" : "tenant",
                  t.node.empty() ? "-" : t.node.c_str(), FormatRfc3339(t.created_at).c_str(),
                  state(t).c_str());
    out << line;
  }
  return kExitOk;
}

int RunTokenRevoke(const ServeCommands& f, control::Store& store, long long now,
                   std::ostream& err) {
  if (f.token_value.empty() == f.token_id.empty()) {
    return Fail(err, "token revoke",
                Status::Invalid("give the token (TOKEN) or its id (--id ID from `meridian token "
                                "list`), one of them"));
  }
  Status st = f.token_id.empty() ? store.RevokeToken(control::Sha256Hex(f.token_value), now)
                                 : store.RevokeTokenById(f.token_id, now);
  if (st.code() == StatusCode::kNotFound) {
    const std::string what = f.token_id.empty() ? "TOKEN: the token" : "--id: \"" + f.token_id + "\"";
    return Fail(err, "token revoke", Status::Invalid(what + ": " + st.message()));
  }
  if (!st.ok()) return Fail(err, "token revoke", st);
  return kExitOk;
}

int RunToken(const ServeCommands& f, long long now, std::ostream& out, std::ostream& err) {
  control::SqliteOptions so;
  so.path = f.token_db;
  so.readers = 1;
  so.group_commit = false;
  if (f.token_revoke->parsed() || f.token_list->parsed()) {
    const char* cmd = f.token_list->parsed() ? "token list" : "token revoke";
    auto store = control::OpenStore(so);
    if (!store.ok()) return Fail(err, cmd, store.status());
    if (f.token_list->parsed()) return RunTokenList(**store, now, f.token_json, out, err);
    return RunTokenRevoke(f, **store, now, err);
  }
  if (f.node.empty() && !ValidTenant(f.tenant)) {
    return Fail(err, "token create",
                Status::Invalid("--tenant: \"" + f.tenant +
                                "\" must be 1-63 letters, digits, '-', '_' or '.', starting with a "
                                "letter or digit"));
  }
  if (!f.node.empty() && (!f.tenant.empty() || f.admin)) {
    return Fail(err, "token create",
                Status::Invalid("--node: a node token acts for its node only; leave out --tenant "
                                "and --admin"));
  }
  if (!f.node.empty() && (f.node.size() > 63 || f.node.find_first_of("/ ") != std::string::npos)) {
    return Fail(err, "token create",
                Status::Invalid("--node: \"" + f.node + "\" must be 1-63 characters without / or spaces"));
  }
  std::optional<UnixSeconds> expires;
  if (!f.expires.empty()) {
    auto d = ParseDuration(f.expires);
    if (!d.ok() || *d <= 0) {
      return Fail(err, "token create",
                  Status::Invalid("--expires: \"" + f.expires + "\" must be a duration > 0 (\"90d\", \"12h\")"));
    }
    expires = now + *d;
  }
  auto store = control::OpenStore(so);
  if (!store.ok()) return Fail(err, "token create", store.status());
  auto token = control::GenerateToken();
  if (!token.ok()) return Fail(err, "token create", token.status());
  control::NewToken nt;
  nt.hash = control::Sha256Hex(*token);
  nt.tenant = f.node.empty() ? f.tenant : control::kNodeTokenTenant;
  nt.node = f.node;
  nt.admin = f.admin;
  nt.created_at = now;
  nt.expires_at = expires;
  auto id = (*store)->CreateToken(nt);
  if (!id.ok()) return Fail(err, "token create", id.status());
  out << *token << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<ServeCommands> AddServeCommands(CLI::App& app) {
  auto c = std::make_unique<ServeCommands>();
  c->serve = app.add_subcommand(
      "serve", "run the control plane: HTTP API, store (SQLite or PostgreSQL), reconcile loop (docs/api.md)");
  c->serve->add_option("--listen", c->listen, "HOST:PORT to serve on (port 0: any free one)")
      ->capture_default_str();
  c->serve->add_option("--db", c->db,
                       "SQLite database file (created if missing; WAL mode), or a PostgreSQL URI "
                       "(postgresql://USER@HOST:PORT/DB)")
      ->capture_default_str();
  c->serve->add_option("--config", c->config, "config file (docs/control-plane.md)")
      ->check(CLI::ExistingFile);
  c->serve->add_option("--state-dir", c->state_dir,
                       "where job logs and checkpoints live (default: <db>.state; with PostgreSQL, one directory "
                       "per database, BASE/postgresql/DB@HOST:PORT, BASE being $STATE_DIRECTORY, else "
                       "/var/lib/meridian as root, else $XDG_STATE_HOME/meridian or "
                       "~/.local/state/meridian)");
  c->serve->add_option("--sync", c->sync,
                       "SQLite synchronous mode: full (fsync per group commit) or normal (SQLite only)")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();

  c->token = app.add_subcommand("token", "manage the API's bearer tokens");
  c->token->require_subcommand(1);
  c->token_create = c->token->add_subcommand("create", "print a new bearer token for a tenant");
  c->token_create->add_option("--db", c->token_db, "the daemon's database (a SQLite file or a PostgreSQL URI)")->capture_default_str();
  auto* tenant = c->token_create->add_option("--tenant", c->tenant, "tenant the token acts for");
  auto* node = c->token_create->add_option(
      "--node", c->node, "a node token: it may only heartbeat this node (docs/api.md)");
  tenant->excludes(node);
  c->token_create->add_flag("--admin", c->admin, "the token sees and manages every tenant");
  c->token_create->add_option("--expires", c->expires, "lifetime, e.g. 90d (default: none)");
  c->token_revoke = c->token->add_subcommand("revoke", "revoke a bearer token");
  c->token_revoke->add_option("--db", c->token_db, "the daemon's database (a SQLite file or a PostgreSQL URI)")->capture_default_str();
  c->token_revoke->add_option("TOKEN", c->token_value, "the token to revoke");
  c->token_revoke->add_option("--id", c->token_id, "the id of the token to revoke (token list)");
  c->token_list = c->token->add_subcommand(
      "list", "list tokens: id, tenant, role, node, created, state (never the secret)");
  c->token_list->add_option("--db", c->token_db, "the daemon's database (a SQLite file or a PostgreSQL URI)")->capture_default_str();
  c->token_list->add_flag("--json", c->token_json, "print JSON");
  return c;
}

std::optional<int> RunServeCommand(const ServeCommands& c, long long now, std::ostream& out,
                                   std::ostream& err) {
  if (c.serve->parsed()) return RunServe(c, out, err);
  if (c.token->parsed()) return RunToken(c, now, out, err);
  return std::nullopt;
}

}  // namespace meridian::cli
