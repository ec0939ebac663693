#include "sched/elastic.h"

#include <algorithm>
#include <map>
#include <string>

#include "estimate/options.h"
#include "estimate/pricing.h"
#include "sched/fleet.h"

namespace meridian::sched {

ElasticIndex::ElasticIndex(const catalog::Catalog& catalog) {
  const auto& offers = catalog.offerings();
  const size_t models = catalog.gpus().size();
  ranges_.assign(models * (kMaxIndexedGpus + 1), {0, 0});
  for (auto& r : price_ranges_) r.assign(models * (kMaxIndexedGpus + 1), PriceRange{});
  // (model, region, zone) -> offerings there.
  std::vector<std::map<std::pair<std::string, std::string>, std::vector<const catalog::Offering*>>>
      at(models);
  for (const auto& o : offers) {
    GpuModelId m = FindGpuModelId(catalog, o.gpu_model);
    facts_.push_back({m, o.gpu_count, o.vcpus, o.ram_gib});
    if (m.valid() && o.gpu_count > 0) at[m.index()][{o.region, o.zone}].push_back(&o);
  }
  std::vector<RegionId> region_of(offers.size());
  for (size_t i = 0; i < offers.size(); ++i) region_of[i] = FindRegionId(catalog, offers[i].region);
  for (size_t m = 0; m < models; ++m) {
    for (int g = 1; g <= kMaxIndexedGpus; ++g) {
      std::vector<std::pair<int64_t, ElasticChoice>> list;
      for (const auto& [loc, here] : at[m]) {
        const catalog::Offering* best = nullptr;
        for (const catalog::Offering* o : estimate::BestFitOfferings(here, g)) {
          if (!best || o->on_demand_per_hour < best->on_demand_per_hour) best = o;
        }
        if (!best) continue;
        ElasticChoice c;
        c.offering = OfferingId(static_cast<uint32_t>(best - offers.data()));
        c.region = region_of[c.offering.index()];
        c.instances = static_cast<uint16_t>(estimate::InstancesFor(*best, g));
        c.gpus_billed = c.instances * best->gpu_count;
        list.push_back({best->on_demand_per_hour.micros() * c.instances, c});
      }
      std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first < b.first : a.second.offering < b.second.offering;
      });
      const size_t k = m * (kMaxIndexedGpus + 1) + static_cast<size_t>(g);
      auto& r = ranges_[k];
      r.first = static_cast<uint32_t>(choices_.size());
      for (auto [price, c] : list) {
        c.price_micros = price;
        choices_.push_back(c);
      }
      r.second = static_cast<uint32_t>(choices_.size());
      for (size_t pm = 0; pm < kPricingModels; ++pm) {
        std::vector<std::pair<int64_t, ElasticChoice>> priced;
        for (const auto& [od, c] : list) {
          const catalog::Offering& o = offers[c.offering.index()];
          std::optional<Money> p =
              estimate::CatalogPrice(o, static_cast<PricingModel>(pm), catalog.market());
          if (p) priced.push_back({p->micros() * c.instances, c});
        }
        std::stable_sort(priced.begin(), priced.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        PriceRange& pr = price_ranges_[pm][k];
        pr.begin = static_cast<uint32_t>(by_price_.size());
        for (auto [price, c] : priced) {
          c.price_micros = price;
          by_price_.push_back(c);
        }
        pr.end = static_cast<uint32_t>(by_price_.size());
        pr.first_price = priced.empty() ? 0 : priced.front().first;
      }
    }
  }
}

std::span<const ElasticChoice> ElasticIndex::Choices(GpuModelId m, int gpus) const {
  if (!m.valid() || gpus < 1 || gpus > kMaxIndexedGpus) return {};
  size_t k = m.index() * (kMaxIndexedGpus + 1) + static_cast<size_t>(gpus);
  if (k >= ranges_.size()) return {};
  auto [b, e] = ranges_[k];
  return std::span<const ElasticChoice>(choices_.data() + b, e - b);
}

std::span<const ElasticChoice> ElasticIndex::Choices(GpuModelId m, int gpus,
                                                    PricingModel pricing) const {
  return PricedChoices(m, gpus, pricing).list;
}

ElasticIndex::Priced ElasticIndex::PricedChoices(GpuModelId m, int gpus,
                                                 PricingModel pricing) const {
  const size_t pm = static_cast<size_t>(pricing);
  if (!m.valid() || gpus < 1 || gpus > kMaxIndexedGpus || pm >= kPricingModels) return {};
  size_t k = m.index() * (kMaxIndexedGpus + 1) + static_cast<size_t>(gpus);
  if (k >= price_ranges_[pm].size()) return {};
  const PriceRange& r = price_ranges_[pm][k];
  return {std::span<const ElasticChoice>(by_price_.data() + r.begin, r.end - r.begin),
          r.first_price};
}

}  // namespace meridian::sched
