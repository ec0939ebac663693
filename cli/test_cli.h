// For the command-line tests: `meridian` run in-process through RunMeridian at
// one fixed "now", so every run is reproducible, and whole files read back.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace meridian::cli::testutil {

// 2026-03-02T09:00:00Z.
inline constexpr long long kNow = 1772442000;

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

inline CliRun Meridian(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = RunMeridian(args, kNow, out, err);
  return {code, out.str(), err.str()};
}

// The file's bytes; empty when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace meridian::cli::testutil
