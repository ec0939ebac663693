// Ledger: the one mutable record of who holds what. For every node of the
// fleet it keeps the free whole GPUs (a bitmask), the free vCPUs and RAM, and
// for each MIG-mode GPU which of its eight memory slices are taken; it also
// records elastic (provisioned cloud) allocations: offering, instance count,
// pricing model and the time window.
//
// Invariants, checked on every Reserve: a GPU, a MIG slice, a vCPU or a MiB of
// RAM is never given twice; a MIG instance lies on a MIG-mode GPU and, where
// the node has a fixed layout, is one of the layout's instances. Reserve of the
// exact allocation a job already holds is a no-op, a different one an error;
// Unreserve of a job that holds nothing is a no-op. A gang (several nodes) is
// reserved whole or not at all.
//
// The ledger also indexes free capacity per pool of nodes (the fleet numbers
// pools: one per GPU model, one per GPU model and cluster), so "the next node
// in fleet order with at least k free GPUs" is O(log n).
//
// Allocations are kept in a hash map by job, and their ends in a binary heap
// (reserve and release touch a few entries of one array, not a tree of
// nodes), which EarliestEnds reads in order.
//
// Ownership: the scheduler's commit step (or the simulator/daemon that owns
// it) is the only writer; deciders read it through a const reference. Not
// thread-safe: readers and the writer must not overlap.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/enums.h"
#include "core/ids.h"
#include "core/max_tree.h"
#include "core/status.h"
#include "core/time.h"
#include "core/units.h"

namespace meridian {

inline constexpr int kMaxGpusPerNode = 64;  // one bit each in a uint64_t
inline constexpr int kMigMemorySlices = 8;  // A100/H100/H200/B200

// A MIG GPU instance's position on its GPU, in memory slices.
struct MigShape {
  uint8_t start = 0;
  uint8_t span = 0;
  uint8_t mask() const { return static_cast<uint8_t>(((1u << span) - 1u) << start); }
  friend bool operator==(const MigShape&, const MigShape&) = default;
};

// What one node offers, as the ledger needs it.
struct NodeCapacity {
  int gpus = 0;            // <= kMaxGpusPerNode
  uint64_t mig_gpus = 0;   // bit i: GPU i is in MIG mode (never allocated whole)
  // The instances every MIG-mode GPU of the node is partitioned into; empty
  // means any placement of aligned shapes (a repartitionable node).
  std::vector<MigShape> mig_layout;
  int vcpus = 0;
  int64_t ram_mib = 0;
  std::vector<PoolId> pools;  // the capacity indexes the node belongs to
};

// One MIG instance held by a job.
struct MigShare {
  uint8_t gpu = 0;
  MigShape shape;
  friend bool operator==(const MigShare&, const MigShare&) = default;
};

// What a job holds on one node.
struct NodeShare {
  NodeId node;
  uint64_t gpus = 0;              // whole GPUs, bit i = GPU i
  std::optional<MigShare> mig;    // or one MIG instance
  int vcpus = 0;
  int64_t ram_mib = 0;
  friend bool operator==(const NodeShare&, const NodeShare&) = default;
};

// Capacity bought from a cloud for the job.
struct ElasticLease {
  OfferingId offering;
  int instances = 1;
  PricingModel pricing = PricingModel::kOnDemand;
  Money price_per_hour;  // all instances together, the run's (sched::ElasticPricePerHour)
  friend bool operator==(const ElasticLease&, const ElasticLease&) = default;
};

struct Allocation {
  JobId job;
  std::vector<NodeShare> nodes;        // fleet capacity; several nodes = a gang
  std::optional<ElasticLease> elastic; // or capacity provisioned for the job
  UnixSeconds start = 0;
  UnixSeconds end = 0;                 // expected end (run time estimate)
  // What preemption and fair share need to know about the holder.
  Priority priority = Priority::kNormal;
  bool preemptible = false;
  TenantId tenant;
  int64_t checkpoint_interval_s = 0;  // the holder's checkpoint.interval; 0: not stated
  int64_t restart_overhead_s = 0;     // its checkpoint.restart_overhead; 0: not stated
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

class Ledger {
  struct Held;

 public:
  Ledger() = default;
  Ledger(const Ledger& o);
  Ledger& operator=(const Ledger& o);
  Ledger(Ledger&&) noexcept = default;
  Ledger& operator=(Ledger&&) noexcept = default;
  // `pool_count` pools, numbered 0..pool_count-1; each node names its pools.
  // Node ids are positions in `nodes`. Capacities are checked: gpus <=
  // kMaxGpusPerNode, MIG layout shapes inside the GPU and non-overlapping.
  static Result<Ledger> Create(std::vector<NodeCapacity> nodes, size_t pool_count);

  // Records `a` for `a.job` (see the class comment for the rules).
  Status Reserve(const Allocation& a);
  // OK when Reserve(a) would succeed and change the ledger, or `a` is already held.
  Status CanReserve(const Allocation& a) const;
  // Releases everything `job` holds; no-op for an unknown job.
  void Unreserve(JobId job);
  // Unreserve, handing back what the job held (nullopt: it held nothing).
  std::optional<Allocation> Take(JobId job);

  const Allocation* Find(JobId job) const {
    if (job == aside_) return nullptr;
    auto it = allocations_.find(job);
    return it == allocations_.end() ? nullptr : &it->second.alloc;
  }
  size_t allocation_count() const { return allocations_.size() - (aside_.valid() ? 1 : 0); }

  // Sets a job's allocation aside for the guard's lifetime, in place: while
  // it lives, the ledger reads as after Take(job) (the capacity free; Find,
  // allocations() and allocation_count() without it; its nodes appended to
  // the freed log; a new stamp). When it ends, the ledger is again exactly
  // what it was: each node's holders in their order, the allocation's place
  // in allocations(), the freed log, the stamp and the preemptible counts
  // (where Take then Reserve would move the job's holders to the back, log
  // the frees for good and count a new placement). What a re-decision of a
  // running job reads (Scheduler::Reconsider) at the cost of its own shares,
  // not of a copy of the ledger. Nothing else may write the ledger while a
  // guard lives, and one guard at a time. A job that holds nothing: no-op.
  class SetAside {
   public:
    SetAside(Ledger& ledger, JobId job);
    ~SetAside();
    SetAside(const SetAside&) = delete;
    SetAside& operator=(const SetAside&) = delete;

   private:
    Ledger* ledger_;
    JobId job_;                        // invalid: the job held nothing
    uint64_t stamp_ = 0;               // the ledger's before
    size_t freed_size_ = 0;            // the freed log's kept entries before
    std::vector<size_t> holder_at_;    // per share: its place in the node's holders
  };

  // What was freed, for a reader that keeps a verdict until capacity it could
  // use is freed (the scheduler's kept waits): every Take (and Unreserve)
  // appends the nodes it frees, or kElasticFreed for a spot lease (the one
  // elastic capacity a market counts and leases share), to a
  // log numbered from 0; freed_count() is the number appended so far.
  // FreedSince(k): the entries from number k on, or nullopt when some of
  // them are no longer kept (the log keeps at least its last kFreedKept).
  static constexpr uint32_t kElasticFreed = UINT32_MAX;
  static constexpr size_t kFreedKept = 1 << 16;
  uint64_t freed_count() const { return freed_base_ + freed_.size(); }
  // Changes whenever any free capacity does (each Reserve and Take draws a
  // new one from a process-wide count); equal stamps, of this ledger or a
  // copy of it, mean equal free capacity.
  uint64_t stamp() const { return stamp_; }
  std::optional<std::span<const uint32_t>> FreedSince(uint64_t k) const {
    if (k < freed_base_ || k > freed_count()) return std::nullopt;
    return std::span<const uint32_t>(freed_).subspan(static_cast<size_t>(k - freed_base_));
  }
  // Preemptible fleet allocations (victims preemption may choose) of
  // priority `p`: held now, and reserved since the ledger was made.
  int preemptible_held(Priority p) const { return preemptible_held_[static_cast<size_t>(p)]; }
  // Held now, of every priority below `tier` (the victims a job of `tier` may have).
  int preemptible_held_below(Priority tier) const {
    int n = 0;
    for (size_t p = static_cast<size_t>(tier) + 1; p < preemptible_held_.size(); ++p) n += preemptible_held_[p];
    return n;
  }
  int64_t preemptible_placed(Priority p) const {
    return preemptible_placed_[static_cast<size_t>(p)];
  }
  // The first `k` allocations in order of expected end, then job id, as
  // (end, job): the releases a search for the earliest free capacity walks.
  // O(k log k), whatever the number of allocations.
  std::vector<std::pair<UnixSeconds, JobId>> EarliestEnds(size_t k) const;

  // Every allocation, as (job, allocation) pairs in the hash map's order.
  class Allocations {
   public:
    using Map = std::unordered_map<JobId, Held>;
    class iterator {
     public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = std::pair<const JobId&, const Allocation&>;
      using difference_type = std::ptrdiff_t;
      iterator() = default;
      iterator(Map::const_iterator it, Map::const_iterator end, JobId aside)
          : it_(it), end_(end), aside_(aside) {
        Skip();
      }
      value_type operator*() const;
      iterator& operator++() {
        ++it_;
        Skip();
        return *this;
      }
      bool operator==(const iterator& o) const { return it_ == o.it_; }

     private:
      void Skip() {
        if (it_ != end_ && it_->first == aside_) ++it_;
      }
      Map::const_iterator it_, end_;
      JobId aside_;
    };
    // `aside`: the job set aside (Ledger::SetAside), left out; invalid: none.
    Allocations(const Map& m, JobId aside) : map_(&m), aside_(aside) {}
    iterator begin() const { return iterator(map_->begin(), map_->end(), aside_); }
    iterator end() const { return iterator(map_->end(), map_->end(), aside_); }
    size_t size() const { return map_->size() - (aside_.valid() ? 1 : 0); }

   private:
    const Map* map_;
    JobId aside_;
  };
  Allocations allocations() const { return Allocations(allocations_, aside_); }

  size_t node_count() const { return nodes_.size(); }
  const NodeCapacity& capacity(NodeId n) const { return nodes_[n.index()].cap; }
  uint64_t free_gpus(NodeId n) const { return nodes_[n.index()].free_gpus; }
  int free_gpu_count(NodeId n) const { return free_[n.index()].gpus; }
  int free_vcpus(NodeId n) const { return free_[n.index()].vcpus; }
  int64_t free_ram_mib(NodeId n) const { return free_[n.index()].ram_mib; }
  // Memory slices taken on GPU `gpu` of node `n` (MIG-mode GPUs only).
  uint8_t mig_used(NodeId n, int gpu) const { return nodes_[n.index()].mig_used[gpu]; }
  // Whether `shape` on GPU `gpu` of `n` is a valid instance and entirely free.
  bool MigFree(NodeId n, int gpu, MigShape shape) const;
  // A job's share of one node with its expected end, as the earliest-start
  // search reads it without looking the allocation up.
  struct Holder {
    JobId job;
    UnixSeconds end = 0;
    int gpus = 0;       // whole GPUs held
    int mig_span = 0;   // span of the MIG instance held, 0 if none
    int vcpus = 0;
    int64_t ram_mib = 0;
    Priority priority = Priority::kNormal;  // the holder's, as preemption weighs it
    bool preemptible = false;
  };
  // The shares held on node `n`, in reservation order.
  const std::vector<Holder>& holders(NodeId n) const { return nodes_[n.index()].holders; }
  // Span of the largest free MIG instance on the node (0 when none).
  int largest_free_mig_span(NodeId n) const { return nodes_[n.index()].largest_mig; }

  // Free-capacity indexes. Positions are a pool's members in node order.
  size_t pool_count() const { return pools_.size(); }
  const std::vector<NodeId>& pool_members(PoolId p) const { return pools_[p.index()].members; }
  // The first member at position >= from with at least `k` free whole GPUs
  // (respectively a free MIG instance of span >= k, >= k free vCPUs); -1 if none.
  int64_t NextWithFreeGpus(PoolId p, size_t from, int k) const;
  int64_t NextWithFreeMig(PoolId p, size_t from, int span) const;
  int64_t NextWithFreeVcpus(PoolId p, size_t from, int vcpus) const;
  // Totals over the pool, for quick "is there room at all" checks.
  int max_free_gpus(PoolId p) const { return pools_[p.index()].gpus.Max(); }

 private:
  struct NodeState {
    NodeCapacity cap;
    uint64_t free_gpus = 0;
    std::vector<uint8_t> mig_used;  // per GPU
    int largest_mig = 0;
    std::vector<std::pair<PoolId, uint32_t>> positions;  // (pool, position)
    std::vector<Holder> holders;
  };
  struct Pool {
    std::vector<NodeId> members;
    MaxTree gpus, mig, vcpus;
  };

  // An allocation and its place in `ends_`.
  struct Held {
    Allocation alloc;
    uint32_t end_pos = 0;
  };
  // One entry of the ends heap: ordered by end, then job.
  struct End {
    UnixSeconds end;
    JobId job;
    Held* held;  // the record in allocations_ (its nodes never move)
    bool operator<(const End& o) const { return end != o.end ? end < o.end : job < o.job; }
  };

  Status Check(const Allocation& a) const;
  Status CheckShare(const NodeShare& s) const;
  // Records `sh` of `a` on its node, its holder at position `at` of the
  // node's holders; Free undoes it.
  void Hold(const Allocation& a, const NodeShare& sh, size_t at);
  void Free(const Allocation& a, const NodeShare& sh);
  // What Take frees, with the allocation left in allocations_ (Take erases
  // it; SetAside keeps it, set aside): the shares, its end, the freed log
  // (appended, never trimmed here), a new stamp and the preemptible count.
  void Release(Held& held);
  void Reindex(NodeId n);
  int LargestFreeMig(const NodeState& s) const;
  void PlaceEnd(size_t i, const End& e);
  void EndUp(size_t i);
  void EndDown(size_t i);
  void RemoveEnd(size_t i);
  void RelinkEnds();

  // What searches read of every node they pass, 16 bytes a node (a
  // NodeState is several cache lines): free whole GPUs, vCPUs and RAM.
  struct FreeCounts {
    int32_t gpus = 0;
    int32_t vcpus = 0;
    int64_t ram_mib = 0;
  };
  std::vector<NodeState> nodes_;
  std::vector<FreeCounts> free_;  // by node
  std::vector<Pool> pools_;
  std::unordered_map<JobId, Held> allocations_;
  JobId aside_;  // the job a SetAside guard holds aside; invalid: none
  std::vector<End> ends_;  // binary min-heap over the allocations' ends
  std::vector<uint32_t> freed_;  // the freed log's kept entries (node indexes)
  uint64_t freed_base_ = 0;      // the number of its first kept entry
  uint64_t stamp_ = NextStamp();
  static uint64_t NextStamp();
  std::array<int, 4> preemptible_held_{};        // by Priority
  std::array<int64_t, 4> preemptible_placed_{};  // by Priority
};

// The aligned placements of a MIG instance `span` memory slices wide: starts
// at multiples of `span` (0, span, 2 x span, ...) inside the GPU, at most
// `max_instances` of them. This is NVIDIA's rule for A100/H100/H200 profiles
// (1g: 0..6, 2-slice: 0,2,4(,6), 4-slice: 0,4, 8-slice: 0); the catalog's
// placement data, where present, takes precedence over it.
std::vector<uint8_t> AlignedMigStarts(int span, int max_instances);

inline Ledger::Allocations::iterator::value_type Ledger::Allocations::iterator::operator*() const {
  return {it_->first, it_->second.alloc};
}

}  // namespace meridian
