// The daemon's database as `serve` names it to the operator, and the admin
// sign-in token of a new one (docs/dashboard.md).
#pragma once

#include <string>

#include "control/store.h"
#include "core/status.h"

namespace meridian::cli {

// Where the sign-in token is kept: DB.signin beside a SQLite file; in the
// state directory for PostgreSQL (a URI is not a path).
std::string SignInPath(const std::string& db, const std::string& state);

// The database as the daemon's output names it: a URI without its password.
std::string DbForOutput(const std::string& db);

// The sign-in token of a database: created on the first start of an empty
// one (no tenants, no tokens) as an admin token, so the operator can open the
// dashboard at once. It is kept in `path` (SignInPath, mode 0600) and never
// written to the server's output unless that output is a terminal: logs do
// not get it. Returns the token, or "" when the database has none (or it was
// revoked).
Result<std::string> SignInToken(control::Store* store, const std::string& path);

}  // namespace meridian::cli
