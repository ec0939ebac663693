// Stalled and slow clients against a real `meridian serve` on loopback: the
// connection limits and header deadlines of control/http_server.h keep the
// API answering (docs/api.md, "Connection limits").
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "control/test_daemon.h"

namespace meridian::control {
namespace {

using nlohmann::json;
using testing::Auth;
using testing::DaemonProcess;
using Clock = std::chrono::steady_clock;

// A connection that has sent `text` (a request cut short) and then waits.
int OpenAndSend(int port, const std::string& text) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ADD_FAILURE() << "connect: " << std::strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  EXPECT_EQ(send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
  return fd;
}

// Whether the server has closed `fd` (a read returns end of file or an
// error) within `wait_ms`.
bool ClosedByServer(int fd, int wait_ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, wait_ms) <= 0) return false;
  char c;
  return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

class ApiAbuseTest : public ::testing::Test {
 protected:
  void Start(const std::string& extra = "") {
    dir_ = testing::MakeTempDir("abuse");
    daemon_ = std::make_unique<DaemonProcess>(dir_, 4, extra);
    daemon_->Start();
    alice_ = daemon_->Token("alice");
  }
  void TearDown() override {
    for (int fd : fds_) close(fd);
    daemon_.reset();
    testing::RemoveTempDir(dir_);
  }

  std::string dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string alice_;
  std::vector<int> fds_;
};

// Issue 20: 70 half-sent requests held the 64 workers for 30 s each, and
// /healthz timed out. With the default limits, 200 of them cannot.
TEST_F(ApiAbuseTest, HealthzAnswersWithinTwoSecondsWhile200HalfSentRequestsStall) {
  Start();
  for (int i = 0; i < 200; ++i) {
    // Half a request line and header, no token, then nothing.
    const int fd = OpenAndSend(daemon_->port(), i % 2 ? "GET /v1/jo" : "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nConte");
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  // Let the daemon accept all of them.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  httplib::Client c("127.0.0.1", daemon_->port());
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(5, 0);
  auto t0 = Clock::now();
  auto h = c.Get("/healthz");
  const double healthz_s = Seconds(t0);
  ASSERT_TRUE(h) << "no answer after " << healthz_s << " s";
  EXPECT_EQ(h->status, 200);
  EXPECT_LT(healthz_s, 2.0);
  // An authenticated request works too, and so does a submission.
  t0 = Clock::now();
  auto list = c.Get("/v1/jobs", Auth(alice_));
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200) << list->body;
  EXPECT_LT(Seconds(t0), 2.0);
  auto sub = c.Post("/v1/jobs", Auth(alice_),
                    R"({"name": "after-stall", "kind": "data-science", "command": ["/bin/true"]})",
                    "application/json");
  ASSERT_TRUE(sub);
  EXPECT_EQ(sub->status, 201) << sub->body;
}

// A client sending a byte now and then gains nothing: the deadline is for the
// whole request line and headers (http.header_timeout), not for each read.
TEST_F(ApiAbuseTest, ASlowlorisClientIsClosedAtTheHeaderDeadline) {
  Start("http: {header_timeout: 1s}\n");
  const int fd = OpenAndSend(daemon_->port(), "GET /healthz HTTP/1.1\r\n");
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  const auto t0 = Clock::now();
  bool closed = false;
  // One header byte every 200 ms would keep a per-read timeout of 1 s happy forever.
  while (!closed && Seconds(t0) < 5) {
    (void)!send(fd, "X", 1, MSG_NOSIGNAL);
    closed = ClosedByServer(fd, 200);
  }
  EXPECT_TRUE(closed);
  // 1 s deadline from the first wait; the bound leaves room for a loaded machine.
  EXPECT_LT(Seconds(t0), 3.0);
}

// At the per-client limit the oldest waiting connection makes room: the new
// request is served, and that oldest stalled one is the one closed.
TEST_F(ApiAbuseTest, AtThePerClientLimitTheOldestWaitingConnectionIsClosed) {
  Start("http: {max_connections_per_client: 4}\n");
  for (int i = 0; i < 4; ++i) {
    const int fd = OpenAndSend(daemon_->port(), "GET /heal");
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
    // In order, so the first is the oldest.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto http = daemon_->Client();
  auto h = http->Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_TRUE(ClosedByServer(fds_[0], 1000));
  for (size_t i = 2; i < fds_.size(); ++i) EXPECT_FALSE(ClosedByServer(fds_[i], 0)) << i;
}

// A connection over the limit with none waiting to close gets a JSON 503.
TEST_F(ApiAbuseTest, OverTheTotalLimitWithNoneWaitingIsA503) {
  Start("http: {max_connections: 2}\n");
  for (int i = 0; i < 2; ++i) {
    // Headers complete, the body still to come (within http.body_timeout):
    // busy, so never closed to make room.
    const int fd = OpenAndSend(daemon_->port(),
                               "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + alice_ +
                                   "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int fd = OpenAndSend(daemon_->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  std::string answer;
  char buf[1024];
  for (int i = 0; i < 20; ++i) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 250) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  const json body = json::parse(answer.substr(answer.find("\r\n\r\n") + 4), nullptr, false);
  EXPECT_EQ(body["error"]["code"], "unavailable") << answer;
}

// What one read returns once the first byte of `fd`'s answer is there
// (waiting up to `wait_ms`): the bytes that had arrived together.
std::string FirstRead(int fd, int wait_ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, wait_ms) <= 0) return "";
  std::string buf(1 << 16, '\0');
  const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
  buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return buf;
}

// The size an answer says it has: its head (status line and headers, with
// the blank line) plus Content-Length, or 0 when the head is not complete.
size_t DeclaredSize(const std::string& answer, bool head_only) {
  const size_t end = answer.find("\r\n\r\n");
  if (end == std::string::npos) return 0;
  const std::string head = answer.substr(0, end);
  const size_t at = head.find("\r\nContent-Length: ");
  const size_t body =
      at == std::string::npos || head_only ? 0 : std::stoul(head.substr(at + 18));
  return end + 4 + body;
}

// An answer's head and body leave the daemon in one write, so they reach the
// client together: one wake-up and one read for the client, one system call
// and one segment for the daemon (control/http_server.cc, DeadlineStream).
// The answer to a HEAD, a head alone, is sent when the request ends.
TEST_F(ApiAbuseTest, AnAnswersHeadAndBodyArriveInOneRead) {
  Start();
  const std::string submit = R"({"name": "one-read", "kind": "data-science", "command": ["/bin/true"]})";
  const struct {
    std::string request;
    std::string status;
    bool head_only;
  } cases[] = {
      {"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200", false},
      {"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + alice_ +
           "\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(submit.size()) + "\r\n\r\n" + submit,
       "HTTP/1.1 201", false},
      {"GET /v1/jobs/j-99999999 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + alice_ +
           "\r\n\r\n",
       "HTTP/1.1 404", false},
      {"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200", true},
  };
  for (const auto& c : cases) {
    const int fd = OpenAndSend(daemon_->port(), c.request);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
    const std::string answer = FirstRead(fd, 5000);
    EXPECT_EQ(answer.rfind(c.status, 0), 0u) << c.request << "\n" << answer;
    // Bodies here are a few hundred bytes: well inside one segment on loopback.
    EXPECT_GT(answer.size(), 0u);
    EXPECT_EQ(answer.size(), DeclaredSize(answer, c.head_only)) << c.request << "\n" << answer;
  }
}

// A client that asks to be told to go on ("Expect: 100-continue") sends its
// body only after the interim answer: that one is never held back waiting
// for the final answer's body.
TEST_F(ApiAbuseTest, AnInterimContinueIsSentBeforeTheBodyArrives) {
  Start();
  const std::string submit = R"({"name": "continued", "kind": "data-science", "command": ["/bin/true"]})";
  const int fd = OpenAndSend(daemon_->port(),
                             "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + alice_ +
                                 "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                                 "Content-Length: " + std::to_string(submit.size()) + "\r\n\r\n");
  ASSERT_GE(fd, 0);
  fds_.push_back(fd);
  const auto t0 = Clock::now();
  const std::string interim = FirstRead(fd, 5000);
  EXPECT_EQ(interim.rfind("HTTP/1.1 100 Continue\r\n", 0), 0u) << interim;
  // Held until the body, it would not come at all: the client waits for it.
  EXPECT_LT(Seconds(t0), 2.0);
  ASSERT_EQ(send(fd, submit.data(), submit.size(), MSG_NOSIGNAL), static_cast<ssize_t>(submit.size()));
  const std::string answer = FirstRead(fd, 5000);
  EXPECT_EQ(answer.rfind("HTTP/1.1 201", 0), 0u) << answer;
  EXPECT_EQ(answer.size(), DeclaredSize(answer, false)) << answer;
}

}  // namespace
}  // namespace meridian::control
