// The HTTP API against a real `meridian serve` on loopback, on each store
// (SQLite, and PostgreSQL from control/test_postgres.h): submit, get, list
// with pagination, cancel, idempotency, the auth matrix, malformed requests,
// and a CPU job run to success.
#include <nlohmann/json.hpp>
#include <regex>

#include "control/store_test_kinds.h"
#include "control/test_daemon.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;

// A one-GPU job on the test node (4 T4s) that ends in a second; JSON text.
std::string Spec(const std::string& name, const std::string& extra = "") {
  return R"({"name": ")" + name +
         R"(", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["T4"]},
             "command": ["/bin/sleep", "1"])" +
         extra + "}";
}

template <typename Kind>
class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("api");
    daemon_ = std::make_unique<DaemonProcess>(dir_);
    auto db = Kind::MakeDb(dir_);
    ASSERT_TRUE(db.ok()) << db.status().message();
    daemon_->UseDb(*db);
    daemon_->Start();
    alice_ = daemon_->Token("alice");
    bob_ = daemon_->Token("bob");
    admin_ = daemon_->Token("ops", true);
    http_ = daemon_->Client();
  }
  void TearDown() override {
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }

  json Post(const std::string& path, const std::string& token, const std::string& body,
            int want, const std::string& type = "application/json",
            httplib::Headers extra = {}) {
    httplib::Headers h = Auth(token);
    for (auto& kv : extra) h.insert(kv);
    auto r = http_->Post(path.c_str(), h, body, type.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, want) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  json Get(const std::string& path, const std::string& token, int want) {
    auto r = http_->Get(path.c_str(), Auth(token));
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, want) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }

  std::string dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string alice_, bob_, admin_;
  std::unique_ptr<httplib::Client> http_;
};

TYPED_TEST_SUITE(ApiTest, testing::StoreKinds, testing::StoreKindName);

TYPED_TEST(ApiTest, DashboardIsServedAtRootWithoutAToken) {
  auto r = this->http_->Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-cache");
  EXPECT_NE(r->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  EXPECT_NE(r->body.find("<title>meridian dashboard</title>"), std::string::npos);
  // The page's script and styles come from this server; every absolute URL
  // in them is an XML namespace name (Preact's SVG support), never a host to load.
  std::vector<std::string> assets;
  const std::regex ref(R"re((?:src|href)="(/assets/[^"]+)")re");
  for (std::sregex_iterator it(r->body.begin(), r->body.end(), ref), end; it != end; ++it) {
    assets.push_back((*it)[1]);
  }
  ASSERT_GE(assets.size(), 2u) << r->body;
  std::string script;
  for (const std::string& a : assets) {
    auto f = this->http_->Get(a.c_str());
    ASSERT_TRUE(f) << a;
    EXPECT_EQ(f->status, 200) << a;
    EXPECT_NE(f->get_header_value("Cache-Control").find("immutable"), std::string::npos) << a;
    if (a.ends_with(".js")) {
      EXPECT_EQ(f->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
      script += f->body;
    }
    if (a.ends_with(".css")) {
      EXPECT_EQ(f->get_header_value("Content-Type"), "text/css; charset=utf-8");
    }
    const std::regex url(R"(https?://[^"'`) ]+)");
    for (std::sregex_iterator it(f->body.begin(), f->body.end(), url), end; it != end; ++it) {
      EXPECT_EQ(it->str().rfind("http://www.w3.org/", 0), 0u) << a << ": " << it->str();
    }
  }
  EXPECT_NE(script.find("sessionStorage"), std::string::npos);
  EXPECT_EQ(r->body.find("http://"), std::string::npos);
  EXPECT_EQ(r->body.find("https://"), std::string::npos);
  // No other path is served, and nothing from the file system.
  for (const char* p : {"/../etc/passwd", "/index.html/../../etc/passwd", "/%2e%2e/etc/passwd",
                        "/assets/../../etc/passwd", "/assets/nope.js", "/web_assets.cc"}) {
    auto bad = this->http_->Get(p);
    ASSERT_TRUE(bad) << p;
    EXPECT_EQ(bad->status, 404) << p;
    EXPECT_EQ(bad->body.find("root:"), std::string::npos) << p;
  }
}

TYPED_TEST(ApiTest, SubmitGetListPaginateCancel) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    json j = this->Post("/v1/jobs", this->alice_,
                  R"({"name": "wait-)" + std::to_string(i) +
                      R"(", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["T4"]},
                         "command": ["/bin/sleep", "60"]})",
                  201);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["state"], "queued");
    EXPECT_EQ(j["tenant"], "alice");
    EXPECT_EQ(j["name"], "wait-" + std::to_string(i));
    EXPECT_EQ(j["events_url"], "/v1/jobs/" + j["id"].template get<std::string>() + "/events");
    ids.push_back(j["id"]);
  }
  json got = this->Get("/v1/jobs/" + ids[2], this->alice_, 200);
  EXPECT_EQ(got["id"], ids[2]);
  EXPECT_EQ(got["spec"]["command"][0], "/bin/sleep");

  // Pages of two: 2 + 2 + 1, then no token.
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    std::string path = "/v1/jobs?limit=2" + (token.empty() ? "" : "&page_token=" + token);
    json page = this->Get(path, this->alice_, 200);
    for (const auto& j : page["jobs"]) seen.push_back(j["id"]);
    token = page["next_page_token"].is_null() ? "" : page["next_page_token"].template get<std::string>();
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(seen, ids);
  EXPECT_EQ(pages, 3);

  // Newest first, as the dashboard pages: 4, 3 | 2, 1 | 0.
  std::vector<std::string> newest;
  token.clear();
  pages = 0;
  do {
    std::string path = "/v1/jobs?order=newest&limit=2" + (token.empty() ? "" : "&page_token=" + token);
    json page = this->Get(path, this->alice_, 200);
    for (const auto& j : page["jobs"]) newest.push_back(j["id"]);
    token = page["next_page_token"].is_null() ? "" : page["next_page_token"].template get<std::string>();
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(newest, (std::vector<std::string>{ids[4], ids[3], ids[2], ids[1], ids[0]}));
  EXPECT_EQ(pages, 3);
  json bad_order = this->Get("/v1/jobs?order=sideways", this->alice_, 400);
  EXPECT_EQ(bad_order["error"]["field"], "order");

  json kind = this->Get("/v1/jobs?kind=training", this->alice_, 200);
  EXPECT_TRUE(kind["jobs"].empty());

  // Cancel each; queued ones end cancelled, running ones once their process is gone.
  for (const std::string& id : ids) {
    json c = this->Post("/v1/jobs/" + id + "/cancel", this->alice_, "", 200);
    EXPECT_EQ(c["id"], id);
  }
  for (const std::string& id : ids) {
    json j;
    for (int i = 0; i < 200; ++i) {
      j = this->Get("/v1/jobs/" + id, this->alice_, 200);
      if (j["state"] == "cancelled") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(j["state"], "cancelled") << j.dump();
    json ev = this->Get("/v1/jobs/" + id + "/events", this->alice_, 200);
    ASSERT_FALSE(ev["events"].empty());
    EXPECT_EQ(ev["events"][0]["to"], "queued");
    EXPECT_EQ(ev["events"].back()["to"], "cancelled");
  }
  json cancelled = this->Get("/v1/jobs?state=cancelled", this->alice_, 200);
  EXPECT_EQ(cancelled["jobs"].size(), 5u);
}

TYPED_TEST(ApiTest, IdempotencyKeyReplaysAndConflicts) {
  const std::string body = Spec("idem");
  json first = this->Post("/v1/jobs", this->alice_, body, 201, "application/json", {{"Idempotency-Key", "k-1"}});
  json again = this->Post("/v1/jobs", this->alice_, body, 200, "application/json", {{"Idempotency-Key", "k-1"}});
  EXPECT_EQ(first["id"], again["id"]);
  json conflict = this->Post("/v1/jobs", this->alice_, Spec("idem-other"), 409, "application/json",
                       {{"Idempotency-Key", "k-1"}});
  EXPECT_EQ(conflict["error"]["code"], "conflict");
  EXPECT_EQ(conflict["error"]["field"], "Idempotency-Key");
  // Keys are per tenant: bob's k-1 is a new job.
  json bobs = this->Post("/v1/jobs", this->bob_, body, 201, "application/json", {{"Idempotency-Key", "k-1"}});
  EXPECT_NE(bobs["id"], first["id"]);
  json list = this->Get("/v1/jobs", this->alice_, 200);
  EXPECT_EQ(list["jobs"].size(), 1u);
}

// A submission's 201 answer gives the spec it read from the body; a GET and
// a replay read the job back from the store's text. Both say the same.
TYPED_TEST(ApiTest, ASubmissionsAnswerShowsTheSpecAsTheStoreGivesItBack) {
  const std::string body =
      Spec("same", R"(, "labels": {"team": "007", "note": "caf\u00e9 \u2603 \"q\""},
                      "env": {"LR": "0.5"})");
  json first = this->Post("/v1/jobs", this->alice_, body, 201, "application/json",
                          {{"Idempotency-Key", "same-1"}});
  json replay = this->Post("/v1/jobs", this->alice_, body, 200, "application/json",
                           {{"Idempotency-Key", "same-1"}});
  json got = this->Get("/v1/jobs/" + first["id"].template get<std::string>(), this->alice_, 200);
  ASSERT_TRUE(first["spec"].is_object()) << first.dump();
  EXPECT_EQ(first["spec"]["labels"]["note"], "caf\u00e9 \u2603 \"q\"");  // the body's escapes, read
  EXPECT_EQ(first["spec"], got["spec"]);
  EXPECT_EQ(first["spec"], replay["spec"]);
  for (const char* key : {"id", "name", "tenant", "kind", "priority", "submitted_at"}) {
    EXPECT_EQ(first[key], got[key]) << key;
  }
}

TYPED_TEST(ApiTest, YamlBodiesAreAccepted) {
  json j = this->Post("/v1/jobs", this->alice_,
                "name: from-yaml\nkind: data-science\nresources: {gpus: 1, gpu_models: [T4]}\n"
                "command: [/bin/true]\nlabels: {team: \"007\"}\n",
                201, "application/yaml");
  EXPECT_EQ(j["spec"]["labels"]["team"], "007");
  EXPECT_EQ(j["spec"]["resources"]["gpus"], 1);
}

TYPED_TEST(ApiTest, AuthMatrix) {
  json mine = this->Post("/v1/jobs", this->alice_, Spec("alices"), 201);
  const std::string id = mine["id"];
  const std::string revoked = this->daemon_->Token("alice");
  int rc = 0;
  testing::RunCommand({MERIDIAN_BINARY, "token", "revoke", "--db", this->daemon_->db(), revoked}, &rc);
  ASSERT_EQ(rc, 0);
  const std::string expired = this->daemon_->Token("alice", false, "1s");
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));

  struct Route {
    std::string method, path;
  };
  const std::vector<Route> job_routes = {{"GET", "/v1/jobs/" + id},
                                         {"GET", "/v1/jobs/" + id + "/events"},
                                         {"GET", "/v1/jobs/" + id + "/logs"},
                                         {"POST", "/v1/jobs/" + id + "/cancel"}};
  const std::vector<Route> all_routes = {{"GET", "/v1/jobs"}, {"GET", "/v1/tenants"},
                                         {"GET", "/v1/queues"}, {"GET", "/v1/nodes"},
                                         {"POST", "/v1/jobs"}, {"POST", "/v1/plan"}};
  auto call = [&](const Route& r, const httplib::Headers& h) {
    auto res = r.method == "GET" ? this->http_->Get(r.path.c_str(), h)
                                 : this->http_->Post(r.path.c_str(), h, Spec("x"), "application/json");
    return res ? res->status : -1;
  };
  // No token, a wrong one, a revoked one, an expired one: 401 everywhere, with a JSON error.
  std::vector<httplib::Headers> bad = {{}, Auth("mrd_wrong"), Auth(revoked), Auth(expired),
                                       {{"Authorization", "Basic abc"}}};
  for (const auto& h : bad) {
    for (const auto& routes : {job_routes, all_routes}) {
      for (const Route& r : routes) EXPECT_EQ(call(r, h), 401) << r.method << " " << r.path;
    }
  }
  auto res = this->http_->Get("/v1/jobs", Auth(revoked));
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "unauthenticated");
  EXPECT_NE(json::parse(res->body)["error"]["message"].template get<std::string>().find("revoked"),
            std::string::npos);
  // Another tenant: 404 on every route of alice's job, and alice's job is not in its list.
  for (const Route& r : job_routes) EXPECT_EQ(call(r, Auth(this->bob_)), 404) << r.path;
  EXPECT_TRUE(this->Get("/v1/jobs", this->bob_, 200)["jobs"].empty());
  EXPECT_TRUE(this->Get("/v1/jobs?tenant=alice", this->bob_, 200)["jobs"].empty());
  // Bob may not submit as alice.
  json as_alice = this->Post("/v1/jobs", this->bob_, Spec("sneaky", R"(, "tenant": "alice")"), 403);
  EXPECT_EQ(as_alice["error"]["field"], "tenant");
  // The admin sees it (cancel last: it changes the job).
  for (const Route& r : job_routes) EXPECT_EQ(call(r, Auth(this->admin_)), 200) << r.path;
  EXPECT_EQ(this->Get("/v1/jobs?tenant=alice", this->admin_, 200)["jobs"].size(), 1u);
  // Node registration and drain are admin only.
  const std::string node = R"({"name": "gpu-box-1", "gpu_model": "T4", "gpus": 2, "vcpus": 8, "ram_gib": 32})";
  this->Post("/v1/nodes", this->alice_, node, 404);
  this->Post("/v1/nodes", this->admin_, node, 201);
  this->Post("/v1/nodes/gpu-box-1/drain", this->alice_, "", 404);
  this->Post("/v1/nodes/gpu-box-1/heartbeat", this->alice_, "", 403);
  this->Post("/v1/nodes/gpu-box-1/heartbeat", this->admin_, "", 200);
  this->Post("/v1/nodes/gpu-box-1/drain", this->admin_, "", 200);
  json nodes = this->Get("/v1/nodes", this->alice_, 200);
  bool found = false;
  for (const auto& n : nodes["nodes"]) {
    if (n["name"] == "gpu-box-1") {
      found = true;
      EXPECT_EQ(n["state"], "drained");
    }
  }
  EXPECT_TRUE(found);
}

TYPED_TEST(ApiTest, MalformedRequestsGetJsonErrorsAndTheDaemonKeepsServing) {
  struct Case {
    std::string body, type;
    int status;
    std::string code, field, says;
  };
  const std::vector<Case> cases = {
      {"{\"name\": \"x\", ", "application/json", 400, "invalid_argument", "", "malformed JSON"},
      {"[1, 2]", "application/json", 400, "invalid_argument", "", "JSON array"},
      {R"({"name": "x", "kind": "data-science", "resources": {"gpus": "two"}, "command": ["a"]})",
       "application/json", 400, "invalid_argument", "resources.gpus", "two"},
      {R"({"name": "x", "kind": "data-science", "resorces": {"gpus": 1}, "command": ["a"]})",
       "application/json", 400, "invalid_argument", "", "resources"},
      {R"({"name": "x", "kind": "trainig", "command": ["a"]})", "application/json", 400,
       "invalid_argument", "kind", "training"},
      {R"({"name": "x", "kind": "data-science", "resources": {"gpus": 1, "gpu_models": ["H100"]}, "command": ["a"]})",
       "application/json", 400, "invalid_argument", "", "H100-80GB"},
      {R"({"name": "x", "kind": "data-science", "resources": {"gpus": 1}})", "application/json",
       400, "invalid_argument", "command", "command"},
      {"", "application/json", 400, "invalid_argument", "", "empty"},
      {"name: x\nkind: [", "application/yaml", 400, "invalid_argument", "", "request"},
      {"hello", "image/png", 400, "invalid_argument", "Content-Type", "Content-Type"},
      {std::string(2 << 20, 'x'), "application/json", 413, "too_large", "", "larger"},
  };
  for (const Case& c : cases) {
    auto r = this->http_->Post("/v1/jobs", Auth(this->alice_), c.body, c.type.c_str());
    ASSERT_TRUE(r) << c.body.substr(0, 60);
    EXPECT_EQ(r->status, c.status) << c.body.substr(0, 60) << " -> " << r->body;
    json e = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(e.is_object()) << r->body;
    EXPECT_EQ(e["error"]["code"], c.code) << r->body;
    if (!c.field.empty()) {
      EXPECT_EQ(e["error"]["field"], c.field) << r->body;
    }
    EXPECT_NE(e["error"]["message"].template get<std::string>().find(c.says), std::string::npos)
        << r->body;
  }
  json bad_limit = this->Get("/v1/jobs?limit=5000", this->alice_, 400);
  EXPECT_EQ(bad_limit["error"]["field"], "limit");
  json bad_state = this->Get("/v1/jobs?state=runing", this->alice_, 400);
  EXPECT_NE(bad_state["error"]["message"].template get<std::string>().find("running"), std::string::npos);
  json bad_filter = this->Get("/v1/jobs?tennant=a", this->alice_, 400);
  EXPECT_NE(bad_filter["error"]["message"].template get<std::string>().find("tenant"), std::string::npos);
  this->Get("/v1/jobs/j-99999999", this->alice_, 404);
  this->Get("/v1/nope", this->alice_, 404);
  // Still serving.
  this->Post("/v1/jobs", this->alice_, Spec("after"), 201);
  auto h = this->http_->Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(json::parse(h->body)["ok"], true);
  // Alone on its database, the daemon holds the lease.
  EXPECT_EQ(json::parse(h->body)["role"], "leader");
}

TYPED_TEST(ApiTest, MetricsAndPlan) {
  this->Post("/v1/jobs", this->alice_, Spec("m1"), 201);
  json plan = this->Post("/v1/plan", this->alice_, Spec("p1"), 200);
  ASSERT_TRUE(plan.contains("decisions")) << plan.dump();
  EXPECT_EQ(plan["decisions"][0]["job"]["name"], "p1");
  auto m = this->http_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  for (const char* line : {"meridian_submissions_total 1", "meridian_jobs{state=\"queued\"}",
                           "meridian_queue_depth{tier=\"normal\"}", "meridian_decision_seconds_bucket",
                           "meridian_spend_usd_total", "meridian_co2_grams_total",
                           "meridian_preemptions_total", "meridian_moves_total 0"}) {
    EXPECT_NE(m->body.find(line), std::string::npos) << line << "\n" << m->body;
  }
}

// A CPU-only job (gpus: 0) submitted through the API runs on the local
// backend, its end written back through the store: succeeded, exit 0, the
// whole history queued ... running ... succeeded.
TYPED_TEST(ApiTest, ACpuJobRunsToSuccess) {
  json j = this->Post("/v1/jobs", this->alice_,
                      R"({"name": "cpu", "kind": "data-science", "resources": {"gpus": 0},
                          "command": ["/bin/sh", "-c", "exit 0"]})",
                      201);
  ASSERT_TRUE(j.is_object());
  const std::string id = j["id"];
  json got;
  for (int i = 0; i < 400; ++i) {
    got = this->Get("/v1/jobs/" + id, this->alice_, 200);
    if (got["state"] == "succeeded" || got["state"] == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(got["state"], "succeeded") << got.dump();
  EXPECT_EQ(got["exit_code"], 0);
  json ev = this->Get("/v1/jobs/" + id + "/events", this->alice_, 200);
  ASSERT_FALSE(ev["events"].empty());
  EXPECT_EQ(ev["events"][0]["to"], "queued");
  EXPECT_EQ(ev["events"].back()["to"], "succeeded");
}

}  // namespace
}  // namespace meridian::control
