#include "control/attempt_rate.h"

#include <bit>
#include <nlohmann/json.hpp>

#include "control/reconciler.h"
#include "core/ledger.h"
#include "sched/cost.h"

namespace meridian::control {

std::vector<HeldShare> HeldShares(const JobRow& row, const JobSpec* spec) {
  std::vector<HeldShare> held;
  auto alloc = nlohmann::json::parse(row.allocation_json, nullptr, false);
  if (alloc.is_object() && alloc.contains("nodes") && alloc["nodes"].is_array()) {
    for (const auto& n : alloc["nodes"]) {
      if (!n.is_object() || !n.contains("node") || !n["node"].is_string()) continue;
      HeldShare h;
      h.node = n["node"].get<std::string>();
      const auto gpus = n.value("gpus", uint64_t{0});
      h.gpu_milli = 1000 * std::popcount(gpus);
      const auto mig = n.find("mig");
      if (mig != n.end() && mig->is_array() && mig->size() == 3 && (*mig)[2].is_number_unsigned()) {
        h.gpu_milli += 1000 * (*mig)[2].get<int64_t>() / kMigMemorySlices;
      }
      h.vcpus = n.value("vcpus", 0);
      h.ram_mib = n.value("ram_mib", int64_t{0});
      held.push_back(std::move(h));
    }
  }
  if (held.empty()) {
    HeldShare h;
    h.node = row.placement.node;
    h.gpu_milli = 1000 * static_cast<int64_t>(row.placement.gpus.size());
    if (spec) {
      h.vcpus = spec->resources.vcpus.value_or(0);
      h.ram_mib = sched::StatedRamMib(*spec);
    }
    held.push_back(std::move(h));
  }
  return held;
}

sched::Cluster DaemonRates(const ReconcilerOptions& o) {
  sched::Cluster c;
  c.pricing = CapacityPricing::kOwned;
  c.gpu_hour = Money::FromDollars(o.gpu_hour_usd);
  c.vcpu_hour = Money::FromDollars(o.vcpu_hour_usd);
  c.ram_gib_hour = Money::FromDollars(o.ram_gib_hour_usd);
  return c;
}

Money AttemptHourRate(const std::vector<HeldShare>& held, const sched::Cluster& rates) {
  Money sum;
  for (const HeldShare& h : held) sum += sched::FleetHourRate(rates, h.gpu_milli, h.vcpus, h.ram_mib);
  return sum;
}

}  // namespace meridian::control
