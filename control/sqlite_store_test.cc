// The store's text edge: states are written as the API's words (so databases
// from before the enums still open), read back as enums, and a stored word
// that is not a state is an error naming the job or node and the word.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "control/sqlite.h"
#include "control/store.h"

namespace meridian::control {
namespace {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "meridian-store-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    SqliteOptions o;
    o.path = dir_ + "/meridian.db";
    auto s = OpenSqliteStore(o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(s).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Submit(const std::string& name) {
    NewJob job;
    job.tenant = "t";
    job.name = name;
    job.kind = "training";
    job.priority = "normal";
    job.spec_json = "{}";
    job.submitted_at = 1796000000;
    auto r = store_->Submit(job);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r->job_id : "";
  }

  // What the database holds, read with SQL rather than through the store.
  std::string StoredText(const std::string& sql) {
    auto db = Db::Open(dir_ + "/meridian.db", DbOptions{});
    if (!db.ok()) return "open: " + db.status().message();
    auto s = (*db)->Prepare(sql);
    if (!s.ok()) return "prepare: " + s.status().message();
    auto row = (*s)->Step();
    if (!row.ok() || !*row) return "no row";
    std::string v = (*s)->Text(0);
    (*s)->Reset();
    return v;
  }

  Status Exec(const std::string& sql) {
    auto db = Db::Open(dir_ + "/meridian.db", DbOptions{});
    if (!db.ok()) return db.status();
    return (*db)->Exec(sql);
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(SqliteStoreTest, StatesAreStoredAsTheApiWordsAndReadBack) {
  const std::string a = Submit("a"), b = Submit("b");
  JobUpdate u;
  u.job_id = b;
  u.expect_state = JobState::kQueued;
  u.state = JobState::kScheduled;
  u.message = "placed";
  u.at = 1796000001;
  auto applied = store_->Apply({u});
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, std::vector<bool>{true});
  // Applied again, the expected state no longer holds.
  applied = store_->Apply({u});
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(*applied, std::vector<bool>{false});

  EXPECT_EQ(StoredText("SELECT state FROM jobs WHERE id='" + b + "'"), "scheduled");
  EXPECT_EQ(StoredText("SELECT from_state || '>' || to_state FROM events WHERE job_id='" + b +
                       "' AND seq=2"),
            "queued>scheduled");
  auto job = store_->GetJob(b);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kScheduled);

  ListFilter f;
  f.state = JobState::kQueued;
  auto queued = store_->ListJobs(f);
  ASSERT_TRUE(queued.ok());
  ASSERT_EQ(queued->size(), 1u);
  EXPECT_EQ((*queued)[0].id, a);

  auto counts = store_->CountByState();
  ASSERT_TRUE(counts.ok());
  using Count = std::pair<JobState, int64_t>;
  std::vector<Count> got = *counts;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<Count>{{JobState::kQueued, 1}, {JobState::kScheduled, 1}}));
}

TEST_F(SqliteStoreTest, NodeStatesAreStoredAsTheApiWords) {
  NodeRow n;
  n.name = "n1";
  ASSERT_TRUE(store_->UpsertNode(n).ok());
  EXPECT_EQ(StoredText("SELECT state FROM nodes WHERE name='n1'"), "ready");
  ASSERT_TRUE(store_->SetNodeState("n1", NodeState::kDown).ok());
  EXPECT_EQ(StoredText("SELECT state FROM nodes WHERE name='n1'"), "down");
  // A heartbeat brings a down node back.
  ASSERT_TRUE(store_->Heartbeat("n1", 1796000000).ok());
  auto nodes = store_->Nodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].state, NodeState::kReady);
  EXPECT_EQ(store_->SetNodeState("n2", NodeState::kDrained).code(), StatusCode::kNotFound);
}

TEST_F(SqliteStoreTest, AStoredWordThatIsNotAStateIsAnErrorNamingTheJob) {
  Submit("a");
  const std::string bad = Submit("b");
  ASSERT_TRUE(Exec("UPDATE jobs SET state='runing' WHERE id='" + bad + "'").ok());
  const std::string want = "job " + bad + ": stored state \"runing\" is not a job state";

  auto job = store_->GetJob(bad);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(), want);
  auto all = store_->ListJobs({});
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().message(), want);
  auto active = store_->ActiveJobs();
  ASSERT_FALSE(active.ok());
  EXPECT_EQ(active.status().message(), want);
  auto counts = store_->CountByState();
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().message(), want);
  JobUpdate u;
  u.job_id = bad;
  u.message = "a note";
  auto applied = store_->Apply({u});
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().message(), want);
}

TEST_F(SqliteStoreTest, AStoredWordThatIsNotANodeStateIsAnErrorNamingTheNode) {
  NodeRow n;
  n.name = "n1";
  ASSERT_TRUE(store_->UpsertNode(n).ok());
  ASSERT_TRUE(Exec("UPDATE nodes SET state='drainded' WHERE name='n1'").ok());
  auto nodes = store_->Nodes();
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().message(), "node n1: stored state \"drainded\" is not a node state");
}

}  // namespace
}  // namespace meridian::control
