#include "backends/local/tenant_uids.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace meridian::backends {

namespace {

constexpr uint64_t kMaxId = 0xfffffffeu;  // (uid_t)-1 means "unchanged" to setuid()

bool PlainName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c <= ' ' || c == 0x7f) return false;
  }
  return true;
}

Result<uint32_t> ParseId(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Invalid(what + ": \"" + text + "\" must be a whole number");
  }
  uint64_t v = std::stoull(text);
  if (v == 0 || v > kMaxId) {
    return Status::Invalid(what + ": \"" + text + "\" must be from 1 to 4294967294 (0 is root)");
  }
  return static_cast<uint32_t>(v);
}

}  // namespace

IsolationDecision DecideIsolation(uid_t euid) {
  if (euid == 0) return {true, ""};
  return {false, "tenants are not isolated on the local backend: the daemon runs as uid " +
                     std::to_string(euid) +
                     ", not root, so every job runs as that uid and can read the others' "
                     "checkpoints and logs (docs/backends.md, \"Tenant isolation\")"};
}

Result<TenantIdentity> ParseTenantIdentity(const std::string& text) {
  const size_t colon = text.find(':');
  auto uid = ParseId(text.substr(0, colon), "uid");
  if (!uid.ok()) return uid.status();
  TenantIdentity id{*uid, *uid};
  if (colon != std::string::npos) {
    auto gid = ParseId(text.substr(colon + 1), "gid");
    if (!gid.ok()) return gid.status();
    id.gid = *gid;
  }
  return id;
}

Status CheckTenantUidOptions(const TenantUidOptions& o) {
  if (o.base == 0) return Status::Invalid("tenant_uids.base: \"0\" is root; choose an unused range");
  if (o.count == 0) return Status::Invalid("tenant_uids.count: \"0\" leaves no uid for any tenant");
  if (static_cast<uint64_t>(o.base) + o.count - 1 > kMaxId) {
    return Status::Invalid("tenant_uids.count: \"" + std::to_string(o.count) + "\" from base " +
                           std::to_string(o.base) + " runs past uid 4294967294");
  }
  std::map<uid_t, std::string> owner;
  for (const auto& [tenant, id] : o.mapped) {
    const std::string field = "tenant_uids.tenants." + tenant;
    if (id.uid == 0 || id.gid == 0) return Status::Invalid(field + ": uid and gid must not be 0 (root)");
    if (id.uid >= o.base && static_cast<uint64_t>(id.uid) < static_cast<uint64_t>(o.base) + o.count) {
      return Status::Invalid(field + ": uid " + std::to_string(id.uid) + " lies in the range " +
                             std::to_string(o.base) + "+" + std::to_string(o.count) +
                             " that unmapped tenants take; map it outside the range");
    }
    auto [it, fresh] = owner.emplace(id.uid, tenant);
    if (!fresh) {
      return Status::Invalid(field + ": uid " + std::to_string(id.uid) + " is also tenant \"" +
                             it->second + "\"'s; tenants must not share a uid");
    }
  }
  return Status::Ok();
}

Result<TenantUids> TenantUids::Open(const std::string& path, TenantUidOptions options) {
  MERIDIAN_RETURN_IF_ERROR(CheckTenantUidOptions(options));
  TenantUids t(path, std::move(options));
  std::ifstream in(path);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream fields(line);
    std::string tenant, index;
    fields >> tenant >> index;
    const bool digits = !index.empty() && index.size() <= 9 &&
                        index.find_first_not_of("0123456789") == std::string::npos;
    if (tenant.empty() || !digits) {
      return Status::Internal(path + ":" + std::to_string(line_no) + ": \"" + line +
                              "\" is not \"tenant index\"");
    }
    t.index_[tenant] = static_cast<uint32_t>(std::stoul(index));
  }
  return t;
}

Result<TenantIdentity> TenantUids::For(const std::string& tenant) {
  if (auto m = options_.mapped.find(tenant); m != options_.mapped.end()) return m->second;
  if (!PlainName(tenant)) {
    return Status::Invalid("tenant: \"" + tenant + "\" is empty or holds spaces or control characters");
  }
  auto known = index_.find(tenant);
  uint32_t index = 0;
  if (known != index_.end()) {
    index = known->second;
  } else {
    std::set<uint32_t> used;
    for (const auto& [name, i] : index_) used.insert(i);
    while (used.count(index)) ++index;
    if (index >= options_.count) {
      return Status::Internal("tenant \"" + tenant + "\": the tenant uid range " +
                              std::to_string(options_.base) + "+" + std::to_string(options_.count) +
                              " is used up (raise tenant_uids.count)");
    }
    const std::string line = tenant + " " + std::to_string(index) + "\n";
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return Status::Internal(path_ + ": cannot open (" + std::strerror(errno) + ")");
    const bool ok = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                    fsync(fd) == 0;
    close(fd);
    if (!ok) return Status::Internal(path_ + ": cannot record tenant \"" + tenant + "\"");
    index_[tenant] = index;
  }
  if (index >= options_.count) {
    return Status::Internal("tenant \"" + tenant + "\": index " + std::to_string(index) +
                            " in " + path_ + " is outside tenant_uids.count " +
                            std::to_string(options_.count));
  }
  const uid_t id = options_.base + index;
  return TenantIdentity{id, id};
}

}  // namespace meridian::backends
