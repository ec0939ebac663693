// Leadership: which of the daemons serving one database runs the reconcile
// loop (docs/control-plane.md, "Replicas"). Every daemon answers the whole
// API; the one holding the store's lease (Store::TakeLease) leads.
//
// A follower tries to take the lease every third of its length; it is free
// once its holder has not renewed it for a whole lease (the holder died, hung
// or lost the database). On taking it, the daemon fences its writes with the
// new epoch (Store::FenceWrites) and then starts the loop, which recovers
// from the store and adopts the running attempts as a restarted daemon does.
// The leader renews every third of the lease; when a renewal finds the lease
// taken, or none has succeeded for a whole lease (counted from when the last
// successful one was sent, so never later than the database's own expiry),
// it stops the loop and only then lifts the fence, so no write the loop had
// under way lands after another replica took over. On a SQLite store the
// lease is always this daemon's: it leads from Start to Stop.
//
// Threading: Start and Stop from one thread; leading() from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "control/store.h"
#include "core/status.h"

namespace meridian::control {

struct LeadershipOptions {
  int64_t lease_ms = 5000;  // a takeover comes within about 4/3 of it, plus recovery
  std::string holder;       // names this daemon in the lease row ("host:pid:start@api-host:port")
  // Starts the reconcile loop (an error: it did not start); `follow` stops it.
  std::function<Status()> lead;
  std::function<void()> follow;
};

class Leadership {
 public:
  Leadership(Store* store, LeadershipOptions options);
  ~Leadership();

  // Tries once to take the lease, on this thread: an error from `lead` is
  // returned (a daemon that cannot recover does not start), and a lease held
  // by another leaves this daemon a follower. Then keeps trying, or renewing,
  // on its own thread.
  Status Start();
  // Stops the loop if it leads, and hands the lease back (it expires at
  // once), so a follower takes over at its next try.
  void Stop();
  bool leading() const { return leading_; }
  // Leading, and less than a lease since the last successful renewal was
  // sent: no other replica can have taken the lease yet. The reconcile loop
  // asks before each backend call (ReconcilerOptions::lease_held), so a
  // leader paused past its lease launches nothing when it resumes.
  bool LeaseHeld() const;
  // The lease's epoch while leading (launches carry it: Backend::Fence).
  int64_t epoch() const { return epoch_; }
  // The backend refused a launch at this epoch (Deposed, control/backend.h):
  // a newer leader exists. No further backend call is made, and the loop
  // steps down at once instead of at its next renewal.
  void Deposed();

 private:
  void Loop();
  // Takes the lease if free; on taking it, fences and leads.
  Status TryLead();
  void Renew();
  void StepDown(const std::string& why);
  int64_t SteadyMs() const;

  Store* store_;
  LeadershipOptions options_;
  std::atomic<bool> leading_{false};
  std::atomic<int64_t> epoch_{0};  // the lease's epoch while leading
  std::atomic<bool> deposed_{false};  // Deposed() since the lease was taken
  // When the last successful renewal (or the taking) was sent, steady clock.
  std::atomic<int64_t> renewed_sent_ms_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// "host:pid:unix-ms": a holder name no other process, here or on another
// host, has had.
std::string LeaseHolderName();

}  // namespace meridian::control
