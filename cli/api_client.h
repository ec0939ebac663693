// ApiClient: the client end of meridian's HTTP API (docs/api.md), for the
// `submit`, `status`, `cancel`, `logs` and `nodes` commands. One client talks
// to one daemon (MERIDIAN_URL) with one bearer token (MERIDIAN_TOKEN); it is
// not thread-safe (one per command run).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace httplib {
class Client;
}

namespace meridian::cli {

inline constexpr char kDefaultServerUrl[] = "http://127.0.0.1:8080";

// MERIDIAN_URL taken apart: "http://host:port/prefix".
struct ServerUrl {
  std::string scheme;  // http or https
  std::string host;
  int port = 0;
  std::string prefix;  // "" or "/prefix" (no trailing slash)
  std::string text;    // as the user gave it, for messages
};
Result<ServerUrl> ParseServerUrl(const std::string& url);

// Percent-encodes a path segment or query value (RFC 3986 unreserved kept).
std::string UrlEncode(const std::string& s);
// "/v1/jobs/<id><suffix>", the id encoded.
std::string JobPath(const std::string& id, const std::string& suffix = "");
// "?a=1&b=x" from the non-empty values, in the given order; "" when none.
std::string Query(const std::vector<std::pair<std::string, std::string>>& params);

struct ApiResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string Header(const std::string& lower_name) const;
};

// The server's error body, {"error": {"code", "message", "field"}}; when the
// body is not one, the message says what came back.
struct ApiError {
  std::string code, message, field;
};
ApiError ParseApiError(int status, const std::string& body);

// A fresh random idempotency key (32 hex digits).
std::string NewIdempotencyKey();

class ApiClient {
 public:
  ApiClient(ServerUrl url, std::string token);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // A connection failure is an kInternal Status whose message names the URL;
  // any HTTP answer (2xx-5xx) is a response.
  Result<ApiResponse> Get(const std::string& path);
  Result<ApiResponse> Post(const std::string& path, const std::string& body,
                           const std::string& content_type,
                           const std::map<std::string, std::string>& headers = {});
  const ServerUrl& url() const { return url_; }

 private:
  ServerUrl url_;
  std::string token_;
  std::unique_ptr<httplib::Client> http_;
};

}  // namespace meridian::cli
