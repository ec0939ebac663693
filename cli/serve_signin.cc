#include "cli/serve_signin.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "control/pg.h"
#include "control/token.h"

namespace meridian::cli {

std::string SignInPath(const std::string& db, const std::string& state) {
  return control::IsPostgresUri(db) ? state + "/signin" : db + ".signin";
}

std::string DbForOutput(const std::string& db) {
  return control::IsPostgresUri(db) ? control::RedactedUri(db) : db;
}

Result<std::string> SignInToken(control::Store* store, const std::string& path) {
  std::ifstream in(path);
  std::string token;
  if (in && std::getline(in, token) && !token.empty()) {
    // A revoked sign-in token is not offered again.
    auto row = store->LookupToken(control::Sha256Hex(token));
    if (!row.ok()) return row.status();
    return *row && !(*row)->revoked_at ? token : std::string();
  }
  auto tenants = store->Tenants();
  if (!tenants.ok()) return tenants.status();
  if (!tenants->empty()) return std::string();
  auto t = control::GenerateToken();
  if (!t.ok()) return t.status();
  const UnixSeconds now = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal(path + ": cannot create (" + std::strerror(errno) + ")");
  const std::string line = *t + "\n";
  const bool wrote = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  close(fd);
  if (!wrote) return Status::Internal(path + ": cannot write");
  control::NewToken nt;
  nt.hash = control::Sha256Hex(*t);
  nt.tenant = "admin";
  nt.admin = true;
  nt.created_at = now;
  auto id = store->CreateToken(nt);
  if (!id.ok()) return id.status();
  return *t;
}

}  // namespace meridian::cli
