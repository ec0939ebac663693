// driver_pin (Filter + Score): a job that pins its GPU driver / CUDA stack
// (`driver: {version, cuda}` in the job spec) runs where that stack is.
//
// Fleet nodes: a node group may declare its stack in the fleet file
// (`driver: {version, cuda}` per node group, docs/fleet.md). A node whose
// declared version or CUDA differs from the job's pin is rejected (each
// field compared where both sides state it, as exact dotted strings); a node
// that declares nothing matches unless `undeclared: reject`. Every member of
// a gang is checked.
// Elastic offerings: clouds boot the instance from an image, so the pin is
// met through a custom image (the estimator's Option::image names it the
// same way); `elastic: reject` turns them away instead.
// Score: neutral (0 for every candidate: it orders nothing); it carries the
// note of how the pin is met into the decision's explanation: "declared
// driver 550.54.15, CUDA 12.4 on every node", "undeclared: assumed to match",
// or "custom image: driver 550.54.15, CUDA 12.4".
// A job without a pin passes everywhere with an empty note.
//
// Arguments:
//   undeclared: match     match | reject   fleet nodes that declare no stack
//   elastic: image        image | reject   offerings: a custom image, or never
#pragma once

#include <string>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

// "custom image: driver 550.54.15, CUDA 12.4", as the estimator words it; ""
// when nothing is pinned.
std::string CustomImage(const DriverPin& pin);

// Whether a node declaring `node` serves a job pinning `pin`: every field
// both state is equal. An undeclared field matches.
bool StackMatches(const DriverPin& pin, const DriverPin& node);

class DriverStack final : public Plugin, public FilterPlugin, public ScorePlugin {
 public:
  struct Options {
    bool undeclared_match = true;
    bool elastic_image = true;
  };
  static constexpr std::string_view kName = "driver_pin";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit DriverStack(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitStatic; }
  Status Prepare(const PrepareContext& ctx) override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;
  int64_t Score(const CycleContext&, const Candidate&) const override { return 0; }
  void ScoreBatch(const CycleContext&, std::span<const Candidate>,
                  std::span<int64_t> out) const override {
    std::fill(out.begin(), out.end(), 0);
  }
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

  // Why `c` cannot carry the job's pin; "" when it can.
  std::string_view Reject(const CycleContext& ctx, const Candidate& c) const;

 private:
  // The declared stack of node `n`; nullptr when undeclared.
  const DriverPin* StackOf(NodeId n) const;

  Options options_;
  std::vector<DriverPin> stacks_;      // distinct declared stacks; 0 = undeclared
  std::vector<uint16_t> node_stack_;   // by node: index into stacks_
};

}  // namespace meridian::sched
