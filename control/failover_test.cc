// Failover: three replicas of the real daemon (`meridian serve`, local
// backend) on loopback serve one real PostgreSQL (control/test_postgres.h)
// and share one state directory. kJobs CPU jobs are submitted round-robin
// with idempotency keys, a client whose replica does not answer trying the
// next with the same key, while the leader is killed with SIGKILL twice and
// restarted (as a follower). Each time another replica leads within 10 s;
// afterwards there are kJobs distinct jobs, one per key, each run to success
// exactly once (its attempt adopted by the new leader, never started again).
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "control/job_state.h"
#include "control/pg.h"
#include "control/pg_lease.h"
#include "control/test_daemon.h"
#include "control/test_postgres.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;

constexpr int kReplicas = 3;
constexpr int kJobs = 300;
constexpr int kKills = 2;
constexpr int kClients = 3;
constexpr int kPaceMs = 100;  // between one client's submissions: 300 jobs take about 10 s
constexpr double kTakeoverLimitS = 10.0;

// Job `i`: every tenth sleeps 12 s, longer than a takeover, so it runs
// across a kill and the new leader re-adopts it; the rest 0.1 s.
// Each run appends "start" and then "done" to runs/<job id>.
std::string Body(const std::string& runs, int i) {
  const std::string sleep = i % 10 == 0 ? "12" : "0.1";
  const std::string script = "echo start >> " + runs + "/$MERIDIAN_JOB_ID; sleep " + sleep +
                             "; echo done >> " + runs + "/$MERIDIAN_JOB_ID";
  return json{{"name", "f" + std::to_string(i)},
              {"kind", "data-science"},
              {"resources", {{"gpus", 0}, {"vcpus", 1}, {"ram_gib", 0.25}}},
              {"command", {"/bin/sh", "-c", script}}}
      .dump();
}

// A test's folders: root, the replicas' state directory (0711) and runs/,
// the jobs' own record, writable by the tenant's uid when the daemon runs as
// root (jobs then run as a uid of their tenant).
struct Dirs {
  std::string root, state, runs;
};
Dirs MakeDirs(const std::string& tag) {
  Dirs d;
  d.root = testing::MakeTempDir(tag);
  d.state = d.root + "/state";
  d.runs = d.root + "/runs";
  EXPECT_TRUE(std::filesystem::create_directories(d.state));
  EXPECT_TRUE(std::filesystem::create_directories(d.runs));
  chmod(d.state.c_str(), 0711);
  EXPECT_EQ(chmod(d.runs.c_str(), 01777), 0);
  return d;
}

// The role a replica's /healthz gives ("" when it does not answer).
std::string Role(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(0, 300000);
  c.set_read_timeout(1, 0);
  auto r = c.Get("/healthz");
  if (!r || r->status != 200) return "";
  return json::parse(r->body).value("role", "");
}

class Replicas {
 public:
  // `state` "": no --state-dir, the database's default under `default_base`.
  // `extra`: more serve.yaml lines for every replica.
  Replicas(const std::string& db, const std::string& state, const std::string& root,
           const std::string& default_base = "", const std::string& extra = "") {
    for (int i = 0; i < kReplicas; ++i) {
      const std::string dir = root + "/replica" + std::to_string(i);
      std::filesystem::create_directories(dir);
      // The default lease (5 s): the 10 s takeover is the default's.
      daemons_.push_back(std::make_unique<DaemonProcess>(
          dir, "region: gcp:us-central1\nreconcile_interval_ms: 50\n"
               "node: {name: failover, vcpus: 64, ram_gib: 64}\n" + extra));
      daemons_.back()->UseDb(db);
      if (state.empty()) {
        daemons_.back()->UseDefaultStateDir(default_base);
      } else {
        daemons_.back()->UseStateDir(state);
      }
    }
  }
  DaemonProcess& operator[](int i) { return *daemons_[i]; }

  void StartAll() {
    for (auto& d : daemons_) d->Start();
    std::lock_guard<std::mutex> l(mu_);
    for (auto& d : daemons_) ports_.push_back(d->port());
  }
  int Port(int i) {
    std::lock_guard<std::mutex> l(mu_);
    return ports_[i];
  }
  void Restart(int i) {
    daemons_[i]->Start();
    std::lock_guard<std::mutex> l(mu_);
    ports_[i] = daemons_[i]->port();
  }
  // The replicas whose /healthz says leader.
  std::vector<int> Leaders() {
    std::vector<int> out;
    for (int i = 0; i < kReplicas; ++i) {
      if (daemons_[i]->running() && Role(Port(i)) == "leader") out.push_back(i);
    }
    return out;
  }

 private:
  std::vector<std::unique_ptr<DaemonProcess>> daemons_;
  std::mutex mu_;
  std::vector<int> ports_;
};

struct Acked {
  std::mutex mu;
  std::map<std::string, std::string> ids;  // key -> job id
  int retried = 0;                          // tries that went to another replica
};

// Submits job `i` to replica i % kReplicas first; while a replica does not
// answer (or answers 5xx, killed mid-request), the next one, same key.
void SubmitOne(Replicas& replicas, const std::string& token, const std::string& runs, int i,
               Acked* acked) {
  const std::string key = "f" + std::to_string(i);
  for (int attempt = 0; attempt < 300; ++attempt) {
    httplib::Client c("127.0.0.1", replicas.Port((i + attempt) % kReplicas));
    c.set_connection_timeout(1, 0);
    c.set_read_timeout(10, 0);
    httplib::Headers h = Auth(token);
    h.emplace("Idempotency-Key", key);
    auto r = c.Post("/v1/jobs", h, Body(runs, i), "application/json");
    if (r && (r->status == 201 || r->status == 200)) {
      const std::string id = json::parse(r->body)["id"];
      std::lock_guard<std::mutex> l(acked->mu);
      auto [it, fresh] = acked->ids.emplace(key, id);
      EXPECT_EQ(it->second, id) << key << ": acknowledged under two ids";
      acked->retried += attempt > 0;
      return;
    }
    if (r && r->status < 500) {
      ADD_FAILURE() << key << ": " << r->status << " " << r->body;
      return;
    }
    if (attempt % kReplicas == kReplicas - 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ADD_FAILURE() << key << ": no replica took it";
}

// Every job's row, through one replica's API pages.
std::vector<json> AllJobs(int port, const std::string& token) {
  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(10, 0);
  std::vector<json> out;
  std::string page;
  for (int guard = 0; guard < 100; ++guard) {
    auto r = http.Get(("/v1/jobs?limit=1000" + (page.empty() ? "" : "&page_token=" + page)).c_str(),
                      Auth(token));
    if (!r || r->status != 200) return {};
    json j = json::parse(r->body);
    for (auto& job : j["jobs"]) out.push_back(job);
    if (j["next_page_token"].is_null()) break;
    page = j["next_page_token"];
  }
  return out;
}

// True when a live replica lists a running job.
bool SomeJobRuns(Replicas& replicas, const std::string& token) {
  for (int i = 0; i < kReplicas; ++i) {
    if (!replicas[i].running()) continue;
    httplib::Client c("127.0.0.1", replicas.Port(i));
    c.set_read_timeout(5, 0);
    auto r = c.Get("/v1/jobs?state=running&limit=1", Auth(token));
    if (r && r->status == 200) return !json::parse(r->body)["jobs"].empty();
  }
  return false;
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Kills the leader with SIGKILL and waits for another replica to lead:
// the seconds that took (a failure past kTakeoverLimitS), and restarts the
// killed one.
void KillTheLeader(Replicas& replicas, int round) {
  std::vector<int> leaders;
  for (int i = 0; i < 100 && leaders.size() != 1; ++i) {
    leaders = replicas.Leaders();
    if (leaders.size() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(leaders.size(), 1u) << "round " << round << ": exactly one leader";
  const int old = leaders[0];
  replicas[old].Kill(SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    leaders = replicas.Leaders();
    if (!leaders.empty() || SecondsSince(t0) > 3 * kTakeoverLimitS) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double took = SecondsSince(t0);
  std::cerr << "round " << round << ": replica " << old << " killed; replica "
            << (leaders.empty() ? -1 : leaders[0]) << " led after " << took << " s\n";
  ASSERT_EQ(leaders.size(), 1u) << "round " << round << ": no new leader";
  EXPECT_NE(leaders[0], old);
  EXPECT_LT(took, kTakeoverLimitS) << "round " << round;
  replicas.Restart(old);
  EXPECT_EQ(Role(replicas.Port(old)), "follower") << "a restarted replica follows the leader";
}

TEST(ServeFailover, LeaderKilledTwiceEveryJobRunsOnceAndANewLeaderWithinTenSeconds) {
  const auto t_start = std::chrono::steady_clock::now();
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  const Dirs dirs = MakeDirs("failover");
  const std::string &root = dirs.root, &state = dirs.state, &runs = dirs.runs;

  Replicas replicas(*db, state, root);
  replicas.StartAll();
  EXPECT_EQ(replicas.Leaders().size(), 1u) << "one leader among " << kReplicas;
  const std::string token = replicas[0].Token("alice");

  // Clients take job numbers in order, each a submission every kPaceMs, so
  // submissions flow through both kills; a kill comes once a third (then two
  // thirds) of the jobs were handed out and some job runs, so the new leader
  // has attempts to adopt.
  Acked acked;
  std::atomic<int> next{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&] {
      for (int i = next++; i < kJobs; i = next++) {
        SubmitOne(replicas, token, runs, i, &acked);
        std::this_thread::sleep_for(std::chrono::milliseconds(kPaceMs));
      }
    });
  }
  for (int round = 1; round <= kKills; ++round) {
    while (next < kJobs * round / (kKills + 1) || !SomeJobRuns(replicas, token)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    KillTheLeader(replicas, round);
  }
  for (auto& c : clients) c.join();
  ASSERT_EQ(acked.ids.size(), static_cast<size_t>(kJobs));
  std::cerr << "submitted " << kJobs << " (" << acked.retried << " retried on another replica) in "
            << SecondsSince(t_start) << " s\n";

  // Every job ends, as any replica shows.
  std::vector<json> jobs;
  for (int waited = 0; waited < 1200; ++waited) {
    jobs = AllJobs(replicas.Port(waited % kReplicas), token);
    const bool ended = std::all_of(jobs.begin(), jobs.end(), [](const json& j) {
      return IsTerminal(ParseJobState(j["state"].get<std::string>()).value());
    });
    if (ended && jobs.size() >= static_cast<size_t>(kJobs)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::cerr << "all ended " << SecondsSince(t_start) << " s after the start\n";
  // kJobs distinct jobs, one per key, each succeeded after exactly one run.
  std::map<std::string, int> names;
  std::map<std::string, std::string> state_of;
  for (const json& j : jobs) {
    names[j["name"]]++;
    state_of[j["id"]] = j["state"];
  }
  EXPECT_EQ(jobs.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(state_of.size(), static_cast<size_t>(kJobs)) << "distinct ids";
  std::set<std::string> ids;
  for (const auto& [key, id] : acked.ids) {
    ids.insert(id);
    EXPECT_EQ(names[key], 1) << key;
    EXPECT_EQ(state_of[id], "succeeded") << key << " " << id;
    std::ifstream f(runs + "/" + id);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(all, "start\ndone\n") << key << " " << id << ": ran once";
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kJobs)) << "one job per key";
  // The kills came while long jobs ran: a new leader re-adopted some.
  int adopted = 0;
  httplib::Client http("127.0.0.1", replicas.Port(0));
  for (int i = 0; i < kJobs; i += 10) {
    auto r = http.Get(("/v1/jobs/" + acked.ids["f" + std::to_string(i)] + "/events").c_str(),
                      Auth(token));
    adopted += r && r->body.find("re-adopted") != std::string::npos;
  }
  std::cerr << adopted << " of the long jobs adopted by a new leader\n";
  EXPECT_GT(adopted, 0);
  EXPECT_EQ(replicas.Leaders().size(), 1u) << "one leader at the end";
  for (int i = 0; i < kReplicas; ++i) replicas[i].Kill(SIGTERM);
  if (HasFailure()) {
    std::cerr << "kept for a look: " << root << "\n";
    return;
  }
  std::filesystem::remove_all(root);
}

// Waits until every job in `ids` ended; false after `limit_s`.
bool AllEnded(int port, const std::string& token, size_t count, double limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (SecondsSince(t0) < limit_s) {
    std::vector<json> jobs = AllJobs(port, token);
    const bool ended = std::all_of(jobs.begin(), jobs.end(), [](const json& j) {
      return IsTerminal(ParseJobState(j["state"].get<std::string>()).value());
    });
    if (ended && jobs.size() >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}

// A leader paused (SIGSTOP) past its lease, between launches, is deposed:
// another replica leads, and when the old one resumes, still believing it
// leads, its fenced writes fail and its next renewal finds the lease taken,
// so it follows. Every job, submitted before, during and after, runs once.
TEST(ServeFailover, ALeaderPausedPastItsLeaseResumesAsAFollower) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  const Dirs dirs = MakeDirs("paused");
  const std::string &root = dirs.root, &state = dirs.state, &runs = dirs.runs;
  Replicas replicas(*db, state, root);
  replicas.StartAll();
  const std::string token = replicas[0].Token("alice");
  const std::vector<int> leaders = replicas.Leaders();
  ASSERT_EQ(leaders.size(), 1u);
  const int old = leaders[0];
  Acked acked;
  // Job numbers not a multiple of ten: the 0.1 s ones.
  auto submit = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      if (i % 10 != 0) SubmitOne(replicas, token, runs, i, &acked);
    }
  };
  submit(1, 10);
  // Paused between launches. A pause inside a local launch, which a signal
  // cannot aim at, is met by the backend's launch fence and tested there
  // (backends/local/launch_fence_test.cc, control/deposed_launch_test.cc).
  ASSERT_TRUE(AllEnded(replicas.Port(old), token, 9, 60));
  replicas[old].Signal(SIGSTOP);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> now;
  while (SecondsSince(t0) < 3 * kTakeoverLimitS) {
    now.clear();
    for (int i = 0; i < kReplicas; ++i) {
      if (i != old && Role(replicas.Port(i)) == "leader") now.push_back(i);
    }
    if (!now.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(now.size(), 1u) << "no replica took over from the paused leader";
  EXPECT_LT(SecondsSince(t0), kTakeoverLimitS);
  submit(11, 20);  // the paused replica's turns go to the next one
  replicas[old].Signal(SIGCONT);
  // Its next renewal, within a third of the lease (1.7 s), finds the lease taken.
  std::string role;
  const auto t1 = std::chrono::steady_clock::now();
  while (SecondsSince(t1) < 5) {
    role = Role(replicas.Port(old));
    if (role == "follower") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(role, "follower");
  EXPECT_LT(SecondsSince(t1), 3.0);
  EXPECT_NE(replicas[old].Log().find("no longer leading"), std::string::npos);
  EXPECT_EQ(replicas.Leaders(), now);
  submit(21, 30);
  ASSERT_EQ(acked.ids.size(), 27u);  // 1-9, 11-19, 21-29
  ASSERT_TRUE(AllEnded(replicas.Port(now[0]), token, 27, 120));
  for (const auto& [key, id] : acked.ids) {
    std::ifstream f(runs + "/" + id);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(all, "start\ndone\n") << key << " " << id << ": ran once";
  }
  for (int i = 0; i < kReplicas; ++i) replicas[i].Kill(SIGTERM);
  if (HasFailure()) {
    std::cerr << "kept for a look: " << root << "\n";
    return;
  }
  std::filesystem::remove_all(root);
}

// The state of job `id` as replica `port` shows it ("" when it does not answer).
std::string StateOf(int port, const std::string& token, const std::string& id) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  auto r = c.Get(("/v1/jobs/" + id).c_str(), Auth(token));
  return r && r->status == 200 ? json::parse(r->body).value("state", "") : "";
}

// Waits up to `limit_s` for job `id` to reach `state`; the seconds it took,
// or a negative number when it did not.
double WaitForState(int port, const std::string& token, const std::string& id,
                    const std::string& state, double limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (SecondsSince(t0) < limit_s) {
    if (StateOf(port, token, id) == state) return SecondsSince(t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

// A cancel and a drain written through a follower reach the leader through
// the store: the running job is stopped well before its 12 s end, and a job
// submitted after the drain is not placed on the drained node.
TEST(ServeFailover, ACancelAndADrainThroughAFollowerReachTheLeader) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  const Dirs dirs = MakeDirs("follower");
  const std::string &root = dirs.root, &state = dirs.state, &runs = dirs.runs;
  Replicas replicas(*db, state, root);
  replicas.StartAll();
  const std::string token = replicas[0].Token("alice");
  const std::string admin = replicas[0].Token("ops", /*admin=*/true);
  const std::vector<int> leaders = replicas.Leaders();
  ASSERT_EQ(leaders.size(), 1u);
  const int port = replicas.Port((leaders[0] + 1) % kReplicas);  // a follower's
  ASSERT_EQ(Role(port), "follower");
  httplib::Client follower("127.0.0.1", port);
  follower.set_read_timeout(10, 0);

  // Job 0 sleeps 12 s (Body).
  auto r = follower.Post("/v1/jobs", Auth(token), Body(runs, 0), "application/json");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  const std::string id = json::parse(r->body)["id"];
  ASSERT_GE(WaitForState(port, token, id, "running", 30), 0) << "the leader ran it";
  auto c = follower.Post(("/v1/jobs/" + id + "/cancel").c_str(), Auth(token), "", "application/json");
  ASSERT_TRUE(c && c->status == 200) << (c ? c->body : "no answer");
  const double took = WaitForState(port, token, id, "cancelled", 10);
  EXPECT_GE(took, 0) << "the leader never acted on the follower's cancel";
  EXPECT_LT(took, 5.0) << "stopped with SIGTERM, well before its 12 s end";

  auto d = follower.Post("/v1/nodes/failover/drain", Auth(admin), "", "application/json");
  ASSERT_TRUE(d && d->status == 200) << (d ? d->body : "no answer");
  r = follower.Post("/v1/jobs", Auth(token), Body(runs, 1), "application/json");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  const std::string after = json::parse(r->body)["id"];
  // Twenty of the leader's 50 ms cycles and more: a job the leader could
  // place would be running by then (job 0 took well under this).
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(StateOf(port, token, after), "queued") << "placed on the drained node";
  for (int i = 0; i < kReplicas; ++i) replicas[i].Kill(SIGTERM);
  if (!HasFailure()) std::filesystem::remove_all(root);
}

// The directory a daemon's log says it took as its state directory ("" when
// it names none).
std::string StateDirInLog(const std::string& log) {
  const std::string mark = "meridian serve: state directory ";
  const size_t at = log.find(mark);
  if (at == std::string::npos) return "";
  const size_t from = at + mark.size();
  return log.substr(from, log.find(" (", from) - from);
}

// The default directory of a test database, worked by hand from its URI
// ("postgresql://postgres@/DB?host=SOCKETDIR&port=5432"): "DB@SOCKETDIR:5432"
// with each "/" of the socket directory written %2F (the test server's names
// are letters, digits, "-" and "_"), under BASE/postgresql.
std::string ExpectedDefault(const std::string& base, const std::string& uri) {
  const size_t db_at = uri.find("@/") + 2;
  const std::string db = uri.substr(db_at, uri.find('?') - db_at);
  const size_t host_at = uri.find("host=") + 5;
  std::string host = std::filesystem::canonical(uri.substr(host_at, uri.find('&', host_at) - host_at));
  for (size_t at = 0; (at = host.find('/', at)) != std::string::npos; at += 3) host.replace(at, 1, "%2F");
  return base + "/postgresql/" + db + "@" + host + ":5432";
}

// Replicas on one database given no --state-dir share its default directory
// on the host: each names the same one, the local backend's attempts are
// there, and a new leader adopts a job the killed one started (it runs to
// success once, never started again). A replica on another database takes
// another directory.
TEST(ServeFailover, ReplicasWithoutAStateDirShareTheirDatabasesDirectory) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  const Dirs dirs = MakeDirs("default-state");
  const std::string base = dirs.root + "/base";  // $STATE_DIRECTORY, as systemd gives it
  ASSERT_TRUE(std::filesystem::create_directories(base));
  chmod(base.c_str(), 0711);
  Replicas replicas(*db, "", dirs.root, base);
  replicas.StartAll();
  const std::string shared = ExpectedDefault(base, *db);
  for (int i = 0; i < kReplicas; ++i) {
    EXPECT_EQ(StateDirInLog(replicas[i].Log()), shared) << "replica " << i;
  }
  const std::string token = replicas[0].Token("alice");
  std::vector<int> leaders = replicas.Leaders();
  ASSERT_EQ(leaders.size(), 1u);
  const int old = leaders[0];
  const int follower = (old + 1) % kReplicas;
  // Job 0 sleeps 12 s (Body): it runs across the kill.
  httplib::Client c("127.0.0.1", replicas.Port(follower));
  c.set_read_timeout(10, 0);
  auto r = c.Post("/v1/jobs", Auth(token), Body(dirs.runs, 0), "application/json");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  const std::string id = json::parse(r->body)["id"];
  ASSERT_GE(WaitForState(replicas.Port(follower), token, id, "running", 30), 0);
  EXPECT_TRUE(std::filesystem::exists(shared + "/backend")) << "the local backend keeps its attempts there";
  replicas[old].Kill(SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  do {
    leaders = replicas.Leaders();
    if (leaders.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (leaders.empty() && SecondsSince(t0) < 3 * kTakeoverLimitS);
  ASSERT_EQ(leaders.size(), 1u) << "no new leader";
  EXPECT_LT(SecondsSince(t0), kTakeoverLimitS);
  EXPECT_GE(WaitForState(replicas.Port(follower), token, id, "succeeded", 30), 0);
  std::ifstream f(dirs.runs + "/" + id);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "start\ndone\n") << id << ": adopted by the new leader, run once";

  auto other = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(other.ok()) << other.status().message();
  const std::string dir = dirs.root + "/other";
  std::filesystem::create_directories(dir);
  DaemonProcess elsewhere(dir, "region: gcp:us-central1\nnode: {name: other, vcpus: 4, ram_gib: 8}\n");
  elsewhere.UseDb(*other);
  elsewhere.UseDefaultStateDir(base);
  elsewhere.Start();
  const std::string own = StateDirInLog(elsewhere.Log());
  EXPECT_EQ(own, ExpectedDefault(base, *other));
  EXPECT_NE(own, shared);
  elsewhere.Kill(SIGTERM);
  for (int i = 0; i < kReplicas; ++i) replicas[i].Kill(SIGTERM);
  if (HasFailure()) {
    std::cerr << "kept for a look: " << dirs.root << "\n";
    return;
  }
  std::filesystem::remove_all(dirs.root);
}

// j with every time in it ("2026-12-05T18:11:27Z") replaced by "<time>".
json TimesErased(json j) {
  if (j.is_object() || j.is_array()) {
    for (auto& v : j) v = TimesErased(std::move(v));
  } else if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s.size() == 20 && s[4] == '-' && s[10] == 'T' && s[19] == 'Z') j = "<time>";
  }
  return j;
}

// /v1/plan and /v1/fleet read the reconcile loop's fleet, which only the
// leader keeps: a follower answers them with the leader's answer. Without
// that, the follower's plan would be a 409 (no schedulable nodes).
TEST(ServeFailover, AFollowerAnswersPlanAndFleetAsTheLeaderDoes) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  const Dirs dirs = MakeDirs("plan");
  Replicas replicas(*db, dirs.state, dirs.root);
  replicas.StartAll();
  const std::string token = replicas[0].Token("alice");
  const std::vector<int> leaders = replicas.Leaders();
  ASSERT_EQ(leaders.size(), 1u);
  const int follower_port = replicas.Port((leaders[0] + 1) % kReplicas);
  ASSERT_EQ(Role(follower_port), "follower");
  httplib::Client leader("127.0.0.1", replicas.Port(leaders[0]));
  httplib::Client follower("127.0.0.1", follower_port);
  follower.set_read_timeout(10, 0);

  auto want = leader.Post("/v1/plan", Auth(token), Body(dirs.runs, 1), "application/json");
  auto got = follower.Post("/v1/plan", Auth(token), Body(dirs.runs, 1), "application/json");
  ASSERT_TRUE(want && want->status == 200) << (want ? want->body : "no answer");
  ASSERT_TRUE(got && got->status == 200) << (got ? got->body : "no answer");
  // The answers are made at the clock's "now" (a plan starts its placements
  // then), so the two may be a second apart: every time in them is erased.
  auto made_at_erased = [](const std::string& body) {
    json j = json::parse(body);
    j.erase("at");
    return TimesErased(std::move(j));
  };
  EXPECT_EQ(made_at_erased(got->body), made_at_erased(want->body));
  // The one node the replicas' backend offers (Replicas: "failover").
  EXPECT_NE(got->body.find("failover"), std::string::npos) << got->body;

  auto fleet_want = leader.Get("/v1/fleet", Auth(token));
  auto fleet_got = follower.Get("/v1/fleet", Auth(token));
  ASSERT_TRUE(fleet_want && fleet_want->status == 200) << (fleet_want ? fleet_want->body : "");
  ASSERT_TRUE(fleet_got && fleet_got->status == 200) << (fleet_got ? fleet_got->body : "");
  EXPECT_EQ(made_at_erased(fleet_got->body), made_at_erased(fleet_want->body));
  for (int i = 0; i < kReplicas; ++i) replicas[i].Kill(SIGTERM);
  if (!HasFailure()) std::filesystem::remove_all(dirs.root);
}

// The address a replica advertises (serve.yaml's advertise) is the one the
// lease row names and followers forward to: with "localhost" and no port,
// the leader is "localhost:<the port it listens on>", and a follower's plan
// comes back through it; advertised as a name no resolver knows, the
// leader cannot be reached that way and a follower says so (503).
TEST(ServeFailover, FollowersReachTheLeaderAtTheAddressItAdvertises) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  for (const std::string name : {"localhost", "meridian-leader.invalid"}) {
    const Dirs dirs = MakeDirs("advertise");
    Replicas replicas(*db, dirs.state, dirs.root, "", "advertise: " + name + "\n");
    replicas.StartAll();
    const std::string token = replicas[0].Token("alice");
    const std::vector<int> leaders = replicas.Leaders();
    ASSERT_EQ(leaders.size(), 1u);
    auto conn = PgConn::Open(*db);
    ASSERT_TRUE(conn.ok()) << conn.status().message();
    auto holder = SelectPgLeaseHolder(**conn);
    ASSERT_TRUE(holder.ok()) << holder.status().message();
    const std::string where = "@" + name + ":" + std::to_string(replicas.Port(leaders[0]));
    ASSERT_GE(holder->size(), where.size());
    EXPECT_EQ(holder->substr(holder->size() - where.size()), where) << *holder;
    httplib::Client follower("127.0.0.1", replicas.Port((leaders[0] + 1) % kReplicas));
    follower.set_read_timeout(10, 0);
    auto got = follower.Post("/v1/plan", Auth(token), Body(dirs.runs, 1), "application/json");
    ASSERT_TRUE(got) << name;
    EXPECT_EQ(got->status, name == "localhost" ? 200 : 503) << name << ": " << got->body;
    for (int i = 0; i < kReplicas; ++i) replicas[i].Kill(SIGTERM);
    if (!HasFailure()) std::filesystem::remove_all(dirs.root);
  }
}

// A leader stopped cleanly (SIGTERM) hands its lease back on the way out:
// a follower leads at its next try, a third of the 5 s lease later, not
// after the lease would have run out.
TEST(ServeFailover, ALeaderStoppedCleanlyHandsTheLeaseOver) {
  auto db = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(db.ok()) << db.status().message();
  const std::string root = testing::MakeTempDir("handover");
  const std::string state = root + "/state";
  ASSERT_TRUE(std::filesystem::create_directories(state));
  chmod(state.c_str(), 0711);
  Replicas replicas(*db, state, root);
  replicas.StartAll();
  const std::vector<int> leaders = replicas.Leaders();
  ASSERT_EQ(leaders.size(), 1u);
  replicas[leaders[0]].Kill(SIGTERM);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> now;
  while (now.empty() && SecondsSince(t0) < 10) {
    now = replicas.Leaders();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double took = SecondsSince(t0);
  ASSERT_EQ(now.size(), 1u);
  // At most one follower period (5000 / 3 ms = 1.67 s) and the new leader's
  // recovery; a lease left to run out would take up to 5 s more.
  EXPECT_LT(took, 3.0);
  for (int i = 0; i < kReplicas; ++i) replicas[i].Kill(SIGTERM);
  if (!HasFailure()) std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace meridian::control
