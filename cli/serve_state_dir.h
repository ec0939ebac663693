// The default state directory of `serve` on a PostgreSQL database: one
// directory per database on each host, so every replica on the host shares
// the local backend's attempt records, logs and checkpoints, and a new leader
// adopts the jobs the old one started (docs/control-plane.md, "State
// directory"). `--state-dir` and serve.yaml's `state_dir` override it.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace meridian::cli {

// Where a URI's database is, with libpq's defaults filled in (PGHOST,
// PGPORT, PGDATABASE, PGUSER, the default socket directory, port 5432, the
// database named as the user) and spellings made one: host names in lower
// case, socket directories as absolute paths without symbolic links,
// host:port pairs in sorted order. Two URIs that reach one database through
// the same addresses give the same identity.
struct PgDatabaseIdentity {
  std::string servers;  // "host:port" pairs, sorted, joined by ","
  std::string dbname;
};

// Errors: a URI libpq cannot parse, or one naming a service
// (pg_service.conf), whose database a URI does not show: such a daemon needs
// --state-dir.
Result<PgDatabaseIdentity> IdentifyPgDatabase(const std::string& uri);

// The directory's name for an identity: "DBNAME@SERVERS", every byte other
// than [A-Za-z0-9._-] written as %XX ("~" too) (so "/" never appears and no name is
// "." or ".."; the separators cannot be forged). A name longer than 200
// bytes keeps its first 150 and adds "~" and 16 hex digits of its SHA-256.
std::string StateDirName(const PgDatabaseIdentity& id);

// Where the per-database directories go, from the process's environment.
struct StateHome {
  uid_t euid = 0;
  std::string state_directory;  // $STATE_DIRECTORY (systemd's StateDirectory=)
  std::string xdg_state_home;   // $XDG_STATE_HOME
  std::string home;             // $HOME, or the passwd entry's home
};
StateHome StateHomeOfThisProcess();

// BASE/postgresql/StateDirName(identity), where BASE is the first path of
// $STATE_DIRECTORY when set, else /var/lib/meridian for root, else
// $XDG_STATE_HOME/meridian (when absolute) or $HOME/.local/state/meridian.
Result<std::string> DefaultPgStateDir(const std::string& uri, const StateHome& home);

// Creates `dir` and the missing directories above it with `mode` (umask
// aside). The directory itself must then be a directory, not a symbolic
// link, owned by this process's effective uid: one planted by another user is
// refused, naming it.
Status MakeStateDir(const std::string& dir, mode_t mode);

}  // namespace meridian::cli
