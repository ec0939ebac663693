#include "core/status.h"

namespace meridian {

namespace {
const char* CodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kUnschedulable: return "unschedulable";
    case StatusCode::kUnresolvable: return "unresolvable";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}
}  // namespace

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace meridian
