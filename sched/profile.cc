#include "sched/profile.h"

#include <set>

#include <yaml-cpp/yaml.h>

#include "sched/embedded_profiles.h"
#include "sched/registry.h"
#include "spec/suggest.h"

namespace meridian::sched {

namespace {

// Collects located errors while walking a profile document.
class ProfileReader {
 public:
  explicit ProfileReader(std::string source) : source_(std::move(source)) {}

  std::string Pos(const YAML::Node& n) const {
    YAML::Mark m = n.Mark();
    if (m.line < 0) return source_;
    return source_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }
  void Error(const YAML::Node& at, const std::string& path, const std::string& msg) {
    errors_.push_back(Pos(at) + ": " + path + ": " + msg);
  }
  static std::string Show(const YAML::Node& n) {
    if (n.IsScalar()) return "\"" + n.Scalar() + "\"";
    return n.IsSequence() ? "a list" : n.IsMap() ? "a map" : "nothing";
  }

  // Reports keys of `map` not in `known`; false if `map` is not a map.
  bool Keys(const YAML::Node& map, const std::string& path, const std::vector<std::string>& known) {
    if (!map.IsMap()) {
      Error(map, path.empty() ? "profile" : path, Show(map) + " must be a map");
      return false;
    }
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = it->first.Scalar();
      if (std::find(known.begin(), known.end(), k) == known.end()) {
        errors_.push_back(Pos(it->first) + ": " + (path.empty() ? k : path + "." + k) +
                          ": unknown key" + spec::SuggestFrom(k, known, "keys"));
      }
    }
    return true;
  }

  std::optional<std::string> String(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar() || n.Scalar().empty()) {
      Error(n, path, Show(n) + " must be a non-empty string");
      return std::nullopt;
    }
    return n.Scalar();
  }
  std::optional<int64_t> Integer(const YAML::Node& n, const std::string& path, int64_t min,
                                 int64_t max) {
    int64_t v = 0;
    if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) {
      Error(n, path, Show(n) + " must be a whole number");
      return std::nullopt;
    }
    if (v < min || v > max) {
      Error(n, path, Show(n) + (v < min ? " must be >= " + std::to_string(min)
                                        : " must be <= " + std::to_string(max)));
      return std::nullopt;
    }
    return v;
  }
  std::optional<bool> Bool(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
      Error(n, path, Show(n) + " must be true or false");
      return std::nullopt;
    }
    return n.Scalar() == "true";
  }
  std::optional<std::string> Choice(const YAML::Node& n, const std::string& path,
                                    const std::vector<std::string>& allowed) {
    if (n.IsScalar() && std::find(allowed.begin(), allowed.end(), n.Scalar()) != allowed.end()) {
      return n.Scalar();
    }
    Error(n, path, Show(n) + " must be " + JoinAlternatives(allowed));
    return std::nullopt;
  }

  void Options(const YAML::Node& n, ProfileOptions* o) {
    if (!Keys(n, "options", {"elastic", "pricing_models", "max_fleet_candidates",
                             "max_elastic_candidates", "max_added_candidates", "tie_break",
                             "head_of_line_blocking", "explain", "permit_attempts",
                             "cpu_allocation"})) {
      return;
    }
    if (n["elastic"]) {
      if (auto b = Bool(n["elastic"], "options.elastic")) o->elastic = *b;
    }
    if (n["head_of_line_blocking"]) {
      if (auto b = Bool(n["head_of_line_blocking"], "options.head_of_line_blocking")) {
        o->head_of_line_blocking = *b;
      }
    }
    auto count = [&](const char* key, int* out, int64_t min) {
      if (!n[key]) return;
      if (auto v = Integer(n[key], std::string("options.") + key, min, 100000)) {
        *out = static_cast<int>(*v);
      }
    };
    count("max_fleet_candidates", &o->max_fleet_candidates, 1);
    count("max_elastic_candidates", &o->max_elastic_candidates, 0);
    count("max_added_candidates", &o->max_added_candidates, 0);
    count("permit_attempts", &o->permit_attempts, 1);
    if (n["tie_break"]) {
      if (auto c = Choice(n["tie_break"], "options.tie_break", {"first", "random"})) {
        o->tie_break = *c == "first" ? TieBreak::kFirst : TieBreak::kRandom;
      }
    }
    if (n["cpu_allocation"]) {
      if (auto c = Choice(n["cpu_allocation"], "options.cpu_allocation", {"gpu-share", "sensitivity"})) {
        o->cpu_allocation = *c == "sensitivity" ? CpuAllocation::kSensitivity : CpuAllocation::kGpuShare;
      }
    }
    if (n["explain"]) {
      if (auto c = Choice(n["explain"], "options.explain", {"full", "counts"})) {
        o->explain = *c == "full" ? ExplainLevel::kFull : ExplainLevel::kCounts;
      }
    }
    if (YAML::Node pm = n["pricing_models"]) {
      if (!pm.IsSequence()) {
        Error(pm, "options.pricing_models", Show(pm) + " must be a list such as [on-demand, spot]");
        return;
      }
      o->pricing_models.clear();
      for (size_t i = 0; i < pm.size(); ++i) {
        std::string path = "options.pricing_models[" + std::to_string(i) + "]";
        std::optional<PricingModel> m =
            pm[i].IsScalar() ? ParsePricingModel(pm[i].Scalar()) : std::nullopt;
        if (!m) {
          Error(pm[i], path, Show(pm[i]) + " must be on-demand, spot, flex-start or reserved");
        } else if (std::find(o->pricing_models.begin(), o->pricing_models.end(), *m) !=
                   o->pricing_models.end()) {
          Error(pm[i], path, Show(pm[i]) + " is listed twice");
        } else {
          o->pricing_models.push_back(*m);
        }
      }
    }
  }

  void Plugin(const YAML::Node& n, size_t i, Profile* p) {
    PluginConfig c;
    c.path = "plugins[" + std::to_string(i) + "]";
    if (!Keys(n, c.path, {"name", "weight", "args"})) return;
    if (!n["name"]) {
      Error(n, c.path + ".name", "missing; every plugin names itself (e.g. name: gpu_fit)");
      return;
    }
    auto name = String(n["name"], c.path + ".name");
    if (!name) return;
    if (!FindPlugin(*name)) {
      std::vector<std::string> known;
      for (const auto& e : PluginRegistry()) known.emplace_back(e.name);
      Error(n["name"], c.path + ".name",
            "\"" + *name + "\" is not a plugin" + spec::SuggestFrom(*name, known, "plugins"));
      return;
    }
    for (const auto& other : p->plugins) {
      if (other.name == *name) {
        Error(n["name"], c.path + ".name", "\"" + *name + "\" is listed twice");
        return;
      }
    }
    c.name = *name;
    if (YAML::Node w = n["weight"]) {
      c.weight_where = Pos(w) + ": " + c.path + ".weight";
      auto v = Integer(w, c.path + ".weight", 0, 1000);
      if (!v) return;
      c.weight = *v;
      c.weight_given = true;
    }
    c.args = PluginArgs(n["args"] ? n["args"] : YAML::Node(), source_, c.path + ".args");
    p->plugins.push_back(std::move(c));
  }

  Status Finish() const {
    if (errors_.empty()) return Status::Ok();
    std::string msg;
    for (const auto& e : errors_) msg += (msg.empty() ? "" : "\n") + e;
    return Status::Invalid(msg);
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::vector<std::string> errors_;
};

}  // namespace

Result<Profile> ParseProfile(std::string_view yaml, std::string_view source) {
  ProfileReader r{std::string(source)};
  YAML::Node doc;
  try {
    doc = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(std::string(source) + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  Profile p;
  p.source = std::string(source);
  if (!r.Keys(doc, "", {"name", "description", "options", "plugins"})) return r.Finish();
  if (!doc["name"]) {
    r.Error(doc, "name", "missing; a profile names itself (name: default)");
  } else if (auto n = r.String(doc["name"], "name")) {
    p.name = *n;
  }
  if (doc["description"]) {
    if (auto d = r.String(doc["description"], "description")) p.description = *d;
  }
  if (doc["options"]) r.Options(doc["options"], &p.options);
  YAML::Node plugins = doc["plugins"];
  if (!plugins || !plugins.IsSequence() || plugins.size() == 0) {
    r.Error(plugins ? plugins : doc, "plugins",
            "must be a non-empty list of plugins (- name: gpu_fit)");
  } else {
    for (size_t i = 0; i < plugins.size(); ++i) r.Plugin(plugins[i], i, &p);
  }
  MERIDIAN_RETURN_IF_ERROR(r.Finish());
  return p;
}

std::vector<std::string> EmbeddedProfileNames() {
  std::vector<std::string> names;
  for (const auto& t : EmbeddedProfileTexts()) names.emplace_back(t.name);
  return names;
}

Result<Profile> EmbeddedProfile(std::string_view name) {
  for (const auto& t : EmbeddedProfileTexts()) {
    if (t.name == name) return ParseProfile(t.yaml, "profiles/" + std::string(name) + ".yaml");
  }
  return Status::NotFound("profile \"" + std::string(name) + "\" is not built in" +
                          spec::SuggestFrom(name, EmbeddedProfileNames(), "profiles"));
}

}  // namespace meridian::sched
