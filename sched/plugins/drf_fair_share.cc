#include "sched/plugins/drf_fair_share.h"

#include <cmath>

#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr const char* kResourceNames[ResourceAmounts::kCount] = {"gpus", "vcpus", "ram", "cost"};
constexpr size_t kMaxCachedTenantId = 1 << 20;

}  // namespace

DrfFairShare::Options DrfFairShare::ReadOptions(PluginArgs& args, const EntryReader& entry) {
  Options o;
  o.default_weight = args.Number("default_weight", o.default_weight, 0.01, 1000);
  o.share_step = args.Number("share_step", o.share_step, 0, 1);
  if (args.Has("resources")) {
    std::vector<std::string> names = args.Strings("resources");
    o.counted.fill(false);
    for (const std::string& n : names) {
      bool known = false;
      for (int i = 0; i < ResourceAmounts::kCount; ++i) {
        if (n == kResourceNames[i]) known = o.counted[static_cast<size_t>(i)] = true;
      }
      if (!known) args.Error("resources", "\"" + n + "\" must be gpus, vcpus, ram or cost");
    }
    if (!names.empty() && o.counted == std::array<bool, ResourceAmounts::kCount>{}) {
      args.Error("resources", "names no resource");
    }
  }
  PluginArgs tenants = args.Map("tenants");
  for (const std::string& name : tenants.Keys()) {
    PluginArgs t = tenants.Map(name);
    Tenant tenant{name, t.Number("weight", o.default_weight, 0.01, 1000)};
    o.tenants.push_back(tenant);
    if (entry) entry(t, o.tenants.size() - 1);
    tenants.Adopt(t);
  }
  args.Adopt(tenants);
  return o;
}

Result<std::unique_ptr<Plugin>> DrfFairShare::Create(PluginArgs& args) {
  return FinishPlugin<DrfFairShare>(args, ReadOptions(args));
}

double DrfFairShare::DominantShare(const ResourceAmounts& used, const ResourceAmounts& capacity,
                                   const std::array<bool, ResourceAmounts::kCount>& counted) {
  double share = 0;
  for (size_t i = 0; i < ResourceAmounts::kCount; ++i) {
    if (!counted[i] || capacity.v[i] <= 0) continue;
    share = std::max(share, static_cast<double>(used.v[i]) / static_cast<double>(capacity.v[i]));
  }
  return share;
}

double DrfFairShare::WeightAt(size_t index, UnixSeconds) const {
  return options_.tenants[index].weight;
}

void DrfFairShare::Refresh(UnixSeconds now) const {
  if (weights_at_ == now && weights_.size() == options_.tenants.size()) return;
  weights_.resize(options_.tenants.size());
  for (size_t i = 0; i < weights_.size(); ++i) weights_[i] = WeightAt(i, now);
  weights_at_ = now;
}

int DrfFairShare::TenantIndex(const QueuedJob& job) const {
  auto lookup = [&]() -> int {
    if (!job.spec) return -1;
    for (size_t i = 0; i < options_.tenants.size(); ++i) {
      if (options_.tenants[i].name == job.spec->tenant) return static_cast<int>(i);
    }
    return -1;
  };
  if (!job.tenant.valid() || job.tenant.index() >= kMaxCachedTenantId) return lookup();
  if (job.tenant.index() >= index_by_id_.size()) index_by_id_.resize(job.tenant.index() + 1, 0);
  int& slot = index_by_id_[job.tenant.index()];
  if (slot == 0) slot = lookup() + 2;  // 1: not listed, k + 2: tenant k
  return slot - 2;
}

double DrfFairShare::WeightOf(const QueuedJob& job, UnixSeconds now) const {
  int i = TenantIndex(job);
  if (i < 0) return options_.default_weight;
  Refresh(now);
  return weights_[static_cast<size_t>(i)];
}

double DrfFairShare::Step(double share) const {
  // A hair over the step's multiple, so 0.02 / 0.01 lands in step 2, not 1.
  return options_.share_step > 0 ? std::floor(share / options_.share_step + 1e-9) : share;
}

double DrfFairShare::SortKey(const Snapshot& snap, const QueuedJob& job) const {
  if (!snap.tenants) return 0;
  return ProgressiveKey(job, snap.now, snap.tenants->Before(job), snap.tenants->capacity());
}

double DrfFairShare::ProgressiveKey(const QueuedJob& job, UnixSeconds now,
                                    const ResourceAmounts& before,
                                    const ResourceAmounts& capacity) const {
  return Step(DominantShare(before, capacity, options_.counted) / WeightOf(job, now));
}

void DrfFairShare::SortKeys(const Snapshot& snap, std::span<const QueuedJob* const> jobs,
                            std::span<double> keys) const {
  if (!snap.tenants || !snap.tenants->Covers(jobs)) {
    QueueSortPlugin::SortKeys(snap, jobs, keys);
    return;
  }
  const TenantUsage& u = *snap.tenants;
  for (size_t i = 0; i < jobs.size(); ++i) {
    keys[i] = ProgressiveKey(*jobs[i], snap.now, u.BeforeAt(i), u.capacity());
  }
}

std::weak_ordering DrfFairShare::Compare(const Snapshot& snap, const QueuedJob& a,
                                         const QueuedJob& b) const {
  if (!snap.tenants) return std::weak_ordering::equivalent;
  const double sa = SortKey(snap, a), sb = SortKey(snap, b);
  if (sa < sb) return std::weak_ordering::less;
  if (sa > sb) return std::weak_ordering::greater;
  return std::weak_ordering::equivalent;
}

}  // namespace meridian::sched
