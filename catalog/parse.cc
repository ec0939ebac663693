#include "catalog/parse.h"

#include <algorithm>
#include <set>

#include "core/time.h"

namespace meridian::catalog::internal {

// Evaluates a Result expression; returns its error, or assigns its value.
#define MERIDIAN_CONCAT_INNER(a, b) a##b
#define MERIDIAN_CONCAT(a, b) MERIDIAN_CONCAT_INNER(a, b)
#define MERIDIAN_ASSIGN_OR_RETURN(lhs, expr) \
  MERIDIAN_ASSIGN_OR_RETURN_IMPL(MERIDIAN_CONCAT(_result_, __LINE__), lhs, expr)
#define MERIDIAN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

namespace {

const std::set<std::string, std::less<>> kGeographies = {"us", "ca", "sa", "eu", "asia",
                                                         "oceania", "me", "africa"};

Status RequireNonNegative(const CsvRecord& r, std::string_view col, double v) {
  if (v < 0) return r.Error(col, "must be >= 0, got " + r.Text(col));
  return Status::Ok();
}

Result<Money> Price(const CsvRecord& r, std::string_view col) {
  MERIDIAN_ASSIGN_OR_RETURN(double usd, r.Number(col));
  if (usd <= 0) return r.Error(col, "price must be > 0, got " + r.Text(col));
  return Money::FromDollars(usd);
}

Result<std::optional<Money>> OptionalPrice(const CsvRecord& r, std::string_view col) {
  if (r.Text(col).empty()) return std::optional<Money>();
  MERIDIAN_ASSIGN_OR_RETURN(Money m, Price(r, col));
  return std::optional<Money>(m);
}

Result<MigProfile> ParseMigRow(const CsvRecord& r) {
  MigProfile p;
  MERIDIAN_ASSIGN_OR_RETURN(p.name, r.NonEmpty("name"));
  MERIDIAN_ASSIGN_OR_RETURN(p.compute_slices, r.Integer("compute_slices"));
  MERIDIAN_ASSIGN_OR_RETURN(p.memory_slices, r.Integer("memory_slices"));
  MERIDIAN_ASSIGN_OR_RETURN(p.memory_gib, r.Number("memory_gib"));
  MERIDIAN_ASSIGN_OR_RETURN(p.max_instances, r.Integer("max_instances"));
  MERIDIAN_ASSIGN_OR_RETURN(p.sm_count, r.Integer("sm_count"));
  if (p.compute_slices < 1 || p.compute_slices > 8) return r.Error("compute_slices", "must be 1..8");
  if (p.memory_slices < 1 || p.memory_slices > 8) return r.Error("memory_slices", "must be 1..8");
  if (p.max_instances < 1) return r.Error("max_instances", "must be >= 1");
  return p;
}

Result<GpuModel> ParseGpuRow(const CsvRecord& r) {
  GpuModel g;
  MERIDIAN_ASSIGN_OR_RETURN(g.name, r.NonEmpty("name"));
  MERIDIAN_ASSIGN_OR_RETURN(g.vendor, r.NonEmpty("vendor"));
  MERIDIAN_ASSIGN_OR_RETURN(g.architecture, r.NonEmpty("architecture"));
  MERIDIAN_ASSIGN_OR_RETURN(g.vram_gib, r.Number("vram_gib"));
  MERIDIAN_ASSIGN_OR_RETURN(g.memory_bandwidth_gbps, r.Number("memory_bandwidth_gbps"));
  MERIDIAN_ASSIGN_OR_RETURN(g.power_w, r.Number("power_w"));
  MERIDIAN_ASSIGN_OR_RETURN(g.matmul_efficiency, r.OptionalNumber("matmul_efficiency"));
  MERIDIAN_ASSIGN_OR_RETURN(g.matmul_half_width, r.Integer("matmul_half_width"));
  g.source = r.Text("source");
  for (Precision p : AllPrecisions()) {
    std::string col = std::string(ToString(p)) + "_tflops";
    MERIDIAN_ASSIGN_OR_RETURN(std::optional<double> v, r.OptionalNumber(col));
    if (!v) continue;
    if (*v <= 0) return r.Error(col, "must be > 0 or empty, got " + r.Text(col));
    g.dense_tflops[p] = *v;
  }
  if (g.vram_gib <= 0) return r.Error("vram_gib", "must be > 0");
  if (g.matmul_efficiency && (*g.matmul_efficiency <= 0 || *g.matmul_efficiency > 1)) {
    return r.Error("matmul_efficiency", "must be in (0, 1], got " + r.Text("matmul_efficiency"));
  }
  if (g.matmul_half_width <= 0) {
    return r.Error("matmul_half_width", "must be > 0 (a hidden size), got " + r.Text("matmul_half_width"));
  }
  return g;
}

std::vector<std::string_view> GpuColumns() {
  std::vector<std::string_view> cols = {"name", "vendor", "architecture", "vram_gib",
                                        "memory_bandwidth_gbps", "matmul_efficiency", "matmul_half_width",
                                        "power_w",
                                        "source"};
  return cols;
}

}  // namespace

Result<std::vector<GpuModel>> ParseGpus(const CsvTable& gpus, const CsvTable& mig) {
  MERIDIAN_RETURN_IF_ERROR(gpus.RequireColumns(GpuColumns()));
  for (Precision p : AllPrecisions()) {
    std::string col = std::string(ToString(p)) + "_tflops";
    MERIDIAN_RETURN_IF_ERROR(gpus.RequireColumns({col}));
  }
  MERIDIAN_RETURN_IF_ERROR(mig.RequireColumns(
      {"gpu", "name", "compute_slices", "memory_slices", "memory_gib", "max_instances", "sm_count"}));
  std::vector<GpuModel> out;
  std::map<std::string, size_t, std::less<>> index;
  for (const CsvRow& row : gpus.rows()) {
    CsvRecord r(gpus, row);
    MERIDIAN_ASSIGN_OR_RETURN(GpuModel g, ParseGpuRow(r));
    if (!index.emplace(g.name, out.size()).second) {
      return r.Error("name", "duplicate GPU model \"" + g.name + "\"");
    }
    out.push_back(std::move(g));
  }
  for (const CsvRow& row : mig.rows()) {
    CsvRecord r(mig, row);
    auto it = index.find(r.Text("gpu"));
    if (it == index.end()) return r.Error("gpu", "unknown GPU model \"" + r.Text("gpu") + "\"");
    MERIDIAN_ASSIGN_OR_RETURN(MigProfile p, ParseMigRow(r));
    out[it->second].mig_profiles.push_back(std::move(p));
  }
  return out;
}

namespace {

// Checks one placement row against its profile; returns the start.
Result<int> ParsePlacementRow(const CsvRecord& r, const MigProfile& p) {
  MERIDIAN_ASSIGN_OR_RETURN(int start, r.Integer("start"));
  MERIDIAN_ASSIGN_OR_RETURN(int span, r.Integer("span"));
  if (start < 0 || start > 7) return r.Error("start", r.Text("start") + " is outside 0..7");
  if (span < 1 || span > 8) return r.Error("span", r.Text("span") + " is outside 1..8");
  if (start + span > 8) {
    return r.Error("span", "start " + r.Text("start") + " + span " + r.Text("span") +
                               " runs past memory slice 7");
  }
  if (span != p.memory_slices) {
    return r.Error("span", r.Text("span") + " differs from the " +
                               std::to_string(p.memory_slices) + " memory slices of " + p.name +
                               " in mig_profiles.csv");
  }
  for (int s : p.placement_starts) {
    if (s == start) return r.Error("start", "duplicate start " + r.Text("start") + " for " + p.name);
  }
  return start;
}

}  // namespace

Result<std::vector<GpuModel>> ParseMigPlacements(const CsvTable& t, std::vector<GpuModel> gpus) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns({"gpu", "profile", "start", "span"}));
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    auto g = std::find_if(gpus.begin(), gpus.end(),
                          [&](const GpuModel& m) { return m.name == r.Text("gpu"); });
    if (g == gpus.end()) return r.Error("gpu", "unknown GPU model \"" + r.Text("gpu") + "\"");
    auto p = std::find_if(g->mig_profiles.begin(), g->mig_profiles.end(),
                          [&](const MigProfile& m) { return m.name == r.Text("profile"); });
    if (p == g->mig_profiles.end()) {
      return r.Error("profile", g->name + " has no MIG profile \"" + r.Text("profile") + "\"");
    }
    MERIDIAN_ASSIGN_OR_RETURN(int start, ParsePlacementRow(r, *p));
    p->placement_starts.push_back(start);
    p->placement_span = p->memory_slices;
  }
  for (auto& g : gpus) {
    for (auto& p : g.mig_profiles) std::sort(p.placement_starts.begin(), p.placement_starts.end());
  }
  return gpus;
}

namespace {

Result<Offering> ParseOfferingRow(const CsvRecord& r) {
  Offering o;
  MERIDIAN_ASSIGN_OR_RETURN(o.provider, r.NonEmpty("provider"));
  MERIDIAN_ASSIGN_OR_RETURN(o.region, r.NonEmpty("region"));
  o.zone = r.Text("zone");
  MERIDIAN_ASSIGN_OR_RETURN(o.instance_type, r.NonEmpty("instance_type"));
  MERIDIAN_ASSIGN_OR_RETURN(o.gpu_model, r.NonEmpty("gpu_model"));
  MERIDIAN_ASSIGN_OR_RETURN(o.gpu_count, r.Integer("gpu_count"));
  MERIDIAN_ASSIGN_OR_RETURN(o.vcpus, r.Integer("vcpus"));
  MERIDIAN_ASSIGN_OR_RETURN(o.ram_gib, r.Number("ram_gib"));
  MERIDIAN_ASSIGN_OR_RETURN(o.on_demand_per_hour, Price(r, "on_demand_usd_per_hour"));
  MERIDIAN_ASSIGN_OR_RETURN(o.spot_per_hour, OptionalPrice(r, "spot_usd_per_hour"));
  MERIDIAN_ASSIGN_OR_RETURN(o.reserved_1y_per_hour, OptionalPrice(r, "reserved_1y_usd_per_hour"));
  MERIDIAN_ASSIGN_OR_RETURN(o.flex_start_per_hour, OptionalPrice(r, "flex_start_usd_per_hour"));
  o.price_note = r.Text("price_note");
  if (o.gpu_count < 1) return r.Error("gpu_count", "must be >= 1, got " + r.Text("gpu_count"));
  MERIDIAN_RETURN_IF_ERROR(RequireNonNegative(r, "ram_gib", o.ram_gib));
  if (o.spot_per_hour && *o.spot_per_hour > o.on_demand_per_hour) {
    return r.Error("spot_usd_per_hour", r.Text("spot_usd_per_hour") +
                                            " exceeds the on-demand price " +
                                            r.Text("on_demand_usd_per_hour"));
  }
  if (o.region.rfind(o.provider + ":", 0) != 0) {
    return r.Error("region", "\"" + o.region + "\" does not start with \"" + o.provider + ":\"");
  }
  return o;
}

}  // namespace

Result<std::vector<Offering>> ParseOfferings(const CsvTable& t, const std::vector<GpuModel>& gpus,
                                             const std::vector<Region>& regions) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns(
      {"provider", "region", "zone", "instance_type", "gpu_model", "gpu_count", "vcpus", "ram_gib",
       "on_demand_usd_per_hour", "spot_usd_per_hour", "reserved_1y_usd_per_hour",
       "flex_start_usd_per_hour", "price_note"}));
  std::set<std::string, std::less<>> gpu_names, region_ids;
  for (const auto& g : gpus) gpu_names.insert(g.name);
  for (const auto& r : regions) region_ids.insert(r.id);
  std::vector<Offering> out;
  out.reserve(t.rows().size());
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    MERIDIAN_ASSIGN_OR_RETURN(Offering o, ParseOfferingRow(r));
    if (gpu_names.count(o.gpu_model) == 0) {
      return r.Error("gpu_model", "unknown GPU model \"" + o.gpu_model + "\"");
    }
    if (region_ids.count(o.region) == 0) {
      return r.Error("region", "unknown region \"" + o.region + "\"");
    }
    out.push_back(std::move(o));
  }
  return out;
}

namespace {

Result<Region> ParseRegionRow(const CsvRecord& r) {
  Region g;
  MERIDIAN_ASSIGN_OR_RETURN(g.id, r.NonEmpty("id"));
  MERIDIAN_ASSIGN_OR_RETURN(g.provider, r.NonEmpty("provider"));
  MERIDIAN_ASSIGN_OR_RETURN(g.name, r.NonEmpty("name"));
  g.location = r.Text("location");
  MERIDIAN_ASSIGN_OR_RETURN(g.lat, r.Number("lat"));
  MERIDIAN_ASSIGN_OR_RETURN(g.lon, r.Number("lon"));
  MERIDIAN_ASSIGN_OR_RETURN(g.time_zone, r.NonEmpty("time_zone"));
  MERIDIAN_ASSIGN_OR_RETURN(g.geography, r.NonEmpty("geography"));
  g.grid_zone = r.Text("grid_zone");
  MERIDIAN_ASSIGN_OR_RETURN(g.yearly_gco2_per_kwh, r.Number("yearly_gco2_per_kwh"));
  g.yearly_source = r.Text("yearly_source");
  if (g.id != g.provider + ":" + g.name) {
    return r.Error("id", "\"" + g.id + "\" must be \"" + g.provider + ":" + g.name + "\"");
  }
  if (g.lat < -90 || g.lat > 90) return r.Error("lat", r.Text("lat") + " is outside -90..90");
  if (g.lon < -180 || g.lon > 180) return r.Error("lon", r.Text("lon") + " is outside -180..180");
  if (kGeographies.count(g.geography) == 0) {
    return r.Error("geography", "\"" + g.geography + "\" is not a known geography");
  }
  if (g.yearly_gco2_per_kwh <= 0) return r.Error("yearly_gco2_per_kwh", "must be > 0");
  return g;
}

}  // namespace

Result<std::vector<Region>> ParseRegions(const CsvTable& t) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns({"id", "provider", "name", "location", "lat", "lon",
                                             "time_zone", "geography", "grid_zone",
                                             "yearly_gco2_per_kwh", "yearly_source"}));
  std::vector<Region> out;
  std::set<std::string, std::less<>> ids;
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    MERIDIAN_ASSIGN_OR_RETURN(Region g, ParseRegionRow(r));
    if (!ids.insert(g.id).second) return r.Error("id", "duplicate region \"" + g.id + "\"");
    out.push_back(std::move(g));
  }
  return out;
}

Result<std::map<std::pair<std::string, std::string>, double>> ParseEgress(
    const CsvTable& t, const std::vector<Region>& regions) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns({"from", "to", "usd_per_gb"}));
  std::set<std::string, std::less<>> ids;
  for (const auto& r : regions) ids.insert(r.id);
  std::map<std::pair<std::string, std::string>, double> out;
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    for (std::string_view col : {"from", "to"}) {
      if (ids.count(r.Text(col)) == 0) return r.Error(col, "unknown region \"" + r.Text(col) + "\"");
    }
    MERIDIAN_ASSIGN_OR_RETURN(double usd, r.Number("usd_per_gb"));
    MERIDIAN_RETURN_IF_ERROR(RequireNonNegative(r, "usd_per_gb", usd));
    if (!out.emplace(std::make_pair(r.Text("from"), r.Text("to")), usd).second) {
      return r.RowError("duplicate pair " + r.Text("from") + " -> " + r.Text("to"));
    }
  }
  return out;
}

Result<std::map<std::string, double>> ParseInternetEgress(const CsvTable& t) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns({"provider", "usd_per_gb", "source"}));
  std::map<std::string, double> out;
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    MERIDIAN_ASSIGN_OR_RETURN(std::string provider, r.NonEmpty("provider"));
    MERIDIAN_ASSIGN_OR_RETURN(double usd, r.Number("usd_per_gb"));
    MERIDIAN_RETURN_IF_ERROR(RequireNonNegative(r, "usd_per_gb", usd));
    out[provider] = usd;
  }
  return out;
}

Result<MarketParameters> ParseMarket(const CsvTable& t) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns({"parameter", "value", "source"}));
  MarketParameters m;
  std::set<std::string> seen;
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    const std::string& name = r.Text("parameter");
    MERIDIAN_ASSIGN_OR_RETURN(double v, r.Number("value"));
    if (name == "flex_start_discount") {
      if (v < 0 || v >= 1) return r.Error("value", "discount must be in [0, 1), got " + r.Text("value"));
      m.flex_start_discount = v;
      m.flex_start_discount_source = r.Text("source");
    } else if (name == "flex_start_expected_wait_hours") {
      MERIDIAN_RETURN_IF_ERROR(RequireNonNegative(r, "value", v));
      m.flex_start_expected_wait_hours = v;
      m.flex_start_wait_source = r.Text("source");
    } else if (name == "flex_start_max_run_hours") {
      if (v <= 0) return r.Error("value", "must be > 0, got " + r.Text("value"));
      m.flex_start_max_run_hours = v;
    } else {
      return r.Error("parameter", "unknown parameter \"" + name + "\"");
    }
    seen.insert(name);
  }
  if (seen.size() != 3) return Status::Invalid(t.file() + ": needs all three flex_start_* parameters");
  return m;
}

namespace {

// Parses "YYYY-MM-DD" into the instant of its midnight UTC.
std::optional<CivilTime> ParseDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  auto y = ParseInt(s.substr(0, 4)), m = ParseInt(s.substr(5, 2)), d = ParseInt(s.substr(8, 2));
  if (!y || !m || !d || *m < 1 || *m > 12 || *d < 1 || *d > 31) return std::nullopt;
  return CivilTime{*y, *m, *d, 0, 0, 0};
}

}  // namespace

Result<CarbonSeries> ParseCarbon(const std::string& zone, const CsvTable& t) {
  if (t.header().size() != 25 || t.header()[0] != "date") {
    return Status::Invalid(t.file() + ": header must be date,h00..h23");
  }
  std::map<int, std::vector<float>> by_year;
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    std::optional<CivilTime> day = ParseDate(row.fields[0]);
    if (!day) return r.Error("date", "\"" + row.fields[0] + "\" is not a YYYY-MM-DD date");
    std::vector<float>& hours = by_year[day->year];
    if (HourOfYear(FromCivil(*day)) != static_cast<int>(hours.size())) {
      return r.Error("date", row.fields[0] + " does not follow the previous day of its year");
    }
    for (size_t h = 1; h < 25; ++h) {
      std::optional<double> v = ParseDouble(row.fields[h]);
      if (!v || *v < 0) {
        return r.Error(t.header()[h], "\"" + row.fields[h] + "\" is not a number >= 0");
      }
      hours.push_back(static_cast<float>(*v));
    }
  }
  for (const auto& [year, hours] : by_year) {
    size_t want = IsLeapYear(year) ? 8784 : 8760;
    if (hours.size() != want) {
      return Status::Invalid(t.file() + ": year " + std::to_string(year) + " has " +
                             std::to_string(hours.size()) + " hours, expected " +
                             std::to_string(want));
    }
  }
  if (by_year.empty()) return Status::Invalid(t.file() + ": no data lines");
  return CarbonSeries(zone, std::move(by_year));
}

}  // namespace meridian::catalog::internal
