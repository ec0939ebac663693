#include "estimate/options.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>
#include <unordered_map>

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
  int64_t samples = (n + step - 1) / step;  // h = 0, step, 2 step, ... < n
  catalog::CarbonReading mean;
  const catalog::Region* r = catalog.FindRegion(region);
  if (r == nullptr) return mean;  // no reading at any hour: 0, as CarbonAt's NotFound
  // The region and its series are looked up once, not per hour: the sum is
  // that of CarbonAt(region, start + h x 3600) over the same hours in the same
  // order (SumAt's contract), so the mean is the same double. Measured with
  // estimate_bench (BM_PlanExample/llm-training, docs/estimator.md).
  double sum = 0;
  if (const catalog::CarbonSeries* s =
          r->grid_zone.empty() ? nullptr : catalog.FindCarbonSeries(r->grid_zone)) {
    sum = s->SumAt(start, step * 3600, static_cast<int>(samples));
    mean.source = catalog::CarbonSourceKind::kHourly;
    mean.zone = r->grid_zone;
  } else {
    for (int64_t i = 0; i < samples; ++i) sum += r->yearly_gco2_per_kwh;
    mean.source = catalog::CarbonSourceKind::kYearly;
    mean.zone = r->yearly_source;
  }
  mean.gco2_per_kwh = sum / static_cast<double>(samples);
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

// Egress to a region: its cost and the notes saying how it was priced.
struct Egress {
  Money cost;
  std::vector<std::string> notes;
};
using EgressCache = std::map<std::string, Egress, std::less<>>;  // by region id

struct OptionInput {
  const ResolvedJob* job;
  const GpuEstimate* estimate;
  const catalog::GpuModel* gpu;
  const catalog::Catalog* catalog;
  const PlanContext* ctx;
  CarbonCache* carbon;
  EgressCache* egress;  // one answer per region: every option there has the same
};

void AddOnce(std::vector<std::string>* list, const std::string& s) {
  if (std::find(list->begin(), list->end(), s) == list->end()) list->push_back(s);
}

Egress EgressTo(const OptionInput& in, const std::string& region) {
  Egress out;
  const DataLocation& data = in.job->spec.data;
  if (data.region.empty() || data.size_gb <= 0) return out;
  std::optional<double> rate = in.catalog->EgressUsdPerGb(data.region, region);
  if (!rate) {
    rate = kDefaultInternetEgressUsdPerGb;
    out.notes.push_back("egress: no catalog price for " + data.region + " -> " + region +
                        "; internet egress $" + Fixed(*rate, 2) + "/GB assumed");
  }
  out.cost = Money::FromDollars(data.size_gb * *rate);
  if (out.cost.micros() > 0) {
    out.notes.push_back("egress: " + Fixed(data.size_gb, 0) + " GB from " + data.region + " x $" +
                        Fixed(*rate, 3) + "/GB = $" + out.cost.ToString());
  }
  return out;
}

// EgressTo, computed once per region of a GPU model's options (formatting its
// notes was a sixth of a plan's time for a job with data to move).
Money EgressCost(const OptionInput& in, const std::string& region, std::vector<std::string>* notes) {
  auto it = in.egress->find(region);
  if (it == in.egress->end()) it = in.egress->emplace(region, EgressTo(in, region)).first;
  notes->insert(notes->end(), it->second.notes.begin(), it->second.notes.end());
  return it->second.cost;
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
                       "re-runs the forward (4 forward passes, not 3: run x " +
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

// A real-time service's option is its replica set: one replica's price and
// GPUs, billed, powered and emitting for the set's replica-hours
// (ServiceEstimate) rather than the run's hours.
void PriceReplicaSet(const GpuEstimate& e, Option* o) {
  const ServiceEstimate& s = *e.service;
  if (e.throughput.run_hours <= 0) return;
  const double replicas = s.replica_hours / e.throughput.run_hours;  // on average
  o->billed_hours *= replicas;
  o->cost = o->price_per_hour.Times(o->billed_hours) + o->egress_cost;
  o->energy_kwh *= replicas;
  o->co2 = Co2Grams::FromGrams(std::llround(o->energy_kwh * o->carbon_gco2_per_kwh));
  o->notes.push_back("replica set: " + std::to_string(s.min_replicas) + "-" + std::to_string(s.peak_replicas) +
                     " replicas by the hour, " + Fixed(s.replica_hours, 1) +
                     " replica-hours; $/h and GPUs are one replica's");
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
  if (in.estimate->service) PriceReplicaSet(*in.estimate, &o);
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
  if (!gpu) return {{}, "unknown GPU model " + estimate.gpu, {}};
  Locations where = AllowedLocations(job.spec, gpu->name, catalog);
  if (where.by_location.empty()) return {{}, where.refusal, {}};
  CarbonCache carbon;
  EgressCache egress;
  OptionInput in{&job, &estimate, gpu, &catalog, &ctx, &carbon, &egress};
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

// Everything that tells two options apart except the zone, by reference.
auto ZoneFreeFields(const Option& o) {
  return std::forward_as_tuple(o.gpu, o.gpus, o.gpus_used, o.instances, o.offering.region,
                               o.offering.instance_type, o.pricing, o.price_per_hour, o.cost,
                               o.egress_cost, o.co2, o.wait_hours, o.hours, o.billed_hours,
                               o.energy_kwh, o.carbon_gco2_per_kwh, o.memory_per_gpu_gib, o.start,
                               o.finish, o.meets_deadline, o.within_budget, o.image, o.notes);
}

// Options equal but for the zone hash alike: a few of the fields above.
struct ZoneFreeHash {
  size_t operator()(const Option* o) const {
    size_t h = std::hash<std::string>()(o->offering.region);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<std::string>()(o->offering.instance_type));
    mix(std::hash<int64_t>()(o->cost.micros()));
    mix(static_cast<size_t>(o->gpus) * 8 + static_cast<size_t>(o->pricing));
    return h;
  }
};

struct ZoneFreeEqual {
  bool operator()(const Option* a, const Option* b) const {
    return ZoneFreeFields(*a) == ZoneFreeFields(*b);
  }
};

}  // namespace

// A hash set of the first option of each zone-free key, rather than a sorted
// map of copied keys: the same groups (equality of the same fields), without
// copying every option's strings and notes into a key (a fifth of a plan's
// time for the rendering example, estimate_bench).
void CollapseZones(std::vector<Option>* ranked) {
  std::vector<Option>& r = *ranked;
  std::unordered_map<const Option*, size_t, ZoneFreeHash, ZoneFreeEqual> first;  // -> kept index
  first.reserve(r.size());
  std::vector<size_t> kept_at(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    kept_at[i] = first.emplace(&r[i], first.size()).first->second;
  }
  std::vector<Option> kept;
  kept.reserve(first.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (kept_at[i] == kept.size()) {
      kept.push_back(std::move(r[i]));  // the first of its key, in rank order
    } else {
      kept[kept_at[i]].other_zones.push_back(r[i].offering.zone);
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

// Sorts pointers and then moves each option once: the same stable order as
// sorting the options themselves, without moving whole options (offering,
// notes) n log n times.
void RankOptions(std::vector<Option>* options) {
  std::vector<Option*> order;
  order.reserve(options->size());
  for (Option& o : *options) order.push_back(&o);
  std::stable_sort(order.begin(), order.end(), [](const Option* a, const Option* b) {
    bool a_miss = !a->meets_deadline, b_miss = !b->meets_deadline;
    int a_pricing = static_cast<int>(a->pricing), b_pricing = static_cast<int>(b->pricing);
    return std::tie(a_miss, a->cost, a->finish, a->gpu, a->offering.region, a->offering.zone,
                    a->offering.instance_type, a_pricing, a->gpus) <
           std::tie(b_miss, b->cost, b->finish, b->gpu, b->offering.region, b->offering.zone,
                    b->offering.instance_type, b_pricing, b->gpus);
  });
  std::vector<Option> ranked;
  ranked.reserve(order.size());
  for (Option* o : order) ranked.push_back(std::move(*o));
  *options = std::move(ranked);
}

}  // namespace meridian::estimate
