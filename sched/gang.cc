#include "sched/gang.h"

namespace meridian::sched {

GangRule CheckGangMembers(const Fleet& fleet, std::span<const NodeId> members, bool replica_set,
                          bool same_group) {
  if (members.empty()) return {};
  const Node& first = fleet.node(members[0]);
  // Members in ascending order (as the generator lists them) cannot repeat;
  // only another order needs the quadratic check.
  bool ascending = true;
  for (size_t i = 1; i < members.size(); ++i) {
    const Node& m = fleet.node(members[i]);
    if (!replica_set && m.cluster != first.cluster) return {GangRule::kClusters, 0, i};
    if (!replica_set && same_group && m.group != first.group) return {GangRule::kGroups, 0, i};
    ascending = ascending && members[i - 1] < members[i];
  }
  for (size_t i = 1; !ascending && i < members.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (members[k] == members[i]) return {GangRule::kListedTwice, k, i};
    }
  }
  return {};
}

}  // namespace meridian::sched
