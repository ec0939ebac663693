#include "estimate/options.h"

#include <algorithm>
#include <cmath>

#include "estimate/memory.h"
#include "estimate/pricing.h"
#include "estimate/regions.h"
#include "estimate/run_time.h"
#include "estimate/throughput.h"

namespace meridian::estimate {

std::vector<int> OptionCounts(const JobSpec& job, int fitted) {
  std::vector<int> counts = {fitted};
  if (job.resources.gpus || job.work.form == Work::Form::kNone) return counts;
  int limit = fitted < kGpusPerNode ? kGpusPerNode : std::min(kMaxGpus, 2 * fitted);
  for (int n = 2 * fitted; n <= limit; n *= 2) counts.push_back(n);
  return counts;
}

int InstancesFor(const catalog::Offering& o, int gpus) {
  return std::max(1, (gpus + o.gpu_count - 1) / std::max(1, o.gpu_count));
}

std::vector<const catalog::Offering*> BestFitOfferings(
    const std::vector<const catalog::Offering*>& candidates, int gpus) {
  int largest = 0;
  for (const auto* o : candidates) largest = std::max(largest, o->gpu_count);
  std::vector<const catalog::Offering*> best;
  std::pair<int, int> best_key{1 << 30, 1 << 30};  // (billed GPUs, instances)
  for (const auto* o : candidates) {
    int instances = InstancesFor(*o, gpus);
    if (instances > 1 && o->gpu_count < largest) continue;  // multi-node: full nodes only
    std::pair<int, int> key{instances * o->gpu_count, instances};
    if (key < best_key) {
      best_key = key;
      best.clear();
    }
    if (key == best_key) best.push_back(o);
  }
  return best;
}

catalog::CarbonReading MeanCarbon(const catalog::Catalog& catalog, const std::string& region,
                                  UnixSeconds start, double hours) {
  constexpr int64_t kMaxSamples = 8784;
  int64_t n = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(hours)));
  int64_t step = (n + kMaxSamples - 1) / kMaxSamples;
  catalog::CarbonReading mean;
  double sum = 0;
  int64_t samples = 0;
  for (int64_t h = 0; h < n; h += step, ++samples) {
    Result<catalog::CarbonReading> r = catalog.CarbonAt(region, start + h * 3600);
    if (!r.ok()) continue;
    sum += r->gco2_per_kwh;
    mean.source = r->source;
    mean.zone = r->zone;
  }
  mean.gco2_per_kwh = samples > 0 ? sum / static_cast<double>(samples) : 0;
  return mean;
}

namespace {

using Location = std::pair<std::string, std::string>;  // region, zone

struct Locations {
  std::map<Location, std::vector<const catalog::Offering*>> by_location;
  std::string refusal;
};

Locations AllowedLocations(const JobSpec& job, const std::string& gpu,
                           const catalog::Catalog& catalog) {
  Locations out;
  bool any = false;
  for (const auto& o : catalog.offerings()) {
    if (o.gpu_model != gpu) continue;
    any = true;
    const catalog::Region* region = catalog.FindRegion(o.region);
    std::string why = region ? RegionRefusal(job, *region, catalog) : "unknown region";
    if (!why.empty()) {
      if (out.refusal.empty()) out.refusal = "no offering in allowed regions (" + why + ")";
      continue;
    }
    out.by_location[{o.region, o.zone}].push_back(&o);
  }
  if (!any) out.refusal = "no offering in the catalog sells " + gpu;
  return out;
}

struct CountPlan {
  int gpus = 1;
  ThroughputQuery query;  // over the model's reference interconnect
  ThroughputEstimate throughput;
  double memory_per_gpu_gib = 0;
};

using CarbonCache = std::map<std::tuple<std::string, UnixSeconds, int64_t>, catalog::CarbonReading>;

struct OptionInput {
  const ResolvedJob* job;
  const GpuEstimate* estimate;
  const catalog::GpuModel* gpu;
  const catalog::Catalog* catalog;
  const PlanContext* ctx;
  CarbonCache* carbon;
};

void AddOnce(std::vector<std::string>* list, const std::string& s) {
  if (std::find(list->begin(), list->end(), s) == list->end()) list->push_back(s);
}

Money EgressCost(const OptionInput& in, const std::string& region, std::vector<std::string>* notes) {
  const DataLocation& data = in.job->spec.data;
  if (data.region.empty() || data.size_gb <= 0) return Money();
  std::optional<double> rate = in.catalog->EgressUsdPerGb(data.region, region);
  if (!rate) {
    rate = kDefaultInternetEgressUsdPerGb;
    notes->push_back("egress: no catalog price for " + data.region + " -> " + region +
                     "; internet egress $" + Fixed(*rate, 2) + "/GB assumed");
  }
  Money cost = Money::FromDollars(data.size_gb * *rate);
  if (cost.micros() > 0) {
    notes->push_back("egress: " + Fixed(data.size_gb, 0) + " GB from " + data.region + " x $" +
                     Fixed(*rate, 3) + "/GB = $" + cost.ToString());
  }
  return cost;
}

void AddFitNotes(const OptionInput& in, Option* o) {
  if (o->gpus_used < o->gpus) {
    o->notes.push_back("uses " + std::to_string(o->gpus_used) + " of the " +
                       std::to_string(o->gpus) + " GPUs billed (no closer instance size here)");
  }
  if (in.estimate->shortfall) o->notes.push_back("VRAM short: " + in.estimate->shortfall->explanation);
  if (in.estimate->memory.recompute == Recompute::kFull &&
      in.job->spec.work.form != Work::Form::kNone) {
    o->notes.push_back("full activation recomputation: only each layer's input is kept, backward "
                       "re-runs the forward (8PT FLOPs, run x " +
                       Fixed(kRecomputeComputeFactor, 2) + ")");
  }
  if (in.estimate->mig_profile && o->gpus_used == 1) {
    o->notes.push_back("fits MIG slice " + *in.estimate->mig_profile + " of " + in.gpu->name +
                       "; clouds sell whole GPUs, so priced as one GPU");
  }
  const DriverPin& pin = in.job->spec.driver;
  if (pin.set()) {
    o->image = "custom image:" + (pin.version.empty() ? "" : " driver " + pin.version) +
               (pin.version.empty() || pin.cuda.empty() ? "" : ",") +
               (pin.cuda.empty() ? "" : " CUDA " + pin.cuda);
    o->notes.push_back("driver pinned: met through a " + o->image);
  }
}

void AddTimes(const OptionInput& in, Option* o) {
  o->start = in.ctx->at + static_cast<int64_t>(std::llround(o->wait_hours * 3600));
  o->finish = o->start + static_cast<int64_t>(std::llround(o->hours * 3600));
  o->meets_deadline = !in.ctx->deadline || o->finish <= *in.ctx->deadline;
  if (!o->meets_deadline) {
    o->notes.push_back("misses the deadline by " +
                       Fixed(static_cast<double>(o->finish - *in.ctx->deadline) / 3600, 1) + " h");
  }
}

void AddEnergy(const OptionInput& in, Option* o) {
  o->energy_kwh = in.gpu->power_w * o->gpus_used * o->hours / 1000.0;
  auto key = std::make_tuple(o->offering.region, o->start,
                             static_cast<int64_t>(std::ceil(o->hours)));
  auto it = in.carbon->find(key);
  if (it == in.carbon->end()) {
    it = in.carbon->emplace(key, MeanCarbon(*in.catalog, o->offering.region, o->start, o->hours))
             .first;
  }
  o->carbon_gco2_per_kwh = it->second.gco2_per_kwh;
  o->carbon_source = it->second.source;
  o->co2 = Co2Grams::FromGrams(std::llround(o->energy_kwh * o->carbon_gco2_per_kwh));
}

// Hours of `count` on `instances` instances of `off`: the reference estimate,
// x SpanFactor when a count of one node spreads over several instances.
struct Span {
  double factor = 1;
  std::string refusal;  // the instance type's network would make the gang slower
};

// A gang across instances pays the instance type's own network: where that
// makes the run slower than the reference interconnect the estimate (and the
// scheduler's queue) assumes, the offering is not used for it, with the reason.
Span SpanOn(const OptionInput& in, const CountPlan& count, const catalog::Offering& off,
            int instances) {
  Span s;
  if (instances <= 1) return s;
  s.factor = SpanFactor(*in.job, *in.gpu, *in.catalog, count.query);
  const double hours = count.throughput.run_hours * s.factor;
  if (std::optional<double> slower = HoursOverSlowerNetwork(*in.job, *in.gpu, *in.catalog,
                                                            count.query, hours, off, instances)) {
    s.refusal = std::to_string(instances) + " x " + off.instance_type + " (" +
                OfferingInterconnect(count.query.net, off).inter_name + "): " + Fixed(*slower, 2) +
                " h over its network against " + Fixed(hours, 2) + " h over " +
                count.query.net.inter_name + "; not offered across instances";
  }
  return s;
}

Option MakeOption(const OptionInput& in, const CountPlan& count, const catalog::Offering& off,
                  const PricingTerms& terms, double span) {
  Option o;
  o.gpu = in.gpu->name;
  o.instances = InstancesFor(off, count.gpus);
  o.gpus = o.instances * off.gpu_count;
  o.gpus_used = count.gpus;
  o.offering = off;
  o.pricing = terms.model;
  o.price_per_hour = terms.per_instance_hour.Times(o.instances);
  o.wait_hours = terms.wait_hours;
  o.hours = count.throughput.run_hours * span * terms.run_multiplier;
  o.notes = terms.notes;
  if (span != 1.0) {
    o.notes.push_back("spans " + std::to_string(o.instances) +
                      " instances: no intra-node link, every collective over the network, run x" +
                      Fixed(span, 3));
  }
  o.billed_hours = BilledHours(terms, o.hours);
  if (std::string c = CommitmentNote(terms, o.hours); !c.empty()) o.notes.push_back(c);
  o.egress_cost = EgressCost(in, off.region, &o.notes);
  o.cost = o.price_per_hour.Times(o.billed_hours) + o.egress_cost;
  o.memory_per_gpu_gib = count.memory_per_gpu_gib;
  AddFitNotes(in, &o);
  AddTimes(in, &o);
  AddEnergy(in, &o);
  o.within_budget = !in.job->spec.budget || o.cost <= *in.job->spec.budget;
  return o;
}

std::vector<CountPlan> CountPlans(const OptionInput& in) {
  std::vector<CountPlan> out;
  const GpuEstimate& e = *in.estimate;
  int mb = e.shortfall ? e.shortfall->reduced_micro_batch
                       : (in.job->dims ? in.job->dims->micro_batch : 1);
  const Interconnect net = ReferenceInterconnect(*in.gpu, *in.catalog);
  for (int n : OptionCounts(in.job->spec, e.memory.gpus)) {
    ThroughputQuery q = QueryFor(e, n, net);
    Result<ThroughputEstimate> t = EstimateThroughput(*in.job, *in.gpu, *in.catalog, q);
    if (!t.ok()) continue;
    out.push_back({n, q, *t, MemoryAt(*in.job, n, mb, e.memory.recompute).per_gpu_gib});
  }
  return out;
}

}  // namespace

OptionSet BuildOptions(const ResolvedJob& job, const GpuEstimate& estimate,
                       const catalog::Catalog& catalog, const PlanContext& ctx) {
  OptionSet set;
  const catalog::GpuModel* gpu = catalog.FindGpu(estimate.gpu);
  if (!gpu) return {{}, "unknown GPU model " + estimate.gpu};
  Locations where = AllowedLocations(job.spec, gpu->name, catalog);
  if (where.by_location.empty()) return {{}, where.refusal};
  CarbonCache carbon;
  OptionInput in{&job, &estimate, gpu, &catalog, &ctx, &carbon};
  for (const CountPlan& count : CountPlans(in)) {
    for (const auto& [loc, offerings] : where.by_location) {
      for (const catalog::Offering* off : BestFitOfferings(offerings, count.gpus)) {
        const int instances = InstancesFor(*off, count.gpus);
        const Span span = SpanOn(in, count, *off, instances);
        if (!span.refusal.empty()) {
          if (set.refusal.empty()) set.refusal = span.refusal;
          AddOnce(&set.notes, span.refusal);
          continue;
        }
        const RunWindow window{count.throughput.run_hours, ctx.at, ctx.deadline, instances};
        for (const PricingTerms& terms : PricingFor(job.spec, *off, catalog.market(), window)) {
          set.options.push_back(MakeOption(in, count, *off, terms, span.factor));
        }
      }
    }
  }
  return set;
}

namespace {

// Everything that tells two options apart except the zone.
struct ZoneFreeKey {
  std::string gpu;
  int gpus = 0, gpus_used = 0, instances = 0;
  std::string region, instance_type;
  int pricing = 0;
  int64_t price_micros = 0, cost_micros = 0, egress_micros = 0, co2_grams = 0;
  double wait_hours = 0, hours = 0, billed_hours = 0, energy_kwh = 0, carbon = 0, memory_gib = 0;
  UnixSeconds start = 0, finish = 0;
  bool meets_deadline = false, within_budget = false;
  std::string image;
  std::vector<std::string> notes;
  auto operator<=>(const ZoneFreeKey&) const = default;
};

ZoneFreeKey KeyOf(const Option& o) {
  ZoneFreeKey k;
  k.gpu = o.gpu;
  k.gpus = o.gpus;
  k.gpus_used = o.gpus_used;
  k.instances = o.instances;
  k.region = o.offering.region;
  k.instance_type = o.offering.instance_type;
  k.pricing = static_cast<int>(o.pricing);
  k.price_micros = o.price_per_hour.micros();
  k.cost_micros = o.cost.micros();
  k.egress_micros = o.egress_cost.micros();
  k.co2_grams = o.co2.grams();
  k.wait_hours = o.wait_hours;
  k.hours = o.hours;
  k.billed_hours = o.billed_hours;
  k.energy_kwh = o.energy_kwh;
  k.carbon = o.carbon_gco2_per_kwh;
  k.memory_gib = o.memory_per_gpu_gib;
  k.start = o.start;
  k.finish = o.finish;
  k.meets_deadline = o.meets_deadline;
  k.within_budget = o.within_budget;
  k.image = o.image;
  k.notes = o.notes;
  return k;
}

}  // namespace

void CollapseZones(std::vector<Option>* ranked) {
  std::map<ZoneFreeKey, size_t> first;  // key -> index in `kept`
  std::vector<Option> kept;
  for (Option& o : *ranked) {
    auto [it, fresh] = first.emplace(KeyOf(o), kept.size());
    if (fresh) {
      kept.push_back(std::move(o));
    } else {
      kept[it->second].other_zones.push_back(o.offering.zone);
    }
  }
  for (Option& o : kept) {
    if (o.other_zones.empty()) continue;
    std::string zones;
    for (const auto& z : o.other_zones) zones += (zones.empty() ? "" : ", ") + z;
    o.notes.push_back("also in zones " + zones + " (same price, GPUs, hours and cost)");
  }
  *ranked = std::move(kept);
}

void RankOptions(std::vector<Option>* options) {
  std::stable_sort(options->begin(), options->end(), [](const Option& a, const Option& b) {
    bool a_miss = !a.meets_deadline, b_miss = !b.meets_deadline;
    int a_pricing = static_cast<int>(a.pricing), b_pricing = static_cast<int>(b.pricing);
    return std::tie(a_miss, a.cost, a.finish, a.gpu, a.offering.region, a.offering.zone,
                    a.offering.instance_type, a_pricing, a.gpus) <
           std::tie(b_miss, b.cost, b.finish, b.gpu, b.offering.region, b.offering.zone,
                    b.offering.instance_type, b_pricing, b.gpus);
  });
}

}  // namespace meridian::estimate
