#include "control/submission.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "control/job_json.h"
#include "control/utf8.h"
#include "spec/spec.h"
#include "spec/spec_node.h"

namespace meridian::control {

Result<BodyFormat> FormatFor(std::string_view ct, std::string_view body) {
  std::string t(ct.substr(0, ct.find(';')));
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  if (t == "application/json") return BodyFormat::kJson;
  if (t == "application/yaml" || t == "application/x-yaml" || t == "text/yaml" ||
      t == "text/x-yaml") {
    return BodyFormat::kYaml;
  }
  if (t.empty() || t == "text/plain" || t == "application/octet-stream" ||
      t == "application/x-www-form-urlencoded") {
    size_t i = body.find_first_not_of(" \t\r\n");
    return i != std::string_view::npos && body[i] == '{' ? BodyFormat::kJson : BodyFormat::kYaml;
  }
  return Status::Invalid("Content-Type: \"" + std::string(ct) +
                         "\" is not a job spec format; use application/json or application/yaml");
}

std::string FieldOfMessage(const std::string& m) {
  // "<source>:<line>:<col>: <field>: <rest>" or "<source>: <field>: <rest>".
  size_t start = m.find(": ");
  if (start == std::string::npos) return "";
  start += 2;
  size_t end = m.find(": ", start);
  if (end == std::string::npos) return "";
  std::string f = m.substr(start, end - start);
  if (f.find(' ') != std::string::npos || f.find('"') != std::string::npos) return "";
  return f;
}

namespace {

// The one job spec that the JSON object `tree` reads as (the spec parser's
// reading of JsonToYaml's document), or nothing when it does not read as one.
std::optional<JobSpec> SpecFromTree(const nlohmann::json& tree, std::string_view source) {
  auto specs = spec::ParseJobSpecNode(JsonToYaml(tree), source);
  if (!specs.ok() || specs->size() != 1) return std::nullopt;
  return std::move((*specs)[0]);
}

// The members of every object in `j`, nested ones included.
size_t CountKeys(const nlohmann::json& j) {
  size_t n = 0;
  if (j.is_object()) {
    n += j.size();
    for (const auto& [key, value] : j.items()) n += CountKeys(value);
  } else if (j.is_array()) {
    for (const nlohmann::json& v : j) n += CountKeys(v);
  }
  return n;
}

// `json` (valid JSON) with each object key's colon moved up to the key where
// a line break comes between them (`"kind"\n: "x"` reads as `"kind":\n "x"`):
// JSON allows the break, YAML does not (an implicit key is one line), so the
// text's reading would refuse a body the tree reads. Only the colon and the
// blanks before it move, so every key and value keeps its offset and line
// (on the line the colon left, one column to the left).
std::string JsonKeysForYaml(std::string_view json) {
  auto blank = [](char w) { return w == ' ' || w == '\t' || w == '\n' || w == '\r'; };
  std::string out(json);
  bool in_string = false;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        size_t k = i + 1;
        while (k < out.size() && blank(out[k])) ++k;
        const auto gap = out.begin() + static_cast<std::ptrdiff_t>(i + 1);
        const auto colon = out.begin() + static_cast<std::ptrdiff_t>(k);
        if (k < out.size() && out[k] == ':' &&
            std::find_if(gap, colon, [](char w) { return w == '\n' || w == '\r'; }) != colon) {
          std::rotate(gap, colon, colon + 1);
        }
      }
    } else if (c == '"') {
      in_string = true;
    }
  }
  return out;
}

// A JSON body read as nlohmann's tree and the spec parser's reading of that
// tree (JsonToYaml), the tenant set first where the body has none: the spec
// the store keeps and the leader reads back, without yaml-cpp's text scanner
// (most of a submission's parse). Nothing when the body is not one job spec
// read that way, or names a key twice in one object (the tree keeps the last;
// the text's reading refuses it): the caller reads the text instead, whose
// messages say where.
std::optional<Submission> ReadJsonTree(std::string_view body, const std::string& tenant) {
  size_t keys = 0;
  nlohmann::json tree = nlohmann::json::parse(
      body,
      [&keys](int, nlohmann::json::parse_event_t e, nlohmann::json&) {
        if (e == nlohmann::json::parse_event_t::key) ++keys;
        return true;
      },
      /*allow_exceptions=*/false);
  if (!tree.is_object() || tree.contains("jobs") || CountKeys(tree) != keys) return std::nullopt;
  if (!tree.contains("tenant")) tree["tenant"] = tenant;
  std::optional<JobSpec> spec = SpecFromTree(tree, "request");
  if (!spec || spec->command.empty()) return std::nullopt;
  return Submission{std::move(*spec), std::move(tree)};
}

}  // namespace

Result<Submission> ParseSubmission(std::string_view body, BodyFormat format,
                                   const std::string& tenant) {
  // A body the tree cannot take whole (not UTF-8, or with a NUL byte, where
  // nlohmann's reader would stop) is read as text, which says what is wrong.
  if (format == BodyFormat::kJson && CheckJsonBody(body).ok()) {
    if (std::optional<Submission> s = ReadJsonTree(body, tenant)) return std::move(*s);
  }
  return ParseSubmissionText(body, format, tenant);
}

Result<Submission> ParseSubmissionText(std::string_view body, BodyFormat format,
                                       const std::string& tenant) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::Invalid("request: the body is empty; send one job spec (docs/job-spec.md)");
  }
  MERIDIAN_RETURN_IF_ERROR(format == BodyFormat::kJson ? CheckJsonBody(body)
                                                       : CheckUtf8Body(body, false));
  nlohmann::json tree;
  if (format == BodyFormat::kJson) {
    tree = nlohmann::json::parse(body, nullptr, false);
    if (tree.is_discarded()) {
      try {
        nlohmann::json again = nlohmann::json::parse(body);
        (void)again;
      } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
        return Status::Invalid(std::string("request: malformed JSON: ") + e.what());
      }
      return Status::Invalid("request: malformed JSON");
    }
    if (!tree.is_object()) {
      return Status::Invalid(std::string("request: the body is a JSON ") + tree.type_name() +
                             "; a job spec is an object with name and kind");
    }
  }
  // The spec parser reads YAML; JSON is YAML's flow style, so positions stay
  // right, once each key's colon is on the key's line (JsonKeysForYaml).
  const std::string json_text = format == BodyFormat::kJson ? JsonKeysForYaml(body) : "";
  auto specs = spec::ParseJobSpecs(
      format == BodyFormat::kJson ? std::string_view(json_text) : body, "request");
  if (!specs.ok()) return specs.status();
  if (specs->size() != 1) {
    return Status::Invalid("request: jobs: " + std::to_string(specs->size()) +
                           " jobs in one request; submit one job per request");
  }
  if (format == BodyFormat::kYaml) {
    try {
      tree = YamlToJson(YAML::Load(std::string(body)));
    } catch (const YAML::Exception& e) {
      return Status::Invalid(std::string("request: ") + e.what());
    }
    // A body that is UTF-8 can still read as text that is not: yaml-cpp reads
    // a NUL in a plain scalar (which YAML does not allow) into bytes that
    // are not UTF-8, and the stored spec (JSON) could not be written.
    if (std::optional<std::string> field = NonUtf8Field(tree)) {
      return Status::Invalid("request: " + *field +
                             ": reads as text that is not UTF-8 (YAML allows no NUL or other "
                             "control bytes there); the request must be UTF-8 text");
    }
  }
  if (tree.is_object() && tree.contains("jobs")) {
    return Status::Invalid(
        "request: jobs: a request is one job spec, not a jobs: list; send the job's own keys "
        "(name, kind, resources, command) at the top level");
  }
  Submission s{std::move((*specs)[0]), std::move(tree)};
  if (s.spec.command.empty()) {
    return Status::Invalid(
        "request: command: is required to run a job; give the argv, e.g. command: [python3, "
        "train.py]");
  }
  if (!s.spec_json.contains("tenant")) {
    s.spec_json["tenant"] = tenant;
    s.spec.tenant = tenant;
  }
  // What is accepted must run: the reconciler reads the stored text back with
  // SpecFromJson, so it is read back here, and refused now if it would not be.
  if (!s.spec_json.is_object()) {
    return Status::Invalid("request: the body must be one job spec (a map of keys)");
  }
  auto again = SpecFromJson(s.spec_json.dump(), "request");
  if (!again.ok()) {
    return Status::Invalid("request: the spec would not read back as stored: " +
                           again.status().message());
  }
  return s;
}

Status ValidateSubmission(const Submission& submission, std::string_view body, BodyFormat format,
                          const catalog::Catalog& catalog, UnixSeconds now) {
  Status v = spec::ValidateAgainstCatalog(submission.spec, catalog, now);
  if (v.ok() || !submission.spec.origin.marks.empty()) return v;
  auto text = ParseSubmissionText(body, format, submission.spec.tenant);
  if (!text.ok()) return v;
  text->spec.tenant = submission.spec.tenant;
  Status located = spec::ValidateAgainstCatalog(text->spec, catalog, now);
  return located.ok() ? v : located;
}

Result<JobSpec> SpecFromJson(const std::string& spec_json, const std::string& source) {
  // The stored text is JSON, which reads as the YAML document JsonToYaml
  // builds: the spec parser reads that tree, sparing yaml-cpp's text scanner
  // (most of a parse's time, paid at each submission and again when the
  // leader loads the job). A spec that the tree does not read is read again
  // from its text, whose messages say where the problem is.
  nlohmann::json tree = nlohmann::json::parse(spec_json, nullptr, false);
  if (tree.is_object()) {
    if (std::optional<JobSpec> spec = SpecFromTree(tree, source)) return std::move(*spec);
  }
  return SpecFromJsonText(spec_json, source);
}

Result<JobSpec> SpecFromJsonText(const std::string& spec_json, const std::string& source) {
  auto specs = spec::ParseJobSpecs(spec_json, source);
  if (!specs.ok()) return specs.status();
  if (specs->size() != 1) return Status::Internal(source + ": not one job");
  return std::move((*specs)[0]);
}

}  // namespace meridian::control
