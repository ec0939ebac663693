// The client commands' own parts: MERIDIAN_URL parsing, request paths,
// error bodies, and the table output; and the exit codes when the daemon
// cannot be reached (a real closed port on loopback).
#include "cli/client_cmd.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "cli/api_client.h"
#include "cli/commands.h"

namespace meridian::cli {
namespace {

using nlohmann::json;

TEST(ServerUrl, ParsesHostPortAndPrefix) {
  auto u = ParseServerUrl("http://127.0.0.1:8080");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->prefix, "");
  u = ParseServerUrl("https://meridian.example.org/api/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->prefix, "/api");
  u = ParseServerUrl("http://[::1]:9000");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9000);
  EXPECT_EQ(ParseServerUrl("http://host")->port, 80);
}

TEST(ServerUrl, RejectsWhatIsNotAnHttpUrlNamingTheValue) {
  struct Case {
    const char* url;
    const char* why;
  } cases[] = {
      {"127.0.0.1:8080", "must start with http:// or https://"},
      {"ftp://host", "must start with http:// or https://"},
      {"http://:8080", "has no host"},
      {"http://host:99999", "must be a number from 1 to 65535"},
      {"http://host:80x", "must be a number from 1 to 65535"},
      {"http://user:pw@host", "must not carry credentials"},
  };
  for (const auto& c : cases) {
    auto u = ParseServerUrl(c.url);
    ASSERT_FALSE(u.ok()) << c.url;
    EXPECT_NE(u.status().message().find(std::string("MERIDIAN_URL: \"") + c.url + "\""),
              std::string::npos)
        << u.status().message();
    EXPECT_NE(u.status().message().find(c.why), std::string::npos) << u.status().message();
  }
}

TEST(RequestPaths, EncodeIdsAndSkipEmptyQueryValues) {
  EXPECT_EQ(JobPath("j-00000042"), "/v1/jobs/j-00000042");
  EXPECT_EQ(JobPath("a/b c", "/logs"), "/v1/jobs/a%2Fb%20c/logs");
  EXPECT_EQ(Query({{"stream", "stdout"}, {"offset", "120"}}), "?stream=stdout&offset=120");
  EXPECT_EQ(Query({{"tenant", ""}, {"state", "running"}, {"page_token", "x=y&z"}}),
            "?state=running&page_token=x%3Dy%26z");
  EXPECT_EQ(Query({{"tenant", ""}}), "");
}

TEST(ApiErrors, ReadTheErrorObjectOrSayWhatCameBack) {
  ApiError e = ParseApiError(
      400, R"({"error":{"code":"invalid_argument","message":"resources.gpus: \"-2\" must be >= 0","field":"resources.gpus"}})");
  EXPECT_EQ(e.code, "invalid_argument");
  EXPECT_EQ(e.field, "resources.gpus");
  EXPECT_EQ(e.message, "resources.gpus: \"-2\" must be >= 0");
  e = ParseApiError(502, "Bad Gateway\n");
  EXPECT_EQ(e.message, "the server answered HTTP 502: Bad Gateway");
  e = ParseApiError(500, "");
  EXPECT_EQ(e.message, "the server answered HTTP 500");
}

TEST(IdempotencyKeys, AreFreshHexEachTime) {
  std::set<std::string> keys;
  for (int i = 0; i < 50; ++i) {
    std::string k = NewIdempotencyKey();
    EXPECT_EQ(k.size(), 32u);
    EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos) << k;
    keys.insert(k);
  }
  EXPECT_EQ(keys.size(), 50u);
}

json SampleJob() {
  return json::parse(R"({
    "id": "j-00000042", "name": "finetune-llama", "tenant": "acme", "kind": "fine_tuning",
    "state": "running", "priority": 10, "submitted_at": "2026-03-01T09:00:00Z",
    "started_at": "2026-03-01T09:00:02Z", "ended_at": null, "attempts": 2, "exit_code": null,
    "placement": {"node": "local", "gpus": [0, 1], "mig": null, "region": "aws:us-east-1",
                  "pricing": "on_demand"},
    "reason": ""})");
}

TEST(Output, JobTableHasOneRowPerJobWithItsPlacement) {
  json queued = {{"id", "j-00000043"}, {"name", "etl"},     {"tenant", "beta"},
                 {"kind", "batch"},    {"state", "queued"}, {"attempts", 0},
                 {"placement", nullptr}, {"submitted_at", "2026-03-01T09:01:00Z"},
                 {"reason", "waiting for 8 GPUs"}};
  std::ostringstream out;
  PrintJobTable(json::array({SampleJob(), queued}), out);
  std::string text = out.str();
  std::istringstream lines(text);
  std::vector<std::string> rows;
  for (std::string l; std::getline(lines, l);) rows.push_back(l);
  ASSERT_EQ(rows.size(), 3u) << text;
  EXPECT_TRUE(rows[0].starts_with("ID")) << rows[0];
  EXPECT_NE(rows[1].find("j-00000042"), std::string::npos);
  EXPECT_NE(rows[1].find("running"), std::string::npos);
  EXPECT_NE(rows[1].find("local gpus 0,1"), std::string::npos) << rows[1];
  EXPECT_NE(rows[2].find("waiting for 8 GPUs"), std::string::npos);
  std::ostringstream none;
  PrintJobTable(json::array(), none);
  EXPECT_EQ(none.str(), "no jobs\n");
}

TEST(Output, OneJobAsFieldsWithDashesForWhatIsUnset) {
  std::ostringstream out;
  PrintJob(SampleJob(), out);
  std::string text = out.str();
  EXPECT_NE(text.find("id:         j-00000042\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ended:      -\n"), std::string::npos) << text;
  EXPECT_NE(text.find("pricing:    on_demand\n"), std::string::npos) << text;
  EXPECT_NE(text.find("region:     aws:us-east-1\n"), std::string::npos) << text;
}

TEST(Output, NodesTable) {
  json nodes = json::parse(R"([{"name":"box","gpu_model":"H100-80GB","gpus":8,"vcpus":64,
      "ram_gib":503.7,"state":"ready","jobs":["j-00000001","j-00000002"]},
      {"name":"cpu1","gpu_model":"","gpus":0,"vcpus":2,"ram_gib":7.8,"state":"drained","jobs":[]}])");
  std::ostringstream out;
  PrintNodes(nodes, out);
  std::string text = out.str();
  EXPECT_NE(text.find("H100-80GB"), std::string::npos) << text;
  EXPECT_NE(text.find("503.7"), std::string::npos) << text;
  EXPECT_NE(text.find("j-00000001,j-00000002"), std::string::npos) << text;
  EXPECT_NE(text.find("drained"), std::string::npos) << text;
}

// A loopback port nothing listens on: bound, then closed.
int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

int RunCli(const std::vector<std::string>& args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  int rc = RunMeridian(args, 0, o, e);
  *out = o.str();
  *err = e.str();
  return rc;
}

TEST(ClientExitCodes, UnreachableDaemonIsOneAndNamesTheUrl) {
  std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  ::setenv("MERIDIAN_URL", url.c_str(), 1);
  std::string out, err;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"status"}, {"status", "j-00000001"}, {"cancel", "j-00000001"},
           {"logs", "j-00000001"}, {"nodes"},
           {"submit", "examples/fine-tuning.yaml", "--retries", "1"}}) {
    EXPECT_EQ(RunCli(args, &out, &err), kExitInternal) << args[0] << ": " << err;
    EXPECT_NE(err.find("cannot reach the meridian daemon at " + url), std::string::npos) << err;
    EXPECT_EQ(out, "");
  }
  ::unsetenv("MERIDIAN_URL");
}

TEST(ClientExitCodes, BadUrlAndUnreadableFileAreBadInput) {
  std::string out, err;
  ::setenv("MERIDIAN_URL", "localhost:8080", 1);
  EXPECT_EQ(RunCli({"status"}, &out, &err), kExitBadInput);
  EXPECT_NE(err.find("MERIDIAN_URL: \"localhost:8080\" must start with http://"),
            std::string::npos)
      << err;
  ::unsetenv("MERIDIAN_URL");
  EXPECT_EQ(RunCli({"submit", "no/such/job.yaml"}, &out, &err), kExitBadInput);
  EXPECT_NE(err.find("no/such/job.yaml: cannot read the job spec file"), std::string::npos) << err;
  EXPECT_EQ(RunCli({"logs"}, &out, &err), kExitBadInput);  // ID is required
  EXPECT_EQ(RunCli({"status", "--output", "yaml"}, &out, &err), kExitBadInput);
}

}  // namespace
}  // namespace meridian::cli
