// single_node (Filter): a job that fits in one node runs on one node, as the
// fifo baselines place work. A gang (a multi-node fleet candidate) is
// rejected when some fleet node of the demand's GPU model holds the job's
// GPUs whole (whole-GPU nodes only: MIG-mode GPUs are never allocated
// whole). The job then waits for such a node rather than spreading over
// smaller ones. Jobs larger than every node of the model keep their gangs;
// single nodes, MIG slices, CPU nodes and elastic offerings always pass.
//
// Prepare records, per GPU model, the most whole GPUs one fleet node has.
//
// Arguments: none.
#pragma once

#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class SingleNode final : public Plugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "single_node";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitFreedFit; }
  Status Prepare(const PrepareContext& ctx) override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;

  // Why `c` is turned away; "" when it passes.
  std::string_view Reject(const CycleContext& ctx, const Candidate& c) const;

 private:
  std::vector<int> largest_;  // by GpuModelId: most whole GPUs on one node
};

}  // namespace meridian::sched
