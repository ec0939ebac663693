// Internal to sched/: the queue a caller keeps with the scheduler
// (Scheduler::Enqueue, Dequeue, RunQueue), so that a cycle over a queue of
// thousands decides only the jobs an event could change instead of looking
// at every one.
//
// Every queued job is a QueueMember. With head-of-line blocking, or a cycle
// plugin that wants full decisions for the queue's head (backfill), a cycle
// first walks the queue from its head in order, as RunCycle does, for as long
// as that lasts (to the first wait; until the reservations are made). A member without a kept verdict is
// "unkept" and decided in full at every cycle (new jobs, jobs whose verdict
// the scheduler may not keep). A member with a kept verdict is looked at only
// when something its verdict depends on (Plugin::WaitInputs) changed, found
// through an index per input:
//
//   freed capacity  the members of each wait shape in queue order; a release
//                   that may fit the shape walks them in order, and stops as
//                   soon as the shape no longer fits (the first job of the
//                   shape took the room): one check for the rest
//   retry_at        a heap by time
//   market          one list, woken when the clock moves
//   victims         one list, woken when a preemptible placement is made
//   tenant frees    a list per tenant, woken when that tenant releases
//   any free        one list, woken by any release
//
// Index entries carry the verdict's generation: an entry whose verdict was
// dropped or decided again since is passed over and removed.
#pragma once

#include <array>
#include <cstdint>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "sched/queued_job.h"

namespace meridian::sched {

// The most QueueSort plugins a queue kept across cycles orders by (each with
// a key that depends on the job alone: QueueSortPlugin::SortKeyIsStatic).
inline constexpr size_t kMaxStaticSortKeys = 4;

struct QueueMember;

// Queue order: the static sort keys, then submission time, sequence and id,
// as Scheduler::SortQueue orders.
struct MemberOrder {
  size_t keys = 0;
  bool operator()(const QueueMember* a, const QueueMember* b) const;
};
using ShapeMembers = std::set<QueueMember*, MemberOrder>;

struct QueueMember {
  const QueuedJob* job = nullptr;
  std::array<double, kMaxStaticSortKeys> keys{};  // the static sort keys, in profile order
  uint32_t shape = 0;             // its wait shape (Scheduler::Impl::shapes)
  ShapeMembers::iterator in_shape;  // its place in QueueState::by_shape[shape]
  ShapeMembers::iterator in_all;    // its place in QueueState::all
  uint32_t pos = 0;               // in QueueState::order
  uint64_t cycle = 0;             // the last cycle that looked at it
  bool unkept = false;            // listed in QueueState::unkept
};

inline bool MemberOrder::operator()(const QueueMember* a, const QueueMember* b) const {
  for (size_t i = 0; i < keys; ++i) {
    if (a->keys[i] != b->keys[i]) return a->keys[i] < b->keys[i];
  }
  if (a->job->submitted != b->job->submitted) return a->job->submitted < b->job->submitted;
  if (a->job->sequence != b->job->sequence) return a->job->sequence < b->job->sequence;
  return a->job->id < b->job->id;
}

// A kept verdict as an index lists it.
struct KeptRef {
  JobId job;
  uint32_t gen = 0;
};

// A list of kept verdicts woken together, scanned only when its signal (a
// count that only grows) moved since the last scan.
struct WakeList {
  std::vector<KeptRef> entries;
  uint64_t scanned = 0;  // the signal at the last scan
  bool rescan = false;   // some entries were woken after the current position: scan again
};

struct RetryEntry {
  UnixSeconds at = 0;
  KeptRef ref;
};
struct LaterRetry {
  bool operator()(const RetryEntry& a, const RetryEntry& b) const { return a.at > b.at; }
};

struct QueueState {
  // Whether RunQueue decides only what changed (the profile allows it: see
  // Scheduler::Create); otherwise it runs RunCycle over the whole queue.
  bool incremental = false;
  MemberOrder less;
  std::unordered_map<uint32_t, QueueMember> members;  // by JobId value
  std::vector<QueueMember*> order;  // in the order enqueued; nullptr: dequeued
  size_t holes = 0;                 // nullptr entries in `order`
  std::vector<JobId> unkept;        // members to decide in full at the next cycle
  // The indexes of kept verdicts (see the file comment).
  std::priority_queue<RetryEntry, std::vector<RetryEntry>, LaterRetry> retries;
  WakeList market, victims, any_freed;
  std::vector<WakeList> tenants;  // by TenantId index
  // Per wait shape: its queued members in queue order (Impl::shapes' index).
  std::vector<ShapeMembers> by_shape;
  // Every member in queue order: the head a cycle with head-of-line blocking
  // or a cycle plugin (backfill's reservations) decides first.
  ShapeMembers all;
  uint64_t shapes_scanned = 0;    // the ledger's freed_count() when the shapes were last checked
  uint64_t released_scanned = 0;  // Impl::released when the tenants' lists were last scanned
  // RunQueue's scratch: the members to look at, as a heap in queue order,
  // and the walks over wait shapes that a free may fit.
  std::vector<QueueMember*> heap;
  struct Cursor {
    uint32_t shape = 0;
    ShapeMembers::iterator at;
    uint64_t opened = 0;  // freed_count() when opened
    bool done = false;
  };
  std::vector<Cursor> cursors;
};

}  // namespace meridian::sched
