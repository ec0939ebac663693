// Gangs: one job on several fleet nodes (or elastic instances) at once. The
// rules every plugin that forms or checks gangs shares, defined once.
#pragma once

#include <span>

#include "core/ids.h"
#include "sched/fleet.h"

namespace meridian::sched {

// The widest gang (nodes, or elastic instances) one job may span unless a
// profile says otherwise: the default of gpu_fit's max_gang_nodes,
// gang_permit's max_gang_size and preemption's max_gang_nodes.
inline constexpr int kDefaultMaxGangNodes = 8;

// Why `members` cannot be one gang, or kOk. Checked in order over the
// members: a node listed twice; members in different clusters (a real-time
// service's replica set spans clusters on purpose: they are its failure
// domains); with `same_group`, members in different node groups.
// `first` and `second` are the offending members (indexes into `members`).
struct GangRule {
  enum Broken { kOk, kListedTwice, kClusters, kGroups };
  Broken broken = kOk;
  size_t first = 0, second = 0;
};
GangRule CheckGangMembers(const Fleet& fleet, std::span<const NodeId> members, bool replica_set,
                          bool same_group);

}  // namespace meridian::sched
