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
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "sched/queued_job.h"
#include "sched/tenant_usage.h"

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

// A tenant's grant order (TenantUsage): tier, submission time, sequence, id.
struct GrantOrder {
  bool operator()(const QueueMember* a, const QueueMember* b) const;
};

// One tenant's members of one tier in grant order, with running sums of what
// they ask for (TenantUsage::Demand) in a Fenwick tree, so that what the
// members ahead of one ask for is O(log n) however the queue changed.
// Members arrive in grant order (later submissions) at the end; one that
// does not (queued again after a preemption) renumbers the tier, as does a
// tree more than half emptied by members that left.
class GrantSums {
 public:
  void Add(QueueMember* m);
  void Remove(QueueMember* m);
  // What the members before m ask for.
  ResourceAmounts Before(const QueueMember& m) const;
  const ResourceAmounts& total() const { return total_; }

 private:
  void Renumber(std::vector<QueueMember*> members);
  void Append(QueueMember* m);
  std::vector<QueueMember*> slots_;  // nullptr: left
  std::vector<ResourceAmounts> tree_;  // Fenwick, 1-based in tree_[1..]
  ResourceAmounts total_;
  size_t holes_ = 0;
  struct {  // the grant order of the last slot's member (one tier: no tier)
    UnixSeconds submitted = 0;
    uint64_t sequence = 0;
    JobId id;
  } last_;
};

// With a progressive sort key (QueueSortPlugin::SortKeyIsProgressive): the
// jobs whose order among themselves is their grant order (one tenant, one
// tier, equal static keys ahead of the progressive one). Their progressive
// keys never fall in that order, so the queue's next job among them is in
// the first run of equal keys.
using PartKey = std::array<double, kMaxStaticSortKeys + 2>;  // tenant, tier, keys ahead

struct QueueMember {
  const QueuedJob* job = nullptr;
  std::array<double, kMaxStaticSortKeys> keys{};  // the static sort keys, in profile order
  uint32_t shape = 0;             // its wait shape (Scheduler::Impl::shapes)
  ShapeMembers::iterator in_shape;  // its place in QueueState::by_shape[shape]
  ShapeMembers::iterator in_all;    // its place in QueueState::all
  uint32_t pos = 0;               // in QueueState::order
  uint64_t cycle = 0;             // the last cycle that looked at it
  bool unkept = false;            // listed in QueueState::unkept
  // With a progressive sort key (QueueState::progressive):
  ResourceAmounts demand;         // TenantUsage::Demand
  uint32_t tenant = 0;            // QueueState::tenants_queued index
  uint32_t slot = 0;              // its place in its GrantSums
  uint64_t key_cycle = 0;         // the cycle keys[progressive] is of
  PartKey part{};
  ShapeMembers::iterator in_part;  // in QueueState::shape_parts[shape][part]
  ShapeMembers::iterator in_all_parts;  // in QueueState::all_parts[part]
};

inline bool GrantOrder::operator()(const QueueMember* a, const QueueMember* b) const {
  if (a->job->tier != b->job->tier) return a->job->tier < b->job->tier;
  if (a->job->submitted != b->job->submitted) return a->job->submitted < b->job->submitted;
  if (a->job->sequence != b->job->sequence) return a->job->sequence < b->job->sequence;
  return a->job->id < b->job->id;
}

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
  std::vector<uint32_t> shape_count;  // members per wait shape

  // A progressive sort key's index among the sort plugins (the members'
  // keys[progressive] is computed at each cycle), or -1.
  int progressive = -1;
  // Per tenant (TenantId index + 1; 0: no tenant), per tier.
  std::vector<std::array<GrantSums, static_cast<size_t>(Priority::kLow) + 1>> tenants_queued;
  std::vector<ResourceAmounts> held;        // by the same index, at the cycle's start
  ResourceAmounts capacity;
  // Per wait shape, its members by PartKey, each in grant order; and all
  // members so (the queue's head).
  std::vector<std::map<PartKey, ShapeMembers>> shape_parts;
  std::map<PartKey, ShapeMembers> all_parts;

  // RunQueue's scratch: the members to look at, as a heap in queue order,
  // and the walks over wait shapes that a free may fit.
  std::vector<QueueMember*> heap;
  struct PartWalk {  // one PartKey's members, run by run of equal keys
    const ShapeMembers* members = nullptr;
    ShapeMembers::const_iterator next;  // the first not yet in a run
    std::vector<QueueMember*> run;      // the current run, in queue order
    size_t at = 0;
  };
  struct Cursor {
    uint32_t shape = 0;
    ShapeMembers::iterator at;   // fixed order: by_shape[shape]
    std::vector<PartWalk> parts;  // progressive key: shape_parts[shape]
    uint64_t opened = 0;  // freed_count() when opened
    bool done = false;
  };
  std::vector<Cursor> cursors;
};

}  // namespace meridian::sched
