// The daemon's scheduling step keeps its queue in the scheduler across
// cycles (Scheduler::Enqueue, RunQueue) and decides in full only what a
// change could move. These tests hold it to the reference, which decides
// every waiting job in full at every cycle (ReconcilerOptions::keep_waits =
// false): on the same submissions, clock and backend, every job's history
// must be the same, event for event.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "control/reconciler.h"
#include "control/store.h"
#include "sched/profile.h"

namespace meridian::control {
namespace {

// A backend whose jobs run for the RUN_S seconds their env gives, on the
// test's clock. Stop ends the attempt at the next poll, killed by SIGTERM
// (a preempted job checkpoints and stops at once).
class ScriptedBackend final : public Backend {
 public:
  ScriptedBackend(std::vector<BackendNode> nodes, const UnixSeconds* clock)
      : nodes_(std::move(nodes)), clock_(clock) {}
  std::string_view name() const override { return "scripted"; }
  Result<std::string> Launch(const LaunchRequest& r) override {
    ++launches_[r.job_id];
    if (fail_first_launch_.erase(r.job_id) != 0) {
      return Status::Internal("sbatch: Socket timed out on send/recv operation");  // transient
    }
    Run run;
    run.o.job_id = r.job_id;
    run.o.attempt = r.attempt;
    run.o.handle = "scripted:" + r.job_id + ":" + std::to_string(r.attempt);
    run.o.started = *clock_;
    run.ends = *clock_ + std::stoll(r.env.at("RUN_S"));
    runs_[run.o.handle] = run;
    return run.o.handle;
  }
  Status Stop(const std::string& handle, int64_t) override {
    auto it = runs_.find(handle);
    if (it == runs_.end()) return Status::NotFound("no run " + handle);
    it->second.stopped = true;
    return Status::Ok();
  }
  std::vector<RunObservation> Poll() override {
    std::vector<RunObservation> out;
    for (auto it = runs_.begin(); it != runs_.end();) {
      Run& r = it->second;
      if (!r.stopped && r.ends > *clock_) {
        ++it;
        continue;
      }
      r.o.ended = *clock_;
      if (r.stopped) {
        r.o.phase = RunPhase::kKilled;
        r.o.signal = 15;
      } else {
        r.o.phase = RunPhase::kExited;
        r.o.exit_code = 0;
      }
      out.push_back(r.o);
      it = runs_.erase(it);
    }
    return out;
  }
  Result<RunObservation> Adopt(const std::string& id, int, const std::string&) override {
    return Status::NotFound("nothing to adopt: " + id);
  }
  std::vector<BackendNode> Nodes() override { return nodes_; }

  // The first Launch of job `id` fails with a transient error.
  void FailFirstLaunch(const std::string& id) { fail_first_launch_.insert(id); }
  int Launches(const std::string& id) const {
    auto it = launches_.find(id);
    return it == launches_.end() ? 0 : it->second;
  }

 private:
  struct Run {
    RunObservation o;
    UnixSeconds ends = 0;
    bool stopped = false;
  };
  std::vector<BackendNode> nodes_;
  const UnixSeconds* clock_;
  std::map<std::string, Run> runs_;  // by handle: polls end runs in a fixed order
  std::set<std::string> fail_first_launch_;
  std::map<std::string, int> launches_;  // by job id
};

struct Submission {
  int cycle = 0;  // submitted before this cycle
  NewJob job;
};

// 150 jobs in waves over the first 60 cycles, on 2 x 8 T4 and 4 x A100:
// 1, 2, 4 and 8 GPUs of either model or both, four tenants, three tiers
// (low ones preemptible, so high ones preempt them), 20 to 300 s each.
std::vector<Submission> Workload() {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const char* models[] = {R"(["T4"])", R"(["A100-80GB"])", R"(["T4", "A100-80GB"])"};
  const char* tiers[] = {"low", "normal", "high"};
  const int gpus[] = {1, 1, 2, 4, 8};
  std::vector<Submission> out;
  for (int i = 0; i < 150; ++i) {
    Submission s;
    s.cycle = i < 60 ? 0 : (i - 60) / 3 * 2;
    const std::string tenant = "t" + std::to_string(pick(4));
    const char* tier = tiers[pick(3)];
    const int model = pick(3);
    int g = gpus[pick(5)];
    if (model == 1 && g == 8) g = 4;  // the A100 node has 4
    const bool low = std::string(tier) == "low";
    const int run_s = 20 + 10 * pick(29);
    s.job.tenant = tenant;
    s.job.name = "j" + std::to_string(i);
    s.job.kind = "data-science";
    s.job.priority = tier;
    s.job.submitted_at = 1'800'000'000 + s.cycle * 10;
    s.job.spec_json = R"({"name": ")" + s.job.name + R"(", "kind": "data-science", "tenant": ")" +
                      tenant + R"(", "priority": ")" + tier + R"(", "preemptible": )" +
                      (low ? "true" : "false") + R"(, "resources": {"gpus": )" + std::to_string(g) +
                      R"(, "gpu_models": )" + models[model] +
                      R"(}, "command": ["/bin/true"], "env": {"RUN_S": ")" + std::to_string(run_s) +
                      R"("}})";
    out.push_back(std::move(s));
  }
  return out;
}

struct Replayed {
  std::map<std::string, std::vector<std::string>> history;  // job id -> its events
  uint64_t decisions = 0, kept = 0, preemptions = 0;
  size_t most_waiting = 0;
  int cycles = 0;
};

// A SQLite store in a directory of its own (removed with the rig), a
// scripted backend offering `nodes` on a clock the test moves, and the
// options of a reconciler over them: the embedded catalog and `profile`.
struct Rig {
  Rig(const std::string& tag, std::vector<BackendNode> nodes, const std::string& profile,
      UnixSeconds start)
      : dir((std::filesystem::temp_directory_path() /
             ("meridian-rq-" + std::to_string(getpid()) + "-" + tag))
                .string()),
        now(start),
        backend(std::move(nodes), &now) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir + "/state");
    SqliteOptions so;
    so.path = dir + "/m.db";
    so.synchronous = "NORMAL";
    auto opened = OpenSqliteStore(so);
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    if (opened.ok()) store = std::move(opened).value();
    options.catalog = catalog::Catalog::LoadEmbedded().value();
    options.profile = sched::EmbeddedProfile(profile).value();
    options.state_dir = dir + "/state";
    options.clock = [this] { return now; };
  }
  ~Rig() {
    store.reset();
    std::filesystem::remove_all(dir);
  }
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  std::string dir;
  std::unique_ptr<Store> store;  // null when it did not open (a failure is recorded)
  UnixSeconds now;
  ScriptedBackend backend;
  Metrics metrics;
  ReconcilerOptions options;
};

Replayed Replay(bool keep_waits, const std::string& profile) {
  Replayed out;
  Rig rig(profile + (keep_waits ? "-kept" : "-all"),
          {{"t4-a", "T4", 8, 64, 256, {}, true, ""},
           {"t4-b", "T4", 8, 64, 256, {}, true, ""},
           {"a100", "A100-80GB", 4, 64, 512, {}, true, ""}},
          profile, 1'800'000'000);
  if (rig.store == nullptr) return out;
  Store* store = rig.store.get();
  UnixSeconds& now = rig.now;
  rig.options.keep_waits = keep_waits;
  Reconciler r(store, &rig.backend, &rig.metrics, rig.options);
  EXPECT_TRUE(r.Recover().ok());
  const std::vector<Submission> work = Workload();
  size_t next = 0;
  for (; out.cycles < 1000; ++out.cycles) {
    while (next < work.size() && work[next].cycle <= out.cycles) {
      EXPECT_TRUE(store->Submit(work[next++].job).ok());
    }
    Status st = r.RunCycle();
    EXPECT_TRUE(st.ok()) << st.message();
    auto counts = store->CountByState();
    int64_t open = 0;
    for (const auto& [state, n] : *counts) {
      open += IsTerminal(state) ? 0 : n;
      if (state == JobState::kQueued) out.most_waiting = std::max(out.most_waiting, static_cast<size_t>(n));
    }
    if (next == work.size() && open == 0) break;
    now += 10;
  }
  for (size_t i = 1; i <= work.size(); ++i) {
    const std::string id = JobIdFor(static_cast<int64_t>(i));
    auto events = store->Events(id);
    EXPECT_TRUE(events.ok());
    for (const EventRow& e : *events) {
      out.history[id].push_back(std::to_string(e.at) + " " + e.type + " " + e.from + ">" + e.to +
                                " " + e.message);
    }
  }
  for (const auto& d : rig.metrics.decisions) out.decisions += d;
  out.kept = rig.metrics.kept_verdicts;
  out.preemptions = rig.metrics.preemptions;
  return out;
}

class ReconcileQueue : public testing::TestWithParam<std::string> {};

TEST_P(ReconcileQueue, KeptQueueGivesEveryJobTheHistoryOfDecidingEveryJobEveryCycle) {
  const Replayed all = Replay(false, GetParam());
  const Replayed kept = Replay(true, GetParam());
  // The workload is the hard case: a queue builds, high jobs preempt low ones.
  EXPECT_GT(all.most_waiting, 40u);
  std::cout << GetParam() << ": " << all.cycles << " cycles, at most " << all.most_waiting
            << " queued, " << all.preemptions << " preemptions, " << all.decisions << " / "
            << kept.decisions << " full decisions\n";
  if (GetParam() == "default") {
    EXPECT_GT(all.preemptions, 0u);
  }
  // Everything ran to an end within the replay.
  EXPECT_LT(all.cycles, 1000);
  EXPECT_EQ(kept.cycles, all.cycles);
  ASSERT_EQ(kept.history.size(), all.history.size());
  for (const auto& [id, events] : all.history) {
    EXPECT_EQ(kept.history.at(id), events) << id;
  }
  EXPECT_EQ(kept.preemptions, all.preemptions);
  // And it got there deciding less: the reference never keeps a verdict.
  EXPECT_EQ(all.kept, 0u);
  EXPECT_GT(kept.kept, 0u);
  EXPECT_LT(kept.decisions, all.decisions);
}

// A cycle walks only the jobs that can need it (Reconciler::watch_), not
// every waiting one; a job that waited quietly through several cycles must
// still be acted on when something moves it. One T4; job 1 runs 50 s from
// the first cycle (t = 0), jobs 2 and 3 wait behind it, quiet, for four
// cycles. Then job 3's cancel is written through the store, as another
// replica writes it: it ends at the next cycle (t = 40) without running.
// Job 1 ends at t = 50 and job 2 is placed; its first launch fails with a
// transient error, and the retry, due 1 s later (the default backoff), goes
// at the next cycle (t = 60): job 2 runs 20 s and succeeds (t = 80).
TEST(ReconcileWalks, AJobThatWaitedQuietlyIsStillCancelledAndItsLaunchRetried) {
  const UnixSeconds t0 = 1'800'000'000;
  Rig rig("walks", {{"t4", "T4", 1, 8, 32, {}, true, ""}}, "default", t0);
  ASSERT_NE(rig.store, nullptr);
  Store* store = rig.store.get();
  UnixSeconds& now = rig.now;
  ScriptedBackend& backend = rig.backend;
  rig.options.steady_ms = [&] { return now * 1000; };
  Reconciler r(store, &backend, &rig.metrics, rig.options);
  ASSERT_TRUE(r.Recover().ok());
  for (const auto& [name, run_s] : {std::pair{"one", 50}, {"two", 20}, {"three", 20}}) {
    NewJob j;
    j.tenant = "t";
    j.name = name;
    j.kind = "data-science";
    j.priority = "normal";
    j.submitted_at = t0;
    j.spec_json = std::string(R"({"name": ")") + name +
                  R"(", "kind": "data-science", "tenant": "t", "priority": "normal",)"
                  R"( "resources": {"gpus": 1, "gpu_models": ["T4"]}, "command": ["/bin/true"],)"
                  R"( "env": {"RUN_S": ")" + std::to_string(run_s) + R"("}})";
    ASSERT_TRUE(store->Submit(j).ok());
  }
  const std::string one = JobIdFor(1), two = JobIdFor(2), three = JobIdFor(3);
  backend.FailFirstLaunch(two);
  auto state = [&](const std::string& id) { return store->GetJob(id)->state; };
  std::map<std::string, UnixSeconds> ended;
  for (int cycle = 0; cycle <= 12; ++cycle, now += 10) {
    if (now == t0 + 40) {
      JobUpdate cancel;
      cancel.job_id = three;
      cancel.cancel_requested = true;
      ASSERT_TRUE(store->Apply({cancel}).ok());
    }
    ASSERT_TRUE(r.RunCycle().ok());
    for (const std::string& id : {one, two, three}) {
      if (IsTerminal(state(id))) ended.emplace(id, now);
    }
    if (now < t0 + 40) {
      EXPECT_EQ(state(two), JobState::kQueued) << "t = " << now - t0;
      EXPECT_EQ(state(three), JobState::kQueued) << "t = " << now - t0;
    }
  }
  EXPECT_EQ(state(one), JobState::kSucceeded);
  EXPECT_EQ(ended[one] - t0, 50);
  EXPECT_EQ(state(three), JobState::kCancelled);
  EXPECT_EQ(ended[three] - t0, 40) << "the cycle after its cancel was written";
  EXPECT_EQ(backend.Launches(three), 0);
  EXPECT_EQ(state(two), JobState::kSucceeded);
  EXPECT_EQ(backend.Launches(two), 2) << "the failed try and its retry";
  EXPECT_EQ(ended[two] - t0, 80) << "launched again at t = 60, ran 20 s";
  EXPECT_EQ(rig.metrics.launch_retries, 1u);
}

INSTANTIATE_TEST_SUITE_P(Profiles, ReconcileQueue,
                         testing::Values("default", "fifo-backfill", "fifo-strict", "kueue-like"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace meridian::control
