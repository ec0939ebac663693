#include "cli/serve_state_dir.h"

#include <libpq-fe.h>
#include <pg_config_manual.h>  // DEFAULT_PGSOCKET_DIR, the socket libpq uses when no host is given
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "cli/api_client.h"
#include "control/pg.h"
#include "control/token.h"

namespace meridian::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    const size_t comma = s.find(',', from);
    out.push_back(s.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

// One host entry as libpq reads it: "" is the default socket directory; a
// path ("/..." or Linux's abstract "@...") is a socket directory, made
// absolute and free of symbolic links (/var/run is /run on Debian); else a
// host name or address, case-insensitive.
std::string NormalHost(std::string host) {
  if (host.empty()) host = DEFAULT_PGSOCKET_DIR;
  if (host[0] == '/') {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(fs::path(host), ec);
    std::string p = (ec ? fs::path(host).lexically_normal() : canonical).string();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
  }
  if (host[0] == '@') return host;
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return host;
}

// "05432" and "5432" are one port; what is not a number is kept as written
// (libpq refuses it when it connects).
std::string NormalPort(const std::string& port) {
  if (port.empty() || port.size() > 9 ||
      !std::all_of(port.begin(), port.end(), [](unsigned char ch) { return std::isdigit(ch); })) {
    return port;
  }
  return std::to_string(std::stol(port));
}

// URL encoding, and "~" too: it marks a cut name (StateDirName).
std::string PercentEncoded(const std::string& s) {
  std::string out;
  for (char ch : UrlEncode(s)) out += ch == '~' ? std::string("%7E") : std::string(1, ch);
  return out;
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

Result<PgDatabaseIdentity> IdentifyPgDatabase(const std::string& uri) {
  char* errmsg = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(uri.c_str(), &errmsg);
  if (parsed == nullptr) {
    std::string why = errmsg ? errmsg : "out of memory";
    PQfreemem(errmsg);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Status::Invalid("--db: \"" + control::RedactedUri(uri) + "\": " + why);
  }
  // What the URI gives, then libpq's defaults (its environment variables and
  // compiled-in values) for what it leaves out, as a connection would.
  std::map<std::string, std::string> v;
  for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o) {
    if (o->val != nullptr && *o->val != '\0') v[o->keyword] = o->val;
  }
  PQconninfoFree(parsed);
  if (PQconninfoOption* defaults = PQconndefaults(); defaults != nullptr) {
    for (PQconninfoOption* o = defaults; o->keyword != nullptr; ++o) {
      if (o->val != nullptr && *o->val != '\0') v.emplace(o->keyword, o->val);
    }
    PQconninfoFree(defaults);
  }
  if (v.count("service") > 0) {
    return Status::Invalid("--state-dir: required when the database is named by a service (\"" +
                           v["service"] +
                           "\", pg_service.conf or PGSERVICE): the URI does not say which "
                           "database it is, so there is no default directory for it");
  }
  // Hosts, with hostaddr standing in for a host where it is given (libpq
  // connects to the address), and their ports: one port for all, or one each.
  std::vector<std::string> hosts = SplitCommas(v["host"]);
  if (v.count("hostaddr") > 0) {
    const std::vector<std::string> addrs = SplitCommas(v["hostaddr"]);
    if (addrs.size() > hosts.size()) hosts.resize(addrs.size());
    for (size_t i = 0; i < addrs.size(); ++i) {
      if (!addrs[i].empty()) hosts[i] = addrs[i];
    }
  }
  const std::vector<std::string> ports = SplitCommas(v.count("port") ? v["port"] : "5432");
  if (ports.size() != 1 && ports.size() != hosts.size()) {
    return Status::Invalid("--db: \"" + control::RedactedUri(uri) + "\": " +
                           std::to_string(ports.size()) + " ports for " +
                           std::to_string(hosts.size()) + " hosts");
  }
  std::vector<std::string> servers;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::string port = NormalPort(ports.size() == 1 ? ports[0] : ports[i]);
    servers.push_back(NormalHost(hosts[i]) + ":" + (port.empty() ? "5432" : port));
  }
  std::sort(servers.begin(), servers.end());
  servers.erase(std::unique(servers.begin(), servers.end()), servers.end());
  PgDatabaseIdentity id;
  for (const std::string& s : servers) id.servers += (id.servers.empty() ? "" : ",") + s;
  id.dbname = v.count("dbname") ? v["dbname"] : v["user"];  // libpq: the database named as the user
  if (id.dbname.empty()) {
    return Status::Invalid("--db: \"" + control::RedactedUri(uri) +
                           "\" names no database and no user to name it after");
  }
  return id;
}

std::string StateDirName(const PgDatabaseIdentity& id) {
  std::string name = PercentEncoded(id.dbname) + "@";
  const std::vector<std::string> servers = SplitCommas(id.servers);
  for (size_t i = 0; i < servers.size(); ++i) {
    if (i > 0) name += ",";
    const size_t colon = servers[i].rfind(':');
    name += PercentEncoded(servers[i].substr(0, colon));
    if (colon != std::string::npos) name += ":" + PercentEncoded(servers[i].substr(colon + 1));
  }
  if (name.size() > 200) name = name.substr(0, 150) + "~" + control::Sha256Hex(name).substr(0, 16);
  return name;
}

StateHome StateHomeOfThisProcess() {
  StateHome h;
  h.euid = geteuid();
  h.state_directory = Getenv("STATE_DIRECTORY");
  h.xdg_state_home = Getenv("XDG_STATE_HOME");
  h.home = Getenv("HOME");
  if (h.home.empty()) {
    if (const passwd* pw = getpwuid(h.euid); pw != nullptr && pw->pw_dir != nullptr) h.home = pw->pw_dir;
  }
  return h;
}

Result<std::string> DefaultPgStateDir(const std::string& uri, const StateHome& home) {
  auto id = IdentifyPgDatabase(uri);
  if (!id.ok()) return id.status();
  std::string base;
  if (!home.state_directory.empty()) {
    base = home.state_directory.substr(0, home.state_directory.find(':'));  // systemd: DIR[:DIR...]
  } else if (home.euid == 0) {
    base = "/var/lib/meridian";
  } else if (!home.xdg_state_home.empty() && home.xdg_state_home[0] == '/') {
    base = home.xdg_state_home + "/meridian";  // XDG: a relative value is ignored
  } else if (!home.home.empty()) {
    base = home.home + "/.local/state/meridian";
  } else {
    return Status::Invalid("--state-dir: required: neither $STATE_DIRECTORY, $XDG_STATE_HOME nor "
                           "$HOME says where this user's state goes");
  }
  return (fs::path(base) / "postgresql" / StateDirName(*id)).string();
}

Status MakeStateDir(const std::string& dir, mode_t mode) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = fs::absolute(dir, ec).lexically_normal(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0 || p == p.parent_path()) break;
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (mkdir(it->c_str(), mode) != 0 && errno != EEXIST) {
      return Status::Internal(it->string() + ": cannot create the state directory (" +
                              std::strerror(errno) + ")");
    }
    chmod(it->c_str(), mode);  // the umask took bits away
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    return Status::Internal(dir + ": cannot read the state directory (" + std::strerror(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::Invalid(dir + ": the state directory is not a directory (a symbolic link or a "
                           "file): give --state-dir, or remove it");
  }
  if (st.st_uid != geteuid()) {
    return Status::Invalid(dir + ": the state directory belongs to uid " + std::to_string(st.st_uid) +
                           ", not to this daemon's (" + std::to_string(geteuid()) +
                           "): give --state-dir, or hand it over");
  }
  return Status::Ok();
}

}  // namespace meridian::cli
