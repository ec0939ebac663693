// The region a candidate runs in: its own for elastic and added candidates,
// its node's for fleet candidates that leave it unset. Shared by the plugins
// that price, green or time a placement by region.
#pragma once

#include "sched/plugin.h"

namespace meridian::sched {

inline RegionId RegionOf(const CycleContext& ctx, const Candidate& c) {
  if (c.region.valid() || !c.on_fleet()) return c.region;
  return ctx.fleet().node(c.node).region;
}

}  // namespace meridian::sched
