// Profile: a named scheduling policy, as YAML: the framework's options and
// the plugins it runs, each with a weight (score plugins) and typed arguments.
// The profiles that ship with meridian (sched/profiles/*.yaml) are embedded in
// the binary; a user's own file parses the same way. Errors name the source,
// line, column and field:
//   profiles/default.yaml:12:13: plugins[3].weight: "-1" must be >= 0
//
//   name: default
//   description: cheapest feasible placement, by tier
//   options:
//     elastic: true                       # also consider catalog offerings
//     pricing_models: [on-demand, spot, flex-start]
//     max_fleet_candidates: 64            # feasible fleet candidates, shared by the demands
//     max_elastic_candidates: 64          # feasible elastic candidates for the job in all
//     tie_break: first                    # first | random (seeded)
//     head_of_line_blocking: false        # a cycle stops at the first job that waits
//     explain: full                       # full | counts
//     cpu_allocation: gpu-share           # gpu-share | sensitivity
//   plugins:
//     - name: tier_sort
//     - name: gpu_fit
//     - name: cheapest_price
//       weight: 2
//       args: {}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/enums.h"
#include "core/status.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

enum class TieBreak { kFirst, kRandom };
// How a simulation gives vCPUs to trace jobs that carry a CPU profile
// (input_bound_fraction, cpu_sensitivity; docs/telemetry.md): the fleet's
// vCPUs per GPU times the job's GPUs, or what its profile says keeps its
// input pipeline up with the GPU.
enum class CpuAllocation { kGpuShare, kSensitivity };

struct ProfileOptions {
  bool elastic = true;
  std::vector<PricingModel> pricing_models = {PricingModel::kOnDemand, PricingModel::kSpot,
                                              PricingModel::kFlexStart};
  int max_fleet_candidates = 64;
  int max_elastic_candidates = 64;
  int max_added_candidates = 64;  // by AddCandidates plugins, per decision
  TieBreak tie_break = TieBreak::kFirst;
  bool head_of_line_blocking = false;
  ExplainLevel explain = ExplainLevel::kFull;
  int permit_attempts = 3;        // candidates tried when Permit rejects
  CpuAllocation cpu_allocation = CpuAllocation::kGpuShare;
};

struct PluginConfig {
  std::string name;
  int64_t weight = 1;
  bool weight_given = false;
  std::string path;          // "plugins[2]"
  std::string weight_where;  // "<source>:<line>:<col>: plugins[2].weight"
  PluginArgs args;
};

struct Profile {
  std::string name;
  std::string description;
  std::string source;  // file name or "profiles/<name>.yaml" for an embedded one
  ProfileOptions options;
  std::vector<PluginConfig> plugins;
};

// Parses a profile. Checks the keys, types and ranges and that each plugin is
// registered; plugin arguments are checked when the plugins are built
// (Scheduler::Create, or CheckProfile).
Result<Profile> ParseProfile(std::string_view yaml, std::string_view source);

// Builds every plugin of `profile` once, to report argument errors early.
Status CheckProfile(const Profile& profile);

// The embedded profiles: names in order, and one by name.
std::vector<std::string> EmbeddedProfileNames();
Result<Profile> EmbeddedProfile(std::string_view name);

}  // namespace meridian::sched
