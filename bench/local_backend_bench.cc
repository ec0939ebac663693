// Launch overhead of the local backend: an attempt of `true` launched through
// the backend (monitor process, own process group, log files, status file,
// attempt record) and polled until its exit status is read back, against the
// baseline of the same program started with posix_spawn and reaped with
// waitpid, measured in the same run.
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "backends/local/local.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

void BM_PosixSpawnAndWait(benchmark::State& state) {
  char prog[] = "/bin/true";
  char* argv[] = {prog, nullptr};
  for (auto _ : state) {
    pid_t pid = -1;
    if (posix_spawn(&pid, prog, nullptr, nullptr, argv, environ) != 0) {
      state.SkipWithError("posix_spawn failed");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PosixSpawnAndWait)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_LocalBackendLaunchToExit(benchmark::State& state) {
  fs::path root = fs::temp_directory_path() / ("meridian_local_bench_" + std::to_string(getpid()));
  fs::remove_all(root);
  meridian::backends::LocalBackendOptions o;
  o.state_dir = (root / "state").string();
  auto backend = meridian::backends::MakeLocalBackend(o);
  meridian::control::LaunchRequest r;
  r.job_id = "j-bench";
  r.argv = {"/bin/true"};
  r.working_dir = root.string();
  for (auto _ : state) {
    auto h = backend->Launch(r);
    if (!h.ok()) {
      state.SkipWithError(h.status().message().c_str());
      break;
    }
    bool ended = false;
    while (!ended) {
      for (const auto& obs : backend->Poll()) {
        ended |= obs.handle == *h && obs.phase == meridian::control::RunPhase::kExited;
      }
      if (!ended) usleep(100);
    }
    ++r.attempt;
  }
  state.SetItemsProcessed(state.iterations());
  backend.reset();
  fs::remove_all(root);
}
BENCHMARK(BM_LocalBackendLaunchToExit)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
