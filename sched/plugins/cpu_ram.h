// cpu_ram (Filter): the job's vCPUs and RAM (resources.vcpus, ram_gib).
//
// Fleet candidates (nodes, gangs, MIG slices, CPU nodes): every member node
// has its share free in ctx.ledger(): ceil(vcpus / members) vCPUs and
// ceil(ram / members) MiB, exactly what the allocation takes
// (AllocationFor), plus the `reserve_*` headroom the node keeps. In the
// "ever" pass the ledger is empty, so a job larger than any node is
// Unresolvable.
// Elastic offerings: each instance has at least the job's per-instance share
// (ceil(vcpus / instances), ceil(ram / instances)); an offering whose vCPUs or
// RAM the catalog does not state (0) is not rejected on that figure.
// A job that states neither passes everywhere.
//
// Arguments:
//   reserve_vcpus: 0      vCPUs every fleet node keeps free beyond the job, 0..1024
//   reserve_ram_gib: 0    GiB every fleet node keeps free beyond the job, 0..65536
#pragma once

#include <string>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class CpuRam final : public Plugin, public FilterPlugin {
 public:
  struct Options {
    int reserve_vcpus = 0;
    int64_t reserve_ram_mib = 0;
  };
  static constexpr std::string_view kName = "cpu_ram";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit CpuRam(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitFreedFit; }
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;

  // Why `c` lacks the job's vCPUs or RAM; "" when it has them. With
  // `detail`, the reason names the node and the figures.
  std::string_view Reject(const CycleContext& ctx, const Candidate& c, bool detail) const;

 private:
  Options options_;
  mutable std::string detail_;  // the detailed reason, formatted only when explained
};

}  // namespace meridian::sched
