// Earliest start: when a node the job could use (a feasible candidate of the
// ever pass) has room, from the live ledger's allocations and expected ends.
#include <algorithm>

#include "sched/cycle.h"

namespace meridian::sched {

namespace {

constexpr uint32_t kNodesPerGroup = 16;  // nodes of a group examined, from its first

struct Need {
  int gpus = 0;
  int vcpus = 0;
  int64_t ram_mib = 0;
  int mig_span = 0;  // > 0: a MIG instance of at least this span instead of GPUs
};

struct NodeTime {
  UnixSeconds at;
  JobId after;  // the release that makes room; invalid: room now
};

// When `n` has room for `need`, releasing its holders in order of expected end.
std::optional<NodeTime> RoomAt(Workspace& ws, const Ledger& live, NodeId n, const Need& need,
                               UnixSeconds now) {
  int gpus = live.free_gpu_count(n), vcpus = live.free_vcpus(n), mig = live.largest_free_mig_span(n);
  int64_t ram = live.free_ram_mib(n);
  auto fits = [&] {
    bool dev = need.mig_span > 0 ? mig >= need.mig_span : gpus >= need.gpus;
    return dev && vcpus >= need.vcpus && ram >= need.ram_mib;
  };
  if (fits()) return NodeTime{now, JobId()};
  ws.releases.clear();
  for (const Ledger::Holder& h : live.holders(n)) {
    ws.releases.push_back({std::max(h.end, now), h.job, h.gpus, h.vcpus, h.ram_mib, h.mig_span});
  }
  std::sort(ws.releases.begin(), ws.releases.end(), [](const auto& a, const auto& b) {
    return a.end != b.end ? a.end < b.end : a.job < b.job;
  });
  for (const auto& r : ws.releases) {
    gpus += r.gpus;
    vcpus += r.vcpus;
    ram += r.ram_mib;
    // A freed instance of a fixed layout is free again whole; good enough for
    // "some instance of this span": the released one.
    mig = std::max(mig, r.mig_span);
    if (fits()) return NodeTime{r.end, r.job};
  }
  return std::nullopt;
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
    std::vector<std::pair<NodeTime, NodeId>> times;
    uint32_t scan = std::min(g->count, kNodesPerGroup);
    for (uint32_t k = 0; k < scan; ++k) {
      NodeId n(g->first.value() + k);
      if (auto t = RoomAt(s.ws, live, n, need, ctx.now())) times.push_back({*t, n});
    }
    if (static_cast<int>(times.size()) < nodes_needed) continue;
    std::nth_element(times.begin(), times.begin() + (nodes_needed - 1), times.end(),
                     [](const auto& a, const auto& b) {
                       return a.first.at != b.first.at ? a.first.at < b.first.at : a.second < b.second;
                     });
    const auto& t = times[static_cast<size_t>(nodes_needed - 1)];
    if (!best || t.first.at < best->at) {
      best = t.first;
      best_node = t.second;
      best_nodes.clear();
      for (int k = 0; k < nodes_needed; ++k) best_nodes.push_back(times[static_cast<size_t>(k)].second);
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
