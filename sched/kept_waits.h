// Internal to sched/: the scheduler's kept verdicts (Scheduler::KeepWait), a
// table looked up once per waiting job per cycle. Open addressing with linear
// probing over job ids, so a lookup is one cache line, not a node of a hash
// map's chain; erasing shifts the run back (no tombstones), so a queue that
// turns over for months does not slow it down.
#pragma once

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
  UnixSeconds at = 0;               // when decided
  std::optional<UnixSeconds> retry_at;
  uint32_t inputs = 0;              // WaitInput bits
  uint32_t shape = 0;               // its WaitShape (Scheduler::Impl::shapes)
  uint64_t cycle = 0;               // the last cycle that decided or kept it
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
  // The entry of `job`, made empty when new.
  KeptWait& Put(JobId job) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t i = Home(job.value());
    for (; slots_[i].key != kEmpty; i = (i + 1) & mask_) {
      if (slots_[i].key == job.value()) return slots_[i].wait = {};
    }
    slots_[i].key = job.value();
    ++size_;
    return slots_[i].wait = {};
  }
  void Erase(JobId job) {
    if (slots_.empty()) return;
    size_t i = Home(job.value());
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) return;
      if (slots_[i].key == job.value()) break;
    }
    // Backward shift: later entries of the run whose home is not between the
    // hole and themselves move into the hole.
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].key == kEmpty) break;
      const size_t home = Home(slots_[j].key);
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].key = kEmpty;
    --size_;
  }
  // Drops every entry `drop(wait)` says to.
  template <typename F>
  void EraseIf(F drop) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size(), Slot{});
    size_ = 0;
    for (Slot& s : old) {
      if (s.key != kEmpty && !drop(s.wait)) Put(JobId(s.key)) = s.wait;
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kEmpty = JobId::kInvalidValue;
  struct Slot {
    uint32_t key = kEmpty;
    KeptWait wait;
  };
  // The id itself: ids are handed out in order (a trace's, a database's), so
  // a queue walked in submission order walks the table in order too, and
  // the ids waiting at once rarely collide.
  size_t Home(uint32_t key) const { return static_cast<size_t>(key) & mask_; }
  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (Slot& s : old) {
      if (s.key != kEmpty) Put(JobId(s.key)) = s.wait;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace meridian::sched
