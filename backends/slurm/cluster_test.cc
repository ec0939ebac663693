// meridian against a real Slurm: tools/slurm-dev-cluster starts munged,
// slurmctld and three slurmd emulating 4-GPU A100 nodes on loopback; each
// test runs the real `meridian serve` with a fleet file whose cluster has
// backend: slurm, submits through the API and checks what the jobs saw and
// what Slurm did. When the cluster cannot start, every test fails with the
// script's output; nothing is skipped.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "control/test_daemon.h"

namespace meridian::backends {
namespace {

using nlohmann::json;
using control::testing::Auth;
using control::testing::GetJob;
using control::testing::SubmitJob;
using control::testing::DaemonProcess;
using control::testing::RunCommand;

constexpr int kNodes = 3, kGpus = 4;

// Every cluster a test starts is tied to this process: if a timeout kills it
// before its clean-up runs, the cluster's watcher stops the daemons.
std::string Owner() { return " --owner " + std::to_string(::getpid()); }

// The cluster, shared by the tests of this binary.
class SlurmCluster : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* d = std::getenv("MERIDIAN_SLURM_DIR");
    dir_ = d != nullptr && *d ? d : control::testing::MakeTempDir("slurm");
    int rc = 0;
    output_ = RunCommand({"/bin/sh", "-c",
                          std::string(MERIDIAN_SOURCE_DIR) + "/tools/slurm-dev-cluster start --dir " +
                              dir_ + " --nodes " + std::to_string(kNodes) + " --gpus " +
                              std::to_string(kGpus) + Owner() + " 2>&1"},
                         &rc);
    up_ = rc == 0;
  }
  void TearDown() override {
    int rc = 0;
    std::string out = RunCommand(
        {"/bin/sh", "-c", std::string(MERIDIAN_SOURCE_DIR) + "/tools/slurm-dev-cluster stop --dir " + dir_ + " 2>&1"},
        &rc);
    EXPECT_EQ(rc, 0) << out;
  }
  bool up() const { return up_; }
  const std::string& output() const { return output_; }
  std::string conf() const { return dir_ + "/slurm.conf"; }
  const std::string& dir() const { return dir_; }

  // A Slurm client command, with this cluster's SLURM_CONF.
  std::string Slurm(const std::string& args) const {
    int rc = 0;
    return RunCommand({"/bin/sh", "-c", "SLURM_CONF=" + conf() + " " + args + " 2>&1"}, &rc);
  }

 private:
  std::string dir_, output_;
  bool up_ = false;
};

SlurmCluster* g_cluster = nullptr;

class SlurmClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(g_cluster->up()) << "the Slurm dev cluster did not start:\n" << g_cluster->output();
    dir_ = control::testing::MakeTempDir("slurm-serve");
    WriteFleet(g_cluster->conf());
    StartDaemon("");
  }
  // The fleet: the cluster, reached through the Slurm configuration `conf`.
  void WriteFleet(const std::string& conf) {
    std::ofstream(dir_ + "/fleet.yaml")
        << "clusters:\n"
        << "  - name: dev\n"
        << "    region: gcp:us-central1\n"
        << "    gpu_hour_usd: 1.0\n"
        << "    backend: slurm\n"
        << "    slurm: {partitions: [gpu], conf: " << conf << "}\n"
        << "    nodes:\n"
        << "      - {count: " << kNodes << ", gpu: A100-80GB, gpus: " << kGpus
        << ", vcpus: 32, ram_gib: 256}\n"
        << "elastic: false\n";
  }
  // meridian serve on the fleet, with `extra` serve.yaml lines.
  void StartDaemon(const std::string& extra) {
    daemon_.reset();
    daemon_ = std::make_unique<DaemonProcess>(
        dir_, "region: gcp:us-central1\nreconcile_interval_ms: 50\nfleet: " + dir_ + "/fleet.yaml\n" + extra);
    daemon_->Start();
    token_ = daemon_->Token("alice");
    http_ = daemon_->Client();
    WaitForNodes(kNodes);
  }
  void TearDown() override {
    daemon_.reset();
    // Whatever a failed test left running goes, so the next test has the GPUs.
    g_cluster->Slurm("scancel --full --signal=KILL --user=root; sleep 0.3; scancel --user=root");
    for (int n = 1; n <= kNodes; ++n) {
      // One at a time: Slurm refuses the whole list if one node is idle already.
      g_cluster->Slurm("scontrol update nodename=node" + std::to_string(n) + " state=resume");
    }
    control::testing::RemoveTempDir(dir_);
  }

  // Until `n` nodes are ready in meridian's view.
  void WaitForNodes(int n) {
    for (int i = 0; i < 200; ++i) {
      if (ReadyNodes().size() == static_cast<size_t>(n)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto r = http_->Get("/v1/nodes", Auth(token_));
    ADD_FAILURE() << "meridian never saw " << n << " ready nodes: " << (r ? r->body : "no answer")
                  << "\n" << g_cluster->Slurm("sinfo -N") << "log:\n" << daemon_->Log();
  }
  std::set<std::string> ReadyNodes() {
    auto r = http_->Get("/v1/nodes", Auth(token_));
    std::set<std::string> out;
    if (!r) return out;
    const json body = json::parse(r->body);
    for (const auto& node : body["nodes"]) {
      if (node["state"] == "ready") out.insert(node["name"].get<std::string>());
    }
    return out;
  }
  std::string Submit(const json& spec) { return SubmitJob(*http_, token_, spec); }
  json Job(const std::string& id) { return GetJob(*http_, token_, id); }
  json WaitFor(const std::string& id, const std::string& state, int seconds = 20) {
    json j;
    for (int i = 0; i < seconds * 20; ++i) {
      j = Job(id);
      if (j["state"] == state) return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << id << " never reached " << state << ": " << j.dump() << "\n"
                  << g_cluster->Slurm("squeue --states=all") << daemon_->Log();
    return j;
  }
  // Until the daemon lists each of the cluster's nodes in `state` (true), or
  // `seconds` pass (false, with the failure recorded).
  bool WaitForNodes(const std::string& state, int seconds = 20) {
    json nodes;
    for (int i = 0; i < seconds * 20; ++i) {
      auto r = http_->Get("/v1/nodes", Auth(token_));
      nodes = r && r->status == 200 ? json::parse(r->body)["nodes"] : json::array();
      const bool all = nodes.size() == static_cast<size_t>(kNodes) &&
                       std::all_of(nodes.begin(), nodes.end(),
                                   [&](const json& n) { return n["state"] == state; });
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "the nodes never were all " << state << ": " << nodes.dump() << "\n"
                  << daemon_->Log();
    return false;
  }
  std::string Logs(const std::string& id, const std::string& stream) {
    auto r = http_->Get(("/v1/jobs/" + id + "/logs?stream=" + stream).c_str(), Auth(token_));
    return r ? r->body : "";
  }
  std::string Events(const std::string& id) {
    auto r = http_->Get(("/v1/jobs/" + id + "/events").c_str(), Auth(token_));
    return r ? r->body : "";
  }
  // The Slurm job id of attempt `n` in a job's events.
  static std::string SlurmIdOfAttempt(const std::string& events, int n) {
    const std::string key = "launched attempt " + std::to_string(n) + " (slurm:dev:";
    size_t at = events.find(key);
    if (at == std::string::npos) return "?";
    at += key.size();
    return events.substr(at, events.find(')', at) - at);
  }
  // The Slurm job id of a job's latest attempt, from its launch event
  // ("launched attempt 1 (slurm:dev:12)").
  std::string SlurmId(const std::string& id) {
    const std::string events = Events(id);
    size_t at = events.rfind("(slurm:dev:");
    if (at == std::string::npos) return "";
    at += 11;
    return events.substr(at, events.find(')', at) - at);
  }
  static json Spec(const std::string& name, int gpus, std::vector<std::string> command) {
    return {{"name", name},
            {"kind", "data-science"},
            {"resources", {{"gpus", gpus}, {"gpu_models", {"A100-80GB"}}}},
            {"command", command}};
  }
  static std::string Joined(const json& gpus) {
    std::string s;
    for (const auto& g : gpus) s += (s.empty() ? "" : ",") + std::to_string(g.get<int>());
    return s;
  }

  std::string dir_, token_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

// Six 2-GPU jobs fill the three 4-GPU nodes: each must run where meridian
// put it, on the GPUs it chose, as Slurm's CUDA_VISIBLE_DEVICES shows.
TEST_F(SlurmClusterTest, JobsRunOnTheChosenNodesAndGpus) {
  const std::string go = dir_ + "/go";
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(Submit(Spec("where-" + std::to_string(i), 2,
                              {"/bin/sh", "-c",
                               "echo node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES ckpt=$MERIDIAN_CHECKPOINT_DIR; "
                               "while [ ! -e " + go + " ]; do sleep 0.05; done"})));
  }
  for (const std::string& id : ids) WaitFor(id, "running");
  std::ofstream(go) << "go\n";
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    json j = WaitFor(id, "succeeded");
    EXPECT_EQ(j["exit_code"], 0);
    const std::string node = j["placement"]["node"];
    const std::string gpus = Joined(j["placement"]["gpus"]);
    EXPECT_EQ(Logs(id, "stdout"), "node=" + node + " gpus=" + gpus + " ckpt=" + dir_ +
                                      "/meridian.db.state/jobs/" + id + "/checkpoint\n");
    seen.insert(node + "/" + gpus);
  }
  EXPECT_EQ(seen.size(), 6u);  // no two jobs on the same GPUs
}

TEST_F(SlurmClusterTest, ExitCodesAndOutputComeBack) {
  const std::string bad = Submit(Spec("fails", 1, {"/bin/sh", "-c", "echo partial; echo oops >&2; exit 3"}));
  const std::string args = Submit(Spec("argv", 1, {"/usr/bin/printf", "%s|", "a b", "$HOME", "`id`;", "*"}));
  const std::string missing = Submit(Spec("missing", 1, {"/no/such/program"}));
  json b = WaitFor(bad, "failed");
  EXPECT_EQ(b["exit_code"], 3);
  EXPECT_EQ(Logs(bad, "stdout"), "partial\n");
  EXPECT_EQ(Logs(bad, "stderr"), "oops\n");
  EXPECT_NE(b["reason"].get<std::string>().find("FAILED"), std::string::npos) << b.dump();
  WaitFor(args, "succeeded");
  EXPECT_EQ(Logs(args, "stdout"), "a b|$HOME|`id`;|*|");  // no shell saw the arguments
  json m = WaitFor(missing, "failed");
  EXPECT_EQ(m["exit_code"], 127);
  EXPECT_NE(m["reason"].get<std::string>().find("not found on the node"), std::string::npos) << m.dump();
}

// The spec's env reaches the job through its environment file, byte for
// byte (a comma, quotes, $(...)), and not through sbatch's environment.
TEST_F(SlurmClusterTest, TheJobsEnvironmentReachesTheJobByteForByte) {
  json spec = Spec("env", 1, {"/bin/sh", "-c", "printf '%s|%s|%s' \"$TRICKY\" \"$EPOCHS\" \"$MERIDIAN_JOB_ID\""});
  const std::string tricky = "a,b 'q' \"d\" $(id) `id` ;";
  spec["env"] = {{"TRICKY", tricky}, {"EPOCHS", "3"}};
  const std::string id = Submit(spec);
  WaitFor(id, "succeeded");
  EXPECT_EQ(Logs(id, "stdout"), tricky + "|3|" + id);
  EXPECT_EQ(Logs(id, "stderr"), "");
  const std::string env_file = dir_ + "/meridian.db.state/backend/jobs/" + id + "/attempt-1.env";
  struct stat st {};
  ASSERT_EQ(stat(env_file.c_str(), &st), 0) << env_file;
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(SlurmClusterTest, CancelEndsTheSlurmJob) {
  const std::string id = Submit(Spec("sleeper", 1, {"/bin/sleep", "60"}));
  WaitFor(id, "running");
  const std::string slurm_id = SlurmId(id);
  ASSERT_FALSE(slurm_id.empty()) << Events(id);
  auto r = http_->Post(("/v1/jobs/" + id + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json j = WaitFor(id, "cancelled");
  EXPECT_NE(j["reason"].get<std::string>().find("signal 15"), std::string::npos) << j.dump();
  // The SIGTERM ended it: Slurm records the job as ended by signal 15.
  const std::string record = g_cluster->Slurm("scontrol --oneliner show job " + slurm_id);
  EXPECT_NE(record.find(" ExitCode=0:15 "), std::string::npos) << record;
  EXPECT_EQ(record.find("JobState=RUNNING"), std::string::npos) << record;
}

// A real-time service on the real daemon and Slurm: its two replicas (the
// default profile's availability count: one replica up 0.995 < 0.999, two
// 1 - 0.005^2 = 0.999975) run as Slurm jobs of their own on two distinct
// nodes. Replica 1's process killed by a SIGKILL the daemon did not send
// (as a reclaim, or the OOM killer, would) ends its Slurm job with signal
// 9, and the replica is replaced at once by a second Slurm job, replica 0
// untouched; GET /v1/jobs/<id> and its events say so.
TEST_F(SlurmClusterTest, AServicesReplicaKilledFromOutsideIsReplacedAtOnce) {
  std::filesystem::create_directories(dir_ + "/pids");
  json spec = Spec("svc", 1, {"/bin/sh", "-c", "echo $$ > " + dir_ +
                                                   "/pids/r$MERIDIAN_REPLICA.a$MERIDIAN_ATTEMPT; exec sleep 600"});
  spec["kind"] = "realtime-inference";
  const std::string id = Submit(spec);
  WaitFor(id, "running");
  // Until both replicas run, replica 1 on attempt `attempt`.
  auto both_running = [&](int attempt) {
    json j;
    for (int i = 0; i < 400; ++i) {
      j = Job(id);
      const json& r = j["replicas"];
      if (r.size() == 2 && r[0]["state"] == "running" && r[1]["state"] == "running" &&
          r[1]["attempt"] == attempt) {
        return j;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "replica 1's attempt " << attempt << " never ran beside replica 0: "
                  << j.dump() << "\n" << Events(id) << g_cluster->Slurm("squeue --states=all");
    return j;
  };
  json j = both_running(1);
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(j["replicas"][0]["node"], j["replicas"][1]["node"]) << j.dump();
  // "replica 1 started on node node2 (attempt 1, slurm:dev:12)"
  auto slurm_id_of = [&](int attempt) {
    const std::string events = Events(id);
    const std::string key = "replica 1 started on node " + j["replicas"][1]["node"].get<std::string>() +
                            " (attempt " + std::to_string(attempt) + ", slurm:dev:";
    size_t at = events.find(key);
    if (at == std::string::npos) return std::string("?");
    at += key.size();
    return events.substr(at, events.find(')', at) - at);
  };
  const std::string first = slurm_id_of(1);
  ASSERT_NE(first, "?") << Events(id);
  pid_t pid = 0;  // once the replica's shell has written it
  for (int i = 0; i < 200 && pid <= 0; ++i) {
    std::ifstream(dir_ + "/pids/r1.a1") >> pid;
    if (pid <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(pid, 0) << Logs(id, "stderr");
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  j = both_running(2);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(j["replicas"][1]["restarts"], 1) << j.dump();
  EXPECT_EQ(j["replicas"][0]["restarts"], 0) << j.dump();
  EXPECT_EQ(j["replicas"][0]["attempt"], 1) << j.dump();
  const std::string second = slurm_id_of(2);
  EXPECT_NE(second, "?") << Events(id);
  EXPECT_NE(second, first);
  const std::string events = Events(id);
  EXPECT_NE(events.find("replica 1 was killed by signal 9: reclaimed; replacing it at once (restart 1)"),
            std::string::npos) << events;
  const std::string record = g_cluster->Slurm("scontrol --oneliner show job " + first);
  EXPECT_EQ(record.find("JobState=RUNNING"), std::string::npos) << record;
  auto r = http_->Post(("/v1/jobs/" + id + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(r);
  WaitFor(id, "cancelled");
}

// One node's worth of room: three preemptible 4-GPU jobs fill the cluster,
// a critical one preempts a victim, which checkpoints on SIGTERM and resumes
// from its checkpoint in a second Slurm job.
TEST_F(SlurmClusterTest, PreemptedJobCheckpointsAndResumes) {
  const std::string go = dir_ + "/go";
  const std::string script =
      "d=\"$MERIDIAN_CHECKPOINT_DIR\"; n=0; "
      "if [ -f \"$d/step\" ]; then echo \"resumed from $(cat \"$d/step\")\"; exit 0; fi; "
      "trap 'echo $n > \"$d/step\"; echo \"checkpoint at $n\"; exit 0' TERM; "
      "while [ ! -e " + go + " ]; do n=$((n+1)); sleep 0.05; done";
  std::vector<std::string> lows;
  for (int i = 0; i < kNodes; ++i) {
    json low = Spec("low-" + std::to_string(i), kGpus, {"/bin/sh", "-c", script});
    low["priority"] = "low";
    low["preemptible"] = true;
    low["grace_period"] = "10s";
    lows.push_back(Submit(low));
  }
  for (const std::string& id : lows) WaitFor(id, "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  json urgent = Spec("urgent", kGpus, {"/bin/sleep", "0.2"});
  urgent["priority"] = "critical";
  const std::string hi = Submit(urgent);
  WaitFor(hi, "succeeded", 30);
  std::ofstream(go) << "go\n";
  int resumed = 0;
  for (const std::string& id : lows) {
    json j = WaitFor(id, "succeeded", 30);
    if (j["attempts"] == 1) continue;
    ++resumed;
    EXPECT_EQ(j["attempts"], 2);
    const std::string events = Events(id);
    EXPECT_NE(events.find("checkpointing"), std::string::npos) << events;
    EXPECT_NE(events.find("preempted"), std::string::npos) << events;
    const std::string out = Logs(id, "stdout");
    size_t at = out.find("resumed from ");
    ASSERT_NE(at, std::string::npos) << out;
    EXPECT_GT(std::stoi(out.substr(at + 13)), 0) << out;
    EXPECT_NE(out.find("checkpoint at"), std::string::npos) << out;
  }
  EXPECT_EQ(resumed, 1);
}

TEST_F(SlurmClusterTest, ADrainedNodeGetsNoNewWork) {
  g_cluster->Slurm("scontrol update nodename=node1 state=drain reason=meridian-test");
  for (int i = 0; i < 100 && ReadyNodes().count("node1"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(ReadyNodes(), (std::set<std::string>{"node2", "node3"}));
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Submit(Spec("d" + std::to_string(i), 2, {"/bin/true"})));
  for (const std::string& id : ids) {
    json j = WaitFor(id, "succeeded");
    EXPECT_NE(j["placement"]["node"], "node1") << j.dump();
  }
  g_cluster->Slurm("scontrol update nodename=node1 state=resume");
  WaitForNodes(kNodes);
}

// Slurm ends the jobs of a node set DOWN as NODE_FAIL: meridian sees the
// attempt lost and places the job again. (Which node it gets is Slurm's and
// meridian's view of the moment: with ReturnToService=2 the node registers
// again within seconds and may take the job back.)
TEST_F(SlurmClusterTest, JobsOfANodeGoingDownAreRequeued) {
  const std::string go = dir_ + "/go";
  const std::string id = Submit(Spec("on-a-failing-node", 1,
                                     {"/bin/sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done; echo done on $SLURMD_NODENAME"}));
  json first = WaitFor(id, "running");
  const std::string node = first["placement"]["node"];
  g_cluster->Slurm("scontrol update nodename=" + node + " state=down reason=meridian-test");
  for (int i = 0; i < 200 && Job(id)["attempts"] == 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::ofstream(go) << "go\n";
  json j = WaitFor(id, "succeeded");
  EXPECT_EQ(j["attempts"], 2) << Events(id);
  EXPECT_EQ(Logs(id, "stdout"), "done on " + j["placement"]["node"].get<std::string>() + "\n");
  const std::string events = Events(id);
  EXPECT_NE(events.find("attempt lost: Slurm job " + SlurmIdOfAttempt(events, 1) + " NODE_FAIL on " + node),
            std::string::npos) << events;
  g_cluster->Slurm("scontrol update nodename=" + node + " state=resume");
  WaitForNodes(kNodes);
}

TEST_F(SlurmClusterTest, RestartedDaemonReadoptsRunningJobs) {
  const std::string go = dir_ + "/go";
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    ids.push_back(Submit(Spec("survivor-" + std::to_string(i), 1,
                              {"/bin/sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done; echo done"})));
  }
  std::vector<std::string> slurm_ids;
  for (const std::string& id : ids) {
    WaitFor(id, "running");
    slurm_ids.push_back(SlurmId(id));
  }
  daemon_->Kill(SIGKILL);
  daemon_->Start();
  http_ = daemon_->Client();
  ASSERT_TRUE(http_->Get("/healthz"));
  std::ofstream(go) << "go\n";
  for (size_t i = 0; i < ids.size(); ++i) {
    json j = WaitFor(ids[i], "succeeded");
    EXPECT_EQ(j["attempts"], 1);
    EXPECT_EQ(SlurmId(ids[i]), slurm_ids[i]);  // the same Slurm job, not a new one
    EXPECT_EQ(Logs(ids[i], "stdout"), "done\n");
    const std::string events = Events(ids[i]);
    EXPECT_NE(events.find("re-adopted"), std::string::npos) << events;
  }
}

// node.max_log_bytes cuts a Slurm job's logs on the compute node, as the
// local backend's: at a 4096-byte cap a job writing 10000 bytes to stdout
// (none to stderr) leaves the first 4096, the cut notice and, once it ended,
// the count of what was dropped (10000 - 4096 = 5904):
//   "\n[meridian: the job's logs reached their cap of " 1 + 47
//   + "4096" 4 + " bytes; what the job writes to this stream from here on is
//   dropped]" 67 + "\n" 1                                           = 120
//   "[meridian: " 11 + "5904" 4 + " bytes dropped past the log cap of " 35
//   + "4096" 4 + " bytes]\n" 8                                       = 62
// so stdout.log is 4096 + 120 + 62 = 4278 bytes, and stderr.log is empty.
TEST_F(SlurmClusterTest, ALogPastTheCapIsCutAndTheCutSaid) {
  StartDaemon("node: {max_log_bytes: 4096}\n");
  const std::string id =
      Submit(Spec("chatty", 1, {"/bin/sh", "-c", "head -c 10000 /dev/zero | tr '\\0' x"}));
  WaitFor(id, "succeeded");
  const std::string expected = std::string(4096, 'x') +
                               "\n[meridian: the job's logs reached their cap of 4096 bytes; what the job "
                               "writes to this stream from here on is dropped]\n"
                               "[meridian: 5904 bytes dropped past the log cap of 4096 bytes]\n";
  ASSERT_EQ(expected.size(), 4278u);
  const std::string file = dir_ + "/meridian.db.state/jobs/" + id + "/logs/stdout.log";
  std::ifstream in(file, std::ios::binary);
  const std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk.size(), 4278u) << file;
  EXPECT_EQ(on_disk, expected);
  EXPECT_EQ(Logs(id, "stdout"), expected);
  EXPECT_EQ(Logs(id, "stderr"), "");
}

// The controller going away: slurmctld stopped while three jobs run. serve
// keeps answering; squeue and sinfo fail as against an unreachable
// controller (no job is failed or lost, nothing new is placed); a cancel
// made meanwhile is sent again with backoff until scancel gets through; a
// job submitted meanwhile waits. Once slurmctld is back (its state
// recovered from StateSaveLocation) every job ends as asked, in one attempt
// and one Slurm job.
//
// Slurm's clients retry a refused connection once a second for
// MessageTimeout seconds (10 by default) before they fail; meridian's
// commands here read a copy of slurm.conf with MessageTimeout=2, so an outage
// of 12 s shows as failed commands (sinfo, squeue, scancel: 2 s each per
// cycle) and the cancel's retry.
TEST_F(SlurmClusterTest, JobsOutliveTheControllerGoingAway) {
  const std::string client_conf = g_cluster->dir() + "/slurm-client.conf";
  g_cluster->Slurm("cp " + g_cluster->conf() + " " + client_conf + " && echo MessageTimeout=2 >> " + client_conf);
  WriteFleet(client_conf);
  StartDaemon("");
  // Slurm keeps ended jobs (MinJobAge): earlier tests' jobs may bear these names.
  const std::string earlier = g_cluster->Slurm("squeue -h --states=all -o %i");
  const std::string go = dir_ + "/go";
  const std::string wait_then_done = "while [ ! -e " + go + " ]; do sleep 0.05; done; echo done";
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    ids.push_back(Submit(Spec("through-" + std::to_string(i), 1, {"/bin/sh", "-c", wait_then_done})));
  }
  const std::string cancelled = Submit(Spec("cancelled-meanwhile", 1, {"/bin/sleep", "60"}));
  for (const std::string& id : ids) WaitFor(id, "running");
  WaitFor(cancelled, "running");
  const std::string pid_file = g_cluster->dir() + "/slurmctld.pid";
  g_cluster->Slurm("kill -TERM $(cat " + pid_file + "); while kill -0 $(cat " + pid_file +
                   ") 2>/dev/null; do sleep 0.1; done");
  // The daemon asks Slurm for its nodes at most every 500 ms (refresh_ms) and
  // places on its last answer meanwhile; from its first unanswered sinfo
  // every node is down to it, and a job submitted from then on waits.
  ASSERT_TRUE(WaitForNodes("down"));
  auto r = http_->Post(("/v1/jobs/" + cancelled + "/cancel").c_str(), Auth(token_), "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  const std::string away = Submit(Spec("while-away", 1, {"/bin/sh", "-c", wait_then_done}));
  for (int i = 0; i < 24; ++i) {
    const auto before = std::chrono::steady_clock::now();
    ASSERT_TRUE(http_->Get("/healthz"));
    EXPECT_EQ(Job(ids[0])["state"], "running");
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(Job(ids[1])["state"], "running");
  EXPECT_EQ(Job(away)["state"], "queued");
  std::ofstream(go) << "go\n";
  g_cluster->Slurm("slurmctld -i 2>>" + g_cluster->dir() + "/log/slurmctld.log");
  const json c = WaitFor(cancelled, "cancelled", 40);
  EXPECT_NE(c["reason"].get<std::string>().find("signal 15"), std::string::npos) << c.dump();
  ids.push_back(away);
  for (const std::string& id : ids) {
    json j = WaitFor(id, "succeeded", 40);
    EXPECT_EQ(Logs(id, "stdout"), "done\n");  // ran once
  }
  ids.push_back(cancelled);
  for (const std::string& id : ids) {
    EXPECT_EQ(Job(id)["attempts"], 1) << Events(id);
    std::istringstream named(g_cluster->Slurm("squeue -h --states=all -n meridian-" + id + "-1 -o %i"));
    std::vector<std::string> slurm_jobs;
    for (std::string line; std::getline(named, line);) {
      if (("\n" + earlier).find("\n" + line + "\n") == std::string::npos) slurm_jobs.push_back(line);
    }
    EXPECT_EQ(slurm_jobs, std::vector<std::string>{SlurmId(id)});  // one Slurm job, the one launched
  }
  const std::string events = Events(cancelled);
  EXPECT_NE(events.find("cancel: stop try 1 failed: "), std::string::npos) << events;
  EXPECT_NE(events.find("cancel: the backend took the stop after "), std::string::npos) << events;
}

// A dev cluster of a test's own (`args`: its shape) and `meridian serve` on
// it, the fleet file declaring `nodes` (its node lines) in cluster `name` at
// `gpu_hour_usd`. The cluster is stopped when the object goes.
class OwnCluster {
 public:
  OwnCluster(const std::string& tag, const std::string& args, const std::string& name,
             double gpu_hour_usd, const std::string& nodes)
      : cdir_(control::testing::MakeTempDir("slurm-" + tag)),
        dir_(control::testing::MakeTempDir("slurm-" + tag + "-serve")) {
    int rc = 0;
    output_ = RunCommand({"/bin/sh", "-c", Tool() + " start --dir " + cdir_ + " " + args + Owner() + " 2>&1"}, &rc);
    up_ = rc == 0;
    std::ofstream(dir_ + "/fleet.yaml")
        << "clusters:\n  - name: " << name << "\n    region: gcp:us-central1\n    gpu_hour_usd: "
        << gpu_hour_usd << "\n    backend: slurm\n    slurm: {partitions: [gpu], conf: " << cdir_
        << "/slurm.conf}\n    nodes:\n" << nodes << "elastic: false\n";
  }
  ~OwnCluster() {
    daemon_.reset();
    int rc = 0;
    const std::string out = RunCommand({"/bin/sh", "-c", Tool() + " stop --dir " + cdir_ + " 2>&1"}, &rc);
    EXPECT_EQ(rc, 0) << out;
    control::testing::RemoveTempDir(dir_);
  }
  bool up() const { return up_; }
  const std::string& output() const { return output_; }
  const std::string& dir() const { return dir_; }
  // Starts the daemon on the fleet; its token for alice.
  void StartDaemon() {
    daemon_ = std::make_unique<DaemonProcess>(
        dir_, "region: gcp:us-central1\nreconcile_interval_ms: 50\nfleet: " + dir_ + "/fleet.yaml\n");
    daemon_->Start();
    token_ = daemon_->Token("alice");
    http_ = daemon_->Client();
  }
  std::string Submit(const json& spec) { return SubmitJob(*http_, token_, spec); }
  // A GET of the API's `path`, its body ("" without an answer).
  std::string Get(const std::string& path) {
    auto r = http_->Get(path.c_str(), Auth(token_));
    return r ? r->body : std::string();
  }
  // Until job `id` is in `state` (30 s at most); the job.
  json WaitFor(const std::string& id, const std::string& state) {
    json j;
    for (int i = 0; i < 600; ++i) {
      j = GetJob(*http_, token_, id);
      if (j["state"] == state) return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << id << " never reached " << state << ": " << j.dump() << "\n" << daemon_->Log();
    return j;
  }

 private:
  static std::string Tool() { return std::string(MERIDIAN_SOURCE_DIR) + "/tools/slurm-dev-cluster"; }
  std::string cdir_, dir_, output_, token_;
  bool up_ = false;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<httplib::Client> http_;
};

// MIG instances as Slurm GRES typed by profile: a cluster of its own (one
// node, 2 A100-80GB each split 3g.40gb + 3g.40gb), declared with the same
// layout in the fleet. Four MIG jobs run at once, each on one instance of its
// own (Slurm's CUDA_VISIBLE_DEVICES), asked for as --gres=gpu:3g.40gb:1.
TEST(SlurmMigClusterTest, MigJobsRunOnOneInstanceEach) {
  OwnCluster c("mig", "--nodes 1 --gpus 2 --mig 3g.40gb,3g.40gb", "mig", 1.0,
               "      - {count: 1, gpu: A100-80GB, gpus: 2, vcpus: 32, ram_gib: 256, "
               "mig: [3g.40gb, 3g.40gb]}\n");
  ASSERT_TRUE(c.up()) << "the MIG dev cluster did not start:\n" << c.output();
  c.StartDaemon();
  const std::string go = c.dir() + "/go";
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    json spec = {{"name", "embed-" + std::to_string(i)},
                 {"kind", "batch-inference"},
                 {"model", {{"params_b", 0.3}, {"precision", "fp16"}, {"layers", 24}, {"hidden", 1024},
                            {"heads", 16}, {"seq_len", 512}, {"batch", 32}, {"output_tokens", 1}}},
                 {"work", {{"tokens", 2.0e7}}},
                 {"resources", {{"gpus", 1}, {"gpu_models", {"A100-80GB"}}, {"mig", true}}},
                 {"command", {"/bin/sh", "-c",
                              "echo devices=$CUDA_VISIBLE_DEVICES; while [ ! -e " + go +
                                  " ]; do sleep 0.05; done"}}};
    ids.push_back(c.Submit(spec));
  }
  for (const std::string& id : ids) c.WaitFor(id, "running");  // all four at once: one instance each
  std::ofstream(go) << "go\n";
  std::set<std::string> devices;
  for (const std::string& id : ids) {
    json j = c.WaitFor(id, "succeeded");
    EXPECT_EQ(j["placement"]["node"], "node1") << j.dump();
    EXPECT_EQ(j["placement"]["mig"], "3g.40gb") << j.dump();
    const std::string out = c.Get("/v1/jobs/" + id + "/logs?stream=stdout");
    EXPECT_EQ(out.rfind("devices=", 0), 0u) << out;
    EXPECT_EQ(out.find(','), std::string::npos) << out;  // one instance
    devices.insert(out);
  }
  EXPECT_EQ(devices.size(), 4u);  // no two jobs on the same instance
}

// Moving running work on Slurm: a cluster of its own with a T4 node and a
// CPU node (no GPU GRES). A high-priority job holds the T4, expected for
// 40 h; a preemptible job with cpu_fallback (5 GPU-hours on a T4, 4x slower
// on CPU, deadline 24 h) starts on the CPU node, since no GPU frees before
// its latest GPU start; the T4's job then ends early. When the T4 frees
// (or at a checkpoint, every 5 s, due in the same cycle) the daemon's core
// finds the T4 worth the move
// (about $6.41 of CPU time left against $1.75 on the T4; the figures are
// worked in control/move_test.cc), stops the Slurm job at its checkpoint
// and submits the next attempt on the T4 node, which resumes from the
// checkpoint directory the two Slurm jobs share.
TEST(SlurmMoveClusterTest, ACpuJobMovesToAFreedGpuNodeAndResumesFromItsCheckpoint) {
  OwnCluster c("move", "--nodes 2 --gpus 1 --gpu-type t4 --cpu-nodes 1", "dev", 0.35,
               "      - {count: 1, gpu: T4, gpus: 1, vcpus: 32, ram_gib: 256}\n"
               "      - {count: 1, gpus: 0, vcpus: 32, ram_gib: 256}\n");
  ASSERT_TRUE(c.up()) << "the dev cluster did not start:\n" << c.output();
  c.StartDaemon();
  const std::string go = c.dir() + "/go";
  json blocker = {{"name", "blocker"},
                  {"kind", "training"},
                  {"priority", "high"},
                  {"resources", {{"gpus", 1}, {"gpu_models", {"T4"}}}},
                  {"work", {{"gpu_hours", 40}, {"on", "T4"}}},
                  {"command", {"/bin/sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.05; done"}}};
  const std::string script =
      "d=\"$MERIDIAN_CHECKPOINT_DIR\"; echo \"attempt $MERIDIAN_ATTEMPT devices "
      "[$CUDA_VISIBLE_DEVICES]\"; "
      "if [ -f \"$d/step\" ]; then echo \"resumed from $(cat \"$d/step\")\"; exit 0; fi; "
      "n=0; trap 'echo $n > \"$d/step\"; exit 0' TERM; "
      "while true; do n=$((n+1)); sleep 0.05; done";
  json mover = {{"name", "mover"},
                {"kind", "training"},
                {"priority", "normal"},
                {"preemptible", true},
                {"deadline", "24h"},
                {"resources",
                 {{"gpus", 1}, {"gpu_models", {"T4"}}, {"vcpus", 8}, {"ram_gib", 16},
                  {"cpu_fallback", {{"slowdown", 4}}}}},
                {"work", {{"gpu_hours", 5}, {"on", "T4"}}},
                {"checkpoint", {{"interval", "5s"}, {"restart_overhead", "1s"}}},
                {"grace_period", "10s"},
                {"command", {"/bin/sh", "-c", script}}};
  const std::string b = c.Submit(blocker);
  const std::string m = c.Submit(mover);
  EXPECT_EQ(c.WaitFor(b, "running")["placement"]["node"], "node1");
  EXPECT_EQ(c.WaitFor(m, "running")["placement"]["node"], "node2");
  std::ofstream(go) << "go\n";
  c.WaitFor(b, "succeeded");
  const json j = c.WaitFor(m, "succeeded");
  EXPECT_EQ(j["attempts"], 2) << j.dump();
  EXPECT_EQ(j["placement"]["node"], "node1") << j.dump();
  const std::string events = c.Get("/v1/jobs/" + m + "/events");
  EXPECT_NE(events.find("moves from node2 CPU to node1 1 GPU(s) "), std::string::npos) << events;
  EXPECT_NE(events.find("moved to node1 GPUs 0 (owned)"), std::string::npos) << events;
  // Attempt 1 saw no GPU; attempt 2, on the T4 node, Slurm's one GPU and
  // the step attempt 1 saved.
  const std::string out = c.Get("/v1/jobs/" + m + "/logs?stream=stdout");
  EXPECT_NE(out.find("attempt 1 devices []\n"), std::string::npos) << out;
  EXPECT_NE(out.find("attempt 2 devices [0]\nresumed from "), std::string::npos) << out;
  const size_t at = out.find("resumed from ");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_GT(std::stoi(out.substr(at + 13)), 0) << out;
}

// Whether process `pid` runs: a zombie (ended, not yet reaped) does not.
bool Running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t paren = line.rfind(')');  // the name may hold spaces
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// The PIDs a dev cluster in `dir` wrote: munged, slurmctld and each slurmd.
std::vector<pid_t> ClusterPids(const std::string& dir) {
  std::vector<pid_t> pids;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "munged.pid" || name == "slurmctld.pid" || name.rfind("slurmd-", 0) == 0) {
      std::ifstream in(e.path());
      pid_t pid = 0;
      if (in >> pid) pids.push_back(pid);
    }
  }
  return pids;
}

// A cluster started with --owner is stopped when its owner ends without
// stopping it (as a test killed by its timeout does): here the owner is a
// child `sleep` killed with SIGKILL. Every daemon it started (munged,
// slurmctld, one slurmd: 3 PIDs) and the watcher are gone within 10 s (the
// watcher polls each second; stop waits at most 5 s before SIGKILL). A
// second cluster owned by this process, stopped with `stop`, leaves no
// watcher behind.
TEST(SlurmDevClusterTest, ItsDaemonsEndWhenItsOwnerEnds) {
  const std::string tool = std::string(MERIDIAN_SOURCE_DIR) + "/tools/slurm-dev-cluster";
  const pid_t owner = ::fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    ::execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const std::string dir = control::testing::MakeTempDir("slurm-owned");
  int rc = 0;
  std::string out = RunCommand({"/bin/sh", "-c", tool + " start --dir " + dir +
                                " --nodes 1 --gpus 1 --owner " + std::to_string(owner) + " 2>&1"}, &rc);
  ASSERT_EQ(rc, 0) << out;
  const std::vector<pid_t> daemons = ClusterPids(dir);
  ASSERT_EQ(daemons.size(), 3u) << out;
  pid_t watcher = 0;
  ASSERT_TRUE(std::ifstream(dir + "/watcher.pid") >> watcher);
  for (pid_t p : daemons) EXPECT_TRUE(Running(p)) << p;
  EXPECT_TRUE(Running(watcher));

  ::kill(owner, SIGKILL);
  ::waitpid(owner, nullptr, 0);
  auto all_gone = [&] {
    for (pid_t p : daemons) if (Running(p)) return false;
    return !Running(watcher);
  };
  for (int i = 0; i < 100 && !all_gone(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (pid_t p : daemons) EXPECT_FALSE(Running(p)) << "daemon " << p << " outlived its owner";
  EXPECT_FALSE(Running(watcher));
  EXPECT_TRUE(ClusterPids(dir).empty()) << "stop removes the PID files";

  // Owned by this process and stopped by hand: the watcher goes with it.
  out = RunCommand({"/bin/sh", "-c", tool + " start --dir " + dir + " --nodes 1 --gpus 1" + Owner() + " 2>&1"},
                   &rc);
  ASSERT_EQ(rc, 0) << out;
  ASSERT_TRUE(std::ifstream(dir + "/watcher.pid") >> watcher);
  out = RunCommand({"/bin/sh", "-c", tool + " stop --dir " + dir + " 2>&1"}, &rc);
  EXPECT_EQ(rc, 0) << out;
  for (int i = 0; i < 50 && Running(watcher); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Running(watcher)) << "stop leaves the watcher";
  control::testing::RemoveTempDir(dir);
}

}  // namespace
}  // namespace meridian::backends

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  meridian::backends::g_cluster = new meridian::backends::SlurmCluster();
  ::testing::AddGlobalTestEnvironment(meridian::backends::g_cluster);
  return RUN_ALL_TESTS();
}
