// The one way backends run an outside program (Slurm's sbatch, squeue,
// scontrol, scancel, sinfo; kubectl): posix_spawn from an argv and an
// explicit environment, never a shell, so no argument is ever re-parsed.
//
// What the child gets, and why:
// - Only the environment in the call (the caller builds a minimal one): the
//   daemon's own variables, and a tenant's, never leak into a client command.
// - Descriptors 0, 1 and 2 only: stdin is the call's input (or /dev/null),
//   stdout and stderr are captured. Nothing else of the daemon (listening
//   sockets, the database) is inherited, whatever its close-on-exec flags.
// - Default signal dispositions and an empty signal mask: a daemon that
//   ignores SIGPIPE does not pass that on.
// - A process group of its own: at the timeout the whole group is killed,
//   so a command that forked helpers leaves nothing running.
//
// Bounded: a command that runs past its timeout, or writes more than
// `max_output_bytes`, is killed; a slurmctld or API server that does not
// answer never stalls the reconcile loop. Thread-safe; each call spawns its
// own child.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace meridian::backends {

struct ProcessCall {
  std::vector<std::string> argv;  // argv[0] is a path, or a name looked up in PATH of `env`
  std::vector<std::string> env;   // "NAME=value", the whole environment of the command
  int timeout_ms = 15000;
  std::string input;              // written to its stdin; "" = /dev/null
  int64_t max_output_bytes = int64_t{256} << 20;  // stdout and stderr together
};

struct ProcessOutput {
  int exit_code = -1;   // -1 when it did not exit by itself (a signal, the timeout, the cap)
  int signal = 0;       // the signal that ended it, if one did
  bool timed_out = false;
  bool output_capped = false;
  std::string out, err;
};

// Errors: argv is empty, or the program cannot be started (kInvalidArgument,
// naming it). A non-zero exit, a signal, the timeout and the output cap are
// not errors here: the caller reads the output's fields.
Result<ProcessOutput> RunProcess(const ProcessCall& call);

// How a backend runs programs; RunProcess unless a test injects another.
using ProcessRunner = std::function<Result<ProcessOutput>(const ProcessCall&)>;

// `names` from the daemon's environment, those that are set, as "NAME=value";
// a name ending in '*' takes every variable with that prefix (AWS_*).
std::vector<std::string> PassThrough(const std::vector<std::string>& names);

}  // namespace meridian::backends
