// The built-in candidate generator: index-driven, bounded, in fleet order.
#include <algorithm>
#include <array>
#include <optional>

#include "sched/cost.h"
#include "sched/cycle.h"

namespace meridian::sched {

namespace {

constexpr size_t kMinBatch = 16;
constexpr int kMinGangsPerCluster = 2;

// Pools whose nodes may serve model `m` in `regions`: the fleet-wide pool when
// every region hosting the model is allowed (fleet order), else the allowed
// clusters' pools.
void PoolsFor(const Fleet& fleet, GpuModelId m, const RegionSet& regions,
              std::vector<PoolId>* out) {
  out->clear();
  PoolId all = fleet.ModelPool(m);
  if (!all.valid()) return;
  const RegionSet& hosting = fleet.RegionsWithModel(m);
  if ((hosting & ~regions).none()) {
    out->push_back(all);
    return;
  }
  for (PoolId p : fleet.ClusterPools(m)) {
    if (regions.test(fleet.pool(p).region.index())) out->push_back(p);
  }
}

// Adds at most one MIG candidate per distinct instance profile of node `id`
// that holds the demand and is free; on a repartitionable node, the demand's
// own profile at its first free valid position.
void AddMigCandidates(const CycleContext& ctx, const Ledger& ledger, uint8_t demand_index,
                      NodeId id, std::vector<Candidate>* out) {
  const Node& n = ctx.fleet().node(id);
  const ModelDemand& d = ctx.job().demands[demand_index];
  Candidate c;
  c.kind = CandidateKind::kMigSlice;
  c.demand = demand_index;
  c.node = id;
  c.region = n.region;
  c.start = ctx.now();
  if (ctx.fleet().cluster(n.cluster).repartitionable) {
    const catalog::GpuModel& gpu = ctx.catalog().gpus()[n.gpu_model.index()];
    MigPlacements pl = PlacementsOf(gpu.mig_profiles[static_cast<size_t>(d.mig_profile)]);
    for (int g = 0; g < n.gpus; ++g) {
      for (uint8_t start : pl.starts) {
        MigShape shape{start, static_cast<uint8_t>(pl.span)};
        if (ledger.MigFree(id, g, shape)) {
          c.mig_gpu = static_cast<uint8_t>(g);
          c.mig_shape = shape;
          c.mig_profile = static_cast<uint8_t>(d.mig_profile);
          out->push_back(c);
          return;
        }
      }
    }
    return;
  }
  uint64_t seen_profiles = 0;
  for (const MigInstance& inst : n.mig) {
    if (inst.shape.span < d.mig_span || ((seen_profiles >> inst.profile) & 1)) continue;
    for (int g = 0; g < n.gpus; ++g) {
      if (ledger.MigFree(id, g, inst.shape)) {
        c.mig_gpu = static_cast<uint8_t>(g);
        c.mig_shape = inst.shape;
        c.mig_profile = inst.profile;
        out->push_back(c);
        seen_profiles |= 1ull << inst.profile;
        break;
      }
    }
  }
}

// The class of a whole-GPU candidate on one node, or of a gang whose members
// are all of one node group with the same free capacity; nullopt for any
// other candidate (MIG slices, mixed gangs, offerings), which is always kept.
std::optional<Workspace::NodeClass> ClassOf(const CycleContext& ctx, const Candidate& c) {
  if (c.kind != CandidateKind::kNode && c.kind != CandidateKind::kGang) return std::nullopt;
  const Fleet& fleet = ctx.fleet();
  const Ledger& ledger = ctx.ledger();
  const Node& node = fleet.node(c.node);
  if (node.mig_gpus != 0) return std::nullopt;
  Workspace::NodeClass k{node.cluster.value(), node.group,
                         uint32_t{c.demand} << 24 | uint32_t{c.gang_size} << 16 | c.gpus_per_node,
                         ledger.free_gpu_count(c.node), ledger.free_vcpus(c.node),
                         ledger.free_ram_mib(c.node)};
  if (c.kind == CandidateKind::kGang) {
    for (NodeId m : ctx.members(c)) {
      const Node& n = fleet.node(m);
      if (n.cluster != node.cluster || n.group != node.group || n.mig_gpus != 0 ||
          ledger.free_gpu_count(m) != k.free_gpus || ledger.free_vcpus(m) != k.free_vcpus ||
          ledger.free_ram_mib(m) != k.free_ram_mib) {
        return std::nullopt;
      }
    }
  }
  return k;
}

uint64_t HashOf(const Workspace::NodeClass& k) {
  uint64_t h = (uint64_t{k.cluster} << 48 | uint64_t{k.group} << 16) ^ k.shape;
  h = (h ^ static_cast<uint64_t>(k.free_gpus)) * 0x9e3779b97f4a7c15ull;
  h = (h ^ static_cast<uint64_t>(k.free_vcpus)) * 0xc2b2ae3d27d4eb4full;
  h = (h ^ static_cast<uint64_t>(k.free_ram_mib)) * 0x165667b19e3779f9ull;
  return h ^ (h >> 32);
}

// Whether class `k` is new to this decision (and now recorded).
bool FirstOfClass(Workspace& ws, const Workspace::NodeClass& k) {
  constexpr size_t kMask = Workspace::kClassSlots - 1;
  if (ws.classes.size() * 2 >= Workspace::kClassSlots) return true;  // full: keep, unmerged
  for (size_t i = HashOf(k) & kMask;; i = (i + 1) & kMask) {
    const uint16_t at = ws.class_slots[i];
    if (at == 0) {
      ws.classes.push_back(k);
      ws.class_slots[i] = static_cast<uint16_t>(ws.classes.size());
      ws.used_slots.push_back(static_cast<uint16_t>(i));
      return true;
    }
    if (ws.classes[at - 1] == k) return false;
  }
}

void ClearClasses(Workspace& ws) {
  for (uint16_t i : ws.used_slots) ws.class_slots[i] = 0;
  ws.used_slots.clear();
  ws.classes.clear();
}

// Appends the feasible candidates ws.batch[0..n) to ws.feasible, leaving out
// one whose class an earlier candidate already stands for (it scores the
// same and, ties going to the first, cannot win), and the repeats a
// candidate stands for (of its class, so merged too).
void KeepFeasible(Scheduler::Impl& s, const CycleContext& ctx, size_t n) {
  Workspace& ws = s.ws;
  if (!s.merge_equivalent) {
    ws.feasible.insert(ws.feasible.end(), ws.batch.begin(), ws.batch.begin() + static_cast<ptrdiff_t>(n));
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const Candidate& c = ws.batch[i];
    if (std::optional<Workspace::NodeClass> k = ClassOf(ctx, c); k && !FirstOfClass(ws, *k)) continue;
    ws.feasible.push_back(c);
    ws.feasible.back().repeats = 0;
  }
}

// Whether node `b` is equivalent to node `a` for a whole-GPU candidate: the
// same node group (so cluster, model and size), no MIG-mode GPU, and the same
// free GPUs, vCPUs and RAM (ClassOf's class, without building it).
bool SameClass(const Fleet& fleet, const Ledger& ledger, NodeId a, NodeId b) {
  const Node& na = fleet.node(a);
  const Node& nb = fleet.node(b);
  return na.group == nb.group && na.cluster == nb.cluster && na.mig_gpus == 0 &&
         nb.mig_gpus == 0 && ledger.free_gpu_count(a) == ledger.free_gpu_count(b) &&
         ledger.free_vcpus(a) == ledger.free_vcpus(b) &&
         ledger.free_ram_mib(a) == ledger.free_ram_mib(b);
}

// Generates with `fill` and filters in batches until `quota` candidates are
// feasible or `fill` runs dry. `fill(want)` appends about `want` candidates to
// ws.batch and returns false once exhausted.
template <typename Fill>
void Drain(Scheduler::Impl& s, const CycleContext& ctx, int quota, uint32_t* examined, Fill fill,
           size_t min_batch = kMinBatch) {
  Workspace& ws = s.ws;
  int got = 0;
  bool more = true;
  while (more && got < quota) {
    ws.batch.clear();
    more = fill(std::max(min_batch, static_cast<size_t>(quota - got)));
    size_t listed = ws.batch.size();
    for (const Candidate& c : ws.batch) listed += c.repeats;
    *examined += static_cast<uint32_t>(listed);
    if (ws.batch.empty()) continue;
    size_t kept = RunFilters(s, ctx, 0);
    // The quota counts a survivor and its repeats, kept or merged, in order;
    // a survivor whose run the quota reaches is kept (its repeats are merged).
    size_t take = 0;
    for (; take < kept && got < quota; ++take) {
      got += static_cast<int>(std::min<size_t>(1u + ws.batch[take].repeats,
                                               static_cast<size_t>(quota - got)));
    }
    KeepFeasible(s, ctx, take);
  }
}

void FleetNow(Scheduler::Impl& s, const CycleContext& ctx, const GenerationScope& scope,
              uint8_t di, int quota, uint32_t* examined) {
  Workspace& ws = s.ws;
  const Fleet& fleet = ctx.fleet();
  const Ledger& ledger = ctx.ledger();
  const ModelDemand& d = ctx.job().demands[di];
  PoolsFor(fleet, d.model, scope.regions, &ws.pools);
  const int need = d.gpus;
  // Single nodes with `need` free GPUs; a run of equivalent nodes as one
  // candidate with repeats (Impl::run_length).
  size_t pi = 0, pos = 0;
  Drain(s, ctx, quota, examined, [&](size_t want) {
    size_t repeats = 0;  // listed as repeats in this batch
    while (pi < ws.pools.size() && ws.batch.size() + repeats < want) {
      int64_t p = ledger.NextWithFreeGpus(ws.pools[pi], pos, need);
      if (p < 0) {
        ++pi;
        pos = 0;
        continue;
      }
      NodeId id = ledger.pool_members(ws.pools[pi])[static_cast<size_t>(p)];
      pos = static_cast<size_t>(p) + 1;
      if (s.run_length && !ws.batch.empty() && ws.batch.back().repeats < UINT16_MAX &&
          SameClass(fleet, ledger, ws.batch.back().node, id)) {
        ++ws.batch.back().repeats;
        ++repeats;
        continue;
      }
      Candidate c;
      c.kind = CandidateKind::kNode;
      c.demand = di;
      c.node = id;
      c.region = fleet.node(id).region;
      c.gpus_per_node = static_cast<uint16_t>(need);
      c.start = ctx.now();
      ws.batch.push_back(c);
    }
    return pi < ws.pools.size();
  });
  // Gangs in clusters whose nodes are smaller than the job. The gangs of one
  // cluster differ only in which nodes they take, so the quota is shared:
  // each cluster contributes quota / clusters (at least kMinGangsPerCluster)
  // and the choice spans every region rather than the first cluster's nodes.
  auto gang_pool = [&](PoolId cp) {
    const Pool& pool = fleet.pool(cp);
    return pool.max_gpus_per_node != 0 && pool.max_gpus_per_node < need &&
           scope.regions.test(pool.region.index());
  };
  const std::vector<PoolId>& cluster_pools = fleet.ClusterPools(d.model);
  const int gang_clusters =
      need <= fleet.FewestMaxGpus(d.model)
          ? 0
          : static_cast<int>(std::count_if(cluster_pools.begin(), cluster_pools.end(), gang_pool));
  const int per_cluster =
      gang_clusters == 0 ? 0 : std::max(kMinGangsPerCluster, (quota + gang_clusters - 1) / gang_clusters);
  for (size_t ci = 0; gang_clusters > 0 && ci < cluster_pools.size(); ++ci) {
    const PoolId cp = cluster_pools[ci];
    if (!gang_pool(cp)) continue;
    const Pool& pool = fleet.pool(cp);
    GangShape shape = ShapeFor(need, pool.max_gpus_per_node);
    size_t gpos = 0;
    bool dry = false;
    Drain(s, ctx, per_cluster, examined, [&](size_t want) {
      size_t repeats = 0;        // listed as repeats in this batch
      bool last_classed = false;  // the batch's last gang is of one class (ClassOf)
      auto one_class = [&](NodeId like, size_t from) {
        for (size_t k = from; k < ws.members.size(); ++k) {
          if (!SameClass(fleet, ledger, like, ws.members[k])) return false;
        }
        return true;
      };
      while (!dry && ws.batch.size() + repeats < want) {
        size_t first = ws.members.size();
        for (int k = 0; k < shape.nodes; ++k) {
          int64_t p = ledger.NextWithFreeGpus(cp, gpos, shape.gpus_per_node);
          if (p < 0) {
            dry = true;
            break;
          }
          ws.members.push_back(ledger.pool_members(cp)[static_cast<size_t>(p)]);
          gpos = static_cast<size_t>(p) + 1;
        }
        if (dry) {
          ws.members.resize(first);
          break;
        }
        if (s.run_length && last_classed && ws.batch.back().repeats < UINT16_MAX &&
            one_class(ws.batch.back().node, first)) {
          ws.members.resize(first);  // a repeat of the last gang: listed with it
          ++ws.batch.back().repeats;
          ++repeats;
          continue;
        }
        last_classed = s.run_length && one_class(ws.members[first], first);
        Candidate c;
        c.kind = CandidateKind::kGang;
        c.demand = di;
        c.node = ws.members[first];
        c.region = pool.region;
        c.gpus_per_node = static_cast<uint16_t>(shape.gpus_per_node);
        c.gang_offset = static_cast<uint32_t>(first);
        c.gang_size = static_cast<uint16_t>(shape.nodes);
        c.start = ctx.now();
        ws.batch.push_back(c);
      }
      return !dry;
    }, static_cast<size_t>(per_cluster));
  }
  // MIG slices.
  if (d.mig_profile >= 0) {
    size_t mi = 0, mpos = 0;
    Drain(s, ctx, quota, examined, [&](size_t want) {
      while (mi < ws.pools.size() && ws.batch.size() < want) {
        int64_t p = ledger.NextWithFreeMig(ws.pools[mi], mpos, d.mig_span);
        if (p < 0) {
          ++mi;
          mpos = 0;
          continue;
        }
        mpos = static_cast<size_t>(p) + 1;
        AddMigCandidates(ctx, ledger, di, ledger.pool_members(ws.pools[mi])[static_cast<size_t>(p)],
                         &ws.batch);
      }
      return mi < ws.pools.size();
    });
  }
}

// The ever pass: one representative per node group, against the empty ledger.
void FleetEver(Scheduler::Impl& s, const CycleContext& ctx, const GenerationScope& scope,
               uint8_t di, int quota, uint32_t* examined) {
  Workspace& ws = s.ws;
  const Fleet& fleet = ctx.fleet();
  const ModelDemand& d = ctx.job().demands[di];
  const std::vector<uint32_t>& groups = fleet.GroupsOf(d.model);
  size_t gi = 0;
  Drain(s, ctx, quota, examined, [&](size_t want) {
    for (; gi < groups.size() && ws.batch.size() < want; ++gi) {
      const NodeGroupInfo& g = fleet.groups()[groups[gi]];
      const Node& n = fleet.node(g.first);
      if (!scope.regions.test(n.region.index())) continue;
      Candidate c;
      c.demand = di;
      c.node = g.first;
      c.region = n.region;
      c.start = ctx.now();
      if (n.mig_gpus != 0) {
        if (d.mig_profile >= 0) AddMigCandidates(ctx, ctx.ledger(), di, g.first, &ws.batch);
        continue;
      }
      if (d.gpus <= n.gpus) {
        c.kind = CandidateKind::kNode;
        c.gpus_per_node = d.gpus;
        ws.batch.push_back(c);
        continue;
      }
      GangShape shape = ShapeFor(d.gpus, n.gpus);
      if (n.gpus == 0 || g.count < static_cast<uint32_t>(shape.nodes)) continue;
      c.kind = CandidateKind::kGang;
      c.gpus_per_node = static_cast<uint16_t>(shape.gpus_per_node);
      c.gang_offset = static_cast<uint32_t>(ws.members.size());
      c.gang_size = static_cast<uint16_t>(shape.nodes);
      for (int k = 0; k < shape.nodes; ++k) {
        ws.members.push_back(NodeId(g.first.value() + static_cast<uint32_t>(k)));
      }
      ws.batch.push_back(c);
    }
    return gi < groups.size();
  });
}

// Whether the job's own rules let it be bought under `m` (spot needs a spot
// rework factor, flex-start no flex refusal); availability aside.
bool OpenToJob(const QueuedJob& job, PricingModel m) {
  switch (m) {
    case PricingModel::kSpot: return job.spot_run_multiplier.has_value();
    case PricingModel::kFlexStart: return job.flex_refusal.empty();
    case PricingModel::kOnDemand:
    case PricingModel::kReserved: return true;
  }
  return false;
}

// An elastic candidate of choice `e` for demand `demand` under `m`, starting
// now (flex-start: after the expected wait).
Candidate ElasticCandidate(const CycleContext& ctx, const ElasticChoice& e, uint8_t demand,
                           PricingModel m) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.pricing = m;
  c.demand = demand;
  c.region = e.region;
  c.offering = e.offering;
  c.instances = e.instances;
  c.start = ctx.now();
  if (m == PricingModel::kFlexStart) {
    double wait = ctx.market().FlexStartWaitHours(e.offering, ctx.now());
    c.start += static_cast<UnixSeconds>(wait * 3600.0);
  }
  return c;
}

// The demand's choices under `m` in the market's order, for a market whose
// prices are not the catalog's: each priced as its candidate's run would be
// (ElasticPricePerHour), those not sold so or outside the scope's regions
// left out, stable-sorted by that price x instances from the index's
// on-demand order (as the index sorts its own lists by catalog price), so
// the cap on candidates keeps the cheapest live offers. Built in `out`.
ElasticIndex::Priced LiveChoices(const ElasticIndex& index, const CycleContext& ctx,
                                 const GenerationScope& scope, uint8_t demand, PricingModel m,
                                 std::vector<ElasticChoice>* out) {
  out->clear();
  const ModelDemand& d = ctx.job().demands[demand];
  for (ElasticChoice e : index.Choices(d.model, d.gpus)) {
    if (!scope.regions.test(e.region.index())) continue;
    std::optional<Money> p = ElasticPricePerHour(ctx, ElasticCandidate(ctx, e, demand, m));
    if (!p) continue;
    e.price_micros = p->micros() * e.instances;
    out->push_back(e);
  }
  std::stable_sort(out->begin(), out->end(), [](const ElasticChoice& a, const ElasticChoice& b) {
    return a.price_micros < b.price_micros;
  });
  return {*out, out->empty() ? 0 : out->front().price_micros};
}

// Elastic candidates for every demand in scope, at most `quota` feasible in
// all. The quota is shared between the pricing models the job may use; each
// walks the offerings in the order of its own price (the cheapest spot
// locations are not the cheapest on-demand ones) and merges the GPU models
// by the run's cost (price x instances x run hours), so the cheapest ways
// to buy the run come first, whichever GPU they use. Prices are the
// catalog's (the index's lists) where the market's are
// (MarketView::CatalogPrices), else the market's (LiveChoices).
void Elastic(Scheduler::Impl& s, const CycleContext& ctx, const GenerationScope& scope, int quota,
             uint32_t* examined) {
  const ElasticIndex* index = ctx.snapshot().elastic;
  if (!index || !s.profile.options.elastic || !ctx.fleet().elastic() || quota == 0) return;
  Workspace& ws = s.ws;
  const QueuedJob& job = ctx.job();
  const std::vector<PricingModel>& models = s.profile.options.pricing_models;
  auto open_to_job = [&](PricingModel m) { return OpenToJob(job, m); };
  const int open = static_cast<int>(std::count_if(models.begin(), models.end(), open_to_job));
  if (open == 0) return;
  const int per_model = std::max(1, (quota + open - 1) / open);
  // The demands' lists are merged through their heads kept sorted by (cost,
  // demand): the first is the cheapest (ties to the lower demand index); an
  // advanced head moves up to its place, a spent one drops off the front. A
  // job names a handful of GPU models, so this beats a heap's bookkeeping.
  using Head = Workspace::Head;  // cost: price x instances x run hours of lists[demand][pos]
  auto earlier = [](const Head& a, const Head& b) {
    return a.cost < b.cost || (a.cost == b.cost && a.demand < b.demand);
  };
  std::vector<std::span<const ElasticChoice>>& lists = ws.lists;  // by demand
  lists.resize(std::min<size_t>(job.demands.size(), 256));  // demand indexes are uint8_t
  std::vector<Head>& heads = ws.heads;
  const bool live = !ctx.market().CatalogPrices();
  if (live && ws.live_lists.size() < lists.size()) ws.live_lists.resize(lists.size());
  for (PricingModel m : models) {
    if (!open_to_job(m)) continue;
    const double rework = m == PricingModel::kSpot ? *job.spot_run_multiplier : 1.0;
    heads.clear();
    for (size_t i = 0; i < job.demands.size() && i < lists.size(); ++i) {
      const ModelDemand& d = job.demands[i];
      if (!scope.models.test(d.model.index())) continue;
      const uint8_t di = static_cast<uint8_t>(i);
      const ElasticIndex::Priced priced =
          live ? LiveChoices(*index, ctx, scope, di, m, &ws.live_lists[i])
               : index->PricedChoices(d.model, d.gpus, m);
      lists[i] = priced.list;
      if (lists[i].empty()) continue;
      heads.push_back({static_cast<double>(priced.first_price) * d.run_hours * rework,
                       di, 0});
    }
    std::sort(heads.begin(), heads.end(), earlier);
    size_t first = 0;  // heads[first..] are live
    Drain(s, ctx, per_model, examined, [&](size_t want) {
      while (first < heads.size() && ws.batch.size() < want) {
        Head h = heads[first];
        const uint8_t demand = h.demand;
        const std::span<const ElasticChoice> list = lists[demand];
        const ElasticChoice& e = list[h.pos];
        if (h.pos + 1 < list.size()) {
          ++h.pos;
          h.cost = static_cast<double>(list[h.pos].price_micros) * job.demands[demand].run_hours *
                   rework;
          size_t k = first;
          for (; k + 1 < heads.size() && earlier(heads[k + 1], h); ++k) heads[k] = heads[k + 1];
          heads[k] = h;
        } else {
          ++first;
        }
        if (!scope.regions.test(e.region.index())) continue;
        // A gang across instances whose network makes it slower than its
        // hours assume: not offered, as in `plan`.
        if (e.instances > 1 && job.demands[demand].SlowNetwork(e.offering)) continue;
        if (m == PricingModel::kSpot && !scope.ever &&
            ctx.market().SpotInstances(e.offering, ctx.now()) < e.instances) {
          continue;
        }
        if (!live && !ctx.market().PricePerHour(e.offering, m, ctx.now())) continue;
        ws.batch.push_back(ElasticCandidate(ctx, e, demand, m));
      }
      return first < heads.size();
    }, static_cast<size_t>(per_model));
  }
}

}  // namespace

size_t RunFilters(Scheduler::Impl& s, const CycleContext& ctx, size_t from) {
  Workspace& ws = s.ws;
  size_t n = ws.batch.size() - from;
  for (size_t f = 0; f < s.filters.size() && n > 0; ++f) {
    std::span<Candidate> span(ws.batch.data() + from, n);
    n = s.filters[f]->filter->Filter(ctx, span, ws.rejections[f]);
  }
  ws.batch.resize(from + n);
  return n;
}

uint32_t GenerateAndFilter(Scheduler::Impl& s, const CycleContext& ctx,
                           const GenerationScope& scope) {
  Workspace& ws = s.ws;
  ws.feasible.clear();
  ClearClasses(ws);

  uint32_t examined = 0;
  const QueuedJob& job = ctx.job();
  const ProfileOptions& o = s.profile.options;
  const int demands = std::max<int>(1, static_cast<int>(job.demands.size()));
  const int fleet_quota = std::max(8, o.max_fleet_candidates / demands);

  for (size_t i = 0; i < job.demands.size(); ++i) {
    const ModelDemand& d = job.demands[i];
    if (!scope.models.test(d.model.index())) continue;
    uint8_t di = static_cast<uint8_t>(i);
    if (scope.ever) {
      FleetEver(s, ctx, scope, di, fleet_quota, &examined);
    } else if (scope.fleet) {
      FleetNow(s, ctx, scope, di, fleet_quota, &examined);
    }
  }
  if (scope.elastic) Elastic(s, ctx, scope, o.max_elastic_candidates, &examined);
  for (PluginSlot* p : s.adds) {
    ws.batch.clear();
    CandidateSink sink(&ws.batch, &ws.members, static_cast<size_t>(o.max_added_candidates),
                       p->index);
    p->add->AddCandidates(ctx, ws.feasible, sink);
    examined += static_cast<uint32_t>(ws.batch.size());
    size_t kept = RunFilters(s, ctx, 0);
    ws.feasible.insert(ws.feasible.end(), ws.batch.begin(), ws.batch.begin() + kept);
  }
  return examined;
}

}  // namespace meridian::sched
