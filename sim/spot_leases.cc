#include "sim/spot_leases.h"

#include <algorithm>

namespace meridian::sim {

int SpotLeases::Held(OfferingId o) const {
  auto it = by_offering_.find(o.index());
  if (it == by_offering_.end()) return 0;
  int n = 0;
  for (const Lease& l : it->second) n += l.instances;
  return n;
}

int SpotLeases::SpotInstances(OfferingId o, UnixSeconds t) const {
  const int count = market_.SpotInstances(o, t);
  if (count <= 0 || by_offering_.empty()) return std::max(count, 0);
  return std::max(0, count - Held(o));
}

bool SpotLeases::Start(uint32_t job, OfferingId o, int instances, UnixSeconds t, UnixSeconds end) {
  End(job);
  const int held = Held(o);
  if (market_.SpotInstances(o, t) < held + instances) return false;
  by_offering_[o.index()].push_back({job, instances, end});
  offering_of_[job] = o;
  return true;
}

std::optional<SpotLeases::Position> SpotLeases::Find(uint32_t job) const {
  auto of = offering_of_.find(job);
  if (of == offering_of_.end()) return std::nullopt;
  Position p;
  p.offering = of->second;
  for (const Lease& l : by_offering_.at(p.offering.index())) {
    p.through += l.instances;
    if (l.job == job) {
      p.lease = &l;
      return p;
    }
  }
  return std::nullopt;
}

std::optional<UnixSeconds> SpotLeases::ReclaimAt(uint32_t job, UnixSeconds t) const {
  std::optional<Position> p = Find(job);
  if (!p) return std::nullopt;
  std::optional<UnixSeconds> r = market_.NextSpotBelow(p->offering, t, p->through);
  if (!r || *r >= p->lease->end) return std::nullopt;
  return r;
}

bool SpotLeases::Due(uint32_t job, UnixSeconds t) const {
  std::optional<Position> p = Find(job);
  return p && market_.SpotInstances(p->offering, t) < p->through;
}

std::vector<uint32_t> SpotLeases::End(uint32_t job) {
  std::vector<uint32_t> later;
  auto of = offering_of_.find(job);
  if (of == offering_of_.end()) return later;
  auto list = by_offering_.find(of->second.index());
  offering_of_.erase(of);
  std::vector<Lease>& leases = list->second;
  auto it = std::find_if(leases.begin(), leases.end(), [&](const Lease& l) { return l.job == job; });
  for (auto k = it + 1; k < leases.end(); ++k) later.push_back(k->job);
  leases.erase(it);
  if (leases.empty()) by_offering_.erase(list);
  return later;
}

}  // namespace meridian::sim
