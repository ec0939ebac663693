// Crash safety: kill -9 the daemon while concurrent clients have about 1,000
// submissions in flight, restart it, retry the unacknowledged ones with the
// same idempotency keys, and check that every acknowledged job is there
// exactly once with its events. Repeated at several random points.
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "control/test_daemon.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;

constexpr int kClients = 8;
constexpr int kPerRound = 1000;

// The scheduler rejects these on the test fleet (an A100 job on a T4 node), so
// they move on to failed while submissions go on: the reconciler writes too.
std::string Body(const std::string& key) {
  return R"({"name": ")" + key +
         R"(", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["A100-80GB"]},
             "command": ["/bin/true"]})";
}

struct Ledger {
  std::mutex mu;
  std::map<std::string, std::string> acked;  // key -> job id
};

// Submits `keys` from kClients threads; stops a thread at its first transport error.
void SubmitAll(int port, const std::string& token, const std::vector<std::string>& keys,
               Ledger* ledger) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      c.set_connection_timeout(1, 0);
      c.set_read_timeout(5, 0);
      for (;;) {
        size_t i = next++;
        if (i >= keys.size()) return;
        httplib::Headers h = Auth(token);
        h.emplace("Idempotency-Key", keys[i]);
        auto r = c.Post("/v1/jobs", h, Body(keys[i]), "application/json");
        if (!r) return;  // the daemon is gone
        if (r->status == 201 || r->status == 200) {
          auto j = json::parse(r->body, nullptr, false);
          std::lock_guard<std::mutex> l(ledger->mu);
          auto [it, fresh] = ledger->acked.emplace(keys[i], j["id"].get<std::string>());
          EXPECT_TRUE(fresh || it->second == j["id"]) << keys[i];
        } else {
          ADD_FAILURE() << keys[i] << ": " << r->status << " " << r->body;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST(CrashTest, KillNineLosesNoAcknowledgedJobAndDuplicatesNone) {
  const std::string dir = testing::MakeTempDir("crash");
  testing::DaemonProcess daemon(dir);
  daemon.Start();
  const std::string token = daemon.Token("alice");
  std::mt19937 rng(20261202);
  Ledger ledger;
  std::vector<std::string> all_keys;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::string> keys;
    for (int i = 0; i < kPerRound; ++i) keys.push_back("r" + std::to_string(round) + "-" + std::to_string(i));
    all_keys.insert(all_keys.end(), keys.begin(), keys.end());
    // Kill after a random number of acknowledgements (50..700 of 1,000).
    const size_t kill_after = std::uniform_int_distribution<size_t>(50, 700)(rng);
    const size_t acked_before = ledger.acked.size();
    std::thread killer([&] {
      for (int i = 0; i < 2000; ++i) {
        {
          std::lock_guard<std::mutex> l(ledger.mu);
          if (ledger.acked.size() >= acked_before + kill_after) break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
      daemon.Kill(SIGKILL);
    });
    SubmitAll(daemon.port(), token, keys, &ledger);
    killer.join();
    daemon.Start();
    // Retry what was not acknowledged, and a sample of what was, with the same keys.
    std::vector<std::string> retry;
    {
      std::lock_guard<std::mutex> l(ledger.mu);
      for (size_t i = 0; i < keys.size(); ++i) {
        if (!ledger.acked.count(keys[i]) || i % 10 == 0) retry.push_back(keys[i]);
      }
    }
    SubmitAll(daemon.port(), token, retry, &ledger);
  }
  ASSERT_EQ(ledger.acked.size(), all_keys.size());

  // Every acknowledged job is present exactly once, under the id it was acknowledged with.
  auto http = daemon.Client();
  std::map<std::string, int> seen_names;
  std::set<std::string> ids;
  std::string page;
  for (int guard = 0; guard < 100; ++guard) {
    std::string path = "/v1/jobs?limit=1000" + (page.empty() ? "" : "&page_token=" + page);
    auto r = http->Get(path.c_str(), Auth(token));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    json j = json::parse(r->body);
    for (const auto& job : j["jobs"]) {
      seen_names[job["name"]]++;
      ids.insert(job["id"]);
    }
    if (j["next_page_token"].is_null()) break;
    page = j["next_page_token"];
  }
  EXPECT_EQ(ids.size(), all_keys.size());
  for (const auto& [key, id] : ledger.acked) {
    EXPECT_EQ(seen_names[key], 1) << key;
    EXPECT_TRUE(ids.count(id)) << key << " " << id;
  }
  // Their events: each begins with the submission, and a job that left the
  // queue has the transition that took it out.
  int checked = 0;
  for (const auto& [key, id] : ledger.acked) {
    if (checked++ % 25 != 0) continue;
    auto r = http->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token));
    ASSERT_TRUE(r);
    json ev = json::parse(r->body)["events"];
    ASSERT_FALSE(ev.empty()) << id;
    EXPECT_EQ(ev[0]["to"], "queued");
    auto job = json::parse(http->Get(("/v1/jobs/" + id).c_str(), Auth(token))->body);
    EXPECT_EQ(ev.back()["type"] == "state" ? ev.back()["to"] : job["state"], job["state"]) << id;
  }
  daemon.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
}

// One daemon writes a SQLite file (its job numbers and the leader's view of
// what changed are its own): a second `meridian serve` on the file while the
// first runs is refused at start, exit 2, naming --db, the file and the
// first's pid, and writes nothing. Once the first has gone, even killed with
// SIGKILL, the next one starts on the same file and serves its jobs.
TEST(CrashTest, ASecondDaemonOnASqliteFileIsRefusedWhileTheFirstRuns) {
  const std::string dir = testing::MakeTempDir("second-daemon");
  testing::DaemonProcess first(dir);
  first.Start();
  ASSERT_TRUE(first.running());
  const std::string token = first.Token("alice");
  auto http = first.Client();
  const std::string id = testing::SubmitJob(
      *http, token,
      json{{"name", "kept"}, {"kind", "data-science"}, {"resources", {{"gpus", 0}, {"vcpus", 1}}},
           {"command", {"/bin/true"}}});
  ASSERT_FALSE(id.empty());
  pid_t pid = 0;
  {
    std::ifstream lock(first.db() + "-serve.lock");
    lock >> pid;
  }
  ASSERT_GT(pid, 0) << "the lock file names its holder";
  {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    const std::string argv(std::istreambuf_iterator<char>(cmdline), {});
    EXPECT_NE(argv.find(first.db()), std::string::npos) << "pid " << pid << " is not the daemon";
  }

  int rc = 0;
  const std::string out = testing::RunCommand(
      {"/bin/sh", "-c",
       // Bounded: a second daemon that started would serve until killed.
       "timeout 30 " + std::string(MERIDIAN_BINARY) + " serve --listen 127.0.0.1:0 --db '" +
           first.db() + "' --config '" + dir + "/serve.yaml' 2>&1"},
      &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--db: " + first.db() + " is served by another meridian serve (pid " +
                     std::to_string(pid) + ")"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("listening on"), std::string::npos) << out;
  // The first still serves, unaffected.
  EXPECT_EQ(testing::GetJob(*http, token, id)["name"], "kept");

  first.Kill(SIGKILL);
  testing::DaemonProcess next(dir);
  next.Start();
  ASSERT_TRUE(next.running());
  auto again = next.Client();
  EXPECT_EQ(testing::GetJob(*again, token, id)["name"], "kept");
  next.Kill(SIGTERM);
  testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace meridian::control
