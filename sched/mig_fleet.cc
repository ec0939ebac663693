#include "sched/mig_fleet.h"

#include <algorithm>
#include <map>

#include "estimate/run_time.h"

namespace meridian::sched {

namespace {

// Copies of the fleet's MIG models with every profile's placements filled in
// (PlacementsOf: the catalog's, else the aligned rule), which mig/ reads.
class Models {
 public:
  explicit Models(const Fleet& fleet) : fleet_(fleet) {}
  const catalog::GpuModel& Of(GpuModelId m) {
    auto it = models_.find(m.value());
    if (it != models_.end()) return it->second;
    catalog::GpuModel g = fleet_.catalog().gpus()[m.index()];
    for (catalog::MigProfile& p : g.mig_profiles) {
      MigPlacements pl = PlacementsOf(p);
      p.placement_starts.assign(pl.starts.begin(), pl.starts.end());
      p.placement_span = pl.span;
    }
    return models_.emplace(m.value(), std::move(g)).first->second;
  }

 private:
  const Fleet& fleet_;
  std::map<uint32_t, catalog::GpuModel> models_;
};

// The profile of a held shape: the holder's where known, else the one whose
// span and starts match with the most compute.
int ProfileOfShape(const catalog::GpuModel& gpu, MigShape s) {
  int best = -1;
  for (size_t i = 0; i < gpu.mig_profiles.size(); ++i) {
    const catalog::MigProfile& p = gpu.mig_profiles[i];
    MigPlacements pl = PlacementsOf(p);
    if (pl.span != s.span || p.name.find("+me") != std::string::npos) continue;
    if (std::find(pl.starts.begin(), pl.starts.end(), s.start) == pl.starts.end()) continue;
    if (best < 0 || p.compute_slices > gpu.mig_profiles[best].compute_slices) best = static_cast<int>(i);
  }
  return best;
}

struct Held {
  JobId job;
  int gpu;
  MigShape shape;
  const Allocation* alloc;
};

// Held MIG instances per node, in (node, gpu, start) order (the ledger's map
// has no order of its own).
std::map<uint32_t, std::vector<Held>> HeldByNode(const Ledger& ledger) {
  std::map<uint32_t, std::vector<Held>> out;
  for (const auto& [job, a] : ledger.allocations()) {
    for (const NodeShare& s : a.nodes) {
      if (s.mig) out[s.node.value()].push_back({job, s.mig->gpu, s.mig->shape, &a});
    }
  }
  for (auto& [n, v] : out) {
    std::sort(v.begin(), v.end(), [](const Held& a, const Held& b) {
      return a.gpu != b.gpu ? a.gpu < b.gpu : a.shape.start < b.shape.start;
    });
  }
  return out;
}

int ProfileOf(const catalog::GpuModel& gpu, const Node& node, const Held& h, const MigProfileOf& of) {
  int p = of ? of(h.job, node) : -1;
  if (p < 0 || p >= static_cast<int>(gpu.mig_profiles.size()) ||
      PlacementsOf(gpu.mig_profiles[p]).span != h.shape.span) {
    p = ProfileOfShape(gpu, h.shape);
  }
  return p;
}

std::vector<mig::SliceNeed> NeedsOn(const catalog::GpuModel& gpu, GpuModelId model,
                                    std::span<const QueuedJob* const> waiting) {
  std::vector<mig::SliceNeed> out;
  for (const QueuedJob* q : waiting) {
    for (const ModelDemand& d : q->demands) {
      if (d.model == model && d.mig_profile >= 0) out.push_back(mig::NeedOf(gpu.mig_profiles[d.mig_profile]));
    }
  }
  return out;
}

}  // namespace

void SizeMigByShare(QueuedJob& job, int milli, const Fleet& fleet) {
  Models models(fleet);
  for (ModelDemand& d : job.demands) {
    if (d.mig_profile < 0 || !d.model.valid()) continue;
    const catalog::GpuModel& gpu = models.Of(d.model);
    const int p = mig::SmallestProfile(gpu, mig::NeedForShare(milli));
    if (p < 0) continue;
    // Counted work runs at the new slice's share of the GPU over the old
    // one's: memory slices when bandwidth-bound, compute slices otherwise
    // (estimate::MigSliceShare, the rule estimate::MigRunHours applies).
    const estimate::MigShare from =
        estimate::MigSliceShare(gpu, gpu.mig_profiles[d.mig_profile], d.mig_bandwidth_bound);
    const estimate::MigShare to = estimate::MigSliceShare(gpu, gpu.mig_profiles[p], d.mig_bandwidth_bound);
    if (d.mig_run_hours != d.run_hours) {
      d.mig_run_hours = static_cast<float>(d.mig_run_hours *
                                           (static_cast<double>(from.slices) * to.of) /
                                           (static_cast<double>(to.slices) * from.of));
    }
    d.mig_profile = static_cast<int8_t>(p);
    d.mig_span = static_cast<uint8_t>(gpu.mig_profiles[p].placement_span);
  }
}

bool HasRepartitionableMig(const Fleet& fleet) {
  for (const Node& n : fleet.nodes()) {
    if (n.mig_gpus != 0 && fleet.cluster(n.cluster).repartitionable) return true;
  }
  return false;
}

MigFleetFragmentation MeasureMigFragmentation(const Fleet& fleet, const Ledger& ledger,
                                              std::span<const QueuedJob* const> waiting,
                                              const MigProfileOf& profile_of) {
  MigFleetFragmentation out;
  mig::MigMeter meter;
  Models models(fleet);
  std::map<uint32_t, std::vector<Held>> held = HeldByNode(ledger);
  std::map<uint32_t, mig::ProfileSet> demand_sets;  // by model
  for (const Node& n : fleet.nodes()) {
    if (n.mig_gpus == 0 || !n.gpu_model.valid()) continue;
    const catalog::GpuModel& gpu = models.Of(n.gpu_model);
    auto ds = demand_sets.find(n.gpu_model.value());
    if (ds == demand_sets.end()) {
      ds = demand_sets.emplace(n.gpu_model.value(),
                               mig::ProfilesFor(gpu, NeedsOn(gpu, n.gpu_model, waiting))).first;
    }
    const bool free_form = fleet.cluster(n.cluster).repartitionable;
    const bool demanded = ds->second != 0;
    out.has_demand = out.has_demand || demanded;
    auto demand = [&](mig::Fragmentation f) {
      if (!demanded) {
        f.allocatable_memory = f.free_memory;
        f.allocatable_compute = f.free_compute;
      }
      out.demand.Add(f);
    };
    const std::vector<Held>* mine = nullptr;
    if (auto it = held.find(n.id.value()); it != held.end()) mine = &it->second;
    for (int g = 0; g < n.gpus; ++g) {
      if (((n.mig_gpus >> g) & 1) == 0) continue;
      if (free_form) {
        mig::Layout layout;
        if (mine) {
          for (const Held& h : *mine) {
            if (h.gpu == g) layout.push_back({ProfileOf(gpu, n, h, profile_of), h.shape.start});
          }
        }
        std::sort(layout.begin(), layout.end());
        out.structural.Add(meter.FreeForm(gpu, layout, mig::kAllProfiles));
        demand(meter.FreeForm(gpu, layout, ds->second));
      } else {
        mig::Layout layout;
        std::vector<bool> used;
        const uint8_t taken = ledger.mig_used(n.id, g);
        for (const MigInstance& m : n.mig) {
          layout.push_back({m.profile, m.shape.start});
          used.push_back((taken & m.shape.mask()) != 0);
        }
        out.structural.Add(meter.Fixed(gpu, layout, used, mig::kAllProfiles));
        demand(meter.Fixed(gpu, layout, used, ds->second));
      }
    }
  }
  return out;
}

MigRepartition ProposeMigRepartition(const Fleet& fleet, const Ledger& ledger,
                                     std::span<const QueuedJob* const> waiting, UnixSeconds now,
                                     const MigProfileOf& profile_of,
                                     const std::function<bool(JobId)>& skip,
                                     mig::RepartitionOptions options) {
  MigRepartition out;
  Models models(fleet);
  std::map<uint32_t, std::vector<Held>> held = HeldByNode(ledger);
  // One proposal run per GPU model (requests are per model).
  std::map<uint32_t, std::vector<std::pair<NodeId, int>>> gpus_of_model;
  for (const auto& [node, list] : held) {
    const Node& n = fleet.node(NodeId(node));
    if (!fleet.cluster(n.cluster).repartitionable || !n.gpu_model.valid()) continue;
    for (int g = 0; g < n.gpus; ++g) {
      if ((n.mig_gpus >> g) & 1) gpus_of_model[n.gpu_model.value()].push_back({n.id, g});
    }
  }
  for (const auto& [model_index, gpus] : gpus_of_model) {
    const GpuModelId model(model_index);
    const catalog::GpuModel& gpu = models.Of(model);
    std::vector<mig::WaitingRequest> reqs;
    for (const QueuedJob* q : waiting) {
      for (const ModelDemand& d : q->demands) {
        if (d.model == model && d.mig_profile >= 0) {
          reqs.push_back({static_cast<int64_t>(q->id.value()), mig::NeedOf(gpu.mig_profiles[d.mig_profile])});
        }
      }
    }
    if (reqs.empty()) continue;
    std::vector<mig::GpuNow> now_gpus;
    std::vector<std::vector<const Held*>> holders;
    for (const auto& [node, g] : gpus) {
      const Node& n = fleet.node(node);
      mig::GpuNow gn{&gpu, {}};
      std::vector<const Held*> hs;
      for (const Held& h : held[node.value()]) {
        if (h.gpu != g) continue;
        const int p = ProfileOf(gpu, n, h, profile_of);
        // Lost work: since the last checkpoint, x the slice's compute share.
        int64_t ran = std::max<int64_t>(0, now - h.alloc->start);
        if (h.alloc->checkpoint_interval_s > 0) ran %= h.alloc->checkpoint_interval_s;
        const int64_t cost = ran * gpu.mig_profiles[p].compute_slices / 7;
        // An instance whose holder must not move is drained at no price: it
        // is simply not offered (a huge cost keeps it out of every choice).
        const bool fixed = h.alloc->nodes.size() != 1 || (skip && skip(h.job));
        gn.running.push_back({{p, h.shape.start}, static_cast<int64_t>(hs.size()),
                              fixed ? (int64_t{1} << 50) : cost});
        hs.push_back(&h);
      }
      now_gpus.push_back(std::move(gn));
      holders.push_back(std::move(hs));
    }
    for (const mig::Proposal& p : mig::ProposeRepartition(now_gpus, reqs, options)) {
      if (p.cost >= (int64_t{1} << 50)) continue;  // would drain a job that must stay
      ++out.gpus_changed;
      out.requests_served += p.gained;
      for (const mig::RunningInstance& r : p.drained) {
        const Held& h = *holders[p.gpu][r.holder];
        out.drains.push_back({h.job, gpus[p.gpu].first, h.gpu, h.shape, r.cost});
      }
    }
  }
  return out;
}

}  // namespace meridian::sched
