// The YAML text of sched/profiles/*.yaml, compiled into the binary
// (sched/CMakeLists.txt generates the definition). Internal to sched/.
#pragma once

#include <span>
#include <string_view>

namespace meridian::sched {

struct EmbeddedProfileText {
  std::string_view name;  // file stem: "default"
  std::string_view yaml;
};

std::span<const EmbeddedProfileText> EmbeddedProfileTexts();

}  // namespace meridian::sched
