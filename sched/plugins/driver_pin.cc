#include "sched/plugins/driver_pin.h"

#include <algorithm>

#include "sched/registry.h"

namespace meridian::sched {

std::string CustomImage(const DriverPin& pin) {
  if (!pin.set()) return "";
  return "custom image:" + (pin.version.empty() ? "" : " driver " + pin.version) +
         (pin.version.empty() || pin.cuda.empty() ? "" : ",") +
         (pin.cuda.empty() ? "" : " CUDA " + pin.cuda);
}

bool StackMatches(const DriverPin& pin, const DriverPin& node) {
  if (!pin.version.empty() && !node.version.empty() && pin.version != node.version) return false;
  if (!pin.cuda.empty() && !node.cuda.empty() && pin.cuda != node.cuda) return false;
  return true;
}

Result<std::unique_ptr<Plugin>> DriverStack::Create(PluginArgs& args) {
  Options o;
  o.undeclared_match = args.Choice("undeclared", "match", {"match", "reject"}) == "match";
  o.elastic_image = args.Choice("elastic", "image", {"image", "reject"}) == "image";
  return FinishPlugin<DriverStack>(args, o);
}

Status DriverStack::Prepare(const PrepareContext& ctx) {
  stacks_.assign(1, DriverPin{});
  node_stack_.assign(ctx.fleet.nodes().size(), 0);
  for (const NodeGroupInfo& g : ctx.fleet.groups()) {
    if (!g.driver.set()) continue;
    auto same = [&](const DriverPin& s) {
      return s.version == g.driver.version && s.cuda == g.driver.cuda;
    };
    size_t id = static_cast<size_t>(std::find_if(stacks_.begin() + 1, stacks_.end(), same) -
                                    stacks_.begin());
    if (id == stacks_.size()) stacks_.push_back(g.driver);
    if (id > 0xffff) return Status::Invalid("driver_pin: more than 65535 distinct driver stacks");
    for (uint32_t k = 0; k < g.count; ++k) {
      node_stack_[g.first.index() + k] = static_cast<uint16_t>(id);
    }
  }
  return Status::Ok();
}

const DriverPin* DriverStack::StackOf(NodeId n) const {
  if (n.index() >= node_stack_.size() || node_stack_[n.index()] == 0) return nullptr;
  return &stacks_[node_stack_[n.index()]];
}

std::string_view DriverStack::Reject(const CycleContext& ctx, const Candidate& c) const {
  if (!ctx.job().spec) return "";
  const DriverPin& pin = ctx.job().spec->driver;
  if (!pin.set()) return "";
  if (c.kind == CandidateKind::kElastic) {
    return options_.elastic_image ? "" : "offerings cannot carry a pinned driver (elastic: reject)";
  }
  for (NodeId id : ctx.members(c)) {
    const DriverPin* s = StackOf(id);
    if (!s) {
      if (!options_.undeclared_match) return "node declares no driver stack (undeclared: reject)";
      continue;
    }
    if (!StackMatches(pin, *s)) return "node's declared driver stack differs from the job's pin";
  }
  return "";
}

size_t DriverStack::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                               Rejections& rejected) const {
  if (!ctx.job().spec || !ctx.job().spec->driver.set()) return cands.size();
  return KeepIf(cands, rejected, [&](const Candidate& c) { return Reject(ctx, c); });
}

std::string DriverStack::ExplainScore(const CycleContext& ctx, const Candidate& c,
                                          int64_t) const {
  if (!ctx.job().spec || !ctx.job().spec->driver.set()) return "";
  const DriverPin& pin = ctx.job().spec->driver;
  if (c.kind == CandidateKind::kElastic) return CustomImage(pin);
  bool undeclared = false;
  for (NodeId id : ctx.members(c)) undeclared = undeclared || StackOf(id) == nullptr;
  if (undeclared) return "a node declares no driver stack: assumed to match the pin";
  return "every node declares a stack matching" +
         CustomImage(pin).substr(std::string_view("custom image:").size());
}

}  // namespace meridian::sched
