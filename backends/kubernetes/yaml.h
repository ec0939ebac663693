// YAML text for manifests, written by hand so the output is byte-for-byte
// stable: keys in the order they were inserted (nlohmann::ordered_json),
// block style, two-space indents, and every string that YAML could read as
// something else (a number, a bool, null, a key) in double quotes with JSON
// escapes. The golden files under testdata/golden depend on this order.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace meridian::backends::k8s {

// One document, ending in a newline.
std::string ToYaml(const nlohmann::ordered_json& doc);
// Documents separated by "---" lines.
std::string ToYamlStream(const std::vector<nlohmann::ordered_json>& docs);

}  // namespace meridian::backends::k8s
