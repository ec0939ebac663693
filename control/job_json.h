// The API's JSON forms: the job object, events, and the conversion of a YAML
// job spec into the JSON the store keeps (plain YAML scalars typed as YAML 1.2
// core reads them, quoted ones kept as strings).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "control/store.h"

namespace meridian::control {

nlohmann::json JobToJson(const JobRow& job);
// The same, with the job's spec already read (`job.spec_json` is not
// parsed again): a submission's answer, from the spec its body gave.
nlohmann::json JobToJson(const JobRow& job, nlohmann::json spec);
nlohmann::json EventsToJson(const std::vector<EventRow>& events);
nlohmann::json YamlToJson(const YAML::Node& node);
// The YAML document that JSON text reads as (JSON is YAML's flow style): a
// string is a scalar of its text, a number or boolean a scalar of its JSON
// form (as `json.dump()` writes it), null a null node. Built in memory, so
// its nodes carry no position.
YAML::Node JsonToYaml(const nlohmann::json& json);

}  // namespace meridian::control
