// Rights and bad input against a real `meridian serve` on loopback (issue
// 20): who may heartbeat a node, plan as a tenant, see per-job metrics;
// token list and revoke --id through the real CLI; invalid UTF-8, wrappers
// the API does not take, and 500s that carry an id instead of SQL.
#include <nlohmann/json.hpp>

#include "control/sqlite.h"
#include "control/test_daemon.h"
#include "control/token.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;
using testing::RunCommand;

const char kNode[] = R"({"name": "gpu-box-1", "gpu_model": "T4", "gpus": 2, "vcpus": 8, "ram_gib": 32})";

std::string Spec(const std::string& name, const std::string& extra = "") {
  return R"({"name": ")" + name +
         R"(", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["T4"]},
             "command": ["/bin/sleep", "1"])" +
         extra + "}";
}

class ApiRightsTest : public ::testing::Test {
 protected:
  void Start(const std::string& extra = "") {
    dir_ = testing::MakeTempDir("rights");
    daemon_ = std::make_unique<DaemonProcess>(dir_, 4, extra);
    daemon_->Start();
    alice_ = daemon_->Token("alice");
    admin_ = daemon_->Token("ops", true);
    http_ = daemon_->Client();
  }
  void TearDown() override {
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }
  httplib::Result Post(const std::string& path, const std::string& token, const std::string& body,
                       const std::string& type = "application/json") {
    return http_->Post(path.c_str(), Auth(token), body, type.c_str());
  }
  std::string NodeState(const std::string& name) {
    auto r = http_->Get("/v1/nodes", Auth(admin_));
    if (!r) return "";
    const json body = json::parse(r->body);
    for (const auto& n : body["nodes"]) {
      if (n["name"] == name) return n["state"];
    }
    return "";
  }
  // Waits until the node is `state`, up to 5 s.
  bool WaitNodeState(const std::string& name, const std::string& state) {
    for (int i = 0; i < 100; ++i) {
      if (NodeState(name) == state) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // `meridian ARGS --db DB`: its stdout; the exit status in *rc.
  std::string Cli(std::vector<std::string> args, int* rc) {
    args.insert(args.begin(), MERIDIAN_BINARY);
    args.push_back("--db");
    args.push_back(daemon_->db());
    return RunCommand(args, rc);
  }

  std::string dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string alice_, admin_;
  std::unique_ptr<httplib::Client> http_;
};

// Issue 20: any tenant token could heartbeat a down node back to ready.
TEST_F(ApiRightsTest, OnlyAnAdminOrTheNodesOwnTokenHeartbeatsANodeBackFromDown) {
  Start("node_timeout: 1s\n");
  auto reg = Post("/v1/nodes", admin_, kNode);
  ASSERT_TRUE(reg);
  ASSERT_EQ(reg->status, 201) << reg->body;
  const json node = json::parse(reg->body);
  const std::string node_token = node["token"];
  EXPECT_EQ(node_token.rfind("mrd_", 0), 0u);
  EXPECT_EQ(node["token_id"].get<std::string>().rfind("tok_", 0), 0u);
  // No heartbeat for more than node_timeout (1 s): down.
  ASSERT_TRUE(WaitNodeState("gpu-box-1", "down"));
  auto as_tenant = Post("/v1/nodes/gpu-box-1/heartbeat", alice_, "");
  ASSERT_TRUE(as_tenant);
  EXPECT_EQ(as_tenant->status, 403) << as_tenant->body;
  EXPECT_EQ(json::parse(as_tenant->body)["error"]["code"], "forbidden");
  // Another node's token is refused as well.
  int rc = 0;
  std::string other = Cli({"token", "create", "--node", "gpu-box-2"}, &rc);
  ASSERT_EQ(rc, 0);
  other.pop_back();
  auto as_other = Post("/v1/nodes/gpu-box-1/heartbeat", other, "");
  ASSERT_TRUE(as_other);
  EXPECT_EQ(as_other->status, 403) << as_other->body;
  EXPECT_EQ(NodeState("gpu-box-1"), "down");
  // A node token may do nothing else.
  auto jobs = http_->Get("/v1/jobs", Auth(node_token));
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 403) << jobs->body;
  // Its own token brings it back; so does an admin's.
  auto own = Post("/v1/nodes/gpu-box-1/heartbeat", node_token, "");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  EXPECT_EQ(NodeState("gpu-box-1"), "ready");
  ASSERT_TRUE(WaitNodeState("gpu-box-1", "down"));
  auto admin = Post("/v1/nodes/gpu-box-1/heartbeat", admin_, "");
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 200) << admin->body;
  EXPECT_EQ(NodeState("gpu-box-1"), "ready");
}

// Issue 20: /v1/plan planned as any tenant named in the body.
TEST_F(ApiRightsTest, APlanNamingAnotherTenantIsRefusedUnlessTheCallerIsAnAdmin) {
  Start();
  auto own = Post("/v1/plan", alice_, Spec("p"));
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200) << own->body;
  EXPECT_EQ(json::parse(own->body)["decisions"][0]["job"]["tenant"], "alice") << own->body;
  auto as_bob = Post("/v1/plan", alice_, Spec("p", R"(, "tenant": "bob")"));
  ASSERT_TRUE(as_bob);
  EXPECT_EQ(as_bob->status, 403) << as_bob->body;
  EXPECT_EQ(json::parse(as_bob->body)["error"]["field"], "tenant");
  auto admin = Post("/v1/plan", admin_, Spec("p", R"(, "tenant": "bob")"));
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 200) << admin->body;
  EXPECT_EQ(json::parse(admin->body)["decisions"][0]["job"]["tenant"], "bob") << admin->body;
}

// Issue 20: /metrics showed every tenant's per-job CPU and I/O without a token.
TEST_F(ApiRightsTest, MetricsWithoutAnAdminTokenHaveNoPerJobSeries) {
  Start("telemetry:\n  interval: 200ms\n  window: 3s\n  max_gap: 2s\n  min_samples: 3\n");
  auto sub = Post("/v1/jobs", alice_,
                  R"({"name": "busy", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["T4"]},
                      "command": ["/bin/sleep", "30"]})");
  ASSERT_TRUE(sub);
  ASSERT_EQ(sub->status, 201) << sub->body;
  const std::string id = json::parse(sub->body)["id"];
  const std::string label = "job=\"" + id + "\"";
  // The admin sees the job's series once it is sampled, and the job counted
  // as running once the reconciler has seen it start (sampling may come first).
  const std::string running = "meridian_jobs{state=\"running\"} 1";
  std::string admin_view;
  for (int i = 0; i < 100 && (admin_view.find(label) == std::string::npos ||
                              admin_view.find(running) == std::string::npos);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto m = http_->Get("/metrics", Auth(admin_));
    ASSERT_TRUE(m);
    admin_view = m->body;
  }
  ASSERT_NE(admin_view.find("meridian_job_cpu_cores{" + label + "}"), std::string::npos) << admin_view;
  for (const httplib::Headers& h : {httplib::Headers{}, Auth(alice_)}) {
    auto m = http_->Get("/metrics", h);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->status, 200);
    EXPECT_EQ(m->body.find("job=\""), std::string::npos) << m->body;
    // Aggregate series stay public.
    EXPECT_NE(m->body.find(running), std::string::npos) << m->body;
  }
  auto bad = http_->Get("/metrics", Auth("mrd_nope"));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 401);
  (void)Post("/v1/jobs/" + id + "/cancel", alice_, "");
}

TEST_F(ApiRightsTest, PublicJobMetricsOptsInToPerJobSeriesWithoutAToken) {
  Start("http: {public_job_metrics: true}\n"
        "telemetry:\n  interval: 200ms\n  window: 3s\n  max_gap: 2s\n  min_samples: 3\n");
  auto sub = Post("/v1/jobs", alice_,
                  R"({"name": "busy", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["T4"]},
                      "command": ["/bin/sleep", "30"]})");
  ASSERT_TRUE(sub);
  ASSERT_EQ(sub->status, 201) << sub->body;
  const std::string id = json::parse(sub->body)["id"];
  std::string view;
  for (int i = 0; i < 100 && view.find("job=\"" + id + "\"") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto m = http_->Get("/metrics");
    ASSERT_TRUE(m);
    view = m->body;
  }
  EXPECT_NE(view.find("meridian_job_cpu_cores{job=\"" + id + "\"}"), std::string::npos) << view;
  (void)Post("/v1/jobs/" + id + "/cancel", alice_, "");
}

TEST_F(ApiRightsTest, TokenListAndRevokeByIdThroughTheCli) {
  Start();
  int rc = 0;
  std::string node_token = Cli({"token", "create", "--node", "gpu-box-1"}, &rc);
  ASSERT_EQ(rc, 0);
  node_token.pop_back();
  const std::string listed = Cli({"token", "list", "--json"}, &rc);
  ASSERT_EQ(rc, 0) << listed;
  // Never the secret, nor its hash.
  for (const std::string& t : {alice_, admin_, node_token}) {
    EXPECT_EQ(listed.find(t), std::string::npos);
    EXPECT_EQ(listed.find(Sha256Hex(t)), std::string::npos);
  }
  json tokens = json::parse(listed)["tokens"];
  ASSERT_EQ(tokens.size(), 4u) << listed;
  // Oldest first: the sign-in token the first start of an empty database
  // makes (tenant "admin"), alice's and the admin's (made by Start), the node's.
  EXPECT_EQ(tokens[0]["tenant"], "admin");
  EXPECT_EQ(tokens[0]["role"], "admin");
  tokens.erase(0);
  EXPECT_EQ(tokens[0]["tenant"], "alice");
  EXPECT_EQ(tokens[0]["role"], "tenant");
  EXPECT_EQ(tokens[1]["tenant"], "ops");
  EXPECT_EQ(tokens[1]["role"], "admin");
  EXPECT_EQ(tokens[2]["role"], "node");
  EXPECT_EQ(tokens[2]["node"], "gpu-box-1");
  for (const json& t : tokens) {
    EXPECT_EQ(t["id"].get<std::string>().size(), 20u) << t;  // "tok_" and 16 hex digits
    EXPECT_EQ(t["state"], "active");
    EXPECT_FALSE(t["created"].get<std::string>().empty());
  }
  // Revoke alice's token by its id: the API refuses it, the admin's still works.
  const std::string alice_id = tokens[0]["id"];
  Cli({"token", "revoke", "--id", alice_id}, &rc);
  ASSERT_EQ(rc, 0);
  for (int i = 0; i < 40; ++i) {  // the API caches a token for up to a second
    auto r = http_->Get("/v1/jobs", Auth(alice_));
    ASSERT_TRUE(r);
    if (r->status == 401) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto r = http_->Get("/v1/jobs", Auth(alice_));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401) << r->body;
  auto still = http_->Get("/v1/jobs", Auth(admin_));
  ASSERT_TRUE(still);
  EXPECT_EQ(still->status, 200);
  const json after = json::parse(Cli({"token", "list", "--json"}, &rc))["tokens"];
  EXPECT_EQ(after[1]["id"], alice_id);
  EXPECT_EQ(after[1]["state"], "revoked");
  EXPECT_EQ(after[2]["state"], "active");
  // The table form names the same ids.
  const std::string table = Cli({"token", "list"}, &rc);
  EXPECT_NE(table.find(alice_id), std::string::npos) << table;
  // An unknown id, or a second revoke, is bad input (exit 2) naming --id.
  for (const std::string& id : {std::string("tok_0000000000000000"), alice_id}) {
    const std::string out = RunCommand({"/bin/sh", "-c",
                                        std::string(MERIDIAN_BINARY) + " token revoke --id " + id +
                                            " --db " + daemon_->db() + " 2>&1"},
                                       &rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("--id: \"" + id + "\""), std::string::npos) << out;
  }
}

// A database made before tokens had ids gets the columns and one id per token
// when it is opened, and keeps them: list and revoke --id work on old tokens.
TEST(TokenIdsTest, ADatabaseFromBeforeTokenIdsGetsThemOnOpen) {
  const std::string dir = testing::MakeTempDir("oldtokens");
  const std::string db_path = dir + "/old.db";
  {
    auto db = Db::Open(db_path, DbOptions{});
    ASSERT_TRUE(db.ok()) << db.status().message();
    // The tables as they were (control/schema.h before ids and node tokens).
    ASSERT_TRUE((*db)
                    ->Exec("CREATE TABLE tenants (name TEXT PRIMARY KEY, created_at INTEGER NOT NULL);"
                           "CREATE TABLE tokens (hash TEXT PRIMARY KEY, tenant TEXT NOT NULL "
                           "REFERENCES tenants(name), admin INTEGER NOT NULL DEFAULT 0, created_at "
                           "INTEGER NOT NULL, expires_at INTEGER, revoked_at INTEGER);"
                           "INSERT INTO tenants VALUES('alice', 1);"
                           "INSERT INTO tokens(hash,tenant,admin,created_at) VALUES"
                           "('h1','alice',0,1),('h2','alice',1,2);")
                    .ok());
  }
  int rc = 0;
  const std::vector<std::string> list = {MERIDIAN_BINARY, "token", "list", "--json", "--db", db_path};
  const json first = json::parse(RunCommand(list, &rc))["tokens"];
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0]["role"], "tenant");
  EXPECT_EQ(first[1]["role"], "admin");
  EXPECT_NE(first[0]["id"], first[1]["id"]);
  EXPECT_EQ(first[0]["id"].get<std::string>().rfind("tok_", 0), 0u);
  // A second open keeps the ids.
  const json second = json::parse(RunCommand(list, &rc))["tokens"];
  EXPECT_EQ(second[0]["id"], first[0]["id"]);
  EXPECT_EQ(second[1]["id"], first[1]["id"]);
  RunCommand({MERIDIAN_BINARY, "token", "revoke", "--id", first[1]["id"], "--db", db_path}, &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(json::parse(RunCommand(list, &rc))["tokens"][1]["state"], "revoked");
  std::filesystem::remove_all(dir);
}

// Issue 20: invalid UTF-8 in a job name answered 500 (the error could not be
// serialized). Now: 400, the field named, in either body format.
TEST_F(ApiRightsTest, InvalidUtf8IsA400NamingTheField) {
  Start();
  struct Case {
    std::string path, body, type, field;
  };
  const std::vector<Case> cases = {
      {"/v1/jobs", Spec("bad\xff name"), "application/json", "name"},
      {"/v1/jobs", Spec("ok", ", \"labels\": {\"team\": \"x\xc3\"}"), "application/json",
       "labels.team"},
      {"/v1/jobs", Spec("ok", ", \"env\": {\"A\": \"\xed\xa0\x80\"}"), "application/json", "env.A"},
      {"/v1/jobs", "name: bad\xfe\nkind: data-science\ncommand: [/bin/true]\n", "application/yaml",
       "name"},
      {"/v1/plan", Spec("bad\xff name"), "application/json", "name"},
      {"/v1/nodes", "{\"name\": \"n\xff\", \"gpus\": 0}", "application/json", "name"},
  };
  for (const Case& c : cases) {
    auto r = Post(c.path, c.path == "/v1/nodes" ? admin_ : alice_, c.body, c.type);
    ASSERT_TRUE(r) << c.path;
    EXPECT_EQ(r->status, 400) << c.path << " " << r->body;
    const json e = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(e.is_object()) << r->body;
    EXPECT_EQ(e["error"]["code"], "invalid_argument") << r->body;
    EXPECT_EQ(e["error"]["field"], c.field) << r->body;
    EXPECT_NE(e["error"]["message"].get<std::string>().find("UTF-8"), std::string::npos) << r->body;
  }
  // A query value that is not UTF-8 is echoed in the message as U+FFFD, not a 500.
  auto q = http_->Get("/v1/jobs?state=%FF", Auth(alice_));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->status, 400) << q->body;
  EXPECT_EQ(json::parse(q->body)["error"]["field"], "state");
  // Nothing was stored.
  auto list = http_->Get("/v1/jobs", Auth(alice_));
  ASSERT_TRUE(list);
  EXPECT_TRUE(json::parse(list->body)["jobs"].empty()) << list->body;
}

// Issue 20: a body wrapped in jobs: answered 201 and the job failed later
// with "the stored spec does not parse". What the API accepts runs.
TEST_F(ApiRightsTest, AJobsWrapperIsRefusedAndWhatIsAcceptedRuns) {
  Start();
  const std::vector<std::pair<std::string, std::string>> wrapped = {
      {R"({"jobs": [)" + Spec("wrapped") + "]}", "application/json"},
      {"jobs:\n  - name: wrapped\n    kind: data-science\n    command: [/bin/true]\n",
       "application/yaml"},
  };
  for (const auto& [body, type] : wrapped) {
    auto r = Post("/v1/jobs", alice_, body, type);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(json::parse(r->body)["error"]["field"], "jobs") << r->body;
  }
  auto list = http_->Get("/v1/jobs", Auth(alice_));
  ASSERT_TRUE(list);
  EXPECT_TRUE(json::parse(list->body)["jobs"].empty()) << list->body;
  // An accepted job (YAML, no tenant key) runs to the end.
  auto ok = Post("/v1/jobs", alice_,
                 "name: plain\nkind: data-science\nresources: {gpus: 1, gpu_models: [T4]}\n"
                 "command: [/bin/true]\n",
                 "application/yaml");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 201) << ok->body;
  const std::string id = json::parse(ok->body)["id"];
  json job;
  for (int i = 0; i < 200; ++i) {
    job = testing::GetJob(*http_, alice_, id);
    if (job.value("state", "") == "succeeded" || job.value("state", "") == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(job["state"], "succeeded") << job.dump();
}

// Issue 20: some 500s echoed SQL text. A real fault in the store (a trigger
// that aborts inserts into jobs) must answer "internal error" with an id that
// the daemon's log carries with the details.
TEST_F(ApiRightsTest, AStoreFaultIsA500WithAnIdAndNoSql) {
  Start();
  {
    auto db = Db::Open(daemon_->db(), DbOptions{});
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)
                    ->Exec("CREATE TRIGGER fault BEFORE INSERT ON jobs BEGIN "
                           "SELECT RAISE(ABORT, 'disk-fault-for-test'); END")
                    .ok());
  }
  auto r = Post("/v1/jobs", alice_, Spec("doomed"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500) << r->body;
  const json e = json::parse(r->body, nullptr, false);
  ASSERT_TRUE(e.is_object()) << r->body;
  EXPECT_EQ(e["error"]["code"], "internal");
  const std::string id = e["error"]["id"];
  EXPECT_EQ(id.rfind("e-", 0), 0u);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("internal error " + id), std::string::npos);
  for (const char* sql : {"INSERT", "SELECT", "jobs(", "disk-fault-for-test", "TRIGGER"}) {
    EXPECT_EQ(r->body.find(sql), std::string::npos) << sql << " in " << r->body;
  }
  // The log has the id and the details.
  const std::string log = daemon_->Log();
  const size_t at = log.find("internal error " + id);
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("disk-fault-for-test", at), std::string::npos) << log;
}

}  // namespace
}  // namespace meridian::control
