#include "sim/spot_traces.h"

#include <algorithm>

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

// "1*40 0*12" -> runs; false on a malformed token.
bool ParseRuns(std::string_view text, SpotTrace& t) {
  int64_t end = 0;
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
    const uint8_t up = *value > 0 ? 1 : 0;
    end += *count;
    if (!t.up.empty() && t.up.back() == up) {
      t.run_end.back() = end;  // two counts of the same state (1*3 2*4): one run
    } else {
      t.run_end.push_back(end);
      t.up.push_back(up);
    }
  }
  return !t.run_end.empty();
}

}  // namespace

bool SpotTrace::UpAt(int64_t s) const {
  if (ticks <= 0 || gap_s <= 0) return false;
  int64_t tick = (std::max<int64_t>(s, 0) / gap_s) % ticks;
  return up[RunAt(*this, tick)] != 0;
}

std::optional<int64_t> SpotTrace::NextDown(int64_t s) const {
  if (!UpAt(s)) return s;
  const int64_t period = period_s();
  const int64_t cycle = s / period;
  const size_t run = RunAt(*this, (s % period) / gap_s);
  for (size_t j = run + 1; j < up.size(); ++j) {
    if (!up[j]) return cycle * period + RunStart(*this, j) * gap_s;
  }
  for (size_t j = 0; j <= run; ++j) {
    if (!up[j]) return (cycle + 1) * period + RunStart(*this, j) * gap_s;
  }
  return std::nullopt;
}

double SpotTrace::UpFraction() const {
  int64_t n = 0;
  for (size_t i = 0; i < up.size(); ++i) n += up[i] ? run_end[i] - RunStart(*this, i) : 0;
  return ticks > 0 ? static_cast<double>(n) / static_cast<double>(ticks) : 0;
}

int SpotTrace::Reclaims() const {
  int n = 0;
  for (size_t i = 0; i < up.size(); ++i) {
    const bool prev_up = i > 0 ? up[i - 1] != 0 : up.back() != 0;  // cyclic
    n += prev_up && !up[i] ? 1 : 0;
  }
  return n;
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
