#include "control/node_request.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control/utf8.h"
#include "spec/suggest.h"

namespace meridian::control {

namespace {

using nlohmann::json;

Status Refuse(const std::string& field, const std::string& reason) {
  return Status::Invalid("request: " + field + ": " + reason);
}

// gpus and vcpus: whole numbers from 0 to 1024 when given.
Status CheckCount(const json& b, const char* key) {
  if (!b.contains(key)) return Status::Ok();
  const json& v = b[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1024) {
    return Refuse(key, v.dump() + " must be a whole number from 0 to 1024");
  }
  return Status::Ok();
}

}  // namespace

Result<NodeRow> DecodeNodeRegistration(std::string_view body, const catalog::Catalog& catalog) {
  MERIDIAN_RETURN_IF_ERROR(CheckJsonBody(body));
  json b = json::parse(body, nullptr, false);
  if (b.is_discarded() || !b.is_object()) {
    return Status::Invalid(
        "request: the body must be a JSON object with name, gpu_model, gpus, vcpus, ram_gib");
  }
  static const std::vector<std::string> kKeys = {"name", "gpu_model", "gpus", "vcpus", "ram_gib"};
  for (const auto& [k, v] : b.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) {
      return Refuse(k, "unknown key" + spec::SuggestFrom(k, kKeys, "keys"));
    }
  }
  NodeRow n;
  if (!b.contains("name") || !b["name"].is_string() || b["name"].get<std::string>().empty()) {
    return Refuse("name", "is required (a text)");
  }
  n.name = b["name"].get<std::string>();
  if (n.name.size() > 63 || n.name.find_first_of("/ ") != std::string::npos) {
    return Refuse("name", "\"" + n.name + "\" must be 1-63 characters without / or spaces");
  }
  MERIDIAN_RETURN_IF_ERROR(CheckCount(b, "gpus"));
  MERIDIAN_RETURN_IF_ERROR(CheckCount(b, "vcpus"));
  if (b.contains("ram_gib") && (!b["ram_gib"].is_number() || b["ram_gib"].get<double>() < 0)) {
    return Refuse("ram_gib", b["ram_gib"].dump() + " must be a number >= 0");
  }
  n.gpus = b.value("gpus", 0);
  n.vcpus = b.value("vcpus", 0);
  n.ram_gib = b.value("ram_gib", 0.0);
  if (b.contains("gpu_model")) {
    if (!b["gpu_model"].is_string()) return Refuse("gpu_model", "must be a text");
    n.gpu_model = b["gpu_model"].get<std::string>();
    if (auto why = spec::UnknownGpuModel(catalog, n.gpu_model)) return Refuse("gpu_model", *why);
  }
  if (n.gpus > 0 && n.gpu_model.empty()) return Refuse("gpu_model", "is required when gpus > 0");
  if (n.gpus > 16) return Refuse("gpus", std::to_string(n.gpus) + " is more than 16 per node");
  n.state = NodeState::kReady;
  n.registered = true;
  return n;
}

}  // namespace meridian::control
