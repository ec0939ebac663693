#include "sim/readers/gpu_map.h"

#include <algorithm>
#include <cctype>

#include <yaml-cpp/yaml.h>

#include "sim/readers/readers.h"
#include "spec/suggest.h"

namespace meridian::sim {

namespace {

std::vector<std::string> Tokens(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('-', start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// "NVIDIA_A100-SXM4-80GB" -> "a100-sxm4-80gb".
std::string Normalize(std::string_view name) {
  std::string s = Lowercase(name);
  std::replace(s.begin(), s.end(), '_', '-');
  std::replace(s.begin(), s.end(), ' ', '-');
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view prefix : {"nvidia-", "tesla-"}) {
      if (s.rfind(prefix, 0) == 0) {
        s.erase(0, prefix.size());
        stripped = true;
      }
    }
  }
  return s;
}

// How many of `model`'s tokens after the family appear in `tokens`, and
// whether all of them do.
std::pair<size_t, bool> Overlap(const std::vector<std::string>& model,
                                const std::vector<std::string>& tokens) {
  size_t found = 0;
  for (size_t i = 1; i < model.size(); ++i) {
    if (std::find(tokens.begin() + 1, tokens.end(), model[i]) != tokens.end()) ++found;
  }
  return {found, found + 1 == model.size()};
}

// Reads one entry's value: a model or a list of them, each in the catalog.
std::vector<std::string> EntryModels(const YAML::Node& value, const std::string& key,
                                     const catalog::Catalog& catalog, ErrorList& errors) {
  std::vector<std::string> models;
  const int line = value.Mark().line + 1;
  if (value.IsScalar()) models.push_back(value.Scalar());
  if (value.IsSequence()) {
    for (const YAML::Node& m : value) {
      if (m.IsScalar()) models.push_back(m.Scalar());
    }
  }
  if (models.empty() || (value.IsSequence() && models.size() != value.size())) {
    errors.Add(line, key, "", "must be a catalog GPU model or a list of them (e.g. A100-80GB)");
    return {};
  }
  for (const std::string& m : models) {
    if (std::optional<std::string> why = spec::UnknownGpuModel(catalog, m)) {
      errors.Add(line, key, "", *why);
      return {};
    }
  }
  return models;
}

}  // namespace

Result<GpuMap> GpuMap::Load(const std::string& path, const catalog::Catalog& catalog) {
  if (path.empty()) return GpuMap();
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return Status::NotFound(path + ": cannot read the GPU map");
  YAML::Node doc;
  try {
    doc = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(path + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg);
  }
  GpuMap map;
  if (doc.IsNull()) return map;
  if (!doc.IsMap()) {
    return Status::Invalid(path + ":1: is not a map of GPU names to catalog models (a100: A100-80GB)");
  }
  ErrorList errors(path);
  for (const auto& kv : doc) {
    const std::string key = kv.first.Scalar();
    std::vector<std::string> models = EntryModels(kv.second, key, catalog, errors);
    if (models.empty()) continue;
    if (!map.entries_.emplace(Lowercase(key), std::move(models)).second) {
      errors.Add(kv.first.Mark().line + 1, key, "", "is mapped twice (names are case-insensitive)");
    }
  }
  if (!errors.ok()) return errors.ToStatus();
  return map;
}

const std::vector<std::string>* GpuMap::Find(std::string_view name) const {
  auto it = entries_.find(Lowercase(name));
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> NamedModels(std::string_view name, const catalog::Catalog& catalog) {
  // GKE's names of its first A100 and V100 parts say no memory size.
  const std::string lower = Lowercase(name);
  std::string normal = lower == "nvidia-tesla-a100"   ? "a100-40gb"
                       : lower == "nvidia-tesla-v100" ? "v100-16gb"
                                                      : Normalize(name);
  const std::vector<std::string> tokens = Tokens(normal);
  if (tokens.empty()) return {};
  std::vector<std::string> family, all, best;
  size_t most = 0;
  for (const catalog::GpuModel& g : catalog.gpus()) {
    const std::vector<std::string> model = Tokens(Lowercase(g.name));
    if (model.empty() || model.front() != tokens.front()) continue;
    family.push_back(g.name);
    const auto [found, every] = Overlap(model, tokens);
    if (every) all.push_back(g.name);
    if (found > most) best.clear(), most = found;
    if (found == most && found > 0) best.push_back(g.name);
  }
  if (!all.empty()) return all;
  return best.empty() ? family : best;
}

const std::vector<std::string>& NamedModelsCache::Of(std::string_view name) {
  auto it = known_.find(name);
  if (it == known_.end()) it = known_.emplace(std::string(name), NamedModels(name, catalog_)).first;
  return it->second;
}

GpuChoice ChoiceOf(std::vector<std::string> models, const catalog::Catalog& catalog) {
  GpuChoice choice;
  for (const catalog::GpuModel& g : catalog.gpus()) {
    if (std::find(models.begin(), models.end(), g.name) != models.end()) {
      choice.models.push_back(g.name);
    }
  }
  if (!choice.models.empty()) choice.recorded_on = choice.models.front();
  return choice;
}

}  // namespace meridian::sim
