#include "sched/plugin_args.h"

#include <cmath>
#include <limits>

#include <yaml-cpp/yaml.h>

#include "core/time.h"
#include "spec/suggest.h"

namespace meridian::sched {

namespace {

std::string Pos(const std::string& source, const YAML::Mark& m) {
  if (m.line < 0) return source;
  return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::string Bound(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

}  // namespace

PluginArgs::PluginArgs() : node_(std::make_unique<YAML::Node>()) {}

PluginArgs::PluginArgs(const YAML::Node& node, std::string source, std::string path)
    : node_(std::make_unique<YAML::Node>(node)), source_(std::move(source)), path_(std::move(path)) {
  if (node_->IsDefined() && !node_->IsNull() && !node_->IsMap()) {
    errors_.push_back(Pos(source_, node_->Mark()) + ": " + path_ + ": must be a map of arguments");
    *node_ = YAML::Node();
  }
}

PluginArgs::PluginArgs(const PluginArgs& o)
    : node_(std::make_unique<YAML::Node>(*o.node_)), source_(o.source_), path_(o.path_),
      read_(o.read_), errors_(o.errors_) {}
PluginArgs& PluginArgs::operator=(const PluginArgs& o) {
  if (this != &o) *this = PluginArgs(o);
  return *this;
}
PluginArgs::PluginArgs(PluginArgs&&) noexcept = default;
PluginArgs& PluginArgs::operator=(PluginArgs&&) noexcept = default;
PluginArgs::~PluginArgs() = default;

Result<PluginArgs> PluginArgs::FromYaml(std::string_view yaml, std::string source,
                                        std::string path) {
  try {
    YAML::Node n = yaml.empty() ? YAML::Node() : YAML::Load(std::string(yaml));
    return PluginArgs(n, std::move(source), std::move(path));
  } catch (const YAML::Exception& e) {
    return Status::Invalid(Pos(source, e.mark) + ": " + e.msg);
  }
}

bool PluginArgs::Has(std::string_view key) const {
  return node_->IsMap() && (*node_)[std::string(key)].IsDefined();
}

std::string PluginArgs::Where(std::string_view key) const {
  YAML::Mark m = node_->Mark();
  if (node_->IsMap()) {
    for (auto it = node_->begin(); it != node_->end(); ++it) {
      if (it->first.Scalar() == key) m = it->second.Mark();
    }
  }
  return Pos(source_, m) + ": " + path_ + "." + std::string(key);
}

std::string PluginArgs::Show(std::string_view key) const {
  YAML::Node v = (*node_)[std::string(key)];
  if (v.IsScalar()) return "\"" + v.Scalar() + "\"";
  return v.IsSequence() ? "a list" : "a map";
}

void PluginArgs::Error(std::string_view key, const std::string& message) {
  errors_.push_back(Where(key) + ": " + message);
}

double PluginArgs::Number(std::string_view key, double def, double min, double max) {
  read_.emplace(key);
  if (!Has(key)) return def;
  YAML::Node v = (*node_)[std::string(key)];
  double d = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, d) || !std::isfinite(d)) {
    Error(key, Show(key) + " must be a number");
    return def;
  }
  if (d < min || d > max) {
    Error(key, Show(key) + (d < min ? " must be >= " + Bound(min) : " must be <= " + Bound(max)));
    return def;
  }
  return d;
}

int64_t PluginArgs::Integer(std::string_view key, int64_t def, int64_t min, int64_t max) {
  read_.emplace(key);
  if (!Has(key)) return def;
  YAML::Node v = (*node_)[std::string(key)];
  int64_t i = 0;
  if (!v.IsScalar() || !YAML::convert<int64_t>::decode(v, i)) {
    Error(key, Show(key) + " must be a whole number");
    return def;
  }
  if (i < min || i > max) {
    Error(key, Show(key) + (i < min ? " must be >= " + std::to_string(min)
                                    : " must be <= " + std::to_string(max)));
    return def;
  }
  return i;
}

bool PluginArgs::Bool(std::string_view key, bool def) {
  read_.emplace(key);
  if (!Has(key)) return def;
  YAML::Node v = (*node_)[std::string(key)];
  bool b = false;
  if (!v.IsScalar() || (v.Scalar() != "true" && v.Scalar() != "false") ||
      !YAML::convert<bool>::decode(v, b)) {
    Error(key, Show(key) + " must be true or false");
    return def;
  }
  return b;
}

std::string PluginArgs::Choice(std::string_view key, std::string def,
                               const std::vector<std::string>& allowed) {
  read_.emplace(key);
  if (!Has(key)) return def;
  YAML::Node v = (*node_)[std::string(key)];
  if (v.IsScalar()) {
    for (const auto& a : allowed) {
      if (a == v.Scalar()) return a;
    }
  }
  Error(key, Show(key) + " must be " + JoinAlternatives(allowed));
  return def;
}

std::vector<std::string> PluginArgs::Strings(std::string_view key) {
  read_.emplace(key);
  std::vector<std::string> out;
  if (!Has(key)) return out;
  YAML::Node v = (*node_)[std::string(key)];
  if (!v.IsSequence()) {
    Error(key, Show(key) + " must be a list of strings");
    return out;
  }
  for (const auto& e : v) {
    if (!e.IsScalar() || e.Scalar().empty()) {
      Error(key, "entries must be non-empty strings");
      return {};
    }
    out.push_back(e.Scalar());
  }
  return out;
}

std::string PluginArgs::String(std::string_view key, std::string def) {
  read_.emplace(key);
  if (!Has(key)) return def;
  YAML::Node v = (*node_)[std::string(key)];
  if (!v.IsScalar() || v.Scalar().empty()) {
    Error(key, Show(key) + " must be a non-empty string");
    return def;
  }
  return v.Scalar();
}

int64_t PluginArgs::Duration(std::string_view key, int64_t def) {
  read_.emplace(key);
  if (!Has(key)) return def;
  YAML::Node v = (*node_)[std::string(key)];
  if (!v.IsScalar()) {
    Error(key, Show(key) + " must be a duration such as \"90m\" or \"36h\"");
    return def;
  }
  Result<int64_t> d = ParseDuration(v.Scalar());
  if (!d.ok()) {
    Error(key, Show(key) + ": " + d.status().message());
    return def;
  }
  return *d;
}

Money PluginArgs::Dollars(std::string_view key, Money def) {
  double d = Number(key, def.dollars(), 0, std::numeric_limits<double>::max());
  return Money::FromDollars(d);
}

PluginArgs PluginArgs::Map(std::string_view key) {
  read_.emplace(key);
  const std::string sub = path_ + "." + std::string(key);
  if (!Has(key)) return PluginArgs(YAML::Node(), source_, sub);
  YAML::Node v = (*node_)[std::string(key)];
  if (!v.IsMap()) {
    Error(key, Show(key) + " must be a map");
    return PluginArgs(YAML::Node(), source_, sub);
  }
  return PluginArgs(v, source_, sub);
}

std::vector<std::string> PluginArgs::Keys() const {
  std::vector<std::string> out;
  if (!node_->IsMap()) return out;
  for (auto it = node_->begin(); it != node_->end(); ++it) out.push_back(it->first.Scalar());
  return out;
}

void PluginArgs::Adopt(PluginArgs& child) {
  Status st = child.Finish();
  if (!st.ok()) errors_.push_back(st.message());
}

Status PluginArgs::Finish() {
  if (node_->IsMap()) {
    std::vector<std::string> known(read_.begin(), read_.end());
    for (auto it = node_->begin(); it != node_->end(); ++it) {
      const std::string k = it->first.Scalar();
      if (read_.count(k)) continue;
      std::string hint = known.empty() ? "; this plugin takes no arguments"
                                       : spec::SuggestFrom(k, known, "arguments");
      errors_.push_back(Pos(source_, it->first.Mark()) + ": " + path_ + "." + k +
                        ": unknown argument" + hint);
    }
    read_.clear();  // report once
    read_.insert(known.begin(), known.end());
  }
  if (errors_.empty()) return Status::Ok();
  std::string msg;
  for (const auto& e : errors_) msg += (msg.empty() ? "" : "\n") + e;
  return Status::Invalid(msg);
}

}  // namespace meridian::sched
