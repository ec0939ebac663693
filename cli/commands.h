// The meridian command line: parses argv and runs a subcommand, writing to the
// given streams, so tests run it in-process exactly as a user would.
//
// Exit codes: 0 success; 1 internal failure; 2 bad input (a spec, a flag, a
// catalog file), with the error on `err`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "sched/profile.h"

namespace meridian::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;

// `args` excludes the program name. `now` is the wall-clock time in Unix
// seconds, used where the user gives no --at.
// A shipped profile by name, or a profile file (a value naming an existing
// file or ending in .yaml/.yml); every plugin built once to check its args.
// Used by plan --profile and simulate --policy.
Result<sched::Profile> LoadProfile(const std::string& name_or_path);

int RunMeridian(const std::vector<std::string>& args, long long now, std::ostream& out,
                std::ostream& err);

}  // namespace meridian::cli
