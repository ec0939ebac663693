// Internal to sched/: the scheduler's kept verdicts (Scheduler::KeepWait), a
// table looked up once per waiting job per cycle. Open addressing with linear
// probing over job ids, so a lookup is one cache line, not a node of a hash
// map's chain; an erased entry leaves a mark that the next rehash drops.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace meridian {
class Ledger;
}

namespace meridian::sched {

struct QueuedJob;

// A job that waited with no feasible candidate, and what would change that
// (Plugin::WaitInputs).
struct KeptWait {
  const Ledger* ledger = nullptr;   // the ledger it was decided on
  const QueuedJob* job = nullptr;   // the object decided (another: decided afresh)
  uint64_t freed = 0;               // ledger freed_count() when last found unchanged
  int64_t victims_placed = 0;       // preemptible placements below its priority
  uint64_t tenant_released = 0;     // its tenant's releases (Impl::tenant_released)
  UnixSeconds at = 0;               // when decided
  std::optional<UnixSeconds> retry_at;
  uint32_t inputs = 0;              // WaitInput bits
  uint32_t shape = 0;               // its WaitShape (Scheduler::Impl::shapes)
  uint64_t cycle = 0;               // the last cycle that decided or kept it
  uint32_t gen = 0;                 // which verdict this is (QueueState's indexes)
};

class KeptWaits {
 public:
  KeptWait* Find(JobId job) {
    if (slots_.empty()) return nullptr;
    for (size_t i = Home(job.value());; i = (i + 1) & mask_) {
      if (slots_[i].key == job.value()) return &slots_[i].wait;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  // The entry of `job`, made empty when new. Ids from 2^32 - 2 up are not
  // job ids (JobId::Invalid and the table's own mark).
  KeptWait& Put(JobId job) {
    if ((used_ + 1) * 2 > slots_.size()) Rehash();
    size_t free = SIZE_MAX;
    size_t i = Home(job.value());
    for (; slots_[i].key != kEmpty; i = (i + 1) & mask_) {
      if (slots_[i].key == job.value()) return slots_[i].wait = {};
      if (slots_[i].key == kErased && free == SIZE_MAX) free = i;
    }
    if (free == SIZE_MAX) {
      free = i;
      ++used_;
    }
    slots_[free].key = job.value();
    ++size_;
    return slots_[free].wait = {};
  }
  // Marks the slot erased (probes pass it, Put reuses it): O(1) however long
  // the run of ids around it, which a queue of consecutive ids makes long.
  void Erase(JobId job) {
    if (slots_.empty()) return;
    for (size_t i = Home(job.value());; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) return;
      if (slots_[i].key == job.value()) {
        slots_[i].key = kErased;
        --size_;
        return;
      }
    }
  }
  // Drops every entry `drop(wait)` says to.
  template <typename F>
  void EraseIf(F drop) {
    for (Slot& s : slots_) {
      if (s.key != kEmpty && s.key != kErased && drop(s.wait)) {
        s.key = kErased;
        --size_;
      }
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kEmpty = JobId::kInvalidValue;
  static constexpr uint32_t kErased = JobId::kInvalidValue - 1;
  struct Slot {
    uint32_t key = kEmpty;
    KeptWait wait;
  };
  // Fibonacci hashing: consecutive ids (a trace's, a database's) land far
  // apart, so a probe for an id not in the table ends at the next empty slot
  // instead of walking a run of neighbours.
  size_t Home(uint32_t key) const {
    return static_cast<size_t>((uint64_t{key} * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  // Into a table twice the entries' number (at least 64), without the
  // erased marks.
  void Rehash() {
    std::vector<Slot> old;
    old.swap(slots_);
    size_t n = 64;
    while (n < 4 * (size_ + 1)) n *= 2;
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    shift_ = 64 - std::countr_zero(n);
    size_ = used_ = 0;
    for (Slot& s : old) {
      if (s.key != kEmpty && s.key != kErased) Put(JobId(s.key)) = s.wait;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;  // entries
  size_t used_ = 0;  // entries and erased marks: what probes walk through
};

}  // namespace meridian::sched
