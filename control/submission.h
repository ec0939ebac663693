// A submitted job spec, read from a request body (YAML or JSON) with the
// spec parser's checks and messages, then checked against the catalog.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "core/job.h"
#include "core/status.h"

namespace meridian::control {

enum class BodyFormat { kYaml, kJson };

// The format a Content-Type names ("application/json", "application/yaml",
// "application/x-yaml", "text/yaml"); an empty one is told from the body's
// first character ('{' is JSON). Errors name the Content-Type.
Result<BodyFormat> FormatFor(std::string_view content_type, std::string_view body);

struct Submission {
  JobSpec spec;
  nlohmann::json spec_json;  // what the store keeps
};

// Parses one job spec from `body`. Errors (kInvalidArgument) read like the
// spec parser's, with "request" as the file name: "request:3:3:
// resources.gpus: ...". The `tenant` key, when missing, is set to `tenant`.
//
// A JSON body is read as a tree (nlohmann's, then the spec parser's reading
// of it, as SpecFromJson reads the stored spec): the spec returned is the one
// the store keeps, and it has no positions (SpecOrigin::marks is empty; see
// ValidateSubmission). A body the tree does not read as one job spec is read
// as text, for the message.
Result<Submission> ParseSubmission(std::string_view body, BodyFormat format,
                                   const std::string& tenant);
// The same from the text alone (yaml-cpp's scanner, positions kept): YAML
// bodies always, and the reference that the JSON tree read is checked
// against (control_submission_test, the api_submission fuzz target).
Result<Submission> ParseSubmissionText(std::string_view body, BodyFormat format,
                                       const std::string& tenant);

// spec::ValidateAgainstCatalog of a submission parsed from `body`; a finding
// on a spec read without positions (a JSON tree) is found again on the text's
// reading, so its message says where in the body, as a YAML body's does.
Status ValidateSubmission(const Submission& submission, std::string_view body, BodyFormat format,
                          const catalog::Catalog& catalog, UnixSeconds now);

// The field path an error message names ("resources.gpus" in "request:3:3:
// resources.gpus: ..."), or "".
std::string FieldOfMessage(const std::string& message);

// Reads a job spec back from the store's JSON: as a tree (JsonToYaml), and
// from the text where the tree does not read, for the message's position.
// A spec read from the tree has no positions (SpecOrigin::marks is empty):
// the stored text is one line the user never wrote.
Result<JobSpec> SpecFromJson(const std::string& spec_json, const std::string& source);
// The same read from the text alone (yaml-cpp's scanner): the reference that
// SpecFromJson's tree read is checked against (control_submission_test, the
// api_submission fuzz target).
Result<JobSpec> SpecFromJsonText(const std::string& spec_json, const std::string& source);

}  // namespace meridian::control
