// What only the PostgreSQL store does: the schema as numbered migrations,
// applied once however many processes open the database; job numbers from a
// sequence, so two stores on one database never give the same id; --db
// picking the store by its scheme; connection errors that never print a
// password; a pipeline whose failed statement fails only its own write; many
// job updates written in one read and one pipeline, each over the one
// before; statements prepared once per connection, and run unprepared
// when the server lost them. The assertions every store passes are in
// store_test.cc and retention_store_test.cc.
#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "control/backend.h"
#include "control/pg.h"
#include "control/pg_lease.h"
#include "control/pg_schema.h"
#include "control/store.h"
#include "control/store_test_kinds.h"
#include "control/test_postgres.h"

namespace meridian::control {
namespace {

std::string FirstText(const std::string& uri, const std::string& sql) {
  auto c = PgConn::Open(uri);
  if (!c.ok()) return c.status().message();
  auto r = (*c)->Query(sql);
  if (!r.ok()) return r.status().message();
  return r->size() > 0 ? r->Text(0, 0) : "no row";
}

NewJob Job(const std::string& name) {
  NewJob j;
  j.tenant = "t";
  j.name = name;
  j.kind = "training";
  j.priority = "normal";
  j.spec_json = "{}";
  j.submitted_at = 1796000000;
  return j;
}

TEST(PgStoreTest, TheDbValuePicksTheStoreByItsScheme) {
  EXPECT_TRUE(IsPostgresUri("postgresql://meridian@db.internal:5432/meridian"));
  EXPECT_TRUE(IsPostgresUri("postgres://db/meridian"));
  EXPECT_FALSE(IsPostgresUri("meridian.db"));
  EXPECT_FALSE(IsPostgresUri("/var/lib/postgresql.db"));
  EXPECT_FALSE(IsPostgresUri("postgresql:/missing-slash"));
}

TEST(PgStoreTest, OutputShowsAUrisPasswordAsStars) {
  struct Case {
    const char* uri;
    const char* shown;
  };
  for (const Case& c : std::vector<Case>{
           {"postgresql://meridian:pw@db:5432/m", "postgresql://meridian:***@db:5432/m"},
           {"postgresql://meridian@db:5432/m", "postgresql://meridian@db:5432/m"},  // no password
           {"postgresql://db:5432/m", "postgresql://db:5432/m"},                    // no user
           {"postgres://:pw@/m?host=/run/postgresql", "postgres://:***@/m?host=/run/postgresql"},
       }) {
    EXPECT_EQ(RedactedUri(c.uri), c.shown) << c.uri;
  }
}

TEST(PgStoreTest, MigrationsAreRecordedAndAppliedOnceWhenReopened) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  const std::string want = std::to_string(std::size(kPgMigrations));  // one row per migration
  {
    auto store = testing::OpenStoreOn(*uri);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Submit(Job("a")).ok());
  }
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM schema_version"), want);
  EXPECT_EQ(FirstText(*uri, "SELECT MAX(version) FROM schema_version"), want);
  auto again = testing::OpenStoreOn(*uri);  // a second start: nothing applied twice, the job kept
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM schema_version"), want);
  EXPECT_EQ(again->GetJob("j-00000001")->name, "a");
}

TEST(PgStoreTest, TwoStoresOnOneDatabaseNeverGiveTheSameId) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto a = testing::OpenStoreOn(*uri);
  auto b = testing::OpenStoreOn(*uri);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // 4 threads, 2 per store, 25 submissions each: 100 jobs, 100 ids.
  std::vector<std::vector<std::string>> ids(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Store* s = t % 2 == 0 ? a.get() : b.get();
      for (int i = 0; i < 25; ++i) {
        auto r = s->Submit(Job("j" + std::to_string(t) + "-" + std::to_string(i)));
        if (r.ok()) ids[t].push_back(r->job_id);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> distinct;
  for (const auto& v : ids) distinct.insert(v.begin(), v.end());
  EXPECT_EQ(distinct.size(), 100u);
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM jobs"), "100");
}

TEST(PgStoreTest, AServerThatIsNotThereIsAnErrorWithoutThePassword) {
  // A socket directory with no server in it.
  SqliteOptions o;
  o.path = "postgresql://meridian:s3cret@/meridian?host=/nonexistent-meridian-dir";
  auto s = OpenStore(o);
  ASSERT_FALSE(s.ok());
  const std::string m = s.status().message();
  EXPECT_NE(m.find("postgresql://meridian:***@/meridian"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot connect"), std::string::npos) << m;
  EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
}

TEST(PgStoreTest, APipelineReportsTheFirstFailedStatementAndSkipsTheRest) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto c = PgConn::Open(*uri);
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::vector<std::string> answered;
  auto keep = [&](const PgRows& r) {
    answered.push_back(r.Text(0, 0));
    return Status::Ok();
  };
  ASSERT_TRUE((*c)->BeginPipeline().ok());
  ASSERT_TRUE((*c)->Send("SELECT 'one'", {}, keep).ok());
  ASSERT_TRUE((*c)->Send("SELECT 1/$1::int", {Param(0)}, keep).ok());  // division by zero
  ASSERT_TRUE((*c)->Send("SELECT 'three'", {}, keep).ok());
  Status st = (*c)->Sync();
  EXPECT_NE(st.message().find("SELECT 1/$1::int: ERROR:  division by zero"), std::string::npos)
      << st.message();
  EXPECT_EQ(answered, std::vector<std::string>{"one"});  // the third was skipped
  auto after = (*c)->Query("SELECT 'usable'");  // the connection left out of the pipeline
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->Text(0, 0), "usable");
}

// The leader's fence is checked by the server (meridian_fence), so a batch
// sends BEGIN, the fence, its writes and its COMMIT in one pipeline: at
// another epoch the server refuses the fence and skips what follows it, the
// COMMIT included; at the lease's epoch the one Sync commits the write.
TEST(PgStoreTest, AFenceAtAnotherEpochSkipsTheWritesAndTheCommitSentWithIt) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto store = testing::OpenStoreOn(*uri);  // migrated
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(*store->TakeLease("a", 60000), 1);
  auto c = PgConn::Open(*uri);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto batch = [&](int64_t epoch, const std::string& tenant) {
    Status st = (*c)->BeginPipeline();
    if (st.ok()) st = (*c)->Send("BEGIN", {}, nullptr);
    if (st.ok()) st = CheckPgFence(**c, epoch);
    if (st.ok()) {
      st = (*c)->Send("INSERT INTO tenants(name, created_at) VALUES($1, 0)", {Param(tenant)},
                      nullptr);
    }
    if (st.ok()) st = (*c)->Send("COMMIT", {}, nullptr);
    if (st.ok()) st = (*c)->Sync();
    return st;
  };
  const std::string count = "SELECT COUNT(*) FROM tenants WHERE name = ";

  Status deposed = batch(2, "fenced");
  EXPECT_TRUE(IsDeposed(deposed)) << deposed.message();
  EXPECT_NE(deposed.message().find("lease is at epoch 1, not this replica's 2"), std::string::npos)
      << deposed.message();
  EXPECT_EQ(FirstText(*uri, count + "'fenced'"), "0");
  ASSERT_TRUE((*c)->Exec("ROLLBACK").ok());  // the refused transaction, still open

  Status leads = batch(1, "kept");
  ASSERT_TRUE(leads.ok()) << leads.message();
  EXPECT_EQ(FirstText(*uri, count + "'kept'"), "1");  // committed by the one Sync
}

// The statements with parameters this session has prepared, by text, as
// the server lists them (pg_prepared_statements; this query has none, so it
// is not one of them).
std::multiset<std::string> PreparedTexts(PgConn& c) {
  std::multiset<std::string> texts;
  auto r = c.Query("SELECT statement FROM pg_prepared_statements");
  if (!r.ok()) return {r.status().message()};
  for (int i = 0; i < r->size(); ++i) texts.insert(r->Text(i, 0));
  return texts;
}

// A text with parameters is prepared once per connection, in and out of a
// pipeline, and each later call runs the prepared statement with its own
// values.
TEST(PgStoreTest, AStatementIsPreparedOncePerConnectionAndRunWithEachCallsValues) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto c = PgConn::Open(*uri);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string add = "SELECT $1::int + 1";
  const std::string twice = "SELECT $1::int * 2";
  for (int i : {1, 2, 3}) {
    auto r = (*c)->Query(add, {Param(i)});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->Int(0, 0), i + 1);
  }
  std::vector<int64_t> answered;
  auto keep = [&](const PgRows& r) {
    answered.push_back(r.Int(0, 0));
    return Status::Ok();
  };
  ASSERT_TRUE((*c)->BeginPipeline().ok());
  for (int i : {5, 6}) {
    ASSERT_TRUE((*c)->Send(twice, {Param(i)}, keep).ok());
    ASSERT_TRUE((*c)->Send(add, {Param(i)}, keep).ok());
  }
  ASSERT_TRUE((*c)->Sync().ok());
  EXPECT_EQ(answered, (std::vector<int64_t>{10, 6, 12, 7}));
  EXPECT_EQ(PreparedTexts(**c), (std::multiset<std::string>{add, twice}));
  // Another connection has its own session: nothing prepared yet.
  auto other = PgConn::Open(*uri);
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_TRUE(PreparedTexts(**other).empty());
}

// The seq scans and the index scans of `table` this connection has counted
// and not yet reported (pg_stat_xact_user_tables; reported between
// transactions, at most once a second).
std::pair<int64_t, int64_t> XactScans(PgConn& c, const std::string& table) {
  auto r = c.Query("SELECT seq_scan, coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables "
                   "WHERE relname = $1",
                   {Param(table)});
  if (!r.ok() || r->size() != 1) return {-1, -1};
  return {r->Int(0, 0), r->Int(0, 1)};
}

// PostgreSQL keeps a prepared statement's generic plan once its first five
// calls found it no dearer than their own plans: made while the table held
// one row, that plan is a sequential scan, and the statement keeps reading
// the whole table after it has grown to 5,000 rows (what the leader's
// per-cycle reads did as the queue grew). A statement planned at each call
// (PgPlan::kEachCall) is planned with the table as it is: by its index.
TEST(PgStoreTest, AStatementPlannedAtEachCallUsesTheIndexOnceTheTableHasGrown) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto c = PgConn::Open(*uri);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // One row of 500 bytes, and its statistics, as autovacuum leaves a small
  // table; none later (its next ANALYZE would have the statement planned
  // again).
  ASSERT_TRUE((*c)->Exec("CREATE TABLE t (id text PRIMARY KEY, n int, pad text) "
                         "WITH (autovacuum_enabled = off);"
                         "INSERT INTO t VALUES ('k1', 1, repeat('x', 500)); ANALYZE t")
                  .ok());
  const std::string sql = "SELECT n, pad FROM t WHERE id = ANY($1::text[]) ORDER BY id";
  for (PgPlan plan : {PgPlan::kOnce, PgPlan::kEachCall}) {
    for (int i = 0; i < 8; ++i) ASSERT_TRUE((*c)->Query(sql, {Param("{k1,k2}")}, plan).ok());
  }
  ASSERT_TRUE(
      (*c)->Exec("INSERT INTO t SELECT 'k' || g, g, repeat('x', 500) FROM generate_series(2, 5000) g")
          .ok());
  for (PgPlan plan : {PgPlan::kOnce, PgPlan::kEachCall}) {
    ASSERT_TRUE((*c)->Exec("BEGIN").ok());  // no counts are flushed inside it
    const auto [seq0, idx0] = XactScans(**c, "t");
    auto r = (*c)->Query(sql, {Param("{k1,k4999}")}, plan);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->size(), 2);
    EXPECT_EQ(r->Int(1, 0), 4999);
    const auto [seq1, idx1] = XactScans(**c, "t");
    ASSERT_TRUE((*c)->Exec("COMMIT").ok());
    const int64_t seq = seq1 - seq0, idx = idx1 - idx0;
    if (plan == PgPlan::kOnce) {
      // The trap itself, so this test fails if a server stops setting it.
      EXPECT_EQ(seq, 1) << "the prepared statement's cached plan no longer scans the table";
    } else {
      EXPECT_EQ(seq, 0);
      EXPECT_GE(idx, 1);  // one per value of the list, or one for all
    }
  }
}

// The leader's write of a cycle's updates (which locks their jobs by id) and
// the pages of the queue read a grown jobs table by its indexes, however
// small the table was when the connection first ran them. Counted over the
// store's whole life (its server processes report their counts as they
// exit), as tuples read by sequential scans: while the table held 5 jobs
// they may scan it; once it holds 3,005 none may.
TEST(PgStoreTest, TheLeadersWritesAndTheQueuesPagesReadAGrownTableByItsIndexes) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto cycle = [](Store& store, const std::vector<std::string>& ids) {
    std::vector<JobUpdate> updates;
    for (const std::string& id : ids) {
      JobUpdate u;
      u.job_id = id;
      u.reason = "waiting for 8 x T4";
      u.at = 1796000100;
      updates.push_back(u);
    }
    auto applied = store.Apply(updates);  // locks its jobs: id = ANY($1)
    ListFilter queued;
    queued.state = JobState::kQueued;
    queued.after_seq = 2;
    auto page = store.ListJobs(queued);  // the queue's pages: seq > $1 AND state = $2
    return applied.ok() && page.ok();
  };
  {
    auto store = testing::OpenStoreOn(*uri);
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(store->Submit(Job("small")).ok());
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(cycle(*store, {"j-00000001", "j-00000002"}));
    auto c = PgConn::Open(*uri);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->Exec("INSERT INTO jobs(seq, id, tenant, name, kind, priority, state, "
                           "submitted_at, spec) SELECT g, 'j-' || lpad(g::text, 8, '0'), 't', "
                           "'grown', 'training', 'normal', 'queued', 1796000000, '{}' "
                           "FROM generate_series(6, 3005) g")
                    .ok());
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(cycle(*store, {"j-00000003", "j-00002999"}));
  }  // the store's connections close: their server processes flush their counts
  int64_t read = -1;
  for (int i = 0; i < 50 && read < 0; ++i) {  // the last exits may take a moment
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto c = PgConn::Open(*uri);
    ASSERT_TRUE(c.ok());
    auto r = (*c)->Query("SELECT seq_tup_read, n_tup_ins FROM pg_stat_user_tables WHERE relname = 'jobs'");
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (r->size() == 1 && r->Int(0, 1) == 3005) read = r->Int(0, 0);
  }
  ASSERT_GE(read, 0) << "the server did not report the store's 3,005 inserts";
  // At most 5 rows for each of the first 8 cycles' statements and the store's
  // own reads while it held 5 jobs; one scan of the grown table alone would
  // be 3,005.
  EXPECT_LT(read, 3005);
}

// A server that lost the session's prepared statements (as behind a pooler
// in transaction mode, played here by DEALLOCATE ALL) answers "does not
// exist": the call runs again unprepared, and the connection prepares no
// more; in a pipeline the batch fails, and the next runs unprepared.
TEST(PgStoreTest, AServerThatLostThePreparedStatementsIsAnsweredUnprepared) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto c = PgConn::Open(*uri);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string add = "SELECT $1::int + 1";
  ASSERT_TRUE((*c)->Query(add, {Param(1)}).ok());
  ASSERT_TRUE((*c)->Exec("DEALLOCATE ALL").ok());
  auto r = (*c)->Query(add, {Param(41)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->Int(0, 0), 42);
  ASSERT_TRUE((*c)->Query("SELECT $1::text", {Param("x")}).ok());
  EXPECT_TRUE(PreparedTexts(**c).empty());

  auto p = PgConn::Open(*uri);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE((*p)->Query(add, {Param(1)}).ok());
  ASSERT_TRUE((*p)->Exec("DEALLOCATE ALL").ok());
  std::vector<int64_t> answered;
  auto keep = [&](const PgRows& rows) {
    answered.push_back(rows.Int(0, 0));
    return Status::Ok();
  };
  ASSERT_TRUE((*p)->BeginPipeline().ok());
  ASSERT_TRUE((*p)->Send(add, {Param(2)}, keep).ok());
  Status st = (*p)->Sync();
  EXPECT_NE(st.message().find("does not exist"), std::string::npos) << st.message();
  ASSERT_TRUE((*p)->BeginPipeline().ok());
  ASSERT_TRUE((*p)->Send(add, {Param(3)}, keep).ok());
  ASSERT_TRUE((*p)->Sync().ok());
  EXPECT_EQ(answered, std::vector<int64_t>{4});
  EXPECT_TRUE(PreparedTexts(**p).empty());
}

TEST(PgStoreTest, AFailedSubmissionInABatchFailsAloneAndTheOthersAreStored) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto store = testing::OpenStoreOn(*uri);
  ASSERT_NE(store, nullptr);
  // 8 threads of 20 at once, so batches mix them; thread 0's names are not
  // UTF-8, which the UTF8 database refuses: 7 x 20 = 140 stored, 20 refused.
  std::vector<std::vector<std::string>> ids(8);
  std::vector<int> refused(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string name = (t == 0 ? "bad\xff" : "j") + std::to_string(t) + "-" +
                                 std::to_string(i);
        auto r = store->Submit(Job(name));
        if (r.ok()) {
          ids[t].push_back(r->job_id);
        } else if (r.status().message().find("invalid byte sequence") != std::string::npos) {
          refused[t]++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(refused[0], 20);
  EXPECT_TRUE(ids[0].empty());
  std::set<std::string> distinct;
  for (int t = 1; t < 8; ++t) {
    EXPECT_EQ(ids[t].size(), 20u) << "thread " << t;
    distinct.insert(ids[t].begin(), ids[t].end());
  }
  EXPECT_EQ(distinct.size(), 140u);
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM jobs"), "140");
  for (const std::string& id : distinct) {
    auto j = store->GetJob(id);
    ASSERT_TRUE(j.ok()) << id;
    EXPECT_EQ(j->name[0], 'j') << id;  // each id names its own, good, job
  }
}

TEST(PgStoreTest, AnIdempotencyKeyReplaysThroughTheOneStatementSubmission) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto store = testing::OpenStoreOn(*uri);
  ASSERT_NE(store, nullptr);
  NewJob j = Job("a");
  j.idempotency_key = "k1";
  j.body_hash = "h1";
  auto first = store->Submit(j);
  auto again = store->Submit(j);
  j.body_hash = "h2";
  auto other = store->Submit(j);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_EQ(first->outcome, SubmitOutcome::kCreated);
  EXPECT_EQ(first->job_id, "j-00000001");  // the database's first job number
  EXPECT_EQ(again->outcome, SubmitOutcome::kReplayed);
  EXPECT_EQ(again->job_id, "j-00000001");
  EXPECT_EQ(other->outcome, SubmitOutcome::kConflict);
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM jobs"), "1");
  // A day and a second later the key is free again: a second job takes it.
  j.submitted_at += kIdempotencyKeyTtlS + 1;
  auto later = store->Submit(j);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->outcome, SubmitOutcome::kCreated);
  EXPECT_EQ(later->job_id, "j-00000002");
}

TEST(PgStoreTest, ManyUpdatesInOneApplyEachSeeTheOneBeforeAndAMissingJobAnswersFalse) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto store = testing::OpenStoreOn(*uri);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Submit(Job("a")).ok());  // j-00000001
  ASSERT_TRUE(store->Submit(Job("b")).ok());  // j-00000002
  auto update = [](const std::string& id, std::optional<JobState> expect, std::optional<JobState> to) {
    JobUpdate u;
    u.job_id = id;
    u.expect_state = expect;
    u.state = to;
    u.at = 1796000100;
    return u;
  };
  JobUpdate reason = update("j-00000001", std::nullopt, std::nullopt);
  reason.reason = "no schedulable nodes";
  const std::vector<JobUpdate> updates = {
      reason,
      update("j-00000002", JobState::kQueued, JobState::kScheduled),
      // Expects what the update before it in this call left.
      update("j-00000002", JobState::kScheduled, JobState::kStarting),
      // Still queued, not running: not applied.
      update("j-00000001", JobState::kRunning, JobState::kFailed),
      // No such job; its id is quoted in the array literal the read sends.
      update("j-\"x\\,y}", std::nullopt, JobState::kFailed),
  };
  auto applied = store->Apply(updates);
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, (std::vector<bool>{true, true, true, false, false}));
  EXPECT_EQ(store->GetJob("j-00000001")->state, JobState::kQueued);
  EXPECT_EQ(store->GetJob("j-00000001")->reason, "no schedulable nodes");
  EXPECT_EQ(store->GetJob("j-00000002")->state, JobState::kStarting);
  // b's events: submitted (seq 1), then one per applied state change (2, 3).
  auto events = store->Events("j-00000002");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[1].seq, 2);
  EXPECT_EQ((*events)[1].to, "scheduled");
  EXPECT_EQ((*events)[2].seq, 3);
  EXPECT_EQ((*events)[2].from, "scheduled");
  EXPECT_EQ((*events)[2].to, "starting");
  // a's reason took no event: only its submission's.
  EXPECT_EQ(store->Events("j-00000001")->size(), 1u);
}

}  // namespace
}  // namespace meridian::control
