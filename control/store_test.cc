// The store's text edge, on SQLite and on PostgreSQL: states are written as
// the API's words (so databases from before the enums still open), read back
// as enums, and a stored word that is not a state is an error naming the job
// or node and the word.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "control/store.h"
#include "control/store_test_kinds.h"

namespace meridian::control {
namespace {

template <typename Kind>
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "meridian-store-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto db = Kind::MakeDb(dir_);
    ASSERT_TRUE(db.ok()) << db.status().message();
    db_ = *db;
    SqliteOptions o;
    o.path = db_;
    auto s = OpenStore(o);
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
    auto t = Kind::Text(db_, sql);
    return t.ok() ? *t : "error: " + t.status().message();
  }

  Status Exec(const std::string& sql) { return Kind::Exec(db_, sql); }

  std::string dir_, db_;
  std::unique_ptr<Store> store_;
};

TYPED_TEST_SUITE(StoreTest, testing::StoreKinds, testing::StoreKindName);

TYPED_TEST(StoreTest, StatesAreStoredAsTheApiWordsAndReadBack) {
  const std::string a = this->Submit("a"), b = this->Submit("b");
  JobUpdate u;
  u.job_id = b;
  u.expect_state = JobState::kQueued;
  u.state = JobState::kScheduled;
  u.message = "placed";
  u.at = 1796000001;
  auto applied = this->store_->Apply({u});
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, std::vector<bool>{true});
  // Applied again, the expected state no longer holds.
  applied = this->store_->Apply({u});
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(*applied, std::vector<bool>{false});

  EXPECT_EQ(this->StoredText("SELECT state FROM jobs WHERE id='" + b + "'"), "scheduled");
  EXPECT_EQ(this->StoredText("SELECT from_state || '>' || to_state FROM events WHERE job_id='" + b +
                       "' AND seq=2"),
            "queued>scheduled");
  auto job = this->store_->GetJob(b);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kScheduled);

  ListFilter f;
  f.state = JobState::kQueued;
  auto queued = this->store_->ListJobs(f);
  ASSERT_TRUE(queued.ok());
  ASSERT_EQ(queued->size(), 1u);
  EXPECT_EQ((*queued)[0].id, a);

  auto counts = this->store_->CountByState();
  ASSERT_TRUE(counts.ok());
  using Count = std::pair<JobState, int64_t>;
  std::vector<Count> got = *counts;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<Count>{{JobState::kQueued, 1}, {JobState::kScheduled, 1}}));
}

TYPED_TEST(StoreTest, NodeStatesAreStoredAsTheApiWords) {
  NodeRow n;
  n.name = "n1";
  ASSERT_TRUE(this->store_->UpsertNode(n).ok());
  EXPECT_EQ(this->StoredText("SELECT state FROM nodes WHERE name='n1'"), "ready");
  ASSERT_TRUE(this->store_->SetNodeState("n1", NodeState::kDown).ok());
  EXPECT_EQ(this->StoredText("SELECT state FROM nodes WHERE name='n1'"), "down");
  // A heartbeat brings a down node back.
  ASSERT_TRUE(this->store_->Heartbeat("n1", 1796000000).ok());
  auto nodes = this->store_->Nodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].state, NodeState::kReady);
  EXPECT_EQ(this->store_->SetNodeState("n2", NodeState::kDrained).code(), StatusCode::kNotFound);
}

TYPED_TEST(StoreTest, AStoredWordThatIsNotAStateIsAnErrorNamingTheJob) {
  this->Submit("a");
  const std::string bad = this->Submit("b");
  ASSERT_TRUE(this->Exec("UPDATE jobs SET state='runing' WHERE id='" + bad + "'").ok());
  const std::string want = "job " + bad + ": stored state \"runing\" is not a job state";

  auto job = this->store_->GetJob(bad);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(), want);
  auto all = this->store_->ListJobs({});
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().message(), want);
  auto active = this->store_->ActiveJobs();
  ASSERT_FALSE(active.ok());
  EXPECT_EQ(active.status().message(), want);
  auto counts = this->store_->CountByState();
  ASSERT_FALSE(counts.ok());
  EXPECT_EQ(counts.status().message(), want);
  JobUpdate u;
  u.job_id = bad;
  u.message = "a note";
  auto applied = this->store_->Apply({u});
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().message(), want);
}

TYPED_TEST(StoreTest, AStoredWordThatIsNotANodeStateIsAnErrorNamingTheNode) {
  NodeRow n;
  n.name = "n1";
  ASSERT_TRUE(this->store_->UpsertNode(n).ok());
  ASSERT_TRUE(this->Exec("UPDATE nodes SET state='drainded' WHERE name='n1'").ok());
  auto nodes = this->store_->Nodes();
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().message(), "node n1: stored state \"drainded\" is not a node state");
}

}  // namespace
}  // namespace meridian::control
