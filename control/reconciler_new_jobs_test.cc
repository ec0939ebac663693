// How the leader finds new jobs (Reconciler::LoadNewJobs, ReadQueued) on a
// real PostgreSQL and the real local backend: by their state, in one list
// read from the first new job on, and one by one for those that read missed.
// A job whose transaction commits after later-numbered ones were seen is
// found, and so is one past the list's limit.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "backends/local/local.h"
#include "control/pg.h"
#include "control/reconciler.h"
#include "control/store.h"
#include "control/store_test_kinds.h"
#include "control/test_postgres.h"
#include "sched/profile.h"

namespace meridian::control {
namespace {

namespace fs = std::filesystem;

NewJob Job(const std::string& name, const std::string& resources, const std::string& key = "",
           const std::string& tenant = "t", const std::string& command = R"(["/bin/true"])") {
  NewJob j;
  j.tenant = tenant;
  j.name = name;
  j.kind = "data-science";
  j.priority = "normal";
  j.submitted_at = 1'800'000'000;
  j.idempotency_key = key;
  j.body_hash = key.empty() ? "" : "hash-" + name;
  j.spec_json = R"({"name": ")" + name + R"(", "kind": "data-science", "tenant": ")" + tenant + R"(",
                    "priority": "normal", "resources": )" + resources + R"(,
                    "command": )" + command + "}";
  return j;
}
// A job for this host's one T4: the first runs (60 s, until cancelled), the
// rest wait for it, queued, in the view.
const char kT4[] = R"({"gpus": 1, "gpu_models": ["T4"]})";
const char kSleep[] = R"(["/bin/sleep", "60"])";
// A job the host takes at once.
const char kCpu[] = R"({"gpus": 0, "vcpus": 1, "ram_gib": 0.25})";

// How many of the database's sessions wait for a lock.
int64_t LockWaiters(PgConn& db) {
  auto r = db.Query(
      "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
      "AND datname = current_database()");
  return r.ok() ? r->Int(0, 0) : -1;
}

// Job 1's transaction commits last: it draws seq 1, then waits on the
// idempotency key another session holds uncommitted, while jobs 2..199 (198
// T4 jobs: job 2 runs, 197 wait) are committed and taken into the leader's
// view. Then the key's session rolls back, job 1 commits, and job 200 is
// submitted. The next cycle's new marks are seqs 1 and 200; the one list
// read (queued jobs) runs from seq 1 with a limit of 2 * 2 + 64 = 68 rows, so
// it holds seqs 1 and 3..69 and not 200, which only the one-by-one read finds. Both new jobs are CPU jobs the
// host takes: after that one cycle neither may still be queued.
TEST(NewJobs, AJobCommittedOutOfOrderAndOnePastTheListsLimitAreBothFoundInOneCycle) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto leader_store = testing::OpenStoreOn(*db);
  auto late_store = testing::OpenStoreOn(*db);  // another replica's
  ASSERT_TRUE(leader_store && late_store);
  // Declared first, so that on a failure the held key's session closes (and
  // the late submission ends) before this waits for it.
  std::future<Result<SubmitResult>> late;
  auto holder = PgConn::Open(*db);
  ASSERT_TRUE(holder.ok()) << holder.status().message();
  ASSERT_TRUE((*holder)->Exec("BEGIN").ok());
  ASSERT_TRUE((*holder)
                  ->Query("INSERT INTO idempotency(tenant,key,body_hash,job_id,created_at) "
                          "VALUES('u','late','x','none',1800000000)")
                  .ok());
  // Another tenant's (its first job makes its tenants row, which the
  // leader's submissions must not wait on).
  late = std::async(std::launch::async,
                    [&] { return late_store->Submit(Job("late", kCpu, "late", "u")); });
  auto watcher = PgConn::Open(*db);
  ASSERT_TRUE(watcher.ok());
  for (int i = 0; i < 200 && LockWaiters(**watcher) < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(LockWaiters(**watcher), 1) << "the late submission waits on the key, seq drawn";

  std::string dir = (fs::temp_directory_path() / "meridian-new-jobs-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  backends::LocalBackendOptions bo;
  bo.state_dir = dir + "/state";
  bo.gpu_model = "T4";
  bo.gpus = 1;
  auto backend = backends::MakeLocalBackend(bo);
  Metrics metrics;
  ReconcilerOptions o;
  o.catalog = catalog::Catalog::LoadEmbedded().value();
  o.profile = sched::EmbeddedProfile("default").value();
  o.state_dir = dir + "/state";
  Reconciler r(leader_store.get(), backend.get(), &metrics, o);
  ASSERT_TRUE(r.Recover().ok());
  for (int i = 0; i < 198; ++i) {
    auto s = leader_store->Submit(Job("t4-" + std::to_string(i), kT4, "", "t", kSleep));
    ASSERT_TRUE(s.ok()) << s.status().message();
  }
  ASSERT_TRUE(r.RunCycle().ok());
  const auto waiting = r.Waiting();
  EXPECT_EQ(waiting.size(), 197u) << "the T4 jobs but the one placed wait in the view";
  EXPECT_NE(leader_store->GetJob(JobIdFor(2))->state, JobState::kQueued);
  EXPECT_EQ(waiting.count(JobIdFor(3)), 1u);
  EXPECT_EQ(waiting.count(JobIdFor(199)), 1u);

  ASSERT_TRUE((*holder)->Exec("ROLLBACK").ok());
  auto first = late.get();
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->job_id, JobIdFor(1)) << "its seq was drawn before the others'";
  auto last = leader_store->Submit(Job("last", kCpu));
  ASSERT_TRUE(last.ok());
  ASSERT_EQ(last->job_id, JobIdFor(200));

  // Found: in the leader's view after this one cycle, placed or waiting
  // with a decision of its own.
  ASSERT_TRUE(r.RunCycle().ok());
  const auto now_waiting = r.Waiting();
  for (const std::string& id : {JobIdFor(1), JobIdFor(200)}) {
    auto row = leader_store->GetJob(id);
    ASSERT_TRUE(row.ok()) << id;
    EXPECT_TRUE(row->state != JobState::kQueued || now_waiting.count(id) == 1)
        << id << ": not found in the cycle after it committed";
  }
  EXPECT_EQ(now_waiting.size() - now_waiting.count(JobIdFor(1)) - now_waiting.count(JobIdFor(200)),
            197u);
  // Every job ends: the running one and the queued ones cancelled, job 1 run.
  std::vector<JobUpdate> cancels;
  for (int64_t seq = 2; seq <= 200; ++seq) {
    JobUpdate u;
    u.job_id = JobIdFor(seq);
    u.cancel_requested = true;
    cancels.push_back(u);
  }
  ASSERT_TRUE(leader_store->Apply(cancels).ok());
  auto open = [&] {
    auto counts = leader_store->CountByState();
    int64_t n = 0;
    for (const auto& [state, k] : *counts) n += IsTerminal(state) ? 0 : k;
    return n;
  };
  for (int i = 0; i < 200 && open() > 0; ++i) {
    ASSERT_TRUE(r.RunCycle().ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(open(), 0);
  EXPECT_EQ(leader_store->GetJob(JobIdFor(1))->state, JobState::kSucceeded);
  EXPECT_EQ(leader_store->GetJob(JobIdFor(2))->state, JobState::kCancelled);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace meridian::control
