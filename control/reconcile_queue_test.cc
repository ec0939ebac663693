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

 private:
  struct Run {
    RunObservation o;
    UnixSeconds ends = 0;
    bool stopped = false;
  };
  std::vector<BackendNode> nodes_;
  const UnixSeconds* clock_;
  std::map<std::string, Run> runs_;  // by handle: polls end runs in a fixed order
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

Replayed Replay(bool keep_waits, const std::string& profile) {
  Replayed out;
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("meridian-rq-" + std::to_string(getpid()) + "-" +
                                                 profile + (keep_waits ? "-kept" : "-all")))
          .string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/state");
  SqliteOptions so;
  so.path = dir + "/m.db";
  so.synchronous = "NORMAL";
  auto store = OpenSqliteStore(so);
  EXPECT_TRUE(store.ok()) << store.status().message();
  if (!store.ok()) return out;
  UnixSeconds now = 1'800'000'000;
  ScriptedBackend backend({{"t4-a", "T4", 8, 64, 256, {}, true, ""},
                           {"t4-b", "T4", 8, 64, 256, {}, true, ""},
                           {"a100", "A100-80GB", 4, 64, 512, {}, true, ""}},
                          &now);
  Metrics metrics;
  ReconcilerOptions o;
  o.catalog = catalog::Catalog::LoadEmbedded().value();
  o.profile = sched::EmbeddedProfile(profile).value();
  o.state_dir = dir + "/state";
  o.clock = [&] { return now; };
  o.keep_waits = keep_waits;
  Reconciler r(store->get(), &backend, &metrics, o);
  EXPECT_TRUE(r.Recover().ok());
  const std::vector<Submission> work = Workload();
  size_t next = 0;
  for (; out.cycles < 1000; ++out.cycles) {
    while (next < work.size() && work[next].cycle <= out.cycles) {
      EXPECT_TRUE((*store)->Submit(work[next++].job).ok());
    }
    Status st = r.RunCycle();
    EXPECT_TRUE(st.ok()) << st.message();
    auto counts = (*store)->CountByState();
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
    auto events = (*store)->Events(id);
    EXPECT_TRUE(events.ok());
    for (const EventRow& e : *events) {
      out.history[id].push_back(std::to_string(e.at) + " " + e.type + " " + e.from + ">" + e.to +
                                " " + e.message);
    }
  }
  for (const auto& d : metrics.decisions) out.decisions += d;
  out.kept = metrics.kept_verdicts;
  out.preemptions = metrics.preemptions;
  store->reset();
  std::filesystem::remove_all(dir);
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
