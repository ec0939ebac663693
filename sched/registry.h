// The plugin registry: every plugin's name and factory, in one table in
// plugins/registry.cc. A factory reads its typed arguments from PluginArgs
// (recording errors there) and returns the plugin, or an error.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "core/status.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

using PluginFactory = Result<std::unique_ptr<Plugin>> (*)(PluginArgs& args);

struct PluginEntry {
  std::string_view name;
  PluginFactory factory;
  std::string_view summary;  // one line, for `meridian` help and docs
};

// Every registered plugin, in registry order.
std::span<const PluginEntry> PluginRegistry();
const PluginEntry* FindPlugin(std::string_view name);

// Builds plugin `name` from `args`; argument errors (including unknown keys)
// name their field.
Result<std::unique_ptr<Plugin>> MakePlugin(std::string_view name, PluginArgs& args);

// Factory helper: `return Make<GpuFit>(args, GpuFit::Options{...});` style
// factories end with FinishPlugin so unknown keys are reported uniformly.
template <typename P, typename... A>
Result<std::unique_ptr<Plugin>> FinishPlugin(PluginArgs& args, A&&... a) {
  MERIDIAN_RETURN_IF_ERROR(args.Finish());
  return std::unique_ptr<Plugin>(std::make_unique<P>(std::forward<A>(a)...));
}

}  // namespace meridian::sched
