#include "sched/plugins/preemption.h"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "estimate/defaults.h"
#include "estimate/pricing.h"
#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr size_t kExactLimit = 8;  // eligible holders searched exactly (2^8 subsets)

int TierIndex(Priority p) { return static_cast<int>(p); }

std::string Fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

Result<std::unique_ptr<Plugin>> Preemption::Create(PluginArgs& args) {
  Options o;
  const char* keys[4] = {"weight_critical", "weight_high", "weight_normal", "weight_low"};
  for (size_t i = 0; i < 4; ++i) o.tier_weight[i] = args.Number(keys[i], o.tier_weight[i], 0.001, 1e6);
  o.min_gain_ratio = args.Number("min_gain_ratio", o.min_gain_ratio, 1, 1e6);
  o.deadline_factor = args.Number("deadline_factor", o.deadline_factor, 1, 1e6);
  o.urgent_slack_s = args.Duration("urgent_slack", o.urgent_slack_s);
  o.max_nodes = static_cast<int>(args.Integer("max_nodes", o.max_nodes, 1, 100000));
  o.max_gang_nodes = static_cast<int>(args.Integer("max_gang_nodes", o.max_gang_nodes, 1, 64));
  return FinishPlugin<Preemption>(args, o);
}

double Preemption::VictimCost(const Allocation& a, UnixSeconds now) const {
  if (now <= a.start) return 0;  // not started: nothing to lose
  // The allocation records what the job stated (0: not stated).
  Checkpoint stated;
  if (a.checkpoint_interval_s > 0) stated.interval_s = a.checkpoint_interval_s;
  if (a.restart_overhead_s > 0) stated.restart_overhead_s = a.restart_overhead_s;
  const estimate::CheckpointTerms cp = estimate::CheckpointOf(stated);
  const int64_t interval = cp.interval_s, restart = cp.restart_overhead_s;
  const int64_t lost = (now - a.start) % interval;
  double gpus = 0;
  for (const NodeShare& s : a.nodes) {
    gpus += std::popcount(s.gpus) + (s.mig ? s.mig->shape.span / double(kMigMemorySlices) : 0.0);
  }
  return options_.tier_weight[TierIndex(a.priority)] * gpus *
         static_cast<double>(lost + restart) / 3600.0;
}

double Preemption::Value(const CycleContext& ctx, const ModelDemand& d) const {
  const QueuedJob& job = ctx.job();
  double v = options_.tier_weight[TierIndex(job.tier)] * d.gpus * d.run_hours;
  if (job.deadline) {
    UnixSeconds latest = *job.deadline - static_cast<UnixSeconds>(d.run_hours * 3600.0);
    if (latest - ctx.now() <= options_.urgent_slack_s) v *= options_.deadline_factor;
  }
  return v;
}

Preemption::NodeChoice Preemption::CheapestOn(const CycleContext& ctx, NodeId n, int gpus,
                                              int vcpus, int64_t ram) const {
  const Ledger& l = ctx.ledger();
  const QueuedJob& job = ctx.job();
  eligible_.clear();
  // Quick check without lookups: even evicting every holder would not free enough.
  int all_gpus = l.free_gpu_count(n);
  for (const Ledger::Holder& h : l.holders(n)) all_gpus += h.gpus;
  if (all_gpus < gpus) return NodeChoice{};
  int can_gpus = l.free_gpu_count(n), can_vcpus = l.free_vcpus(n);
  int64_t can_ram = l.free_ram_mib(n);
  for (const Ledger::Holder& h : l.holders(n)) {
    if (!h.preemptible || h.priority <= job.tier || h.mig_span > 0) continue;
    const Allocation* a = l.Find(h.job);
    if (!a || (ctx.own_tenant_victims() && a->tenant != job.tenant)) continue;
    eligible_.push_back({h.job, VictimCost(*a, ctx.now()), h.gpus, h.vcpus, h.ram_mib});
    can_gpus += h.gpus;
    can_vcpus += h.vcpus;
    can_ram += h.ram_mib;
  }
  NodeChoice best;
  if (can_gpus < gpus || can_vcpus < vcpus || can_ram < ram) return best;
  auto enough = [&](uint32_t set) {
    int g = l.free_gpu_count(n), v = l.free_vcpus(n);
    int64_t r = l.free_ram_mib(n);
    for (size_t i = 0; i < eligible_.size(); ++i) {
      if (!(set >> i & 1u)) continue;
      g += eligible_[i].gpus;
      v += eligible_[i].vcpus;
      r += eligible_[i].ram;
    }
    return g >= gpus && v >= vcpus && r >= ram;
  };
  auto cost_of = [&](uint32_t set) {
    double c = 0;
    for (size_t i = 0; i < eligible_.size(); ++i) c += (set >> i & 1u) ? eligible_[i].cost : 0;
    return c;
  };
  if (eligible_.size() > kExactLimit) {
    // Greedy: cheapest first (the order of eligible_ after sorting), then drop
    // any victim the others make unnecessary, dearest first.
    std::sort(eligible_.begin(), eligible_.end(),
              [](const Eligible& a, const Eligible& b) { return a.cost < b.cost; });
    eligible_.resize(std::min<size_t>(eligible_.size(), 32));
    uint32_t set = 0;
    for (size_t i = 0; i < eligible_.size() && !enough(set); ++i) set |= 1u << i;
    for (size_t i = eligible_.size(); i-- > 0;) {
      if ((set >> i & 1u) && enough(set & ~(1u << i))) set &= ~(1u << i);
    }
    if (enough(set)) best = {cost_of(set), set, true};
    return best;
  }
  const uint32_t subsets = 1u << eligible_.size();
  for (uint32_t set = 0; set < subsets; ++set) {
    if (!enough(set)) continue;
    double c = cost_of(set);
    if (!best.found || c < best.cost ||
        (c == best.cost && std::popcount(set) < std::popcount(best.victims))) {
      best = {c, set, true};
    }
  }
  return best;
}

void Preemption::Consider(const CycleContext& ctx, const ModelDemand& d, uint8_t demand,
                          std::optional<Plan>& best) const {
  const Fleet& fleet = ctx.fleet();
  PoolId pool = fleet.ModelPool(d.model);
  if (!pool.valid()) return;
  const QueuedJob& job = ctx.job();
  int examined = 0;
  for (NodeId n : ctx.ledger().pool_members(pool)) {
    if (examined >= options_.max_nodes) break;
    const Node& node = fleet.node(n);
    if (node.gpus < d.gpus || node.mig_gpus != 0) continue;
    if (!job.allowed_regions.test(node.region.index())) continue;
    ++examined;
    NodeChoice c = CheapestOn(ctx, n, d.gpus, job.vcpus, job.ram_mib);
    if (!c.found || c.victims == 0) continue;  // no victims needed: not a preemption
    double value = Value(ctx, d);
    bool passes = value > options_.min_gain_ratio * c.cost;
    bool better = !best || (passes && !best->passes) ||
                  (passes == best->passes && (c.cost < best->cost ||
                   (c.cost == best->cost && std::popcount(c.victims) < static_cast<int>(best->victims.size()))));
    if (!better) continue;
    Plan p;
    p.candidate.kind = CandidateKind::kNode;
    p.candidate.demand = demand;
    p.candidate.gpus_per_node = d.gpus;
    p.candidate.node = n;
    p.candidate.region = node.region;
    p.candidate.start = ctx.now();
    for (size_t i = 0; i < eligible_.size(); ++i) {
      if (c.victims >> i & 1u) p.victims.push_back(eligible_[i].job);
    }
    p.cost = c.cost;
    p.value = value;
    p.passes = passes;
    best = std::move(p);
  }
}

void Preemption::ConsiderGang(const CycleContext& ctx, const ModelDemand& d, uint8_t demand,
                              std::optional<Plan>& best) const {
  const Fleet& fleet = ctx.fleet();
  const QueuedJob& job = ctx.job();
  int examined = 0;
  for (PoolId pool : fleet.ClusterPools(d.model)) {
    const Pool& info = fleet.pool(pool);
    if (info.max_gpus_per_node <= 0 || !job.allowed_regions.test(info.region.index())) continue;
    GangShape shape = ShapeFor(d.gpus, info.max_gpus_per_node);
    if (shape.nodes <= 1 || shape.nodes > options_.max_gang_nodes) continue;
    const int vcpus = (job.vcpus + shape.nodes - 1) / shape.nodes;
    const int64_t ram = (job.ram_mib + shape.nodes - 1) / shape.nodes;
    gang_nodes_.clear();
    for (NodeId n : ctx.ledger().pool_members(pool)) {
      if (examined >= options_.max_nodes) break;
      const Node& node = fleet.node(n);
      if (node.gpus < shape.gpus_per_node || node.mig_gpus != 0) continue;
      ++examined;
      NodeChoice c = CheapestOn(ctx, n, shape.gpus_per_node, vcpus, ram);
      if (!c.found) continue;
      GangNode g{c.cost, n, {}};
      for (size_t i = 0; i < eligible_.size(); ++i) {
        if (c.victims >> i & 1u) g.victims.push_back(eligible_[i].job);
      }
      gang_nodes_.push_back(std::move(g));
    }
    if (static_cast<int>(gang_nodes_.size()) < shape.nodes) continue;
    std::stable_sort(gang_nodes_.begin(), gang_nodes_.end(),
                     [](const GangNode& a, const GangNode& b) { return a.cost < b.cost; });
    Plan p;
    for (int k = 0; k < shape.nodes; ++k) {
      const GangNode& g = gang_nodes_[static_cast<size_t>(k)];
      p.members.push_back(g.node);
      for (JobId v : g.victims) {
        if (std::find(p.victims.begin(), p.victims.end(), v) == p.victims.end()) p.victims.push_back(v);
      }
    }
    if (p.victims.empty()) continue;
    for (JobId v : p.victims) p.cost += VictimCost(*ctx.ledger().Find(v), ctx.now());
    p.value = Value(ctx, d);
    p.passes = p.value > options_.min_gain_ratio * p.cost;
    if (best && !(p.passes && !best->passes) &&
        !(p.passes == best->passes && p.cost < best->cost)) {
      continue;
    }
    p.candidate.kind = CandidateKind::kGang;
    p.candidate.demand = demand;
    p.candidate.gpus_per_node = static_cast<uint16_t>(shape.gpus_per_node);
    p.candidate.gang_size = static_cast<uint16_t>(shape.nodes);
    p.candidate.node = p.members.front();
    p.candidate.region = info.region;
    p.candidate.start = ctx.now();
    best = std::move(p);
  }
}

std::optional<Preemption::Plan> Preemption::Best(const CycleContext& ctx) const {
  const QueuedJob& job = ctx.job();
  if (job.tier == Priority::kLow || ctx.ever_pass()) return std::nullopt;  // no lower tier
  // Nothing preemptible of a lower tier is held: no victims anywhere.
  if (ctx.ledger().preemptible_held_below(job.tier) == 0) return std::nullopt;
  std::optional<Plan> best;
  for (size_t i = 0; i < job.demands.size(); ++i) {
    const ModelDemand& d = job.demands[i];
    if (d.gpus == 0) continue;
    const uint8_t demand = static_cast<uint8_t>(i);
    Consider(ctx, d, demand, best);
    ConsiderGang(ctx, d, demand, best);
  }
  return best;
}

std::optional<Nomination> Preemption::PostFilter(const CycleContext& ctx) const {
  std::optional<Plan> p = Best(ctx);
  if (!p || !p->passes) return std::nullopt;
  Nomination n;
  n.candidate = p->candidate;
  n.members = std::move(p->members);
  n.victims = std::move(p->victims);
  if (ctx.explain() == ExplainLevel::kFull) {
    n.reason = "evicts";
    for (JobId v : n.victims) {
      const Allocation* a = ctx.ledger().Find(v);
      n.reason += " job " + std::to_string(v.value()) + " (" + std::string(ToString(a->priority)) +
                  ", preemptible)";
    }
    n.reason += ": value " + Fixed(p->value) + " > " + Fixed(options_.min_gain_ratio) +
                " x lost work " + Fixed(p->cost) + " (tier-weighted GPU-h)";
  } else {
    n.reason = "value exceeds the victims' lost work";
  }
  return n;
}

}  // namespace meridian::sched
