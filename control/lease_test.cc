// The leader's lease and fence (store.h, TakeLease, RenewLease, FenceWrites)
// on a real PostgreSQL: of two stores on one database only one holds the
// lease until it lapses; a deposed leader's fenced writes change nothing; a
// follower's unfenced writes go through. The marks the reconcile loop reads
// (ActiveMarks) on both stores, and what changed since the last read
// (ChangedMarks) on PostgreSQL. On SQLite the one daemon always leads.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "control/backend.h"
#include "control/pg.h"
#include "control/store.h"
#include "control/store_test_kinds.h"
#include "control/test_postgres.h"

namespace meridian::control {
namespace {

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

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = testing::TestPostgres::NewDatabase();
    ASSERT_TRUE(db.ok()) << db.status().message();
    uri_ = *db;
    a_ = testing::OpenStoreOn(*db);
    b_ = testing::OpenStoreOn(*db);
    ASSERT_TRUE(a_ && b_);
  }
  std::string uri_;
  std::unique_ptr<Store> a_, b_;
};

TEST_F(LeaseTest, OneHolderAtATimeAndTheEpochGrowsAtEachTakeover) {
  // A fresh database's lease was never held (epoch 0): the first taker gets 1.
  auto first = a_->TakeLease("a", 400);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, 1);
  EXPECT_EQ(*b_->TakeLease("b", 400), 0) << "held by a for 400 ms";
  EXPECT_TRUE(*a_->RenewLease("a", 1, 400));
  EXPECT_FALSE(*b_->RenewLease("b", 1, 400)) << "b does not hold it";
  SleepMs(600);  // a renewed nothing since: lapsed 200 ms ago
  EXPECT_EQ(*b_->TakeLease("b", 400), 2);
  EXPECT_FALSE(*a_->RenewLease("a", 1, 400)) << "a's epoch 1 is over";
  EXPECT_EQ(*a_->TakeLease("a", 400), 0) << "b holds epoch 2";
}

TEST_F(LeaseTest, RenewingForNoTimeHandsTheLeaseOver) {
  ASSERT_EQ(*a_->TakeLease("a", 60000), 1);
  EXPECT_TRUE(*a_->RenewLease("a", 1, 0));  // what a daemon does on a clean stop
  SleepMs(5);  // expiry is "before now" in whole milliseconds
  EXPECT_EQ(*b_->TakeLease("b", 60000), 2);
}

TEST_F(LeaseTest, ADeposedLeadersFencedWritesChangeNothing) {
  ASSERT_EQ(*a_->TakeLease("a", 300), 1);
  a_->FenceWrites(1);
  auto job = a_->Submit(Job("fenced"));
  ASSERT_TRUE(job.ok()) << "epoch 1 holds the lease: " << job.status().message();
  SleepMs(500);
  ASSERT_EQ(*b_->TakeLease("b", 60000), 2);
  b_->FenceWrites(2);

  // a still believes it leads: its state change and a new submission fail.
  JobUpdate run;
  run.job_id = job->job_id;
  run.expect_state = JobState::kQueued;
  run.state = JobState::kScheduled;
  run.message = "scheduled by a deposed leader";
  run.at = 1796000001;
  auto applied = a_->Apply({run});
  ASSERT_FALSE(applied.ok());
  EXPECT_NE(applied.status().message().find("epoch 2"), std::string::npos)
      << applied.status().message();
  EXPECT_FALSE(a_->Submit(Job("late")).ok());
  EXPECT_FALSE(a_->SetNodeState("n", NodeState::kDown).ok());

  // Nothing of it landed: still queued, one event ("submitted"), one job.
  auto row = b_->GetJob(job->job_id);
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->state, JobState::kQueued);
  EXPECT_EQ(b_->Events(job->job_id)->size(), 1u);
  EXPECT_EQ(b_->ActiveMarks()->size(), 1u);

  // The current leader writes; so does a, once it follows (unfenced).
  run.message = "scheduled by the leader";
  EXPECT_EQ(*b_->Apply({run}), std::vector<bool>{true});
  a_->FenceWrites(0);
  EXPECT_TRUE(a_->Submit(Job("as a follower")).ok());
}

// A leader's launch holds the lease row (Store::HoldLaunches): a replica
// whose takeover comes while the launch is under way waits until it is over,
// so it sees what was launched; the deposed leader's next hold is refused.
TEST_F(LeaseTest, ALaunchHoldKeepsATakeoverWaitingUntilTheLaunchIsOver) {
  ASSERT_EQ(*a_->TakeLease("a", 300), 1);
  auto hold = a_->HoldLaunches(1);
  ASSERT_TRUE(hold.ok()) << hold.status().message();
  SleepMs(500);  // a's lease lapsed 200 ms ago, mid-launch
  std::atomic<bool> taken{false};
  Result<int64_t> epoch = int64_t{0};
  std::thread taker([&] {
    epoch = b_->TakeLease("b", 60000);
    taken = true;
  });
  SleepMs(600);
  EXPECT_FALSE(taken.load()) << "b took the lease while a's launch held it";
  hold->reset();  // the launch is over
  taker.join();
  ASSERT_TRUE(epoch.ok()) << epoch.status().message();
  EXPECT_EQ(*epoch, 2);
  auto late = a_->HoldLaunches(1);
  ASSERT_FALSE(late.ok());
  EXPECT_TRUE(IsDeposed(late.status())) << late.status().message();
  EXPECT_NE(late.status().message().find("epoch 2"), std::string::npos) << late.status().message();
  auto current = b_->HoldLaunches(2);
  EXPECT_TRUE(current.ok()) << current.status().message();
}

// On SQLite one daemon writes the file and always leads: nothing to hold.
TEST(SqliteLaunchHoldTest, AlwaysGranted) {
  const std::string dir = ::testing::TempDir() + "/meridian-launch-hold-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  {
    auto store = testing::OpenStoreOn(dir + "/meridian.db");
    ASSERT_TRUE(store);
    auto hold = store->HoldLaunches(7);
    EXPECT_TRUE(hold.ok()) << hold.status().message();
  }
  std::filesystem::remove_all(dir);
}

// The marks of the jobs changed since `*cursor`, as "id state cancel" lines.
std::vector<std::string> Changed(Store& s, int64_t* cursor) {
  auto marks = s.ChangedMarks(cursor);
  EXPECT_TRUE(marks.ok()) << marks.status().message();
  std::vector<std::string> out;
  if (!marks.ok()) return out;
  for (const auto& m : *marks) {
    out.push_back(m.id + " " + std::string(JobStateName(m.state)) + (m.cancel_requested ? " cancel" : ""));
  }
  return out;
}

// The leader (a_) reads only what changed since its last read, whoever wrote
// it: new jobs, a cancel a follower (b_) wrote, a job that ended, and a change
// whose transaction began before the last read and committed after it.
TEST_F(LeaseTest, ChangedMarksGiveWhatAnyReplicaChangedSinceTheLastRead) {
  const std::string x = a_->Submit(Job("x"))->job_id;
  const std::string y = a_->Submit(Job("y"))->job_id;
  const std::string z = b_->Submit(Job("z"))->job_id;
  int64_t cursor = 0;  // the first read: every unfinished job
  EXPECT_EQ(Changed(*a_, &cursor),
            (std::vector<std::string>{x + " queued", y + " queued", z + " queued"}));
  EXPECT_GT(cursor, 0);
  EXPECT_TRUE(Changed(*a_, &cursor).empty()) << "nothing changed: nothing read";

  JobUpdate cancel;
  cancel.job_id = y;
  cancel.cancel_requested = true;
  ASSERT_EQ(*b_->Apply({cancel}), std::vector<bool>{true});  // through a follower
  EXPECT_EQ(Changed(*a_, &cursor), (std::vector<std::string>{y + " queued cancel"}));
  EXPECT_TRUE(Changed(*a_, &cursor).empty());

  // A transaction that has its id before a read and writes after it: the
  // read's cursor is at most that id, so the next read has its change.
  auto holder = PgConn::Open(uri_);
  ASSERT_TRUE(holder.ok()) << holder.status().message();
  ASSERT_TRUE((*holder)->Exec("BEGIN").ok());
  ASSERT_TRUE((*holder)->Query("SELECT pg_current_xact_id()").ok());
  const std::string w = b_->Submit(Job("w"))->job_id;  // a later transaction, committed first
  EXPECT_EQ(Changed(*a_, &cursor), (std::vector<std::string>{w + " queued"}));
  ASSERT_TRUE((*holder)->Query("UPDATE jobs SET cancel_requested = TRUE WHERE id = $1", {Param(x)}).ok());
  ASSERT_TRUE((*holder)->Exec("COMMIT").ok());
  const std::vector<std::string> late = Changed(*a_, &cursor);
  EXPECT_NE(std::find(late.begin(), late.end(), x + " queued cancel"), late.end())
      << "the change committed after the read that followed its transaction's start";

  JobUpdate end;
  end.job_id = z;
  end.state = JobState::kCancelled;
  ASSERT_EQ(*a_->Apply({end}), std::vector<bool>{true});
  EXPECT_EQ(Changed(*a_, &cursor), (std::vector<std::string>{z + " cancelled"}));
  EXPECT_TRUE(Changed(*a_, &cursor).empty());
}

// On SQLite the one daemon's store logs its own changes: after the first
// read (every unfinished job), a read gives only the jobs made, cancelled or
// moved since, and nothing when nothing changed. A cursor older than one
// already read past, or one from another store, reads every unfinished job
// again.
TEST(SqliteLeaseTest, ChangedMarksGiveWhatTheDaemonChangedSinceTheLastRead) {
  std::string dir = (std::filesystem::temp_directory_path() / "meridian-marks-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  auto s = testing::OpenStoreOn(dir + "/meridian.db");
  ASSERT_TRUE(s);
  const std::string x = s->Submit(Job("x"))->job_id;
  const std::string y = s->Submit(Job("y"))->job_id;
  int64_t cursor = 0;
  EXPECT_EQ(Changed(*s, &cursor), (std::vector<std::string>{x + " queued", y + " queued"}));
  EXPECT_GT(cursor, 0);
  const int64_t first = cursor;
  EXPECT_TRUE(Changed(*s, &cursor).empty()) << "nothing changed: nothing read";

  const std::string z = s->Submit(Job("z"))->job_id;
  JobUpdate cancel;
  cancel.job_id = x;
  cancel.cancel_requested = true;
  JobUpdate note;  // neither state nor cancel flag: not a change the marks follow
  note.job_id = y;
  note.reason = "waiting";
  ASSERT_EQ(*s->Apply({cancel, note}), (std::vector<bool>{true, true}));
  EXPECT_EQ(Changed(*s, &cursor), (std::vector<std::string>{x + " queued cancel", z + " queued"}));
  EXPECT_TRUE(Changed(*s, &cursor).empty());

  JobUpdate end;  // a finished job is given too, so the reader lets it go
  end.job_id = z;
  end.state = JobState::kCancelled;
  JobUpdate again = end;  // changed twice since the last read: given once
  again.job_id = x;
  JobUpdate gone;  // a job that does not exist changes nothing
  gone.job_id = "j-99999999";
  gone.state = JobState::kCancelled;
  ASSERT_EQ(*s->Apply({end, gone}), (std::vector<bool>{true, false}));
  ASSERT_EQ(*s->Apply({again}), std::vector<bool>{true});
  const int64_t before_end = cursor;
  EXPECT_EQ(Changed(*s, &cursor),
            (std::vector<std::string>{x + " cancelled cancel", z + " cancelled"}));  // x's flag stays

  // Read past already: every unfinished job (y), whatever the log holds.
  int64_t old = first;
  EXPECT_EQ(Changed(*s, &old), (std::vector<std::string>{y + " queued"}));
  int64_t stale = before_end;
  EXPECT_EQ(Changed(*s, &stale), (std::vector<std::string>{y + " queued"}));
  int64_t foreign = cursor + 1000;
  EXPECT_EQ(Changed(*s, &foreign), (std::vector<std::string>{y + " queued"}));
  s.reset();
  std::filesystem::remove_all(dir);
}

TEST(SqliteLeaseTest, TheOneDaemonOnAFileAlwaysLeads) {
  std::string dir = (std::filesystem::temp_directory_path() / "meridian-lease-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  auto s = testing::OpenStoreOn(dir + "/meridian.db");
  ASSERT_TRUE(s);
  EXPECT_EQ(*s->TakeLease("a", 1000), 1);
  EXPECT_EQ(*s->TakeLease("a", 1000), 1);
  EXPECT_TRUE(*s->RenewLease("a", 1, 1000));
  s->FenceWrites(1);
  EXPECT_TRUE(s->Submit(Job("j")).ok());
  s.reset();
  std::filesystem::remove_all(dir);
}

// ActiveMarks, on both stores: every unfinished job, by seq, with the cancel
// flag another writer set, and none that finished.
template <typename Kind>
class MarksTest : public ::testing::Test {};
TYPED_TEST_SUITE(MarksTest, testing::StoreKinds, testing::StoreKindName);

TYPED_TEST(MarksTest, EveryUnfinishedJobWithItsCancelFlag) {
  std::string dir = (std::filesystem::temp_directory_path() / "meridian-marks-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  auto db = TypeParam::MakeDb(dir);
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto s = testing::OpenStoreOn(*db);
  ASSERT_TRUE(s);
  std::vector<std::string> ids;
  for (const char* name : {"a", "b", "c"}) ids.push_back(s->Submit(Job(name))->job_id);
  JobUpdate cancel;
  cancel.job_id = ids[1];
  cancel.cancel_requested = true;
  JobUpdate end;
  end.job_id = ids[2];
  end.state = JobState::kCancelled;
  ASSERT_EQ(*s->Apply({cancel, end}), (std::vector<bool>{true, true}));
  auto marks = s->ActiveMarks();
  ASSERT_TRUE(marks.ok()) << marks.status().message();
  // a (queued), b (queued, cancel asked); c ended, so left out.
  ASSERT_EQ(marks->size(), 2u);
  EXPECT_EQ((*marks)[0].id, ids[0]);
  EXPECT_EQ((*marks)[0].seq, 1);
  EXPECT_FALSE((*marks)[0].cancel_requested);
  EXPECT_EQ((*marks)[1].id, ids[1]);
  EXPECT_EQ((*marks)[1].state, JobState::kQueued);
  EXPECT_TRUE((*marks)[1].cancel_requested);
  s.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace meridian::control
