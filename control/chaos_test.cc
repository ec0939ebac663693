// Chaos: the real daemon (`meridian serve`, local backend) is killed with
// SIGKILL at 20 random moments while 500 CPU jobs are submitted by clients
// that retry with their idempotency keys, 50 of them long enough to be
// running across kills. Afterwards every acknowledged job exists exactly
// once, every job ran exactly once to completion (its attempt adopted across
// the restarts, never started again), and no process of a job or of a job's
// monitor is left behind.
#include <dirent.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "control/job_state.h"
#include "control/test_daemon.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;

constexpr int kJobs = 500;
constexpr int kKills = 20;
constexpr int kClients = 4;

struct Acked {
  std::mutex mu;
  std::map<std::string, std::string> ids;  // key -> job id
};

// Job `i`: every tenth sleeps 2-6 s (running across kills), the rest 0.1 s.
// Each run appends "start" and then "done" to runs/<job id>.
std::string Body(const std::string& runs, int i) {
  const std::string sleep = i % 10 == 0 ? std::to_string(2 + i % 5) : "0.1";
  const std::string script = "echo start >> " + runs + "/$MERIDIAN_JOB_ID; sleep " + sleep +
                             "; echo done >> " + runs + "/$MERIDIAN_JOB_ID";
  return json{{"name", "c" + std::to_string(i)},
              {"kind", "data-science"},
              {"resources", {{"gpus", 0}, {"vcpus", 1}, {"ram_gib", 0.25}}},
              {"command", {"/bin/sh", "-c", script}}}
      .dump();
}

// Submits `which` from kClients threads, each stopping at its first
// transport error (the daemon is gone).
void Submit(int port, const std::string& token, const std::string& runs,
            const std::vector<int>& which, Acked* acked) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", port);
      c.set_connection_timeout(1, 0);
      c.set_read_timeout(5, 0);
      for (;;) {
        const size_t n = next++;
        if (n >= which.size()) return;
        const int i = which[n];
        const std::string key = "c" + std::to_string(i);
        httplib::Headers h = Auth(token);
        h.emplace("Idempotency-Key", key);
        auto r = c.Post("/v1/jobs", h, Body(runs, i), "application/json");
        if (!r) return;
        if (r->status != 201 && r->status != 200) {
          ADD_FAILURE() << key << ": " << r->status << " " << r->body;
          continue;
        }
        const std::string id = json::parse(r->body)["id"];
        std::lock_guard<std::mutex> l(acked->mu);
        auto [it, fresh] = acked->ids.emplace(key, id);
        EXPECT_EQ(it->second, id) << key << ": acknowledged under two ids";
      }
    });
  }
  for (auto& t : threads) t.join();
}

// Every job's row, through the API's pages.
std::vector<json> AllJobs(httplib::Client& http, const std::string& token) {
  std::vector<json> out;
  std::string page;
  for (int guard = 0; guard < 100; ++guard) {
    auto r = http.Get(("/v1/jobs?limit=1000" + (page.empty() ? "" : "&page_token=" + page)).c_str(),
                      Auth(token));
    if (!r || r->status != 200) {
      ADD_FAILURE() << "listing jobs: " << (r ? r->body : "no answer");
      return out;
    }
    json j = json::parse(r->body);
    for (auto& job : j["jobs"]) out.push_back(job);
    if (j["next_page_token"].is_null()) break;
    page = j["next_page_token"];
  }
  return out;
}

// Processes whose command line mentions `text`.
std::vector<std::string> ProcessesMentioning(const std::string& text) {
  std::vector<std::string> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline");
    std::stringstream ss;
    ss << f.rdbuf();
    std::string cmd = ss.str();
    for (char& c : cmd) {
      if (c == '\0') c = ' ';
    }
    if (cmd.find(text) != std::string::npos) out.push_back(std::string(e->d_name) + ": " + cmd);
  }
  closedir(d);
  return out;
}

TEST(ServeChaos, TwentyKillNinesLoseNoJobRunNoneTwiceAndLeaveNoProcess) {
  const std::string dir = testing::MakeTempDir("chaos");
  // The jobs' own record, writable by the tenant's uid when the daemon runs
  // as root (jobs then run as a uid of their tenant).
  std::string runs = (std::filesystem::temp_directory_path() / "meridian-chaos-runs-XXXXXX").string();
  ASSERT_NE(mkdtemp(runs.data()), nullptr);
  ASSERT_EQ(chmod(runs.c_str(), 01777), 0);
  testing::DaemonProcess daemon(dir,
                                "region: gcp:us-central1\n"
                                "reconcile_interval_ms: 50\n"
                                "node: {name: chaos, vcpus: 64, ram_gib: 64}\n");
  daemon.Start();
  const std::string token = daemon.Token("alice");
  std::mt19937 rng(20261205);
  Acked acked;
  int issued = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    // This round: what was not acknowledged, and 25 new submissions.
    std::vector<int> which;
    {
      std::lock_guard<std::mutex> l(acked.mu);
      for (int i = 0; i < issued; ++i) {
        if (!acked.ids.count("c" + std::to_string(i))) which.push_back(i);
      }
    }
    for (int k = 0; k < kJobs / kKills; ++k) which.push_back(issued++);
    const int after_ms = std::uniform_int_distribution<int>(50, 1500)(rng);
    std::thread killer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
      daemon.Kill(SIGKILL);
    });
    Submit(daemon.port(), token, runs, which, &acked);
    killer.join();
    daemon.Start();
  }
  // The last retries, until every submission is acknowledged.
  for (int pass = 0; pass < 5; ++pass) {
    std::vector<int> which;
    {
      std::lock_guard<std::mutex> l(acked.mu);
      for (int i = 0; i < kJobs; ++i) {
        if (!acked.ids.count("c" + std::to_string(i))) which.push_back(i);
      }
    }
    if (which.empty()) break;
    Submit(daemon.port(), token, runs, which, &acked);
  }
  ASSERT_EQ(acked.ids.size(), static_cast<size_t>(kJobs));

  // Every job ends (the long ones run 6 s at most; the 500 take a while on
  // two cores under the sanitizers).
  auto http = daemon.Client();
  std::vector<json> jobs;
  for (int waited = 0; waited < 600; ++waited) {
    jobs = AllJobs(*http, token);
    const bool ended = std::all_of(jobs.begin(), jobs.end(), [](const json& j) {
      return IsTerminal(ParseJobState(j["state"].get<std::string>()).value());
    });
    if (ended && jobs.size() >= static_cast<size_t>(kJobs)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // Exactly once, under the id it was acknowledged with, and succeeded.
  std::map<std::string, int> names;
  std::map<std::string, std::string> state_of;
  for (const json& j : jobs) {
    names[j["name"]]++;
    state_of[j["id"]] = j["state"];
  }
  EXPECT_EQ(jobs.size(), static_cast<size_t>(kJobs));
  for (const auto& [key, id] : acked.ids) {
    EXPECT_EQ(names[key], 1) << key;
    EXPECT_EQ(state_of[id], "succeeded") << key << " " << id;
    // Ran once: one start, one done.
    std::ifstream f(runs + "/" + id);
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(all, "start\ndone\n") << key << " " << id;
  }
  daemon.Kill(SIGTERM);
  // No job and no monitor outlives its job: nothing mentions the runs
  // directory or the daemon's database any more.
  std::vector<std::string> left;
  for (int i = 0; i < 40; ++i) {
    left = ProcessesMentioning(runs);
    for (const std::string& p : ProcessesMentioning(daemon.db())) left.push_back(p);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(left.empty()) << left.size() << " left, e.g. " << (left.empty() ? "" : left[0]);
  if (HasFailure()) {
    std::cerr << "kept for a look: " << dir << " and " << runs << "\n";
    return;
  }
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(runs);
}

}  // namespace
}  // namespace meridian::control
