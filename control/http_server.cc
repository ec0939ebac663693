#include "control/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace meridian::control {

namespace {

using Clock = std::chrono::steady_clock;

// One thread per task, at most `cap` at once (enqueue then waits, and the
// kernel's listen backlog holds new connections). shutdown waits for all.
class ThreadPerTask : public httplib::TaskQueue {
 public:
  explicit ThreadPerTask(int cap) : cap_(cap) {}

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return running_ < cap_; });
    ++running_;
    std::thread([this, fn = std::move(fn)] {
      fn();
      std::lock_guard<std::mutex> done(mu_);
      --running_;
      cv_.notify_all();
    }).detach();
  }

  void shutdown() override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return running_ == 0; });
  }

 private:
  const int cap_;
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;
};

std::string AddressOf(const sockaddr_storage& a, int* port) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    *port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof buf);
    *port = ntohs(in->sin6_port);
  }
  return buf;
}

// A connection's stream: reads wait at most until the deadline the server
// sets per phase (headers, body); each write waits at most the write timeout.
// Reads are buffered, since httplib reads request lines a byte at a time.
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(int fd, int write_timeout_ms) : fd_(fd), write_timeout_ms_(write_timeout_ms) {}

  void set_deadline(Clock::time_point at) { deadline_ = at; }

  // Waits until a byte can be read or `at` passes.
  bool WaitReadable(Clock::time_point at) const {
    if (begin_ < end_) return true;
    return Wait(POLLIN, at);
  }

  bool is_readable() const override { return WaitReadable(deadline_); }
  bool is_writable() const override {
    return Wait(POLLOUT, Clock::now() + std::chrono::milliseconds(write_timeout_ms_));
  }

  // Reads and writes try the socket first and wait only when it would block:
  // a request's bytes are mostly there already (WaitReadable saw them) and
  // an answer mostly fits the socket's buffer, so a poll before each call
  // would be a system call spent for nothing.
  ssize_t read(char* ptr, size_t size) override {
    if (begin_ == end_) {
      if (Clock::now() >= deadline_) return -1;  // bytes trickling in still end here
      ssize_t n = Recv(MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!Wait(POLLIN, deadline_)) return -1;
        n = Recv(0);
      }
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t k = std::min(size, end_ - begin_);
    std::memcpy(ptr, buf_ + begin_, k);
    begin_ += k;
    return static_cast<ssize_t>(k);
  }

  // cpp-httplib writes an answer's status line and headers, then its body,
  // in two calls: two system calls and two segments, each waking the client.
  // From BeginAnswer, the first write (the headers) is held and goes out with
  // the next one in one call; EndAnswer sends what is still held (an answer
  // with no body). An interim answer ("HTTP/1.1 100 Continue", which the
  // client waits for before it sends the body) is never held.
  void BeginAnswer() { hold_ = true; }
  bool EndAnswer() {
    hold_ = false;
    return held_.empty() || WriteAfterHeld(nullptr, 0) >= 0;
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!held_.empty()) return WriteAfterHeld(ptr, size);
    if (hold_ && !Interim(ptr, size)) {
      hold_ = false;
      held_.assign(ptr, size);
      return static_cast<ssize_t>(size);
    }
    ssize_t n = Send(ptr, size, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!is_writable()) return -1;  // the client has not read for write_timeout_ms
      n = Send(ptr, size, 0);
    }
    return n;
  }

  // Asked at every request (cpp-httplib fills remote_addr and local_addr);
  // a connection's addresses do not change, so each is asked of the kernel once.
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(getpeername, remote_, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(getsockname, local_, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  bool Wait(short events, Clock::time_point at) const {
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(at - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, events, 0};
      const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
      if (r < 0 && errno == EINTR) continue;
      return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
    }
  }

  ssize_t Recv(int flags) {
    ssize_t n;
    do {
      n = recv(fd_, buf_, sizeof buf_, flags);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  static bool Interim(const char* ptr, size_t size) {
    constexpr std::string_view kInterim = "HTTP/1.1 1";
    return std::string_view(ptr, size).substr(0, kInterim.size()) == kInterim;
  }

  // Sends what is held, then as much of [ptr, ptr + size) as the socket
  // takes; the count of the latter, or -1.
  ssize_t WriteAfterHeld(const char* ptr, size_t size) {
    for (;;) {
      iovec v[2] = {{held_.data(), held_.size()}, {const_cast<char*>(ptr), size}};
      msghdr m{};
      m.msg_iov = v;
      m.msg_iovlen = size > 0 ? 2 : 1;
      ssize_t n;
      do {
        n = sendmsg(fd_, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
      } while (n < 0 && errno == EINTR);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!is_writable()) return -1;
        continue;
      }
      if (n < 0) return n;
      const size_t sent = static_cast<size_t>(n);
      if (sent >= held_.size()) {
        const size_t of_data = sent - held_.size();
        held_.clear();
        return static_cast<ssize_t>(of_data);
      }
      held_.erase(0, sent);
    }
  }

  ssize_t Send(const char* ptr, size_t size, int flags) {
    ssize_t n;
    do {
      n = send(fd_, ptr, size, MSG_NOSIGNAL | flags);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  using Cached = std::optional<std::pair<std::string, int>>;
  // `ask` (getpeername or getsockname) once, then `cache`; "" and 0 if it failed.
  void Address(int (*ask)(int, sockaddr*, socklen_t*), Cached& cache, std::string& ip,
               int& port) const {
    if (!cache) {
      sockaddr_storage a{};
      socklen_t len = sizeof a;
      int p = 0;
      std::string name =
          ask(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0 ? AddressOf(a, &p) : "";
      cache.emplace(std::move(name), p);
    }
    ip = cache->first;
    port = cache->second;
  }

  const int fd_;
  const int write_timeout_ms_;
  mutable Cached remote_, local_;
  Clock::time_point deadline_ = Clock::now();
  char buf_[4096];
  size_t begin_ = 0, end_ = 0;
  bool hold_ = false;
  std::string held_;
};

void Refuse(int fd) {
  static const std::string kBody =
      R"({"error":{"code":"unavailable","message":"too many connections; try again","field":null}})";
  const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                             "Connection: close\r\nRetry-After: 1\r\nContent-Length: " +
                             std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
  (void)!send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

GuardedServer::GuardedServer(ConnectionLimits limits) : limits_(limits) {
  // Room above the limit for connections that are refused or close others.
  const int cap = limits_.max_connections + 64;
  new_task_queue = [cap] { return new ThreadPerTask(cap); };
}

bool GuardedServer::EvictOldestWaiting(const std::string& client) {
  for (Connection& c : open_) {
    if (c.evicted || c.phase != Phase::kWaiting) continue;
    if (!client.empty() && c.client != client) continue;
    c.evicted = true;
    shutdown(c.fd, SHUT_RDWR);  // its thread's poll or recv returns; it releases the slot
    return true;
  }
  return false;
}

std::optional<GuardedServer::Slot> GuardedServer::Admit(int fd, const std::string& client) {
  std::lock_guard<std::mutex> l(mu_);
  if (closing_) return std::nullopt;
  int total = 0, mine = 0;
  for (const Connection& c : open_) {
    if (c.evicted) continue;
    ++total;
    if (c.client == client) ++mine;
  }
  if (mine >= limits_.max_connections_per_client) {
    if (!EvictOldestWaiting(client)) return std::nullopt;
    --total;
  }
  if (total >= limits_.max_connections && !EvictOldestWaiting("")) return std::nullopt;
  open_.push_back(Connection{fd, client, Phase::kWaiting, false});
  return std::prev(open_.end());
}

void GuardedServer::SetPhase(Slot slot, Phase phase) {
  std::lock_guard<std::mutex> l(mu_);
  slot->phase = phase;
}

void GuardedServer::Release(Slot slot) {
  std::lock_guard<std::mutex> l(mu_);
  open_.erase(slot);
}

bool GuardedServer::WidenBacklog(int backlog) {
  const socket_t fd = svr_sock_;
  // listen() again on a listening socket sets its backlog (Linux).
  return fd != INVALID_SOCKET && ::listen(fd, backlog) == 0;
}

void GuardedServer::CloseAll() {
  std::lock_guard<std::mutex> l(mu_);
  closing_ = true;
  for (Connection& c : open_) {
    if (!c.evicted) shutdown(c.fd, SHUT_RDWR);
    c.evicted = true;
  }
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  DeadlineStream strm(sock, limits_.write_timeout_ms);
  std::string client;
  int port = 0;
  strm.get_remote_ip_and_port(client, port);
  auto slot = Admit(sock, client);
  if (!slot) {
    Refuse(sock);
    ::shutdown(sock, SHUT_RDWR);
    close(sock);
    return false;
  }
  const auto ms = [](int v) { return std::chrono::milliseconds(v); };
  bool ok = true;
  for (int served = 0; served < limits_.max_requests_per_connection && svr_sock_ != INVALID_SOCKET;
       ++served) {
    SetPhase(*slot, Phase::kWaiting);
    // A new connection's request, or the next one on a kept-alive connection.
    const int wait_ms = served == 0 ? limits_.header_timeout_ms : limits_.keep_alive_timeout_ms;
    if (!strm.WaitReadable(Clock::now() + ms(wait_ms))) break;
    strm.set_deadline(Clock::now() + ms(limits_.header_timeout_ms));
    bool closed = false;
    const bool last = served + 1 == limits_.max_requests_per_connection;
    strm.BeginAnswer();
    ok = process_request(strm, last, closed, [&](httplib::Request&) {
      // The headers are in: the body, if any, has its own deadline.
      SetPhase(*slot, Phase::kBusy);
      strm.set_deadline(Clock::now() + ms(limits_.body_timeout_ms));
    });
    ok = strm.EndAnswer() && ok;
    if (!ok || closed) break;
  }
  // Released before the descriptor is closed, so no eviction can reach a
  // reused descriptor number.
  Release(*slot);
  ::shutdown(sock, SHUT_RDWR);
  close(sock);
  return ok;
}

}  // namespace meridian::control
