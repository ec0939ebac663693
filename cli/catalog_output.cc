#include "cli/catalog_output.h"

#include <nlohmann/json.hpp>
#include <set>

#include "cli/table.h"

namespace meridian::cli {

namespace {

using nlohmann::json;

bool RegionMatches(const catalog::Catalog& cat, const std::string& filter,
                   const std::string& region_id) {
  if (filter.empty() || filter == region_id) return true;
  const catalog::Region* r = cat.FindRegion(region_id);
  return r != nullptr && r->geography == filter;
}

std::string Tflops(const catalog::GpuModel& g, Precision p) {
  auto v = g.PeakTflops(p);
  return v ? Fixed(*v, 1) : "-";
}

std::string OptionalPrice(const std::optional<Money>& m) {
  return m ? Fixed(m->dollars(), 4) : "-";
}

json OptionalPriceJson(const std::optional<Money>& m) {
  return m ? json(m->dollars()) : json(nullptr);
}

}  // namespace

Status CheckCatalogFilter(const catalog::Catalog& cat, const CatalogFilter& f) {
  if (!f.gpu.empty() && cat.FindGpu(f.gpu) == nullptr) {
    std::vector<std::string> names;
    for (const auto& g : cat.gpus()) names.push_back(g.name);
    return Status::Invalid("--gpu: \"" + f.gpu + "\" is not a GPU model in the catalog; known: " +
                           JoinAlternatives(names));
  }
  if (!f.region.empty() && cat.FindRegion(f.region) == nullptr && !cat.IsGeography(f.region)) {
    return Status::Invalid("--region: \"" + f.region +
                           "\" is neither a region id (provider:region, e.g. aws:us-east-1) nor "
                           "a geography (us, eu, asia, ...); see `meridian catalog regions`");
  }
  if (!f.provider.empty()) {
    std::set<std::string> providers;
    for (const auto& r : cat.regions()) providers.insert(r.provider);
    if (providers.count(f.provider) == 0) {
      return Status::Invalid("--provider: \"" + f.provider + "\" is not a provider; known: " +
                             JoinAlternatives({providers.begin(), providers.end()}));
    }
  }
  return Status::Ok();
}

void PrintGpus(const catalog::Catalog& cat, const CatalogFilter& f, bool as_json,
               std::ostream& out) {
  json arr = json::array();
  Table t({{"GPU"}, {"VENDOR"}, {"VRAM GiB", Table::Align::kRight},
           {"GB/s", Table::Align::kRight}, {"FP64", Table::Align::kRight},
           {"FP32", Table::Align::kRight}, {"TF32", Table::Align::kRight},
           {"BF16", Table::Align::kRight}, {"FP16", Table::Align::kRight},
           {"FP8", Table::Align::kRight}, {"EFF", Table::Align::kRight},
           {"W", Table::Align::kRight}, {"MIG"}});
  for (const auto& g : cat.gpus()) {
    if (!f.gpu.empty() && g.name != f.gpu) continue;
    if (as_json) {
      json tf = json::object();
      for (const auto& [p, v] : g.dense_tflops) tf[std::string(ToString(p))] = v;
      json mig = json::array();
      for (const auto& m : g.mig_profiles) {
        mig.push_back({{"name", m.name}, {"compute_slices", m.compute_slices},
                       {"memory_slices", m.memory_slices}, {"memory_gib", m.memory_gib},
                       {"max_instances", m.max_instances}});
      }
      arr.push_back({{"name", g.name}, {"vendor", g.vendor}, {"architecture", g.architecture},
                     {"vram_gib", g.vram_gib}, {"memory_bandwidth_gbps", g.memory_bandwidth_gbps},
                     {"dense_tflops", tf},
                     {"matmul_efficiency",
                      g.matmul_efficiency ? json(*g.matmul_efficiency) : json(nullptr)},
                     {"power_w", g.power_w}, {"mig_profiles", mig}, {"source", g.source}});
      continue;
    }
    std::string mig = "-";
    if (!g.mig_profiles.empty()) mig = std::to_string(g.mig_profiles.size()) + " profiles";
    t.AddRow({g.name, g.vendor, Fixed(g.vram_gib, 0), Fixed(g.memory_bandwidth_gbps, 0),
              Tflops(g, Precision::kFp64), Tflops(g, Precision::kFp32),
              Tflops(g, Precision::kTf32), Tflops(g, Precision::kBf16),
              Tflops(g, Precision::kFp16), Tflops(g, Precision::kFp8),
              g.matmul_efficiency ? Fixed(*g.matmul_efficiency, 2) : "-", Fixed(g.power_w, 0),
              mig});
  }
  if (as_json) {
    out << json{{"gpus", arr}}.dump(2) << "\n";
  } else {
    out << "Dense peak TFLOPS per precision (\"-\": not supported natively); EFF: measured "
           "achievable matmul efficiency\n";
    t.Print(out);
  }
}

void PrintRegions(const catalog::Catalog& cat, const CatalogFilter& f, bool as_json,
                  std::ostream& out) {
  json arr = json::array();
  Table t({{"REGION"}, {"LOCATION"}, {"GEO"}, {"TIME ZONE"}, {"CARBON"},
           {"gCO2/kWh (yearly)", Table::Align::kRight}});
  for (const auto& r : cat.regions()) {
    if (!f.provider.empty() && r.provider != f.provider) continue;
    if (!RegionMatches(cat, f.region, r.id)) continue;
    std::string carbon = r.grid_zone.empty() ? "yearly: " + r.yearly_source : "hourly " + r.grid_zone;
    if (as_json) {
      arr.push_back({{"id", r.id}, {"provider", r.provider}, {"name", r.name},
                     {"location", r.location}, {"lat", r.lat}, {"lon", r.lon},
                     {"time_zone", r.time_zone}, {"geography", r.geography},
                     {"grid_zone", r.grid_zone.empty() ? json(nullptr) : json(r.grid_zone)},
                     {"carbon_source", r.grid_zone.empty() ? "yearly" : "hourly"},
                     {"yearly_gco2_per_kwh", r.yearly_gco2_per_kwh},
                     {"yearly_source", r.yearly_source}});
      continue;
    }
    t.AddRow({r.id, r.location, r.geography, r.time_zone, carbon, Fixed(r.yearly_gco2_per_kwh, 0)});
  }
  if (as_json) {
    out << json{{"regions", arr}}.dump(2) << "\n";
  } else {
    t.Print(out);
  }
}

void PrintOffers(const catalog::Catalog& cat, const CatalogFilter& f, bool as_json,
                 std::ostream& out) {
  json arr = json::array();
  Table t({{"REGION"}, {"ZONE"}, {"INSTANCE"}, {"GPU"}, {"N", Table::Align::kRight},
           {"vCPU", Table::Align::kRight}, {"RAM GiB", Table::Align::kRight},
           {"ON-DEMAND $/h", Table::Align::kRight}, {"SPOT", Table::Align::kRight},
           {"RESERVED 1y", Table::Align::kRight}, {"FLEX", Table::Align::kRight}});
  for (const auto& o : cat.offerings()) {
    if (!f.gpu.empty() && o.gpu_model != f.gpu) continue;
    if (!f.provider.empty() && o.provider != f.provider) continue;
    if (!RegionMatches(cat, f.region, o.region)) continue;
    if (as_json) {
      arr.push_back({{"provider", o.provider}, {"region", o.region}, {"zone", o.zone},
                     {"instance_type", o.instance_type}, {"gpu", o.gpu_model},
                     {"gpus", o.gpu_count}, {"vcpus", o.vcpus}, {"ram_gib", o.ram_gib},
                     {"on_demand_usd_per_hour", o.on_demand_per_hour.dollars()},
                     {"spot_usd_per_hour", OptionalPriceJson(o.spot_per_hour)},
                     {"reserved_1y_usd_per_hour", OptionalPriceJson(o.reserved_1y_per_hour)},
                     {"flex_start_usd_per_hour", OptionalPriceJson(o.flex_start_per_hour)},
                     {"price_note", o.price_note}});
      continue;
    }
    t.AddRow({o.region, o.zone.empty() ? "-" : o.zone, o.instance_type, o.gpu_model,
              std::to_string(o.gpu_count), std::to_string(o.vcpus), Fixed(o.ram_gib, 0),
              Fixed(o.on_demand_per_hour.dollars(), 4), OptionalPrice(o.spot_per_hour),
              OptionalPrice(o.reserved_1y_per_hour), OptionalPrice(o.flex_start_per_hour)});
  }
  if (as_json) {
    out << json{{"offers", arr}}.dump(2) << "\n";
  } else {
    t.Print(out);
    out << t.rows() << " offers\n";
  }
}

}  // namespace meridian::cli
