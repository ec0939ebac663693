// The control plane under load: durable submissions per second through the
// real HTTP API (POST /v1/jobs over loopback, answered 201 only after the
// SQLite commit), with p50/p99 latency per request, and the reconcile loop's
// cycle time with 10,000 queued jobs.
//
// BM_Submit/<sync>/<group>/<clients>: the daemon (HTTP server, store,
// reconcile loop) runs in this process on its own threads; <clients> client
// threads, one keep-alive connection each, submit 4,000 jobs in all (a
// one-GPU data-science job as JSON, ~200 bytes). sync: SQLite's synchronous
// mode (1 = FULL, an fsync per commit; 0 = NORMAL); group: 1 = group commit
// (one writer thread batches every waiting submission into one
// transaction), 0 = the baseline, one transaction per submission. The
// backend offers no nodes, so the jobs stay queued (the reconcile loop still
// reads each new job and records why it waits). Clients and daemon share the
// machine's cores.
//
// BM_SubmitPostgres/<replicas>/<group>/<clients>/<pipeline>: the same load
// on the PostgreSQL store. pipeline: 1 = a group-commit batch goes to the
// server in one round trip (libpq's pipeline mode, a submission one
// statement) and its COMMIT in a second; 0 = the reference, each statement
// its own round trip (four per submission without an idempotency key). <replicas> daemons (each its own store, connections,
// HTTP server and lease: one leads, the rest follow) run in this process on
// one database of a PostgreSQL server from Debian's package started in a
// temporary directory with its durability settings as shipped (fsync on,
// synchronous_commit on: a 201 means the job's WAL reached the disk). Client
// c talks to replica c mod <replicas>. wal_syncs_per_submission is the
// server's WAL flushes (pg_stat_wal) over the run per submission: under 1,
// commits were batched. jobs_stored counts the jobs the database holds.
// pg_cpu_s is the CPU time of the server's processes that served the run.
//
// BM_SubmitServe/<replicas>/<clients>/<submissions>: the same load (4,000
// submissions, or 20,000 for a queue five times as long) on <replicas> `meridian
// serve` processes (the binary this build made, or MERIDIAN_BENCH_BINARY) on one such database, as a
// deployment runs them: --db the PostgreSQL URI, one shared --state-dir, the
// local backend declaring one node of 8 T4s, the default lease. A first job
// holds one T4 for the whole run and the jobs ask for all 8, so every one
// stays queued, and the leader's scheduler decides and explains each (a
// congested queue of thousands, not a daemon without nodes; jobs_queued
// counts them after the run; leader_cycles the reconcile cycles the leader ran
// during the run, from its /metrics). serve_cpu_s is the replicas' CPU time over the run (/proc/PID/stat),
// leader_cpu_s the leader's share of it (the replica whose /healthz says so),
// leader_kb_per_job how much the leader's resident memory grew per job queued,
// cpu_s the clients', pg_run_cpu_s the server's (every one of its processes),
// host_busy the share of the machine's CPU busy over the run (near 1: the run
// is bound by the machine's cores; the three CPU times then add up to about
// host_busy x cores x the run's time).
//
// BM_PgbenchSubmit/<clients>/<submissions>/<per_transaction>: PostgreSQL
// alone (Debian's pgbench sending the store's own submission statement):
// the peer that BM_SubmitServe's rate is measured against.
//
// BM_PgCommit: the floor under both: one INSERT per transaction on one
// connection to that server, fsync on; per_s and p50/p99 per commit.
//
// BM_Healthz/<clients>: the same clients on GET /healthz, the HTTP layer's
// ceiling with no parsing, validation or storage: the baseline of the run.
//
// BM_ReconcileCycle/queued:10000/kept:K/churn:C: 10,000 queued jobs in the
// store, a fleet of one 8 x T4 node (8 jobs placed, the rest wait); one
// iteration is one full reconcile cycle (load new jobs, refresh the fleet,
// poll, the scheduler's cycle over the queue, write what changed). With
// churn:1 a running job ends at every cycle and a waiting one takes its GPU.
// kept:0 decides every waiting job in full at every cycle (the reference,
// ReconcilerOptions::keep_waits = false), the baseline of kept:1, which
// decides only what a change could move. decisions_per_cycle counts full
// decisions. The first cycle, which also sizes every job with the
// estimator, is reported as first_cycle_ms.
//
// cpu_s is this process's CPU time (clients and daemons, user + system)
// over the run; PostgreSQL's server processes are not in it.
//
//   build/bench/control_bench --benchmark_min_time=0.01
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <deque>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "catalog/catalog.h"
#include "control/daemon.h"
#include "control/pg.h"
#include "control/submission.h"
#include "control/test_postgres.h"
#include "control/token.h"
#include "sched/profile.h"

namespace meridian::control {
namespace {

constexpr int kSubmissions = 4000;
constexpr const char* kBody =
    R"({"name": "bench", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["T4"]},)"
    R"( "command": ["/bin/true"]})";

// A backend that runs nothing: its node list is given, Launch hands back a
// handle and nothing ever changes phase. For measuring the daemon alone.
// A backend whose jobs run until told otherwise. With `churn`, each Poll
// ends the job launched longest ago (exit 0), so every cycle frees capacity
// for the queue and places a waiting job.
class IdleBackend final : public Backend {
 public:
  explicit IdleBackend(std::vector<BackendNode> nodes, bool churn = false)
      : nodes_(std::move(nodes)), churn_(churn) {}
  std::string_view name() const override { return "idle"; }
  Result<std::string> Launch(const LaunchRequest& r) override {
    RunObservation o;
    o.job_id = r.job_id;
    o.attempt = r.attempt;
    o.handle = "idle:" + r.job_id;
    if (churn_) running_.push_back(o);
    return o.handle;
  }
  Status Stop(const std::string&, int64_t) override { return Status::Ok(); }
  std::vector<RunObservation> Poll() override {
    if (running_.empty()) return {};
    RunObservation o = std::move(running_.front());
    running_.pop_front();
    o.phase = RunPhase::kExited;
    o.exit_code = 0;
    return {o};
  }
  Result<RunObservation> Adopt(const std::string& id, int attempt, const std::string& h) override {
    RunObservation o;
    o.job_id = id;
    o.attempt = attempt;
    o.handle = h;
    o.phase = RunPhase::kRunning;
    return o;
  }
  std::vector<BackendNode> Nodes() override { return nodes_; }

 private:
  std::vector<BackendNode> nodes_;
  bool churn_ = false;
  std::deque<RunObservation> running_;
};

std::string TempDir() {
  std::string t = (std::filesystem::temp_directory_path() / "meridian-bench-XXXXXX").string();
  return mkdtemp(t.data());
}

DaemonOptions Options(const std::string& dir, bool full_sync, bool group) {
  DaemonOptions o;
  o.store.path = dir + "/bench.db";
  o.store.synchronous = full_sync ? "FULL" : "NORMAL";
  o.store.group_commit = group;
  o.api.port = 0;
  o.reconciler.catalog = catalog::Catalog::LoadEmbedded().value();
  o.reconciler.profile = sched::EmbeddedProfile("default").value();
  o.reconciler.state_dir = dir + "/state";
  return o;
}

struct Load {
  double seconds = 0;
  double cpu_seconds = 0;
  std::vector<double> latency_us;
  int errors = 0;
};

// User + system CPU seconds this process has used.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// The machine's CPU time from /proc/stat, in ticks: busy (every field but
// idle and iowait) and in all.
struct HostTicks {
  double busy = 0, all = 0;
};
HostTicks HostCpuTicks() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;  // "cpu": the sum over every core
  HostTicks t;
  double v = 0;
  for (int field = 0; field < 8 && stat >> v; ++field) {  // user ... steal
    t.all += v;
    if (field != 3 && field != 4) t.busy += v;  // 3: idle, 4: iowait
  }
  return t;
}
// host_busy: the share of the machine's CPU time busy between `before` and now
// (1: every core busy all the run).
void ReportHostBusy(benchmark::State& state, const HostTicks& before) {
  const HostTicks after = HostCpuTicks();
  const double all = after.all - before.all;
  state.counters["host_busy"] = all > 0 ? (after.busy - before.busy) / all : 0;
}

// `clients` threads send `total` requests in all, client c to ports[c mod
// ports.size()]; each request is timed.
Load Drive(const std::vector<int>& ports, int clients, int total,
           const std::function<httplib::Result(httplib::Client&)>& call) {
  std::atomic<int> next{0}, ready{0};
  std::atomic<bool> go{false};
  std::vector<std::vector<double>> lat(static_cast<size_t>(clients));
  std::atomic<int> errors{0};
  std::string first_error;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client http("127.0.0.1", ports[static_cast<size_t>(c) % ports.size()]);
      http.set_keep_alive(true);
      http.set_tcp_nodelay(true);
      // Connect before the clock starts (the listen backlog is small).
      for (int i = 0; i < 50 && !http.Get("/healthz"); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      ready++;
      while (!go) std::this_thread::yield();
      while (next++ < total) {
        const auto s = std::chrono::steady_clock::now();
        auto r = call(http);
        lat[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count());
        if (!r || r->status >= 300) {
          errors++;
          std::lock_guard<std::mutex> l(mu);
          if (first_error.empty()) first_error = r ? r->body : httplib::to_string(r.error());
        }
      }
    });
  }
  while (ready < clients) std::this_thread::yield();
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  for (auto& t : threads) t.join();
  Load l;
  l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  l.cpu_seconds = CpuSeconds() - cpu0;
  for (auto& v : lat) l.latency_us.insert(l.latency_us.end(), v.begin(), v.end());
  std::sort(l.latency_us.begin(), l.latency_us.end());
  l.errors = errors;
  if (!first_error.empty()) std::fprintf(stderr, "first error: %s\n", first_error.c_str());
  return l;
}

double Pct(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())))];
}

void Report(benchmark::State& state, const Load& l, int n) {
  state.SetIterationTime(l.seconds);
  state.counters["per_s"] = n / l.seconds;
  state.counters["p50_ms"] = Pct(l.latency_us, 0.50) / 1000;
  state.counters["p99_ms"] = Pct(l.latency_us, 0.99) / 1000;
  state.counters["max_ms"] = l.latency_us.empty() ? 0 : l.latency_us.back() / 1000;
  state.counters["errors"] = l.errors;
  state.counters["cpu_s"] = l.cpu_seconds;
}

// A token for tenant "bench" in `store`; the Authorization header carrying it.
httplib::Headers BenchToken(Store* store) {
  const std::string token = GenerateToken().value();
  NewToken nt;
  nt.hash = Sha256Hex(token);
  nt.tenant = "bench";
  (void)store->CreateToken(nt);
  return {{"Authorization", "Bearer " + token}};
}

void BM_Submit(benchmark::State& state) {
  const bool full = state.range(0) == 1, group = state.range(1) == 1;
  const int clients = static_cast<int>(state.range(2));
  for (auto _ : state) {
    const std::string dir = TempDir();
    auto d = Daemon::Start(Options(dir, full, group), std::make_unique<IdleBackend>(std::vector<BackendNode>{}));
    if (!d.ok()) {
      state.SkipWithError(d.status().message().c_str());
      return;
    }
    const httplib::Headers h = BenchToken((*d)->store());
    Load l = Drive({(*d)->port()}, clients, kSubmissions, [&](httplib::Client& c) {
      return c.Post("/v1/jobs", h, kBody, "application/json");
    });
    Report(state, l, kSubmissions);
    (*d)->Stop();
    d->reset();
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_Submit)
    ->ArgNames({"sync_full", "group", "clients"})
    ->Args({1, 1, 16})
    ->Args({0, 1, 16})
    ->Args({1, 0, 16})
    ->Args({0, 0, 16})
    ->Args({1, 1, 4})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The value a query on `uri` returns (its first row and column).
Result<std::string> PgValue(const std::string& uri, const std::string& sql) {
  auto c = PgConn::Open(uri);
  if (!c.ok()) return c.status();
  auto rows = (*c)->Query(sql);
  if (!rows.ok()) return rows.status();
  if (rows->size() != 1) return Status::Internal(sql + ": expected one row");
  return rows->Text(0, 0);
}

Result<int64_t> PgNumber(const std::string& uri, const std::string& sql) {
  auto v = PgValue(uri, sql);
  if (!v.ok()) return v.status();
  return std::stoll(*v);
}

// CPU seconds in /proc/PID/stat: fields 14 (user) to `last` (15: with system
// time; 17: with the reaped children's too).
// The fields of /proc/PID/stat from field 3, the state, on (after the
// command's name, which may hold spaces); nullopt once the process is gone.
std::optional<std::istringstream> StatFields(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  return std::istringstream(text.substr(close + 2));
}

Result<double> StatCpuSeconds(pid_t pid, int last) {
  auto fields = StatFields(pid);
  if (!fields) return Status::Internal("/proc/" + std::to_string(pid) + "/stat: unreadable");
  std::string f;
  double ticks = 0;
  for (int field = 3; field <= last && *fields >> f; ++field) {
    if (field >= 14) ticks += std::stod(f);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The pid of the PostgreSQL server's postmaster behind `uri`.
Result<pid_t> PostmasterPid(const std::string& uri) {
  auto data = PgValue(uri, "SELECT current_setting('data_directory')");
  if (!data.ok()) return data.status();
  std::ifstream pidfile(*data + "/postmaster.pid");
  int pid = 0;
  if (!(pidfile >> pid)) return Status::Internal(*data + "/postmaster.pid: no pid");
  return static_cast<pid_t>(pid);
}

// CPU seconds (user + system) of the PostgreSQL server behind `uri`: its
// postmaster's own and its server processes' that have exited (the
// postmaster's reaped children, /proc/PID/stat fields 14 to 17).
Result<double> PgServerCpuSeconds(const std::string& uri) {
  auto pid = PostmasterPid(uri);
  if (!pid.ok()) return pid.status();
  return StatCpuSeconds(*pid, 17);
}

// The CPU seconds of the server's every process so far: the postmaster's own
// and its exited children's (as above) and each living child's (a process
// whose /proc/PID/stat names the postmaster as its parent). The difference
// of two readings is what the server spent between them, in whichever of its
// processes (sessions, the WAL writer, autovacuum) and whether or not they
// have exited since.
Result<double> PgServerTreeCpuSeconds(pid_t postmaster) {
  auto sum = StatCpuSeconds(postmaster, 17);
  if (!sum.ok()) return sum;
  double total = *sum;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    auto fields = StatFields(pid);
    std::string state;
    long ppid = 0;
    if (!fields || !(*fields >> state >> ppid) || ppid != postmaster) continue;  // or gone
    auto cpu = StatCpuSeconds(pid, 15);
    if (cpu.ok()) total += *cpu;
  }
  return total;
}

// The machine's and the server's CPU at a run's start; ReportRun sets
// host_busy and pg_run_cpu_s (the server's CPU over the run) from it.
struct RunMark {
  pid_t postmaster = 0;
  Result<double> server_cpu_s = 0.0;
  HostTicks host;
};
// nullopt, the benchmark skipped with the reason, when the server's
// postmaster cannot be found.
std::optional<RunMark> MarkRun(benchmark::State& state, const std::string& uri) {
  auto postmaster = PostmasterPid(uri);
  if (!postmaster.ok()) {
    state.SkipWithError(postmaster.status().message().c_str());
    return std::nullopt;
  }
  return RunMark{*postmaster, PgServerTreeCpuSeconds(*postmaster), HostCpuTicks()};
}
void ReportRun(benchmark::State& state, const RunMark& start) {
  ReportHostBusy(state, start.host);
  auto after = PgServerTreeCpuSeconds(start.postmaster);
  state.counters["pg_run_cpu_s"] =
      start.server_cpu_s.ok() && after.ok() ? *after - *start.server_cpu_s : -1;
}

constexpr const char* kWalSyncs = "SELECT wal_sync FROM pg_stat_wal";

// The server's counters before a run, and its side of the run once the
// daemons have stopped (their server processes exited, so their WAL flushes
// and CPU are counted): pg_cpu_s, wal_syncs_per_submission, jobs_stored.
struct ServerMark {
  Result<int64_t> wal_syncs;
  Result<double> cpu_s;
};
ServerMark MarkServer(const std::string& uri) {
  return {PgNumber(uri, kWalSyncs), PgServerCpuSeconds(uri)};
}
bool ReportServer(benchmark::State& state, const std::string& uri, const ServerMark& before,
                  int submissions = kSubmissions) {
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const ServerMark after = MarkServer(uri);
  auto stored = PgNumber(uri, "SELECT count(*) FROM jobs");
  if (!before.wal_syncs.ok() || !after.wal_syncs.ok() || !stored.ok() || !before.cpu_s.ok() ||
      !after.cpu_s.ok()) {
    state.SkipWithError("cannot read pg_stat_wal, the server's CPU time or the job count");
    return false;
  }
  state.counters["pg_cpu_s"] = *after.cpu_s - *before.cpu_s;
  state.counters["wal_syncs_per_submission"] =
      static_cast<double>(*after.wal_syncs - *before.wal_syncs) / submissions;
  state.counters["jobs_stored"] = static_cast<double>(*stored);
  return true;
}

// A new database on the durable server; nullopt, the benchmark skipped with
// the reason, when the server cannot start.
std::optional<std::string> DurableDatabase(benchmark::State& state) {
  auto uri = testing::TestPostgres::NewDurableDatabase();
  if (uri.ok()) return *uri;
  state.SkipWithError(uri.status().message().c_str());
  return std::nullopt;
}

void BM_SubmitPostgres(benchmark::State& state) {
  const int replicas = static_cast<int>(state.range(0));
  const bool group = state.range(1) == 1;
  const int clients = static_cast<int>(state.range(2));
  const bool pipeline = state.range(3) == 1;
  for (auto _ : state) {
    auto uri = DurableDatabase(state);
    if (!uri) return;
    const std::string dir = TempDir();
    std::vector<std::unique_ptr<Daemon>> daemons;
    std::vector<int> ports;
    for (int r = 0; r < replicas; ++r) {
      DaemonOptions o = Options(dir, true, group);
      o.store.path = *uri;
      o.store.pg_pipeline = pipeline;
      auto d = Daemon::Start(std::move(o), std::make_unique<IdleBackend>(std::vector<BackendNode>{}));
      if (!d.ok()) {
        state.SkipWithError(d.status().message().c_str());
        return;
      }
      ports.push_back((*d)->port());
      daemons.push_back(std::move(d).value());
    }
    const httplib::Headers h = BenchToken(daemons.front()->store());
    const ServerMark before = MarkServer(*uri);
    Load l = Drive(ports, clients, kSubmissions, [&](httplib::Client& c) {
      return c.Post("/v1/jobs", h, kBody, "application/json");
    });
    Report(state, l, kSubmissions);
    for (auto& d : daemons) d->Stop();
    daemons.clear();  // their server processes exit, and report their WAL flushes
    if (!ReportServer(state, *uri, before)) return;
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_SubmitPostgres)
    ->ArgNames({"replicas", "group", "clients", "pipeline"})
    ->Args({3, 1, 16, 1})
    ->Args({3, 1, 16, 0})
    ->Args({1, 1, 16, 1})
    ->Args({1, 1, 16, 0})
    ->Args({3, 0, 16, 1})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The `meridian` binary the benchmarks start: this build's, or the one
// MERIDIAN_BENCH_BINARY names (another build's daemon, driven by this
// build's clients, to compare two builds in one session).
std::string MeridianBinary() {
  const char* other = std::getenv("MERIDIAN_BENCH_BINARY");
  return other != nullptr && *other != '\0' ? other : MERIDIAN_BINARY;
}

// `argv` run to its end; its standard output, and its exit status in `rc`.
std::string Run(const std::vector<std::string>& argv, int* rc, rusage* usage = nullptr) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage ignored{};
  wait4(pid, &status, 0, usage != nullptr ? usage : &ignored);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// One `meridian serve` process: started on a port the kernel picks (read
// from its "listening on" line) and ready once /healthz answers; stopped with
// SIGTERM when it goes.
class ServeProcess {
 public:
  static Result<std::unique_ptr<ServeProcess>> Start(const std::string& dir, const std::string& db,
                                                    const std::string& state_dir) {
    std::ofstream(dir + "/serve.yaml")
        << "region: gcp:us-central1\n"
        << "node: {name: bench, gpu_model: T4, gpus: 8, vcpus: 8, ram_gib: 32}\n";
    auto p = std::unique_ptr<ServeProcess>(new ServeProcess(dir));
    const std::string binary = MeridianBinary();
    p->pid_ = fork();
    if (p->pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // none outlives the benchmark
      FILE* f = std::fopen((dir + "/serve.log").c_str(), "a");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      const std::string cfg = dir + "/serve.yaml";
      execl(binary.c_str(), binary.c_str(), "serve", "--listen", "127.0.0.1:0", "--db",
            db.c_str(), "--config", cfg.c_str(), "--state-dir", state_dir.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    const std::string mark = "listening on http://127.0.0.1:";
    for (int i = 0; i < 800; ++i) {
      if (p->port_ == 0) {
        std::ifstream in(dir + "/serve.log");
        const std::string log((std::istreambuf_iterator<char>(in)), {});
        if (size_t at = log.find(mark); at != std::string::npos) {
          p->port_ = std::atoi(log.c_str() + at + mark.size());
        }
      }
      if (p->port_ != 0) {
        httplib::Client c("127.0.0.1", p->port_);
        auto r = c.Get("/healthz");
        if (r && r->status == 200) return p;
      }
      int status = 0;
      if (waitpid(p->pid_, &status, WNOHANG) == p->pid_) {
        p->pid_ = -1;
        return Status::Internal("meridian serve exited early; see " + dir + "/serve.log");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return Status::Internal("meridian serve did not answer /healthz; see " + dir + "/serve.log");
  }
  ~ServeProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  explicit ServeProcess(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// The node's 8 T4s are held by one job of one GPU (`kBlocker`, running for
// the whole run), so each submission of all 8 (`kGangBody`) waits behind it.
constexpr const char* kBlocker =
    R"({"name": "blocker", "kind": "data-science",)"
    R"( "resources": {"gpus": 1, "gpu_models": ["T4"]}, "command": ["/bin/sleep", "600"]})";
constexpr const char* kGangBody =
    R"({"name": "bench", "kind": "data-science",)"
    R"( "resources": {"gpus": 8, "gpu_models": ["T4"]}, "command": ["/bin/true"]})";

// The state of job `id` as replica `port` answers it ("" when it does not).
std::string JobState(int port, const httplib::Headers& h, const std::string& id) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get(("/v1/jobs/" + id).c_str(), h);
  if (!r || r->status != 200) return "";
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  return j.is_object() ? j.value("state", "") : "";
}

// Waits up to `seconds` for job `id` to reach `state`.
bool AwaitState(int port, const httplib::Headers& h, const std::string& id,
                const std::string& state, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (JobState(port, h, id) == state) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The reconcile cycles replica `port` has run (its /metrics'
// meridian_reconcile_cycle_seconds_count; a follower runs none), or -1.
double ReconcileCycles(int port) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/metrics");
  if (!r || r->status != 200) return -1;
  constexpr std::string_view kCount = "\nmeridian_reconcile_cycle_seconds_count ";
  const size_t at = r->body.find(kCount);
  if (at == std::string::npos) return -1;
  return std::strtod(r->body.c_str() + at + kCount.size(), nullptr);
}

// Process `pid`'s resident memory in MB (/proc/PID/stat field 24, rss in
// pages), or 0.
double ResidentMb(pid_t pid) {
  auto fields = StatFields(pid);
  std::string f;
  for (int field = 3; fields && field <= 24 && *fields >> f; ++field) {
    if (field == 24) return std::stod(f) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
  }
  return 0;
}

// Whether replica `port` answers /healthz as the leader.
bool Leads(int port) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/healthz");
  if (!r || r->status != 200) return false;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  return j.is_object() && j.value("role", "") == "leader";
}

void BM_SubmitServe(benchmark::State& state) {
  const int replicas = static_cast<int>(state.range(0));
  const int clients = static_cast<int>(state.range(1));
  const int submissions = static_cast<int>(state.range(2));
  for (auto _ : state) {
    auto uri = DurableDatabase(state);
    if (!uri) return;
    const std::string dir = TempDir();
    // As root the daemon runs tenants' jobs as their own uids, which must be
    // able to pass through the state directory's parents.
    chmod(dir.c_str(), 0711);
    int rc = 0;
    std::string token =
        Run({MeridianBinary(), "token", "create", "--db", *uri, "--tenant", "bench"}, &rc);
    while (!token.empty() && token.back() == '\n') token.pop_back();
    if (rc != 0 || token.empty()) {
      state.SkipWithError("meridian token create failed");
      return;
    }
    std::vector<std::unique_ptr<ServeProcess>> serves;
    std::vector<int> ports;
    for (int r = 0; r < replicas; ++r) {
      const std::string rdir = dir + "/replica" + std::to_string(r);
      std::filesystem::create_directories(rdir);
      auto p = ServeProcess::Start(rdir, *uri, dir + "/state");
      if (!p.ok()) {
        state.SkipWithError(p.status().message().c_str());  // the folder is kept for its log
        return;
      }
      ports.push_back((*p)->port());
      serves.push_back(std::move(p).value());
    }
    const httplib::Headers h = {{"Authorization", "Bearer " + token}};
    std::string blocker;
    {
      httplib::Client c("127.0.0.1", ports.front());
      auto r = c.Post("/v1/jobs", h, kBlocker, "application/json");
      auto j = r ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
      if (j.is_object()) blocker = j.value("id", "");
    }
    if (blocker.empty() || !AwaitState(ports.front(), h, blocker, "running", 30)) {
      state.SkipWithError("the job holding the node's GPU did not start");
      return;
    }
    // Every replica's CPU, and the leader's alone.
    size_t leader = serves.size();
    for (size_t r = 0; r < ports.size(); ++r) {
      if (Leads(ports[r])) leader = r;
    }
    auto serve_cpu = [&](bool leader_only) {
      double sum = 0;
      for (size_t r = 0; r < serves.size(); ++r) {
        if (leader_only && r != leader) continue;
        auto cpu = StatCpuSeconds(serves[r]->pid(), 15);  // its threads' user and system time
        if (cpu.ok()) sum += *cpu;
      }
      return sum;
    };
    auto cycles = [&]() {
      double sum = 0;
      for (int port : ports) sum += std::max(0.0, ReconcileCycles(port));
      return sum;
    };
    const ServerMark before = MarkServer(*uri);
    const double cycles_before = cycles();
    const double serve_before = serve_cpu(false), leader_before = serve_cpu(true);
    const double leader_mb_before = leader < serves.size() ? ResidentMb(serves[leader]->pid()) : 0;
    const auto run = MarkRun(state, *uri);
    if (!run) return;
    Load l = Drive(ports, clients, submissions, [&](httplib::Client& c) {
      return c.Post("/v1/jobs", h, kGangBody, "application/json");
    });
    ReportRun(state, *run);
    const double serve_after = serve_cpu(false), leader_after = serve_cpu(true);
    Report(state, l, submissions);
    state.counters["serve_cpu_s"] = serve_after - serve_before;
    state.counters["leader_cpu_s"] = leader < serves.size() ? leader_after - leader_before : -1;
    state.counters["leader_kb_per_job"] =
        leader < serves.size()
            ? (ResidentMb(serves[leader]->pid()) - leader_mb_before) * 1024 / submissions
            : -1;
    state.counters["leader_cycles"] = cycles() - cycles_before;
    auto queued = PgNumber(*uri, "SELECT count(*) FROM jobs WHERE state = 'queued'");
    // Its process ends before the daemons do (a stopped daemon leaves its jobs
    // running, for the next one to adopt).
    {
      httplib::Client c("127.0.0.1", ports.front());
      (void)c.Post(("/v1/jobs/" + blocker + "/cancel").c_str(), h, "", "application/json");
    }
    (void)AwaitState(ports.front(), h, blocker, "cancelled", 30);
    serves.clear();  // SIGTERM; their server processes exit and report their WAL flushes
    if (!ReportServer(state, *uri, before, submissions)) return;
    // All of them while the node was held (once it is freed, one may start).
    state.counters["jobs_queued"] = queued.ok() ? static_cast<double>(*queued) : -1;
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_SubmitServe)
    ->ArgNames({"replicas", "clients", "submissions"})
    ->Args({3, 16, kSubmissions})
    ->Args({1, 16, kSubmissions})
    ->Args({3, 16, 5 * kSubmissions})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// BM_PgbenchSubmit/<clients>/<submissions>/<per_transaction>: PostgreSQL
// alone, the peer under the rows above. Debian's pgbench sends as many
// submissions straight to the server, each `meridian_submit` (the statement a
// replica's store sends), <per_transaction> to a transaction, on one of
// <clients> connections (prepared, as the store's are), with the spec text
// the daemon stores for the submissions of BM_SubmitServe: no HTTP, JSON or
// scheduler. One to a transaction on 16 connections is the clients' load
// sent straight to the server; five to a transaction on 3 connections is
// what three replicas' group commit would send if each gathered five
// submissions per commit. per_s, p50/p99 (of transactions) from pgbench's
// per-transaction log (-l) over the span from the first start to the last
// end (connections made before it); cpu_s is pgbench's own CPU, pg_cpu_s
// the server's, pg_run_cpu_s the server's over the run alone.
void BM_PgbenchSubmit(benchmark::State& state) {
  const int clients = static_cast<int>(state.range(0));
  const int submissions = static_cast<int>(state.range(1));
  const int per_transaction = static_cast<int>(state.range(2));
  const int per_client = submissions / (clients * per_transaction);  // pgbench's -t
  const int transactions = per_client * clients;
  const int sent = transactions * per_transaction;  // 3,990 of 4,000 on 3 connections
  for (auto _ : state) {
    auto uri = DurableDatabase(state);
    if (!uri) return;
    const std::string dir = TempDir();
    int rc = 0;
    // `token create` migrates the new database to meridian's schema.
    (void)Run({MeridianBinary(), "token", "create", "--db", *uri, "--tenant", "bench"}, &rc);
    auto sub = ParseSubmission(kGangBody, BodyFormat::kJson, "bench");
    if (rc != 0 || !sub.ok()) {
      state.SkipWithError("meridian token create failed, or the spec does not parse");
      return;
    }
    std::string spec = sub->spec_json.dump();
    for (size_t at = 0; (at = spec.find('\'', at)) != std::string::npos; at += 2) spec.insert(at, "'");
    {
      std::ofstream script(dir + "/submit.sql");
      if (per_transaction > 1) script << "BEGIN;\n";
      for (int i = 0; i < per_transaction; ++i) {
        script << "SELECT result FROM meridian_submit('bench', '', '', '" << sub->spec.name
               << "', 'data-science', 'normal', " << std::time(nullptr) << ", '" << spec
               << "', 86400);\n";
      }
      if (per_transaction > 1) script << "COMMIT;\n";
    }
    const ServerMark before = MarkServer(*uri);
    const auto run = MarkRun(state, *uri);
    if (!run) return;
    rusage usage{};
    const std::string out =
        Run({testing::TestPostgres::BinDir() + "/pgbench", "-n", "-M", "prepared", "-c",
             std::to_string(clients), "-j", "2", "-t", std::to_string(per_client),
             "-f", dir + "/submit.sql", "-l", "--log-prefix=" + dir + "/log", *uri},
            &rc, &usage);
    ReportRun(state, *run);
    if (rc != 0) {
      state.SkipWithError(("pgbench failed: " + out).c_str());
      return;
    }
    // Each line: client, transaction, latency us, script, end s, end us.
    Load l;
    double first = 1e300, last = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().filename().string().rfind("log.", 0) != 0) continue;
      std::ifstream in(entry.path());
      long client, tx, script, end_s, end_us;
      double latency;
      while (in >> client >> tx >> latency >> script >> end_s >> end_us) {
        const double end = static_cast<double>(end_s) + static_cast<double>(end_us) / 1e6;
        first = std::min(first, end - latency / 1e6);
        last = std::max(last, end);
        l.latency_us.push_back(latency);
      }
    }
    if (l.latency_us.size() != static_cast<size_t>(transactions)) {
      state.SkipWithError("pgbench's log does not hold one line per transaction");
      return;
    }
    std::sort(l.latency_us.begin(), l.latency_us.end());
    l.seconds = last - first;
    auto secs = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    l.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
    Report(state, l, sent);
    if (!ReportServer(state, *uri, before, sent)) return;
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_PgbenchSubmit)
    ->ArgNames({"clients", "submissions", "per_transaction"})
    ->Args({16, kSubmissions, 1})
    ->Args({16, 5 * kSubmissions, 1})
    ->Args({3, kSubmissions, 5})
    ->Args({3, 5 * kSubmissions, 5})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_PgCommit(benchmark::State& state) {
  constexpr int kCommits = 1000;
  for (auto _ : state) {
    auto uri = DurableDatabase(state);
    if (!uri) return;
    auto c = PgConn::Open(*uri);
    if (!c.ok() || !(*c)->Exec("CREATE TABLE t (n bigint)").ok()) {
      state.SkipWithError("cannot create the table");
      return;
    }
    Load l;
    const double cpu0 = CpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCommits; ++i) {
      const auto s = std::chrono::steady_clock::now();
      if (!(*c)->Query("INSERT INTO t VALUES ($1)", {Param(i)}).ok()) l.errors++;
      l.latency_us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s).count());
    }
    l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    l.cpu_seconds = CpuSeconds() - cpu0;
    std::sort(l.latency_us.begin(), l.latency_us.end());
    Report(state, l, kCommits);
  }
}
BENCHMARK(BM_PgCommit)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_Healthz(benchmark::State& state) {
  const int clients = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const std::string dir = TempDir();
    auto d = Daemon::Start(Options(dir, true, true), std::make_unique<IdleBackend>(std::vector<BackendNode>{}));
    if (!d.ok()) {
      state.SkipWithError(d.status().message().c_str());
      return;
    }
    Load l = Drive({(*d)->port()}, clients, kSubmissions, [](httplib::Client& c) { return c.Get("/healthz"); });
    Report(state, l, kSubmissions);
    (*d)->Stop();
    d->reset();
    std::filesystem::remove_all(dir);
  }
}
BENCHMARK(BM_Healthz)->ArgNames({"clients"})->Arg(16)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

// Full decisions made so far, of every kind.
uint64_t Decisions(const Metrics& m) {
  uint64_t n = 0;
  for (const auto& d : m.decisions) n += d;
  return n;
}

void BM_ReconcileCycle(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  const bool kept = state.range(1) != 0;
  const bool churn = state.range(2) != 0;
  const std::string dir = TempDir();
  DaemonOptions o = Options(dir, false, true);
  o.reconciler.keep_waits = kept;
  auto store = OpenSqliteStore(o.store);
  if (!store.ok()) {
    state.SkipWithError(store.status().message().c_str());
    return;
  }
  {
    std::vector<std::thread> writers;
    std::atomic<int> next{0};
    for (int t = 0; t < 16; ++t) {
      writers.emplace_back([&] {
        while (next++ < jobs) {
          NewJob j{"t" + std::to_string(next % 8), "bench", "data-science", "normal",
                   R"({"name": "bench", "kind": "data-science", "tenant": "t)" + std::to_string(next % 8) +
                       R"(", "resources": {"gpus": 1, "gpu_models": ["T4"]}, "command": ["/bin/true"]})",
                   "", "", 1796000000};
          (void)(*store)->Submit(j);
        }
      });
    }
    for (auto& w : writers) w.join();
  }
  BackendNode node{"bench-node", "T4", 8, 64, 256, {}, true, ""};
  IdleBackend backend({node}, churn);
  Metrics metrics;
  std::filesystem::create_directories(o.reconciler.state_dir);
  Reconciler r(store->get(), &backend, &metrics, o.reconciler);
  (void)r.Recover();
  const auto t0 = std::chrono::steady_clock::now();
  Status first = r.RunCycle();
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!first.ok()) {
    state.SkipWithError(first.message().c_str());
    return;
  }
  const uint64_t decisions_before = Decisions(metrics);
  int64_t cycles = 0;
  for (auto _ : state) {
    Status st = r.RunCycle();
    if (!st.ok()) state.SkipWithError(st.message().c_str());
    ++cycles;
  }
  state.counters["first_cycle_ms"] = first_ms;
  state.counters["queued"] = jobs;
  state.counters["decisions_per_cycle"] =
      static_cast<double>(Decisions(metrics) - decisions_before) / static_cast<double>(cycles);
  store->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReconcileCycle)
    ->ArgNames({"queued", "kept", "churn"})
    ->ArgsProduct({{10000}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meridian::control

BENCHMARK_MAIN();
