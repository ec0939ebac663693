// Runs one of Slurm's client commands (sbatch, squeue, scontrol, scancel,
// sinfo) as a child process from an argv and an explicit environment: fork
// and execve, never a shell, so no argument is ever re-parsed. Captures
// stdout and stderr, and kills the command if it runs past its timeout (a
// slurmctld that does not answer must not stall the reconcile loop forever).
// Thread-safe; each call forks its own child.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace meridian::backends {

struct ProgramCall {
  std::vector<std::string> argv;  // argv[0] is a path, or a name looked up in PATH of `env`
  std::vector<std::string> env;   // "NAME=value", the whole environment of the command
  int timeout_ms = 15000;
};

struct ProgramOutput {
  int exit_code = -1;  // -1 when killed by a signal (or by the timeout)
  std::string out, err;
};

// Errors: the program cannot be started (kInvalidArgument, naming it) or ran
// past its timeout (kInternal). A non-zero exit is not an error here; the
// caller reads exit_code.
Result<ProgramOutput> RunProgram(const ProgramCall& call);

}  // namespace meridian::backends
