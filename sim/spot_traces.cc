#include "sim/spot_traces.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "catalog/csv.h"

extern "C" {
extern const char meridian_spot_traces_begin[];
extern const char meridian_spot_traces_end[];
}

namespace meridian::sim {

namespace {

// Index of the run holding tick `tick` (0 <= tick < ticks).
size_t RunAt(const SpotTrace& t, int64_t tick) {
  return static_cast<size_t>(std::upper_bound(t.run_end.begin(), t.run_end.end(), tick) -
                             t.run_end.begin());
}

int64_t RunStart(const SpotTrace& t, size_t run) { return run == 0 ? 0 : t.run_end[run - 1]; }

// Ticks up in [0, tick), 0 <= tick <= ticks (SpotTrace::up_ticks_before).
int64_t UpTicksBefore(const SpotTrace& t, int64_t tick) {
  if (tick <= 0) return 0;
  const size_t run = RunAt(t, tick - 1);
  return t.up_ticks_before[run] + (t.count[run] > 0 ? tick - RunStart(t, run) : 0);
}

// Reclaims at the first ticks of the runs that start before `tick`, 0 <= tick
// <= ticks (SpotTrace::reclaims_before).
int ReclaimsBefore(const SpotTrace& t, int64_t tick) {
  return tick <= 0 ? 0 : t.reclaims_before[RunAt(t, tick - 1) + 1];
}

// Appends `n` ticks of `value` to t's runs (one run per change of count).
void AddTicks(SpotTrace& t, int value, int64_t n) {
  const int64_t end = (t.run_end.empty() ? 0 : t.run_end.back()) + n;
  if (!t.count.empty() && t.count.back() == value) {
    t.run_end.back() = end;  // two tokens of the same count (1*3 1*4): one run
  } else {
    t.run_end.push_back(end);
    t.count.push_back(value);
  }
}

// "1*40 0*12" -> runs; false on a malformed token.
bool ParseRuns(std::string_view text, SpotTrace& t) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t space = text.find(' ', pos);
    std::string_view token = text.substr(pos, space == std::string_view::npos ? text.size() - pos : space - pos);
    pos = space == std::string_view::npos ? text.size() : space + 1;
    size_t star = token.find('*');
    if (star == std::string_view::npos) return false;
    std::optional<int> value = catalog::ParseInt(token.substr(0, star));
    std::optional<int> count = catalog::ParseInt(token.substr(star + 1));
    if (!value || !count || *value < 0 || *count <= 0) return false;
    AddTicks(t, *value, *count);
  }
  return !t.run_end.empty();
}

}  // namespace

void SpotTrace::IndexRuns() {
  up_ticks_before.assign(count.size() + 1, 0);
  reclaims_before.assign(count.size() + 1, 0);
  for (size_t i = 0; i < count.size(); ++i) {
    const bool prev_up = (i > 0 ? count[i - 1] : count.back()) > 0;  // cyclic
    up_ticks_before[i + 1] = up_ticks_before[i] + (count[i] > 0 ? run_end[i] - RunStart(*this, i) : 0);
    reclaims_before[i + 1] = reclaims_before[i] + (prev_up && count[i] == 0 ? 1 : 0);
  }
}

int SpotTrace::CountAt(int64_t s) const {
  if (ticks <= 0 || gap_s <= 0) return 0;
  int64_t tick = (std::max<int64_t>(s, 0) / gap_s) % ticks;
  return count[RunAt(*this, tick)];
}

std::optional<int64_t> SpotTrace::NextBelow(int64_t s, int need) const {
  s = std::max<int64_t>(s, 0);
  if (CountAt(s) < need) return s;
  const int64_t period = period_s();
  const int64_t cycle = s / period;
  const size_t run = RunAt(*this, (s % period) / gap_s);
  for (size_t j = run + 1; j < count.size(); ++j) {
    if (count[j] < need) return cycle * period + RunStart(*this, j) * gap_s;
  }
  for (size_t j = 0; j <= run; ++j) {
    if (count[j] < need) return (cycle + 1) * period + RunStart(*this, j) * gap_s;
  }
  return std::nullopt;
}

double SpotTrace::UpFraction() const {
  int64_t n = 0;
  for (size_t i = 0; i < count.size(); ++i) n += count[i] > 0 ? run_end[i] - RunStart(*this, i) : 0;
  return ticks > 0 ? static_cast<double>(n) / static_cast<double>(ticks) : 0;
}

int SpotTrace::Reclaims() const {
  int n = 0;
  for (size_t i = 0; i < count.size(); ++i) {
    const bool prev_up = (i > 0 ? count[i - 1] : count.back()) > 0;  // cyclic
    n += prev_up && count[i] == 0 ? 1 : 0;
  }
  return n;
}

double SpotTrace::ReclaimsPerHourUp() const {
  const double up_h = UpFraction() * static_cast<double>(period_s()) / 3600.0;
  return up_h > 0 ? Reclaims() / up_h : -1;
}

double SpotTrace::ReclaimsPerHourUpBefore(int64_t s, int64_t window_s) const {
  if (ticks <= 0 || gap_s <= 0) return -1;
  const int64_t n = std::min(std::max<int64_t>(window_s / gap_s, 1), ticks);
  const int64_t end = std::max<int64_t>(s, 0) / gap_s % ticks;  // first tick not seen
  int64_t up = 0;
  int reclaims = 0;
  // The window's ticks [end - n, end), cyclic, as at most two stretches of
  // ticks [a, b); a reclaim is an up -> down step at a run's first tick
  // inside.
  auto add = [&](int64_t a, int64_t b) {
    up += UpTicksBefore(*this, b) - UpTicksBefore(*this, a);
    reclaims += ReclaimsBefore(*this, b) - ReclaimsBefore(*this, a);
  };
  if (end - n >= 0) {
    add(end - n, end);
  } else {
    add(ticks + (end - n), ticks);
    add(0, end);
  }
  const double up_h = static_cast<double>(up * gap_s) / 3600.0;
  return up_h > 0 ? reclaims / up_h : -1;
}

int SpotTrace::MaxCount() const {
  return count.empty() ? 0 : *std::max_element(count.begin(), count.end());
}

Result<SpotTrace> ParseSpotTraceJson(std::string_view text, const std::string& file) {
  using nlohmann::json;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    return Status::Invalid(file + ": not JSON (" + e.what() + ")");
  }
  if (!doc.is_object()) return Status::Invalid(file + ": not a JSON object");
  const json* gap = doc.contains("metadata") && doc["metadata"].is_object() &&
                            doc["metadata"].contains("gap_seconds")
                        ? &doc["metadata"]["gap_seconds"]
                        : nullptr;
  if (!gap) return Status::Invalid(file + ": metadata.gap_seconds is missing");
  if (!gap->is_number_integer() || gap->get<int64_t>() <= 0) {
    return Status::Invalid(file + ": metadata.gap_seconds is " + gap->dump() +
                           ", not a whole number of seconds > 0");
  }
  if (!doc.contains("data") || !doc["data"].is_array() || doc["data"].empty()) {
    return Status::Invalid(file + ": data is missing or empty (a list of instances per tick)");
  }
  SpotTrace t;
  t.gap_s = gap->get<int64_t>();
  const json& data = doc["data"];
  for (size_t i = 0; i < data.size(); ++i) {
    const json& v = data[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX) {
      return Status::Invalid(file + ": data[" + std::to_string(i) + "] is " + v.dump() +
                             ", not a count of instances (a whole number >= 0)");
    }
    AddTicks(t, static_cast<int>(v.get<int64_t>()), 1);
  }
  t.ticks = static_cast<int64_t>(data.size());
  t.IndexRuns();
  return t;
}

Result<std::vector<SpotTrace>> ParseSpotTraces(std::string_view csv, const std::string& file) {
  auto table = catalog::CsvTable::Parse(file, csv);
  if (!table.ok()) return table.status();
  MERIDIAN_RETURN_IF_ERROR(table->RequireColumns({"trace", "kind", "provider", "zone",
                                                   "instance_type", "gpu_model", "gpus", "gap_s",
                                                   "ticks", "runs"}));
  std::vector<SpotTrace> out;
  for (const catalog::CsvRow& row : table->rows()) {
    catalog::CsvRecord r(*table, row);
    SpotTrace t;
    t.name = r.Text("trace");
    t.kind = r.Text("kind");
    t.zone = r.Text("zone");
    // A zone name is its region plus a letter: us-east-1a -> aws:us-east-1.
    t.region = r.Text("provider") + ":" + t.zone.substr(0, t.zone.empty() ? 0 : t.zone.size() - 1);
    t.instance_type = r.Text("instance_type");
    t.gpu_model = r.Text("gpu_model");
    auto gpus = r.Integer("gpus");
    auto gap = r.Integer("gap_s");
    auto ticks = r.Integer("ticks");
    if (!gpus.ok()) return gpus.status();
    if (!gap.ok()) return gap.status();
    if (!ticks.ok()) return ticks.status();
    t.gpus = *gpus;
    t.gap_s = *gap;
    t.ticks = *ticks;
    if (t.gap_s <= 0 || t.ticks <= 0) return r.RowError("gap_s and ticks must be > 0");
    if (!ParseRuns(r.Text("runs"), t)) return r.Error("runs", "is not a list of VALUE*COUNT");
    if (t.run_end.back() != t.ticks) {
      return r.Error("runs", "covers " + std::to_string(t.run_end.back()) + " ticks, not " +
                                 std::to_string(t.ticks));
    }
    t.IndexRuns();
    out.push_back(std::move(t));
  }
  return out;
}

const std::vector<SpotTrace>& EmbeddedSpotTraces() {
  static const std::vector<SpotTrace>* traces = [] {
    std::string_view text(meridian_spot_traces_begin,
                          static_cast<size_t>(meridian_spot_traces_end - meridian_spot_traces_begin));
    auto parsed = ParseSpotTraces(text, "sim/market/spot_traces.csv");
    // The embedded file is checked by spot_traces_test; a broken build is a bug.
    return new std::vector<SpotTrace>(parsed.ok() ? std::move(parsed).value()
                                                  : std::vector<SpotTrace>{});
  }();
  return *traces;
}

}  // namespace meridian::sim
