// Retention against the real daemon: a month passes by moving the stored
// times back (the daemon is stopped meanwhile), then the restarted daemon's
// reconcile loop deletes what is past the retention (default 30 days) with
// its files and keeps everything else; idempotency keys expire after 24
// hours; a job's log stops at node.max_log_bytes and says so; bad values
// are refused naming the field and the value.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "control/sqlite.h"
#include "control/test_daemon.h"

namespace meridian::control {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;
using testing::GetJob;
using testing::SubmitJob;

constexpr int64_t kDay = 86400;

class RetentionTest : public ::testing::Test {
 protected:
  void Begin(const std::string& extra = "") {
    dir_ = testing::MakeTempDir("retention");
    daemon_ = std::make_unique<DaemonProcess>(dir_, 4, extra);
    daemon_->Start();
    token_ = daemon_->Token("alice");
    http_ = daemon_->Client();
  }
  void TearDown() override {
    // A long job is cancelled even when the test failed before it did, so
    // no process outlives the test.
    if (!long_job_.empty() && http_) {
      http_->Post(("/v1/jobs/" + long_job_ + "/cancel").c_str(), Auth(token_), "",
                  "application/json");
      WaitFor(long_job_, 200, "cancelled");
    }
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }
  std::string State() const { return dir_ + "/meridian.db.state"; }

  static json Spec(const std::string& name, std::vector<std::string> command) {
    return {{"name", name},
            {"kind", "data-science"},
            {"resources", {{"gpus", 1}, {"gpu_models", {"T4"}}}},
            {"command", command}};
  }
  // Polls until GET /v1/jobs/{id} answers `status` and, for 200, the job is
  // in `state` (or 15 s pass).
  bool WaitFor(const std::string& id, int status, const std::string& state = "") {
    for (int i = 0; i < 300; ++i) {
      auto r = http_->Get(("/v1/jobs/" + id).c_str(), Auth(token_));
      if (r && r->status == status &&
          (state.empty() || json::parse(r->body)["state"] == state)) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << id << " never answered " << status << " " << state << "\n" << daemon_->Log();
    return false;
  }
  // Runs SQL on the stopped daemon's database (a month passing).
  void Exec(const std::string& sql) {
    auto db = Db::Open(daemon_->db(), DbOptions{});
    ASSERT_TRUE(db.ok()) << db.status().message();
    Status st = (*db)->Exec(sql);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  // POST /v1/jobs with an Idempotency-Key: (status, job id).
  std::pair<int, std::string> SubmitWithKey(const json& spec, const std::string& key) {
    httplib::Headers h = Auth(token_);
    h.emplace("Idempotency-Key", key);
    auto r = http_->Post("/v1/jobs", h, spec.dump(), "application/json");
    if (!r) return {0, ""};
    return {r->status, json::parse(r->body).value("id", "")};
  }

  std::string dir_, token_, long_job_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

TEST_F(RetentionTest, FinishedJobsOlderThan30DaysGoWithTheirFilesAndOthersStay) {
  Begin();  // no retention: in the config, so the default (30 days)
  const std::string old_job = SubmitJob(*http_, token_, Spec("old", {"/bin/sh", "-c", "echo old"}));
  const std::string young = SubmitJob(*http_, token_, Spec("young", {"/bin/sh", "-c", "echo young"}));
  const std::string running = SubmitJob(*http_, token_, Spec("long", {"sleep", "600"}));
  long_job_ = running;
  ASSERT_TRUE(WaitFor(old_job, 200, "succeeded"));
  ASSERT_TRUE(WaitFor(young, 200, "succeeded"));
  ASSERT_TRUE(WaitFor(running, 200, "running"));
  ASSERT_TRUE(fs::exists(State() + "/jobs/" + old_job + "/logs/stdout.log"));
  ASSERT_TRUE(fs::exists(State() + "/backend/attempts/" + old_job + ".1.run"));

  daemon_->Kill(SIGTERM);
  // old ended 31 days ago, young 29 days ago; the running job was submitted
  // and started a year ago and has no end.
  Exec("UPDATE jobs SET ended_at = ended_at - " + std::to_string(31 * kDay) + " WHERE id = '" +
       old_job + "';" + "UPDATE jobs SET ended_at = ended_at - " + std::to_string(29 * kDay) +
       " WHERE id = '" + young + "';" + "UPDATE jobs SET submitted_at = submitted_at - " +
       std::to_string(365 * kDay) + ", started_at = started_at - " + std::to_string(365 * kDay) +
       " WHERE id = '" + running + "';");
  daemon_->Start();
  http_ = daemon_->Client();  // a new port

  ASSERT_TRUE(WaitFor(old_job, 404));
  auto events = http_->Get(("/v1/jobs/" + old_job + "/events").c_str(), Auth(token_));
  ASSERT_TRUE(events);
  EXPECT_EQ(events->status, 404);
  EXPECT_FALSE(fs::exists(State() + "/jobs/" + old_job));
  EXPECT_FALSE(fs::exists(State() + "/backend/attempts/" + old_job + ".1.run"));
  EXPECT_FALSE(fs::exists(State() + "/backend/attempts/" + old_job + ".1.status"));
  EXPECT_NE(daemon_->Log().find("retention: deleted 1 finished jobs"), std::string::npos)
      << daemon_->Log();

  EXPECT_EQ(GetJob(*http_, token_, young)["state"], "succeeded");
  EXPECT_TRUE(fs::exists(State() + "/jobs/" + young + "/logs/stdout.log"));
  EXPECT_TRUE(fs::exists(State() + "/backend/attempts/" + young + ".1.run"));
  EXPECT_EQ(GetJob(*http_, token_, running)["state"], "running");
  EXPECT_TRUE(fs::exists(State() + "/jobs/" + running));

  // A new job after the deletion gets a new id, not the deleted one's.
  const std::string next = SubmitJob(*http_, token_, Spec("next", {"true"}));
  EXPECT_NE(next, old_job);
}

TEST_F(RetentionTest, AnIdempotencyKeyMakesANewJobOnce24HoursHavePassed) {
  Begin("retention: 7d\n");
  const json spec = Spec("nightly", {"true"});
  auto [s1, expiring] = SubmitWithKey(spec, "nightly-1");
  auto [s2, live] = SubmitWithKey(spec, "nightly-2");
  ASSERT_EQ(s1, 201);
  ASSERT_EQ(s2, 201);
  daemon_->Kill(SIGTERM);
  // nightly-1 was first used 24 h ago, nightly-2 23 h ago.
  Exec("UPDATE idempotency SET created_at = created_at - " + std::to_string(kDay) +
       " WHERE key = 'nightly-1';" + "UPDATE idempotency SET created_at = created_at - " +
       std::to_string(23 * 3600) + " WHERE key = 'nightly-2';");
  daemon_->Start();
  http_ = daemon_->Client();  // a new port
  auto [r1, renewed] = SubmitWithKey(spec, "nightly-1");
  EXPECT_EQ(r1, 201);
  EXPECT_NE(renewed, expiring);
  auto [r2, same] = SubmitWithKey(spec, "nightly-2");
  EXPECT_EQ(r2, 200);
  EXPECT_EQ(same, live);
  // The renewed key now answers with its new job.
  auto [r3, again] = SubmitWithKey(spec, "nightly-1");
  EXPECT_EQ(r3, 200);
  EXPECT_EQ(again, renewed);
}

TEST_F(RetentionTest, AJobsLogStopsAtNodeMaxLogBytesAndSaysHowMuchWasDropped) {
  dir_ = testing::MakeTempDir("retention");
  daemon_ = std::make_unique<DaemonProcess>(
      dir_, std::string("region: gcp:us-central1\nreconcile_interval_ms: 50\n"
                        "node: {name: testnode, gpu_model: T4, gpus: 4, vcpus: 8, ram_gib: 32, "
                        "max_log_bytes: 65536}\n"));
  daemon_->Start();
  token_ = daemon_->Token("alice");
  http_ = daemon_->Client();
  const std::string id =
      SubmitJob(*http_, token_, Spec("chatty", {"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}));
  ASSERT_TRUE(WaitFor(id, 200, "succeeded"));
  auto r = http_->Get(("/v1/jobs/" + id + "/logs?stream=stdout").c_str(), Auth(token_));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  // 100000 bytes written, 65536 kept: 100000 - 65536 = 34464 dropped.
  EXPECT_EQ(r->body, std::string(65536, 'x') +
                         "\n[meridian: the job's logs reached their cap of 65536 bytes; what the "
                         "job writes to this stream from here on is dropped]\n"
                         "[meridian: 34464 bytes dropped past the log cap of 65536 bytes]\n");
}

TEST_F(RetentionTest, ABadMaxLogBytesIsRefusedNamingTheFieldAndTheValue) {
  dir_ = testing::MakeTempDir("retention");
  std::ofstream(dir_ + "/serve.yaml") << "node: {max_log_bytes: 100}\n";
  int rc = 0;
  const std::string out = testing::RunCommand(
      {"/bin/sh", "-c",
       std::string(MERIDIAN_BINARY) + " serve --listen 127.0.0.1:0 --db " + dir_ +
           "/meridian.db --config " + dir_ + "/serve.yaml 2>&1"},
      &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("node.max_log_bytes: \"100\" must be 0 (no cap) or 4096 to 2^50 bytes"),
            std::string::npos)
      << out;
}

TEST_F(RetentionTest, ABadRetentionIsRefusedNamingTheFieldAndTheValue) {
  dir_ = testing::MakeTempDir("retention");
  struct Case {
    std::string value, message;
  };
  const std::vector<Case> cases = {
      {"30m", "retention: \"30m\" must be a duration of at least 1h (\"30d\")"},
      {"soon", "retention: \"soon\" must be a duration of at least 1h (\"30d\")"},
      {"-5d", "retention: \"-5d\" must be a duration of at least 1h (\"30d\")"},
  };
  for (const Case& c : cases) {
    std::ofstream(dir_ + "/serve.yaml") << "retention: " << c.value << "\n";
    int rc = 0;
    const std::string out = testing::RunCommand(
        {"/bin/sh", "-c",
         std::string(MERIDIAN_BINARY) + " serve --listen 127.0.0.1:0 --db " + dir_ +
             "/meridian.db --config " + dir_ + "/serve.yaml 2>&1"},
        &rc);
    EXPECT_EQ(rc, 2) << c.value << ": " << out;  // bad input
    EXPECT_NE(out.find(c.message), std::string::npos) << c.value << ": " << out;
  }
}

}  // namespace
}  // namespace meridian::control
