// Retention on the real stores (SQLite and PostgreSQL) and the real local backend, with the
// clock injected as `now`: which jobs go (finished, ended before the
// cutoff), everything kept of them going with them, bounded batches, ids
// never given twice, idempotency keys that expire after 24 hours; and the
// dashboard's totals as SQL aggregates, which do not load every job kept.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "backends/local/local.h"
#include "control/retention.h"
#include "control/store.h"
#include "control/store_test_kinds.h"

namespace meridian::control {
namespace {

namespace fs = std::filesystem;

constexpr UnixSeconds kT0 = 1796000000;  // any fixed instant
constexpr int64_t kDay = 86400;

template <typename Kind>
class RetentionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "meridian-retention-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto db = Kind::MakeDb(dir_);
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = *db;
    Open();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  void Open() {
    store_.reset();
    SqliteOptions o;
    o.path = db_;
    auto s = OpenStore(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(s).value();
  }

  std::string Submit(const std::string& name, UnixSeconds at = kT0, const std::string& key = "",
                     const std::string& body_hash = "h") {
    NewJob job;
    job.tenant = "t";
    job.name = name;
    job.kind = "training";
    job.priority = "normal";
    job.spec_json = "{}";
    job.idempotency_key = key;
    job.body_hash = body_hash;
    job.submitted_at = at;
    auto r = store_->Submit(job);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->job_id : "";
  }

  // Runs attempt 1 of `id` (started at `start`) as the reconciler records it.
  void Run(const std::string& id, UnixSeconds start) {
    JobUpdate launch;
    launch.job_id = id;
    launch.state = JobState::kRunning;
    launch.message = "running";
    launch.attempts = 1;
    launch.handle = "pid:1:1";
    launch.placement = Placement{"testnode", {0}, "", "gcp:us-central1", "owned"};
    launch.started_at = start;
    launch.at = start;
    ASSERT_TRUE(store_->Apply({launch}).ok());
  }
  void End(const std::string& id, JobState state, UnixSeconds at) {
    JobUpdate end;
    end.job_id = id;
    end.state = state;
    end.message = "ended";
    end.ended_at = at;
    end.at = at;
    ASSERT_TRUE(store_->Apply({end}).ok());
  }

  // What the database holds, read with SQL rather than through the store
  // (-1 when the query fails).
  int64_t Count(const std::string& sql) {
    auto t = Kind::Text(db_, sql);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? std::stoll(*t) : -1;
  }
  Status Exec(const std::string& sql) { return Kind::Exec(db_, sql); }

  std::string dir_, db_;
  std::unique_ptr<Store> store_;
};

TYPED_TEST_SUITE(RetentionStoreTest, testing::StoreKinds, testing::StoreKindName);

TYPED_TEST(RetentionStoreTest, OnlyFinishedJobsEndedBeforeTheCutoffGoWithEverythingKeptOfThem) {
  const std::string old_done = this->Submit("old-done");    // succeeded, ended kT0 + 100
  const std::string old_cancel = this->Submit("old-cancel");  // cancelled before it ran, at kT0 + 50
  const std::string recent = this->Submit("recent");        // failed, ended kT0 + 10 days
  const std::string running = this->Submit("running");      // running since kT0: never ends
  const std::string queued = this->Submit("queued");        // queued since kT0
  this->Run(old_done, kT0 + 10);
  this->End(old_done, JobState::kSucceeded, kT0 + 100);
  this->End(old_cancel, JobState::kCancelled, kT0 + 50);
  this->Run(recent, kT0 + 10);
  this->End(recent, JobState::kFailed, kT0 + 10 * kDay);
  this->Run(running, kT0);
  UtilizationRow u;
  u.job_id = old_done;
  u.at = kT0 + 60;
  u.job_class = "cpu-bound";
  ASSERT_TRUE(this->store_->AppendUtilization({u}, 100).ok());

  // Cutoff kT0 + 1 day: old_cancel (kT0+50) and old_done (kT0+100) ended
  // before it, oldest end first; recent (kT0+10d) did not; the running and
  // queued jobs have no end.
  const UnixSeconds cutoff = kT0 + kDay;
  auto found = this->store_->FinishedBefore(cutoff, 100);
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].id, old_cancel);
  EXPECT_EQ((*found)[0].attempts, 0);
  EXPECT_EQ((*found)[1].id, old_done);
  EXPECT_EQ((*found)[1].attempts, 1);

  // Asked to delete all five, the store deletes only the two.
  auto deleted = this->store_->DeleteFinishedJobs({old_done, old_cancel, recent, running, queued}, cutoff);
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  EXPECT_EQ(*deleted, (std::vector<std::string>{old_done, old_cancel}));
  EXPECT_EQ(this->store_->GetJob(old_done).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->GetJob(old_cancel).status().code(), StatusCode::kNotFound);
  for (const char* table : {"events", "attempts", "utilization"}) {
    EXPECT_EQ(this->Count(std::string("SELECT COUNT(*) FROM ") + table + " WHERE job_id IN ('" +
                    old_done + "','" + old_cancel + "')"),
              0)
        << table;
  }
  EXPECT_EQ(this->store_->GetJob(recent)->state, JobState::kFailed);
  EXPECT_EQ(this->store_->GetJob(running)->state, JobState::kRunning);
  EXPECT_EQ(this->store_->GetJob(queued)->state, JobState::kQueued);
  // recent: submitted, running, failed = 3 events kept.
  EXPECT_EQ(this->store_->Events(recent)->size(), 3u);
}

TYPED_TEST(RetentionStoreTest, AFinishedJobWithoutAnEndTimeGetsTheTransitionsTime) {
  // A job failed by the reconciler without an end (a spec that no longer
  // parses) still ends: at the transition's time, so retention finds it.
  const std::string id = this->Submit("unparsable");
  JobUpdate fail;
  fail.job_id = id;
  fail.state = JobState::kFailed;
  fail.message = "the stored spec no longer parses";
  fail.at = kT0 + 7;
  ASSERT_TRUE(this->store_->Apply({fail}).ok());
  EXPECT_EQ(this->store_->GetJob(id)->ended_at, kT0 + 7);
}

TYPED_TEST(RetentionStoreTest, ADeletedJobsIdIsNeverGivenAgain) {
  const std::string a = this->Submit("a"), b = this->Submit("b");
  this->End(a, JobState::kCancelled, kT0);
  this->End(b, JobState::kCancelled, kT0);
  auto deleted = this->store_->DeleteFinishedJobs({a, b}, kT0 + 1);
  ASSERT_TRUE(deleted.ok());
  ASSERT_EQ(deleted->size(), 2u);
  this->Open();  // the store's next id comes back from the database
  // Jobs 1 and 2 were made and deleted: the next is 3, although the table is empty.
  EXPECT_EQ(this->Submit("c"), "j-00000003");
}

TYPED_TEST(RetentionStoreTest, AnIdempotencyKeyAnswersWithItsJobFor24HoursThenMakesANewJob) {
  const std::string first = this->Submit("a", kT0, "nightly");
  // 23 h 59 min 59 s later: the same job.
  NewJob again;
  again.tenant = "t";
  again.name = "a";
  again.kind = "training";
  again.priority = "normal";
  again.spec_json = "{}";
  again.idempotency_key = "nightly";
  again.body_hash = "h";
  again.submitted_at = kT0 + kDay - 1;
  auto replay = this->store_->Submit(again);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->outcome, SubmitOutcome::kReplayed);
  EXPECT_EQ(replay->job_id, first);
  // Exactly 24 h later the key has expired: a new job, which takes the key.
  again.submitted_at = kT0 + kDay;
  auto fresh = this->store_->Submit(again);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->outcome, SubmitOutcome::kCreated);
  EXPECT_NE(fresh->job_id, first);
  again.submitted_at = kT0 + kDay + 5;
  auto replay2 = this->store_->Submit(again);
  ASSERT_TRUE(replay2.ok());
  EXPECT_EQ(replay2->outcome, SubmitOutcome::kReplayed);
  EXPECT_EQ(replay2->job_id, fresh->job_id);
}

TYPED_TEST(RetentionStoreTest, ExpiredKeysAreDeletedInBatches) {
  this->Submit("a", kT0, "k1");
  this->Submit("b", kT0 + 10, "k2");
  this->Submit("c", kT0 + 20, "k3");
  // Expired at kT0 + 10: k1 (made kT0) and k2 (made kT0 + 10), one per batch.
  auto n = this->store_->DeleteExpiredKeys(kT0 + 10, 1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  n = this->store_->DeleteExpiredKeys(kT0 + 10, 1);
  EXPECT_EQ(*n, 1);
  n = this->store_->DeleteExpiredKeys(kT0 + 10, 1);
  EXPECT_EQ(*n, 0);
  EXPECT_EQ(this->Count("SELECT COUNT(*) FROM idempotency WHERE key='k3'"), 1);
}

TYPED_TEST(RetentionStoreTest, ASweepDeletesOneBatchAndTheFilesOfEachJob) {
  // 25 jobs cancelled at kT0; retention 30 days; batches of 10.
  std::vector<std::string> ids;
  for (int i = 0; i < 25; ++i) {
    ids.push_back(this->Submit("j" + std::to_string(i)));
    this->End(ids.back(), JobState::kCancelled, kT0);
  }
  const std::string state = this->dir_ + "/state";
  for (const std::string& id : ids) {
    fs::create_directories(state + "/jobs/" + id + "/logs");
    fs::create_directories(state + "/jobs/" + id + "/checkpoint");
    std::ofstream(state + "/jobs/" + id + "/logs/stdout.log") << "hello\n";
  }
  backends::LocalBackendOptions lo;
  lo.state_dir = state + "/backend";
  lo.vcpus = 1;
  lo.ram_gib = 1;
  auto backend = backends::MakeLocalBackend(lo);
  RetentionOptions ro;
  ro.retention_s = 30 * kDay;
  ro.batch = 10;
  ro.sweep_every_s = 60;
  Retention retention(this->store_.get(), backend.get(), state, ro);

  // 30 days after kT0 the jobs are exactly as old as the retention: kept.
  retention.RunIfDue(kT0 + 30 * kDay);
  EXPECT_EQ(this->Count("SELECT COUNT(*) FROM jobs"), 25);
  // 60 s later (the next sweep is due) they are older: 10 go per sweep; a
  // full batch makes the next cycle sweep again, so 10 + 10 + 5.
  const UnixSeconds later = kT0 + 30 * kDay + 60;
  retention.RunIfDue(later);
  EXPECT_EQ(this->Count("SELECT COUNT(*) FROM jobs"), 15);
  retention.RunIfDue(later);
  EXPECT_EQ(this->Count("SELECT COUNT(*) FROM jobs"), 5);
  retention.RunIfDue(later);
  EXPECT_EQ(this->Count("SELECT COUNT(*) FROM jobs"), 0);
  EXPECT_EQ(this->Count("SELECT COUNT(*) FROM events"), 0);
  for (const std::string& id : ids) EXPECT_FALSE(fs::exists(state + "/jobs/" + id)) << id;
}

TYPED_TEST(RetentionStoreTest, TheDashboardsTotalsAreSqlAggregatesPerTenant) {
  const std::string spot = this->Submit("spot");     // succeeded on spot: $1.50, 2 g CO2
  const std::string queued = this->Submit("queued");  // never placed: pricing ""
  const std::string twice = this->Submit("twice");   // preempted twice, running again
  JobUpdate paid;
  paid.job_id = spot;
  paid.state = JobState::kSucceeded;
  paid.message = "exited with code 0";
  paid.placement = Placement{"testnode", {0}, "", "gcp:us-central1", "spot"};
  paid.add_cost_micro_usd = 1500000;
  paid.add_co2_mg = 2000;
  paid.ended_at = kT0 + 100;
  paid.at = kT0 + 100;
  ASSERT_TRUE(this->store_->Apply({paid}).ok());
  for (int attempt = 1; attempt <= 3; ++attempt) {
    JobUpdate run;
    run.job_id = twice;
    run.state = JobState::kRunning;
    run.message = "running";
    run.attempts = attempt;
    run.at = kT0 + attempt;
    ASSERT_TRUE(this->store_->Apply({run}).ok());
    if (attempt == 3) break;
    JobUpdate preempt = run;
    preempt.state = JobState::kPreempted;
    preempt.message = "preempted";
    ASSERT_TRUE(this->store_->Apply({preempt}).ok());
  }
  // Another tenant's job, left out of t's totals.
  NewJob other;
  other.tenant = "u";
  other.name = "other";
  other.kind = "training";
  other.priority = "high";
  other.spec_json = "{}";
  other.submitted_at = kT0;
  ASSERT_TRUE(this->store_->Submit(other).ok());

  auto totals = this->store_->JobTotals("t");
  ASSERT_TRUE(totals.ok()) << totals.status().message();
  std::vector<std::string> got;
  for (const Store::JobTotal& t : *totals) {
    got.push_back(std::string(JobStateName(t.state)) + " " + t.priority + " '" + t.pricing + "' " +
                  std::to_string(t.jobs) + " " + std::to_string(t.cost_micro_usd) + " " +
                  std::to_string(t.co2_mg));
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"queued normal '' 1 0 0", "running normal '' 1 0 0",
                                           "succeeded normal 'spot' 1 1500000 2000"}));
  auto all = this->store_->JobTotals("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u);  // the three groups above and u's queued high job
  // twice was preempted after attempts 1 and 2.
  EXPECT_EQ(*this->store_->Preemptions("t"), 2);
  EXPECT_EQ(*this->store_->Preemptions("u"), 0);
  // Ended at kT0 + 100: in a strip from kT0 + 100, not in one from kT0 + 101.
  auto ended = this->store_->EndedSince("t", kT0 + 100);
  ASSERT_TRUE(ended.ok());
  ASSERT_EQ(ended->size(), 1u);
  EXPECT_EQ((*ended)[0].id, spot);
  EXPECT_TRUE(this->store_->EndedSince("t", kT0 + 101)->empty());
  (void)queued;
}

TYPED_TEST(RetentionStoreTest, ASweepNeverTouchesARunningJobSubmittedLongAgo) {
  const std::string id = this->Submit("long", kT0);
  this->Run(id, kT0);
  const std::string state = this->dir_ + "/state";
  fs::create_directories(state + "/jobs/" + id + "/checkpoint");
  backends::LocalBackendOptions lo;
  lo.state_dir = state + "/backend";
  lo.vcpus = 1;
  lo.ram_gib = 1;
  auto backend = backends::MakeLocalBackend(lo);
  Retention retention(this->store_.get(), backend.get(), state, RetentionOptions{});
  auto n = retention.Sweep(kT0 + 365 * kDay);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  EXPECT_EQ(this->store_->GetJob(id)->state, JobState::kRunning);
  EXPECT_TRUE(fs::exists(state + "/jobs/" + id + "/checkpoint"));
}

// Databases made by SQLite stores from before retention are migrated at
// open; PostgreSQL's schema starts with the columns (pg_schema.h).
class SqliteRetentionStoreTest : public RetentionStoreTest<testing::SqliteKind> {};

TEST_F(SqliteRetentionStoreTest, ADatabaseFromBeforeRetentionDatesItsKeysByTheirJobs) {
  Submit("a", kT0, "k1");
  store_.reset();
  // The idempotency table as it was made before keys had a creation time.
  ASSERT_TRUE(Exec("DROP INDEX idempotency_by_age; ALTER TABLE idempotency DROP COLUMN created_at; "
                   "UPDATE jobs SET submitted_at = 1700000000").ok());
  Open();
  EXPECT_EQ(Count("SELECT created_at FROM idempotency WHERE key='k1'"), 1700000000);
}

}  // namespace
}  // namespace meridian::control
