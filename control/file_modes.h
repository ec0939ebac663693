// The daemon's files are its own: the database, its WAL and shared-memory
// files, the sign-in file and everything the daemon keeps in its state
// directory (attempt records, logs, batch scripts) are mode 0600, its
// directories 0700. When tenants' jobs run as their own uids (a root daemon,
// docs/backends.md), the directories on the way to a tenant's own
// directories are 0711: others may pass through them, not list them.
//
// `serve` sets its umask to 077 before it opens anything, so what it creates
// gets these modes; TightenDaemonFiles takes the extra bits away from what an
// older daemon (or an operator) left looser, at every start.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace meridian::control {

// The most a directory of the daemon may allow: 0700, or 0711 when tenants'
// jobs must pass through it to their own directories.
inline constexpr mode_t kDaemonDirMode = 0700;
inline constexpr mode_t kTenantPathDirMode = 0711;
inline constexpr mode_t kDaemonFileMode = 0600;

struct TightenOptions {
  std::string db;         // the database file ("" = none); -wal, -shm, -journal and .signin too
  std::string state_dir;  // walked; missing: nothing to do
  mode_t dir_mode = kDaemonDirMode;  // kTenantPathDirMode when tenants are isolated
};

// Clears every permission bit beyond `dir_mode` (directories) and 0600
// (files) on the daemon's files. It does not follow symbolic links, and it
// leaves alone what is not the daemon's: entries owned by another uid (a
// tenant's directories) and the contents of jobs' working and checkpoint
// directories (`jobs/<id>/work`, `jobs/<id>/checkpoint`), which are the jobs'
// own files. Returns the paths it changed, for the start-up log.
Result<std::vector<std::string>> TightenDaemonFiles(const TightenOptions& options);

}  // namespace meridian::control
