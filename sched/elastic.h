// ElasticIndex: the catalog's offerings pre-grouped for placement. For each
// GPU model and GPU count 1..kMaxIndexedGpus, one choice per location (region,
// zone): the offering and instance count that bill the fewest GPUs
// (estimate::BestFitOfferings; ties: cheapest on-demand), sorted by on-demand
// price for the whole choice, then offering position. A decision reads the
// list for its demand instead of scanning 2,000 offerings. Immutable; shared.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "catalog/catalog.h"
#include "core/ids.h"

namespace meridian::sched {

inline constexpr int kMaxIndexedGpus = 64;
inline constexpr size_t kPricingModels = 4;  // PricingModel's values

struct ElasticChoice {
  OfferingId offering;
  RegionId region;
  uint16_t instances = 1;
  int32_t gpus_billed = 0;  // instances x the offering's GPUs
  // Instances x the catalog price per hour the list is sorted by (on-demand
  // for Choices(m, gpus), the pricing model's for Choices(m, gpus, pricing));
  // in elastic generation's lists for a market whose prices are not the
  // catalog's (sched/generate.cc, LiveChoices), the market's for the run.
  int64_t price_micros = 0;
};

// What decisions read of an offering, in one small row: the catalog's
// record is several cache lines, mostly strings.
struct OfferingFacts {
  GpuModelId model;
  int32_t gpu_count = 0;
  int32_t vcpus = 0;
  double ram_gib = 0;
};

class ElasticIndex {
 public:
  explicit ElasticIndex(const catalog::Catalog& catalog);
  // Choices for `gpus` GPUs of model `m`; empty beyond kMaxIndexedGpus or for
  // a model nobody sells.
  std::span<const ElasticChoice> Choices(GpuModelId m, int gpus) const;
  // The same choices sorted by their price under `pricing` (instances x the
  // catalog price; flex-start as estimate::FlexStartPrice), those without
  // one left out: the cheapest spot locations are not the cheapest
  // on-demand ones.
  std::span<const ElasticChoice> Choices(GpuModelId m, int gpus, PricingModel pricing) const;
  // Choices(m, gpus, pricing) and the first one's price_micros (0 when
  // empty), kept beside the list's bounds: a merge of several lists learns
  // their heads' prices without touching the lists.
  struct Priced {
    std::span<const ElasticChoice> list;
    int64_t first_price = 0;
  };
  Priced PricedChoices(GpuModelId m, int gpus, PricingModel pricing) const;
  size_t choice_count() const { return choices_.size(); }
  // The GPU model of an offering (catalog position), precomputed.
  GpuModelId ModelOf(OfferingId o) const {
    return o.index() < facts_.size() ? facts_[o.index()].model : GpuModelId();
  }
  // An offering's facts (catalog position); nullptr beyond the catalog.
  const OfferingFacts* Facts(OfferingId o) const {
    return o.index() < facts_.size() ? &facts_[o.index()] : nullptr;
  }

 private:
  std::vector<ElasticChoice> choices_;
  std::vector<OfferingFacts> facts_;  // by offering
  // by (model, gpus): [begin, end) into choices_
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
  // by pricing model, then (model, gpus): [begin, end) into by_price_
  std::vector<ElasticChoice> by_price_;
  struct PriceRange {
    uint32_t begin = 0, end = 0;
    int64_t first_price = 0;
  };
  std::array<std::vector<PriceRange>, kPricingModels> price_ranges_;
};

}  // namespace meridian::sched
