#include "sched/plugins/quota.h"

#include <bit>
#include <cmath>

#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr int64_t kEighths = 8;

int64_t ToEighths(double gpus) { return static_cast<int64_t>(std::floor(gpus * kEighths)); }

// Eighths as GPUs: 16 -> "2", 20 -> "2.5", 1 -> "0.125".
std::string Gpus(int64_t eighths) {
  std::string s = std::to_string(eighths / kEighths);
  if (int64_t frac = eighths % kEighths * 125; frac != 0) {  // thousandths
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    s += "." + digits;
  }
  return s;
}

}  // namespace

Result<std::unique_ptr<Plugin>> Quota::Create(PluginArgs& args) {
  Options o;
  PluginArgs tenants = args.Map("tenants");
  for (const std::string& name : tenants.Keys()) {
    o.tenants.emplace_back(name, ToEighths(tenants.Number(name, 0, 0, 1e7)));
  }
  args.Adopt(tenants);
  if (args.Has("default_gpus")) o.default_eighths = ToEighths(args.Number("default_gpus", 0, 0, 1e7));
  return FinishPlugin<Quota>(args, std::move(o));
}

int64_t Quota::QuotaOf(const std::string& name) const {
  for (const auto& [n, q] : options_.tenants) {
    if (n == name) return q;
  }
  return options_.default_eighths;
}

int64_t Quota::Held(TenantId t) const {
  return t.valid() && t.index() < held_.size() ? held_[t.index()] : 0;
}

int64_t Quota::HeldWithout(TenantId t, std::span<const JobId> released) const {
  int64_t n = Held(t);
  for (JobId j : released) {
    auto it = jobs_.find(j);
    if (it != jobs_.end() && it->second.first == t) n -= it->second.second;
  }
  return n;
}

int64_t Quota::EighthsOf(const CycleContext& ctx, const Candidate& c) {
  switch (c.kind) {
    case CandidateKind::kNode: return c.gpus_per_node * kEighths;
    case CandidateKind::kGang: return int64_t{c.gpus_per_node} * c.gang_size * kEighths;
    case CandidateKind::kMigSlice: return c.mig_shape.span;
    case CandidateKind::kElastic:
      return int64_t{c.instances} * ctx.catalog().offerings()[c.offering.index()].gpu_count * kEighths;
    case CandidateKind::kCpuNode: return 0;
  }
  return 0;
}

int64_t Quota::EighthsOf(const catalog::Catalog& cat, const Allocation& a) {
  int64_t n = 0;
  for (const NodeShare& sh : a.nodes) {
    n += std::popcount(sh.gpus) * kEighths;
    if (sh.mig) n += sh.mig->shape.span;
  }
  if (a.elastic) {
    n += int64_t{a.elastic->instances} * cat.offerings()[a.elastic->offering.index()].gpu_count *
         kEighths;
  }
  return n;
}

size_t Quota::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                     Rejections& rejected) const {
  const QueuedJob& job = ctx.job();
  const int64_t quota = job.spec ? QuotaOf(job.spec->tenant) : options_.default_eighths;
  if (quota == kUnlimited) return cands.size();
  // A preemption's check runs on the empty ledger (ever_pass() too) but
  // judges the tenant's holding as the eviction leaves it.
  const bool whole = ctx.ever_pass() && !ctx.preemption();
  const int64_t held = whole              ? 0
                       : ctx.preemption() ? HeldWithout(job.tenant, ctx.victims())
                                          : Held(job.tenant);
  std::string why;
  return KeepIf(cands, rejected, [&](const Candidate& c) -> std::string_view {
    const int64_t n = EighthsOf(ctx, c);
    if (held + n <= quota) return "";
    if (whole) return "more GPUs than the tenant's whole quota";
    if (!rejected.wants_example()) return "the tenant's GPU quota would be exceeded";
    why = "the tenant's GPU quota would be exceeded: holds " + Gpus(held) + " + " + Gpus(n) +
          " > " + Gpus(quota) + " GPUs" + (ctx.preemption() ? " (after preemption)" : "");
    return why;
  });
}

uint32_t Quota::WaitInputs(const QueuedJob& job) const {
  const int64_t quota = job.spec ? QuotaOf(job.spec->tenant) : options_.default_eighths;
  return quota == kUnlimited ? kWaitStatic : kWaitTenantFreed;
}

Status Quota::Reserve(const CommitContext& ctx, const Allocation& a) {
  if (jobs_.contains(a.job) || !a.tenant.valid()) return Status::Ok();
  const int64_t n = EighthsOf(ctx.snapshot.fleet->catalog(), a);
  if (held_.size() <= a.tenant.index()) held_.resize(a.tenant.index() + 1, 0);
  held_[a.tenant.index()] += n;
  jobs_.emplace(a.job, std::make_pair(a.tenant, n));
  return Status::Ok();
}

void Quota::Unreserve(const CommitContext&, const Allocation& a) {
  auto it = jobs_.find(a.job);
  if (it == jobs_.end()) return;
  held_[it->second.first.index()] -= it->second.second;
  jobs_.erase(it);
}

}  // namespace meridian::sched
