#include "sched/plugins/cpu_ram.h"

#include "sched/registry.h"

namespace meridian::sched {

namespace {

constexpr int64_t kMibPerGib = 1024;

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 1 ? a : (a + b - 1) / b; }

}  // namespace

Result<std::unique_ptr<Plugin>> CpuRam::Create(PluginArgs& args) {
  Options o;
  o.reserve_vcpus = static_cast<int>(args.Integer("reserve_vcpus", 0, 0, 1024));
  o.reserve_ram_mib = static_cast<int64_t>(args.Number("reserve_ram_gib", 0, 0, 65536) * kMibPerGib);
  return FinishPlugin<CpuRam>(args, o);
}

std::string_view CpuRam::Reject(const CycleContext& ctx, const Candidate& c, bool detail) const {
  const QueuedJob& job = ctx.job();
  if (job.vcpus <= 0 && job.ram_mib <= 0) return "";
  if (c.kind == CandidateKind::kElastic) {
    const size_t i = c.offering.index();
    const OfferingFacts facts = ctx.offering(c.offering);  // 0: not stated
    const int64_t have_vcpus = facts.vcpus;
    const int64_t have_ram = static_cast<int64_t>(facts.ram_gib * kMibPerGib);
    const int64_t n = c.instances > 0 ? c.instances : 1;
    const int64_t vcpus = CeilDiv(job.vcpus, n);
    const int64_t ram = CeilDiv(job.ram_mib, n);
    if (have_vcpus > 0 && have_vcpus < vcpus) {
      if (!detail) return "too few vCPUs per instance";
      const catalog::Offering* o = &ctx.catalog().offerings()[i];
      detail_ = o->instance_type + " has " + std::to_string(have_vcpus) + " vCPUs < " +
                std::to_string(vcpus) + " per instance";
      return detail_;
    }
    if (have_ram > 0 && have_ram < ram) {
      if (!detail) return "too little RAM per instance";
      const catalog::Offering* o = &ctx.catalog().offerings()[i];
      detail_ = o->instance_type + " has " + std::to_string(have_ram / kMibPerGib) + " GiB < " +
                std::to_string(CeilDiv(ram, kMibPerGib)) + " GiB per instance";
      return detail_;
    }
    return "";
  }
  std::span<const NodeId> nodes = ctx.members(c);
  const int64_t n = static_cast<int64_t>(nodes.size());
  const int64_t vcpus = CeilDiv(job.vcpus, n);  // per node, as AllocationFor takes it
  const int64_t ram = CeilDiv(job.ram_mib, n);
  const Ledger& ledger = ctx.ledger();
  for (NodeId id : nodes) {
    if (vcpus > 0 && ledger.free_vcpus(id) < vcpus + options_.reserve_vcpus) {
      if (!detail) return "too few free vCPUs on a node";
      detail_ = ctx.fleet().node(id).name + ": " + std::to_string(ledger.free_vcpus(id)) +
                " vCPUs free < " + std::to_string(vcpus + options_.reserve_vcpus) + " needed";
      return detail_;
    }
    if (ram > 0 && ledger.free_ram_mib(id) < ram + options_.reserve_ram_mib) {
      if (!detail) return "too little free RAM on a node";
      detail_ = ctx.fleet().node(id).name + ": " + std::to_string(ledger.free_ram_mib(id)) +
                " MiB RAM free < " + std::to_string(ram + options_.reserve_ram_mib) + " needed";
      return detail_;
    }
  }
  return "";
}

size_t CpuRam::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                      Rejections& rejected) const {
  if (ctx.job().vcpus <= 0 && ctx.job().ram_mib <= 0) return cands.size();
  return KeepIf(cands, rejected,
                [&](const Candidate& c) { return Reject(ctx, c, rejected.wants_example()); });
}

}  // namespace meridian::sched
