// The job-spec parser over a YAML document already in memory: a document
// loaded elsewhere, or one built in code from another format's tree (the
// control plane builds one from a stored spec's JSON, which spares the text
// scanner, the costly part of a parse).
#pragma once

#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/job.h"
#include "core/status.h"

namespace meridian::spec {

// What ParseJobSpecs(text) returns for a document that loads as `root`: the
// same keys, checks and values. Positions come from the nodes' marks, so a
// node built in code (no mark) gives messages and SpecOrigin::marks without
// a line and column.
Result<std::vector<JobSpec>> ParseJobSpecNode(const YAML::Node& root, std::string_view source_name);

}  // namespace meridian::spec
