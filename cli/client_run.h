// ClientRun: one client command's talk with the daemon: MERIDIAN_URL and
// MERIDIAN_TOKEN read once, failures turned into the command's message and
// exit code (client_cmd.h lists them). Shared by the client commands and
// `meridian top`.
#pragma once

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/api_client.h"
#include "cli/commands.h"

namespace meridian::cli {

class ClientRun {
 public:
  ClientRun(const char* command, std::ostream& out, std::ostream& err)
      : command_(command), out_(out), err_(err) {}

  // Reads MERIDIAN_URL/MERIDIAN_TOKEN; false (with the message) when the URL is bad.
  bool Connect() {
    const char* url = std::getenv("MERIDIAN_URL");
    auto parsed = ParseServerUrl(url != nullptr && *url != '\0' ? url : kDefaultServerUrl);
    if (!parsed.ok()) {
      Fail(parsed.status().message());
      return false;
    }
    const char* token = std::getenv("MERIDIAN_TOKEN");
    client_ = std::make_unique<ApiClient>(*parsed, token != nullptr ? token : "");
    return true;
  }
  ApiClient& client() { return *client_; }

  int Fail(const std::string& message, int code = kExitBadInput) {
    err_ << "meridian " << command_ << ": " << message << "\n";
    return code;
  }
  // Exit code for a failed request or a non-2xx answer; -1 when it is a 2xx.
  int Check(const Result<ApiResponse>& r) {
    if (!r.ok()) return Fail(r.status().message(), kExitInternal);
    if (r->status >= 200 && r->status < 300) return -1;
    ApiError e = ParseApiError(r->status, r->body);
    std::string msg = e.message;
    if (!e.field.empty() && msg.find(e.field) == std::string::npos) msg += " (field: " + e.field + ")";
    if (r->status == 401) msg += " (set MERIDIAN_TOKEN to a token from `meridian token create`)";
    return Fail(msg, r->status >= 400 && r->status < 500 ? kExitBadInput : kExitInternal);
  }
  // The body of a 2xx answer as JSON; false (and the exit code) when it is not.
  bool Json(const ApiResponse& r, nlohmann::json* out, int* rc) {
    *out = nlohmann::json::parse(r.body, nullptr, false);
    if (out->is_discarded()) {
      *rc = Fail("the daemon at " + client_->url().text + " answered with a body that is not JSON",
                 kExitInternal);
      return false;
    }
    return true;
  }
  std::ostream& out() { return out_; }

 private:
  const char* command_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<ApiClient> client_;
};

}  // namespace meridian::cli
