// GuardedServer: cpp-httplib's server with its connection handling replaced,
// so that clients which open connections and stall cannot take the API down
// (docs/api.md, "Connection limits").
//
// cpp-httplib serves each connection on a worker of a fixed pool and waits
// for each read up to its read timeout; a few dozen half-sent requests hold
// every worker. Here instead:
// - each connection has a thread of its own, at most `max_connections` at
//   once and `max_connections_per_client` from one client address;
// - a request's line and headers must arrive within `header_timeout_ms` of
//   its first byte being awaited, its body within `body_timeout_ms` of the
//   headers; an idle keep-alive connection is closed after
//   `keep_alive_timeout_ms`. These are totals, not per read, so a client
//   sending a byte now and then gains nothing;
// - at a limit, the oldest connection of that client (or, for the total, of
//   any client) that is waiting (for a request's headers, or idle between
//   requests) is closed to make room; a connection whose request is being
//   handled is never closed. When none is waiting, the new connection gets
//   503 and is closed.
//
// Threading: connections are served on their own threads; CloseAll may be
// called from any thread (after stop(), so that Serve returns promptly).
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>

namespace meridian::control {

struct ConnectionLimits {
  int max_connections = 512;
  int max_connections_per_client = 64;
  int header_timeout_ms = 5000;
  int body_timeout_ms = 10000;
  int keep_alive_timeout_ms = 5000;
  int write_timeout_ms = 10000;
  int max_requests_per_connection = 1000;
};

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits);

  // Closes every open connection and refuses new ones.
  void CloseAll();

  // After binding: a listen backlog of `backlog` connections (cpp-httplib
  // listens with 5, so a burst of connects overflows the kernel's queue and
  // each dropped connect waits a second or more to retry).
  bool WidenBacklog(int backlog);

 private:
  enum class Phase { kWaiting, kBusy };
  struct Connection {
    int fd = -1;
    std::string client;
    Phase phase = Phase::kWaiting;
    bool evicted = false;
  };
  using Slot = std::list<Connection>::iterator;

  bool process_and_close_socket(socket_t sock) override;

  // Registers a new connection, closing a waiting one at a limit; nullopt:
  // refuse it.
  std::optional<Slot> Admit(int fd, const std::string& client);
  // Under mu_: closes the oldest waiting connection (of `client`, or of
  // anyone when it is ""); false when none waits.
  bool EvictOldestWaiting(const std::string& client);
  void SetPhase(Slot slot, Phase phase);
  void Release(Slot slot);

  const ConnectionLimits limits_;
  std::mutex mu_;
  std::list<Connection> open_;  // oldest first; guarded by mu_
  bool closing_ = false;        // guarded by mu_
};

}  // namespace meridian::control
