#include "sched/plugins/single_node.h"

#include <algorithm>

#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> SingleNode::Create(PluginArgs& args) {
  return FinishPlugin<SingleNode>(args);
}

Status SingleNode::Prepare(const PrepareContext& ctx) {
  largest_.assign(ctx.catalog.gpus().size(), 0);
  for (const Node& n : ctx.fleet.nodes()) {
    if (!n.gpu_model.valid() || n.mig_gpus != 0 || n.gpu_model.index() >= largest_.size()) continue;
    largest_[n.gpu_model.index()] = std::max(largest_[n.gpu_model.index()], n.gpus);
  }
  return Status::Ok();
}

std::string_view SingleNode::Reject(const CycleContext& ctx, const Candidate& c) const {
  if (c.kind != CandidateKind::kGang) return "";
  const ModelDemand& d = ctx.demand(c);
  const size_t m = d.model.index();
  if (m < largest_.size() && largest_[m] >= d.gpus) {
    return "the job fits in one node of its GPU model: no multi-node placement";
  }
  return "";
}

size_t SingleNode::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                          Rejections& rejected) const {
  return KeepIf(cands, rejected, [&](const Candidate& c) { return Reject(ctx, c); });
}

}  // namespace meridian::sched
