// Authentication of API requests: bearer token to caller (cached for a
// second), and the job visibility rule every job route applies.
#include "control/api_internal.h"

#include <chrono>

#include "control/token.h"
#include "core/time.h"

namespace meridian::control {

using nlohmann::json;

UnixSeconds ApiServer::Impl::Now() const {
  if (options.clock) return options.clock();
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The caller of a /v1 request, or nullopt after answering 401.
std::optional<Caller> ApiServer::Impl::Authenticate(const httplib::Request& req, httplib::Response& res) {
  const std::string h = req.get_header_value("Authorization");
  if (h.empty()) {
    SendError(res, 401, "missing Authorization: Bearer <token> header (meridian token create)",
              "Authorization");
    return std::nullopt;
  }
  if (h.compare(0, 7, "Bearer ") != 0 || h.size() <= 7) {
    SendError(res, 401, "Authorization: expected \"Bearer <token>\"", "Authorization");
    return std::nullopt;
  }
  const std::string hash = Sha256Hex(std::string_view(h).substr(7));
  std::optional<TokenRow> row;
  const auto now_steady = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> l(token_mu);
    auto it = tokens.find(hash);
    if (it != tokens.end() && now_steady - it->second.fetched < std::chrono::seconds(1)) {
      row = it->second.row;
    }
  }
  if (!row) {
    auto r = store->LookupToken(hash);
    if (!r.ok()) {
      SendInternal(res, r.status().ToString());
      return std::nullopt;
    }
    row = *r;
    if (row) {
      std::lock_guard<std::mutex> l(token_mu);
      tokens[hash] = {*row, now_steady};
    }
  }
  if (!row) {
    SendError(res, 401, "the bearer token is not known", "Authorization");
    return std::nullopt;
  }
  if (row->revoked_at) {
    SendError(res, 401, "the bearer token was revoked at " + FormatRfc3339(*row->revoked_at),
              "Authorization");
    return std::nullopt;
  }
  if (row->expires_at && *row->expires_at <= Now()) {
    SendError(res, 401, "the bearer token expired at " + FormatRfc3339(*row->expires_at),
              "Authorization");
    return std::nullopt;
  }
  return Caller{row->tenant, row->admin, row->node};
}

// The job if the caller may see it; otherwise answers 404 and returns nullopt.
std::optional<JobRow> ApiServer::Impl::VisibleJob(const Caller& c, const std::string& id, httplib::Response& res) {
  auto j = store->GetJob(id);
  if (!j.ok()) {
    if (j.status().code() == StatusCode::kNotFound) {
      SendError(res, 404, "job " + id + " not found");
    } else {
      SendInternal(res, j.status().ToString());
    }
    return std::nullopt;
  }
  if (!c.admin && j->tenant != c.tenant) {
    SendError(res, 404, "job " + id + " not found");
    return std::nullopt;
  }
  return std::move(j).value();
}

}  // namespace meridian::control
