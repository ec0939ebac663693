#include "sim/readers/sacct_fields.h"

#include <charconv>

namespace meridian::sim {

namespace {

std::optional<int64_t> Whole(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Past a billion (of days, hours, minutes or seconds) it is not a duration.
  if (ec != std::errc() || end != s.data() + s.size() || v < 0 || v > 1'000'000'000) return std::nullopt;
  return v;
}

// "H:M:S", "M:S" or "M" (`days` false) / "H", "H:M", "H:M:S" (after "D-").
std::optional<int64_t> Clock(std::string_view s, bool after_days) {
  std::vector<int64_t> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(':', start);
    std::optional<int64_t> v = Whole(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (!v) return std::nullopt;
    parts.push_back(*v);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (parts.size() > 3) return std::nullopt;
  if (after_days) {  // hours first
    while (parts.size() < 3) parts.push_back(0);
  } else {           // seconds last: M, M:S, H:M:S
    if (parts.size() == 1) parts.push_back(0);
    while (parts.size() < 3) parts.insert(parts.begin(), 0);
  }
  return parts[0] * 3600 + parts[1] * 60 + parts[2];
}

bool Set(std::string_view s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (s == w) return true;
  }
  return false;
}

// mem=64G: GiB (K, M, G, T suffixes; none: MiB).
std::optional<double> Memory(std::string_view v) {
  double scale = 1.0 / 1024;  // MiB
  if (!v.empty() && std::string_view("KMGT").find(v.back()) != std::string_view::npos) {
    const char unit = v.back();
    scale = unit == 'K' ? 1.0 / (1024 * 1024) : unit == 'M' ? 1.0 / 1024 : unit == 'G' ? 1.0 : 1024.0;
    v.remove_suffix(1);
  }
  double d = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || d < 0) return std::nullopt;
  return d * scale;
}

// One "key=value" item onto `tres`; false when its value is malformed.
bool TresItem(std::string_view key, std::string_view value, Tres& tres, int& typed) {
  if (key == "mem") {
    std::optional<double> gib = Memory(value);
    if (gib) tres.ram_gib = *gib;
    return gib.has_value();
  }
  const bool gpu = key == "gres/gpu", typed_gpu = key.rfind("gres/gpu:", 0) == 0;
  if (!gpu && !typed_gpu && key != "cpu" && key != "node") return true;  // not read
  std::optional<int64_t> n = Whole(value);
  if (!n || *n > 1'000'000) return false;
  const int count = static_cast<int>(*n);
  if (gpu) tres.gpus = count;
  if (typed_gpu) {
    typed += count;
    tres.gpu_types.emplace_back(key.substr(9));
  }
  if (key == "cpu") tres.vcpus = count;
  if (key == "node") tres.nodes = count;
  return true;
}

}  // namespace

std::optional<int64_t> ParseSlurmDuration(std::string_view s) {
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) return Clock(s, false);
  std::optional<int64_t> days = Whole(s.substr(0, dash));
  std::optional<int64_t> rest = Clock(s.substr(dash + 1), true);
  if (!days || !rest) return std::nullopt;
  return *days * 86400 + *rest;
}

std::optional<int64_t> ParseTimeLimit(std::string_view s) {
  if (Set(s, {"", "UNLIMITED", "Partition_Limit", "INVALID", "Unknown", "None"})) return -1;
  return ParseSlurmDuration(s);
}

std::optional<Tres> ParseTres(std::string_view s, std::string* why) {
  Tres tres;
  int typed = 0;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view item = s.substr(start, end - start);
    start = end + 1;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || !TresItem(item.substr(0, eq), item.substr(eq + 1), tres, typed)) {
      *why = "item \"" + std::string(item) + "\" is not key=count";
      return std::nullopt;
    }
  }
  if (!tres.gpus && typed > 0) tres.gpus = typed;
  return tres;
}

bool IsJobStep(std::string_view job_id) { return job_id.find('.') != std::string_view::npos; }

std::string StateWord(std::string_view state) {
  const size_t space = state.find(' ');
  return std::string(state.substr(0, space));
}

}  // namespace meridian::sim
