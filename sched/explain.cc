#include "sched/explain.h"

#include <bit>
#include <cstdio>

#include "estimate/defaults.h"
#include "sched/cost.h"
#include "sched/cycle.h"

namespace meridian::sched {

namespace {

uint64_t LowestBits(uint64_t free, int n) {
  uint64_t out = 0;
  for (int k = 0; k < n && free != 0; ++k) {
    uint64_t bit = free & (~free + 1);
    out |= bit;
    free &= ~bit;
  }
  return out;
}

std::string GpuList(uint64_t mask) {
  std::string out;
  int first = -1, last = -2;
  auto flush = [&] {
    if (first < 0) return;
    out += (out.empty() ? "" : ",") + std::to_string(first) +
           (last > first ? "-" + std::to_string(last) : "");
  };
  for (int i = 0; i < 64; ++i) {
    if (!((mask >> i) & 1)) continue;
    if (i == last + 1) {
      last = i;
      continue;
    }
    flush();
    first = last = i;
  }
  flush();
  return out;
}

}  // namespace

Allocation AllocationFor(const CycleContext& ctx, const Candidate& c, const Ledger& ledger,
                         std::span<const JobId> released) {
  const QueuedJob& job = ctx.job();
  Allocation a;
  a.job = job.id;
  a.start = c.start;
  a.end = c.start + static_cast<UnixSeconds>(ctx.RunHours(c) * 3600.0 + 0.5);
  a.priority = job.tier;
  a.preemptible = job.preemptible;
  a.tenant = job.tenant;
  if (job.spec) {
    a.checkpoint_interval_s = job.spec->checkpoint.interval_s.value_or(0);
    a.restart_overhead_s = job.spec->checkpoint.restart_overhead_s.value_or(0);
  }
  if (c.kind == CandidateKind::kElastic) {
    Money price = ElasticPricePerHour(ctx, c).value_or(Money());  // what scoring charged
    a.elastic = ElasticLease{c.offering, c.instances, c.pricing, price.Times(c.instances)};
    return a;
  }
  std::span<const NodeId> nodes = ctx.members(c);
  const int n = static_cast<int>(nodes.size());
  for (NodeId id : nodes) {
    NodeShare sh;
    sh.node = id;
    sh.vcpus = (job.vcpus + n - 1) / n;
    sh.ram_mib = (job.ram_mib + n - 1) / n;
    if (c.kind == CandidateKind::kMigSlice) {
      sh.mig = MigShare{c.mig_gpu, c.mig_shape};
    } else if (c.kind != CandidateKind::kCpuNode) {
      uint64_t free = ledger.free_gpus(id);
      for (JobId v : released) {
        if (const Allocation* va = ledger.Find(v)) {
          for (const NodeShare& vs : va->nodes) {
            if (vs.node == id) free |= vs.gpus;
          }
        }
      }
      // Never fewer GPUs than the candidate asks: where the node lacks free
      // ones, the share names held GPUs too, so the ledger refuses it (a
      // job never runs on part of what it asked for).
      sh.gpus = LowestBits(free, c.gpus_per_node);
      const int short_by = c.gpus_per_node - std::popcount(sh.gpus);
      if (short_by > 0) sh.gpus |= LowestBits(~free & ~sh.gpus, short_by);
    }
    a.nodes.push_back(sh);
  }
  return a;
}

std::string DescribeCandidate(const CycleContext& ctx, const Candidate& c) {
  const Fleet& f = ctx.fleet();
  switch (c.kind) {
    case CandidateKind::kNode:
      return f.node(c.node).name + " " + std::to_string(c.gpus_per_node) + " GPU(s)";
    case CandidateKind::kGang: {
      std::string s = "gang of " + std::to_string(c.gang_size) + " x " +
                      std::to_string(c.gpus_per_node) + " GPUs:";
      for (NodeId n : ctx.members(c)) s += " " + f.node(n).name;
      return s;
    }
    case CandidateKind::kMigSlice: {
      const Node& n = f.node(c.node);
      const auto& gpu = ctx.catalog().gpus()[n.gpu_model.index()];
      return n.name + " GPU " + std::to_string(c.mig_gpu) + " MIG " +
             gpu.mig_profiles[c.mig_profile].name + " (slices " + std::to_string(c.mig_shape.start) +
             "-" + std::to_string(c.mig_shape.start + c.mig_shape.span - 1) + ")";
    }
    case CandidateKind::kElastic: {
      const auto& o = ctx.catalog().offerings()[c.offering.index()];
      return o.region + (o.zone.empty() ? "" : "/" + o.zone) + " " + o.instance_type + " x" +
             std::to_string(c.instances) + " " + std::string(ToString(c.pricing));
    }
    case CandidateKind::kCpuNode: return f.node(c.node).name + " CPU";
  }
  return "?";
}

void ExplainPricing(const CycleContext& ctx, const Candidate& c, Decision* d) {
  const QueuedJob& job = ctx.job();
  if (c.kind != CandidateKind::kElastic) {
    d->pricing.reset();
    const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
    if (ctx.explain() != ExplainLevel::kFull) return;
    // The rate RunCost charged (sched/cost.h): a run on CPUs pays its vCPUs
    // and RAM, anything else its GPUs.
    const std::string rate =
        c.kind == CandidateKind::kCpuNode
            ? estimate::Fixed(cl.vcpu_hour.dollars(), 6) + " $/vCPU-h and " +
                  estimate::Fixed(cl.ram_gib_hour.dollars(), 6) + " $/GiB-h"
            : cl.gpu_hour.ToString() + " $/GPU-h";
    d->pricing_reason = cl.pricing == CapacityPricing::kOwned
                            ? "owned capacity of cluster " + cl.name + " at " + rate
                            : "reserved capacity of cluster " + cl.name + " (" +
                                  cl.gpu_hour.ToString() +
                                  " $/GPU-h paid whether used or not: no added cost)";
    return;
  }
  d->pricing = c.pricing;
  if (ctx.explain() != ExplainLevel::kFull) return;
  std::string why = std::string(ToString(c.pricing)) + " chosen by the profile's scores";
  std::optional<Money> p = ElasticPricePerHour(ctx, c);
  if (p) why += " at " + p->Times(c.instances).ToString() + " $/h";
  if (c.pricing == PricingModel::kSpot && job.spot_run_multiplier) {
    why += "; run time x" + estimate::Fixed(*job.spot_run_multiplier, 3) + " for expected reclaims";
  }
  if (!job.spot_run_multiplier) {
    why += job.preemptible ? "; spot not offered: reclaims would cost half of every hour"
                           : "; spot not offered: the job is not preemptible";
  }
  if (!job.flex_refusal.empty()) why += "; " + job.flex_refusal;
  d->pricing_reason = why;
}

std::string FormatDecision(const Decision& d) {
  std::string out = "job " + std::to_string(d.job.value()) + ": " + std::string(ToString(d.kind));
  if (d.chosen) out += " on " + d.chosen->where;
  if (d.kind == DecisionKind::kPlace || d.kind == DecisionKind::kPreempt ||
      d.kind == DecisionKind::kDefer || (d.kind == DecisionKind::kWait && d.start > 0)) {
    out += ", start " + FormatRfc3339(d.start);
  }
  out += "\n";
  if (!d.status.ok()) out += "  status: " + d.status.ToString() + "\n";
  if (d.allocation) {
    const Allocation& a = *d.allocation;
    out += "  allocation: until " + FormatRfc3339(a.end) + " (expected)";
    for (const NodeShare& sh : a.nodes) {
      out += "; node " + std::to_string(sh.node.value());
      if (sh.gpus) out += " GPUs " + GpuList(sh.gpus);
      if (sh.mig) {
        out += " GPU " + std::to_string(sh.mig->gpu) + " MIG slices " +
               std::to_string(sh.mig->shape.start) + "-" +
               std::to_string(sh.mig->shape.start + sh.mig->shape.span - 1);
      }
      if (sh.vcpus) out += " " + std::to_string(sh.vcpus) + " vCPUs";
    }
    if (a.elastic) {
      out += "; " + std::to_string(a.elastic->instances) + " instance(s) at " +
             a.elastic->price_per_hour.ToString() + " $/h";
    }
    out += "\n";
  }
  if (!d.start_reason.empty()) out += "  start: " + d.start_reason + "\n";
  if (!d.pricing_reason.empty()) out += "  pricing: " + d.pricing_reason + "\n";
  if (!d.victims.empty()) {
    out += "  victims:";
    for (JobId v : d.victims) out += " " + std::to_string(v.value());
    out += "\n";
  }
  auto scores = [&](const char* label, const ScoredCandidate& s) {
    out += std::string("  ") + label + (label[0] == 'r' ? " " + s.where : "") + " (total " +
           std::to_string(s.total) + "):";
    if (s.scores.empty()) out += " no score plugins";
    for (const ScoreLine& l : s.scores) {
      out += "\n    " + std::string(l.plugin) + " " + std::to_string(l.normalized) + " x" +
             std::to_string(l.weight) + " = " + std::to_string(l.weighted());
      if (!l.note.empty()) out += "  (" + l.note + ")";
    }
    out += "\n";
  };
  if (d.chosen) scores("scores", *d.chosen);
  if (d.runner_up) scores("runner-up", *d.runner_up);
  for (const FilterLine& f : d.filters) {
    out += "  filter " + f.plugin + " rejected " + std::to_string(f.rejected);
    for (const std::string& e : f.examples) out += "\n    e.g. " + e;
    out += "\n";
  }
  out += "  candidates: " + std::to_string(d.candidates) + " examined, " +
         std::to_string(d.feasible) + " feasible" + (d.ever_pass ? " (incl. the ever pass)" : "") +
         "\n";
  return out;
}

}  // namespace meridian::sched
