// The API's error answers (docs/api.md, "Errors").
#include "control/api_internal.h"

#include <cstdio>

#include "control/submission.h"
#include "control/token.h"

namespace meridian::control {

using nlohmann::json;

// Text that is not UTF-8 (a request's bytes echoed in a message) is written
// with U+FFFD in its place, so an answer can always be serialized.
void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void SendError(httplib::Response& res, int status, const std::string& message,
               const std::string& field) {
  const char* code = "internal";
  switch (status) {
    case 400: code = "invalid_argument"; break;
    case 401: code = "unauthenticated"; break;
    case 403: code = "forbidden"; break;
    case 404: code = "not_found"; break;
    case 409: code = "conflict"; break;
    case 413: code = "too_large"; break;
    case 503: code = "unavailable"; break;
    default: break;
  }
  json e = {{"code", code}, {"message", message}};
  e["field"] = field.empty() ? json(nullptr) : json(field);
  SendJson(res, status, {{"error", e}});
}

// A 500: the answer says "internal error" and an id; the details (SQL text,
// an exception's message) go only to the daemon's log, under the same id.
void SendInternal(httplib::Response& res, const std::string& detail) {
  auto random = GenerateToken();
  const std::string id = "e-" + (random.ok() ? random->substr(4, 12) : std::string("000000000000"));
  std::fprintf(stderr, "meridian serve: internal error %s: %s\n", id.c_str(), detail.c_str());
  std::fflush(stderr);
  json e = {{"code", "internal"},
            {"message", "internal error " + id + " (the daemon's log has the details under this id)"},
            {"field", nullptr},
            {"id", id}};
  SendJson(res, 500, {{"error", e}});
}

// A tenant's token names another tenant in a body (submit or plan): refused.
void RefuseTenant(httplib::Response& res, const std::string& named, const Caller& c) {
  SendError(res, 403,
            "request: tenant: \"" + named + "\" is not this token's tenant \"" + c.tenant +
                "\"; leave tenant out or use an admin token",
            "tenant");
}

void SendStatus(httplib::Response& res, const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
      SendError(res, 400, st.message(), FieldOfMessage(st.message()));
      return;
    case StatusCode::kNotFound: SendError(res, 404, st.message()); return;
    default: SendInternal(res, st.ToString()); return;
  }
}


}  // namespace meridian::control
