#include "cli/spot_map.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "core/time.h"
#include "sim/spot_traces.h"
#include "spec/suggest.h"

namespace meridian::cli {

namespace {

namespace fs = std::filesystem;

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

// The offering fields an entry matches on, in the order they narrow.
constexpr const char* kOfferingKeys[] = {"provider", "region", "zone", "instance_type"};

const std::string& FieldOf(const catalog::Offering& o, std::string_view key) {
  if (key == "provider") return o.provider;
  if (key == "region") return o.region;
  if (key == "zone") return o.zone;
  return o.instance_type;
}

// Reads one map, collecting every problem as "<map>:<line>: <field>: ...".
class MapReader {
 public:
  MapReader(std::string path, const catalog::Catalog& catalog)
      : path_(std::move(path)), catalog_(catalog), dir_(fs::path(path_).parent_path()) {}

  Result<SpotMap> Read(const std::string& text);

 private:
  // A missing node has no position: the enclosing entry's line stands in.
  void Error(const YAML::Node& at, const std::string& field, const std::string& message) {
    const int line = at.IsDefined() && at.Mark().line >= 0 ? at.Mark().line + 1 : entry_line_;
    errors_.push_back(path_ + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                      (field.empty() ? "" : field + ": ") + message);
  }
  bool KnownKeys(const YAML::Node& n, const std::string& field, const std::vector<std::string>& known);
  std::optional<std::string> Text(const YAML::Node& n, const std::string& field);
  void Entry(const YAML::Node& n, const std::string& field, SpotMap& out);
  std::optional<OfferingId> Offering(const YAML::Node& n, const std::string& field);
  std::optional<sim::SpotTrace> TraceFile(const YAML::Node& n, const std::string& field);

  std::string path_;
  const catalog::Catalog& catalog_;
  fs::path dir_;
  std::vector<std::string> errors_;
  int entry_line_ = 0;
  std::map<uint32_t, std::string> mapped_by_;  // offering index -> the entry mapping it
};

bool MapReader::KnownKeys(const YAML::Node& n, const std::string& field,
                          const std::vector<std::string>& known) {
  if (!n.IsMap()) {
    Error(n, field, "is not a map; expected the keys " + [&] {
      std::string keys;
      for (const std::string& k : known) keys += (keys.empty() ? "" : ", ") + k;
      return keys;
    }());
    return false;
  }
  bool ok = true;
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    Error(kv.first, field.empty() ? key : field + "." + key,
          "is not a known key" + spec::SuggestFrom(key, known, "keys"));
    ok = false;
  }
  return ok;
}

std::optional<std::string> MapReader::Text(const YAML::Node& n, const std::string& field) {
  if (!n || n.IsNull()) {
    Error(n, field, "is missing");
    return std::nullopt;
  }
  if (!n.IsScalar() || n.Scalar().empty()) {
    Error(n, field, "is not a non-empty string");
    return std::nullopt;
  }
  return n.Scalar();
}

// The catalog offering matching every field given (zone "" when left out:
// an offering priced per region), narrowed field by field so a miss names
// the field and the values the narrowed offerings have there.
std::optional<OfferingId> MapReader::Offering(const YAML::Node& n, const std::string& field) {
  if (!KnownKeys(n, field, {kOfferingKeys, kOfferingKeys + 4})) return std::nullopt;
  const auto& offers = catalog_.offerings();
  std::vector<size_t> match(offers.size());
  for (size_t i = 0; i < match.size(); ++i) match[i] = i;
  std::string within;  // what the previous fields narrowed to, for the message
  for (const char* key : kOfferingKeys) {
    const std::string sub = field + "." + key;
    std::optional<std::string> value = std::string();
    if (n[key] || std::string_view(key) != "zone") value = Text(n[key], sub);
    if (!value) return std::nullopt;
    std::vector<size_t> next;
    std::vector<std::string> seen;
    for (size_t i : match) {
      const std::string& v = FieldOf(offers[i], key);
      if (v == *value) next.push_back(i);
      if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
    }
    if (next.empty()) {
      Error(n[key] ? n[key] : n, sub,
            Quote(*value) + " names no catalog offering" + within +
                spec::SuggestFrom(*value, seen, std::string(key) + " values there"));
      return std::nullopt;
    }
    within += (within.empty() ? " in " : " ") + *value;
    match.swap(next);
  }
  const catalog::Offering& o = offers[match.front()];
  if (!o.spot_per_hour) {
    Error(n, field, o.region + " " + o.zone + " " + o.instance_type +
                        " has no spot price in the catalog, so no spot lease is bought there");
    return std::nullopt;
  }
  return OfferingId(static_cast<uint32_t>(match.front()));
}

std::optional<sim::SpotTrace> MapReader::TraceFile(const YAML::Node& n, const std::string& field) {
  std::optional<std::string> file = Text(n, field);
  if (!file) return std::nullopt;
  fs::path p(*file);
  if (p.is_relative()) p = dir_ / p;
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    Error(n, field, Quote(*file) + " cannot be read (" + p.string() + ")");
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  Result<sim::SpotTrace> t = sim::ParseSpotTraceJson(text.str(), *file);
  if (!t.ok()) {
    Error(n, field, t.status().message());
    return std::nullopt;
  }
  return std::move(t).value();
}

void MapReader::Entry(const YAML::Node& n, const std::string& field, SpotMap& out) {
  entry_line_ = n.Mark().line + 1;
  if (!KnownKeys(n, field, {"offering", "file", "start"})) return;
  std::optional<OfferingId> offering = Offering(n["offering"], field + ".offering");
  std::optional<sim::SpotTrace> trace = TraceFile(n["file"], field + ".file");
  std::optional<UnixSeconds> tick0;
  bool start_ok = true;
  if (n["start"]) {
    start_ok = false;
    if (std::optional<std::string> start = Text(n["start"], field + ".start")) {
      Result<UnixSeconds> t = ParseRfc3339(*start);
      if (t.ok()) {
        tick0 = *t;
        start_ok = true;
      } else {
        Error(n["start"], field + ".start",
              Quote(*start) + " is not an RFC 3339 time (2023-08-27T00:00:00Z)");
      }
    }
  }
  if (!offering || !trace || !start_ok) return;
  auto [it, fresh] = mapped_by_.emplace(offering->index(), field);
  if (!fresh) {
    Error(n["offering"], field + ".offering", "is the offering " + it->second + " maps already");
    return;
  }
  const catalog::Offering& o = catalog_.offerings()[offering->index()];
  trace->name = n["file"].Scalar();
  trace->kind = "availability";
  trace->region = o.region;
  trace->zone = o.zone;
  trace->instance_type = o.instance_type;
  trace->gpu_model = o.gpu_model;
  trace->gpus = o.gpu_count;
  out.mapped.push_back({*offering, std::move(*trace), tick0});
}

Result<SpotMap> MapReader::Read(const std::string& text) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path_ + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg);
  }
  const YAML::Node& root = doc;
  SpotMap out;
  if (!root.IsMap()) {
    return Status::Invalid(path_ + ": is not a map of other_spot and traces (docs/simulate.md)");
  }
  KnownKeys(root, "", {"other_spot", "traces"});
  if (root["other_spot"]) {
    std::optional<std::string> v = Text(root["other_spot"], "other_spot");
    if (v && *v == "none") {
      out.other_spot = sim::OtherSpot::kNone;
    } else if (v && *v != "catalog") {
      Error(root["other_spot"], "other_spot", Quote(*v) + " is not catalog or none");
    }
  }
  const YAML::Node traces = root["traces"];
  if (!traces || !traces.IsSequence()) {
    Error(traces ? traces : root, "traces",
          "is missing or not a list; expected entries of offering, file and start");
  } else {
    for (size_t i = 0; i < traces.size(); ++i) {
      Entry(traces[i], "traces[" + std::to_string(i) + "]", out);
    }
  }
  if (errors_.empty()) return out;
  std::string all;
  for (const std::string& e : errors_) all += (all.empty() ? "" : "\n") + e;
  return Status::Invalid(all);
}

}  // namespace

Result<SpotMap> LoadSpotMap(const std::string& path, const catalog::Catalog& catalog) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid(path + ": cannot read the spot map");
  std::stringstream text;
  text << in.rdbuf();
  return MapReader(path, catalog).Read(text.str());
}

}  // namespace meridian::cli
