#include "cli/api_client.h"

#include <httplib.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <random>

namespace meridian::cli {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string ErrorText(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "connection refused or host unreachable";
    case httplib::Error::ConnectionTimeout: return "connection timed out";
    case httplib::Error::Read: return "no answer (read failed)";
    case httplib::Error::Write: return "request not sent (write failed)";
    case httplib::Error::SSLConnection: return "TLS connection failed";
    case httplib::Error::SSLServerVerification: return "TLS certificate not trusted";
    default: return "HTTP error " + httplib::to_string(e);
  }
}

}  // namespace

Result<ServerUrl> ParseServerUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Status::Invalid("MERIDIAN_URL: \"" + url + "\" " + why);
  };
  ServerUrl u;
  u.text = url;
  size_t sep = url.find("://");
  if (sep == std::string::npos) return bad("must start with http:// or https://");
  u.scheme = Lower(url.substr(0, sep));
  if (u.scheme != "http" && u.scheme != "https") {
    return bad("must start with http:// or https://");
  }
  std::string rest = url.substr(sep + 3);
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) {
    u.prefix = rest.substr(slash);
    while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
    if (u.prefix.find_first_of("?#") != std::string::npos) {
      return bad("must not carry a query or fragment");
    }
  }
  if (authority.find('@') != std::string::npos) {
    return bad("must not carry credentials (use MERIDIAN_TOKEN)");
  }
  u.port = u.scheme == "https" ? 443 : 80;
  std::string port;
  if (authority.starts_with("[")) {  // [::1]:8080
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad("has an unclosed '[' in its host");
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("has junk after its host");
      port = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return bad("has no host");
  if (!port.empty() || authority.ends_with(":")) {
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) < 1 || std::stoi(port) > 65535) {
      return bad("has port \"" + port + "\": must be a number from 1 to 65535");
    }
    u.port = std::stoi(port);
  }
  return u;
}

std::string UrlEncode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string JobPath(const std::string& id, const std::string& suffix) {
  return "/v1/jobs/" + UrlEncode(id) + suffix;
}

std::string Query(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    q += (q.empty() ? "?" : "&") + UrlEncode(k) + "=" + UrlEncode(v);
  }
  return q;
}

std::string ApiResponse::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

ApiError ParseApiError(int status, const std::string& body) {
  ApiError e;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_object()) {
    const auto& err = j["error"];
    auto str = [&](const char* k) {
      return err.contains(k) && err[k].is_string() ? err[k].get<std::string>() : std::string();
    };
    e.code = str("code");
    e.message = str("message");
    e.field = str("field");
  }
  if (e.message.empty()) {
    std::string snippet = body.substr(0, 200);
    while (!snippet.empty() && (snippet.back() == '\n' || snippet.back() == '\r')) snippet.pop_back();
    e.message = "the server answered HTTP " + std::to_string(status) +
                (snippet.empty() ? std::string() : ": " + snippet);
  }
  return e;
}

std::string NewIdempotencyKey() {
  std::random_device rd;
  static const char kHex[] = "0123456789abcdef";
  std::string key;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = rd();
    for (int k = 0; k < 4; ++k) key += kHex[(v >> (k * 4)) & 15];
  }
  return key;
}

ApiClient::ApiClient(ServerUrl url, std::string token)
    : url_(std::move(url)), token_(std::move(token)) {
  std::string host = url_.host.find(':') != std::string::npos ? "[" + url_.host + "]" : url_.host;
  http_ = std::make_unique<httplib::Client>(url_.scheme + "://" + host + ":" +
                                            std::to_string(url_.port));
  http_->set_connection_timeout(5, 0);
  http_->set_read_timeout(30, 0);
  http_->set_write_timeout(30, 0);
  http_->set_keep_alive(true);
}

ApiClient::~ApiClient() = default;

namespace {

Result<ApiResponse> Convert(const httplib::Result& r, const ServerUrl& url) {
  if (!r) {
    return Status::Internal("cannot reach the meridian daemon at " + url.text + ": " +
                            ErrorText(r.error()) +
                            " (is `meridian serve` running there? MERIDIAN_URL sets the address)");
  }
  ApiResponse out;
  out.status = r->status;
  out.body = r->body;
  for (const auto& [k, v] : r->headers) out.headers[Lower(k)] = v;
  return out;
}

}  // namespace

Result<ApiResponse> ApiClient::Get(const std::string& path) {
  httplib::Headers h;
  if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
  return Convert(http_->Get(url_.prefix + path, h), url_);
}

Result<ApiResponse> ApiClient::Post(const std::string& path, const std::string& body,
                                    const std::string& content_type,
                                    const std::map<std::string, std::string>& headers) {
  httplib::Headers h;
  if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
  for (const auto& [k, v] : headers) h.emplace(k, v);
  return Convert(http_->Post(url_.prefix + path, h, body, content_type), url_);
}

}  // namespace meridian::cli
