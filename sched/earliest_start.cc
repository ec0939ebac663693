// Earliest start: when a node the job could use (a feasible candidate of the
// ever pass) has room, from the live ledger's allocations and expected ends,
// over every node of the candidate's node group.
#include <algorithm>
#include <cstdint>

#include "sched/cycle.h"

namespace meridian::sched {

namespace {

using Need = EarliestCache::Need;
using NodeTime = EarliestCache::RoomTime;

// A node's capacity as releases add to it.
struct Room {
  int gpus = 0, vcpus = 0, mig = 0;
  int64_t ram_mib = 0;
  bool Fits(const Need& need) const {
    const bool dev = need.mig_span > 0 ? mig >= need.mig_span : gpus >= need.gpus;
    return dev && vcpus >= need.vcpus && ram_mib >= need.ram_mib;
  }
};

Room FreeNow(const Ledger& live, NodeId n) {
  return {live.free_gpu_count(n), live.free_vcpus(n), live.largest_free_mig_span(n),
          live.free_ram_mib(n)};
}

// When node `n` has room for `need`: now, or as its holders end in order of
// expected end (an overdue one: now).
std::optional<NodeTime> RoomAt(std::vector<Ledger::Holder>& scratch, const Ledger& live, NodeId n,
                               const Need& need, UnixSeconds now) {
  Room r = FreeNow(live, n);
  if (r.Fits(need)) return NodeTime{now, n, JobId()};
  scratch.assign(live.holders(n).begin(), live.holders(n).end());
  for (Ledger::Holder& h : scratch) h.end = std::max(h.end, now);
  std::sort(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) {
    return a.end != b.end ? a.end < b.end : a.job < b.job;
  });
  for (const Ledger::Holder& h : scratch) {
    r.gpus += h.gpus;
    r.vcpus += h.vcpus;
    r.ram_mib += h.ram_mib;
    // A freed instance of a fixed layout is free again whole; good enough for
    // "some instance of this span": the released one.
    r.mig = std::max(r.mig, h.mig_span);
    if (r.Fits(need)) return NodeTime{h.end, n, h.job};
  }
  return std::nullopt;
}

// The first `needed` nodes of [first, first + count) to have room for
// `need`, by (time, node). Every node of the group is considered; the work
// is the group's holders, whatever else the ledger holds.
std::vector<NodeTime> EarliestRoom(const Ledger& live, uint32_t first, uint32_t count,
                                   const Need& need, int needed, UnixSeconds now) {
  std::vector<NodeTime> out;
  std::vector<Ledger::Holder> scratch;
  for (uint32_t k = 0; k < count; ++k) {
    if (auto t = RoomAt(scratch, live, NodeId(first + k), need, now)) out.push_back(*t);
  }
  if (static_cast<int>(out.size()) > needed) {
    std::partial_sort(out.begin(), out.begin() + needed, out.end(),
                      [](const NodeTime& a, const NodeTime& b) {
                        return a.at != b.at ? a.at < b.at : a.node < b.node;
                      });
    out.resize(static_cast<size_t>(needed));
  } else {
    std::sort(out.begin(), out.end(), [](const NodeTime& a, const NodeTime& b) {
      return a.at != b.at ? a.at < b.at : a.node < b.node;
    });
  }
  return out;
}

// EarliestRoom's answer for the group at `first`, worked out once per ledger
// state and time.
const std::vector<NodeTime>& CachedEarliestRoom(EarliestCache& cache, const Ledger& live,
                                                const NodeGroupInfo& g, const Need& need,
                                                int needed, UnixSeconds now) {
  if (cache.ledger != &live || cache.stamp != live.stamp() || cache.now != now) {
    cache.ledger = &live;
    cache.stamp = live.stamp();
    cache.now = now;
    cache.answers.clear();
  }
  for (const EarliestCache::Answer& a : cache.answers) {
    if (a.group_first == g.first.value() && a.need == need && a.nodes_needed == needed) return a.times;
  }
  cache.answers.push_back(
      {g.first.value(), need, needed, EarliestRoom(live, g.first.value(), g.count, need, needed, now)});
  return cache.answers.back().times;
}

const NodeGroupInfo* GroupOf(const Fleet& fleet, NodeId n) {
  const Node& node = fleet.node(n);
  for (uint32_t gi : fleet.GroupsOf(node.gpu_model)) {
    const NodeGroupInfo& g = fleet.groups()[gi];
    if (n.value() >= g.first.value() && n.value() < g.first.value() + g.count) return &g;
  }
  return nullptr;
}

}  // namespace

std::optional<EarliestStart> FindEarliestStart(Scheduler::Impl& s, const CycleContext& ctx,
                                               const Ledger& live) {
  const Fleet& fleet = ctx.fleet();
  const QueuedJob& job = ctx.job();
  std::optional<NodeTime> best;
  NodeId best_node;
  std::vector<NodeId> best_nodes;
  for (const Candidate& c : s.ws.feasible) {
    if (!c.on_fleet()) continue;
    const NodeGroupInfo* g = GroupOf(fleet, c.node);
    if (!g) continue;
    Need need;
    int nodes_needed = 1;
    if (c.kind == CandidateKind::kMigSlice) {
      need.mig_span = c.mig_shape.span;
    } else {
      need.gpus = c.kind == CandidateKind::kCpuNode ? 0 : c.gpus_per_node;
    }
    if (c.kind == CandidateKind::kGang) nodes_needed = c.gang_size;
    need.vcpus = (job.vcpus + nodes_needed - 1) / nodes_needed;
    need.ram_mib = (job.ram_mib + nodes_needed - 1) / nodes_needed;
    // The nodes_needed-th earliest node of the group (a gang needs that many).
    const std::vector<NodeTime>& times =
        CachedEarliestRoom(s.earliest, live, *g, need, nodes_needed, ctx.now());
    if (static_cast<int>(times.size()) < nodes_needed) continue;
    const NodeTime& t = times.back();
    if (!best || t.at < best->at) {
      best = t;
      best_node = t.node;
      best_nodes.clear();
      for (const NodeTime& m : times) best_nodes.push_back(m.node);
    }
  }
  if (!best) return std::nullopt;
  EarliestStart e;
  e.at = best->at;
  e.nodes = std::move(best_nodes);
  if (ctx.explain() == ExplainLevel::kFull) {
    e.why = "earliest start " + FormatRfc3339(best->at) + ": " + fleet.node(best_node).name +
            " has room" +
            (best->after.valid() ? " when job " + std::to_string(best->after.value()) +
                                       " ends (its expected end)"
                                 : " now, but other filters turn it away now");
  }
  return e;
}

}  // namespace meridian::sched
