#include "core/ledger.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <string>

namespace meridian {

namespace {

std::string JobName(JobId j) { return "job " + std::to_string(j.value()); }
std::string NodeName(NodeId n) { return "node " + std::to_string(n.value()); }

bool ShapeInside(MigShape s) {
  return s.span >= 1 && s.start + s.span <= kMigMemorySlices;
}

// A shape a repartitionable GPU may take: aligned to its span (1-slice
// instances at 0..6: the eighth memory slice has no compute slice of its own).
bool AlignedShape(MigShape s) {
  if (!ShapeInside(s) || !std::has_single_bit(static_cast<unsigned>(s.span))) return false;
  if (s.span == 1) return s.start <= 6;
  return s.start % s.span == 0;
}

}  // namespace

std::vector<uint8_t> AlignedMigStarts(int span, int max_instances) {
  std::vector<uint8_t> starts;
  if (span < 1 || span > kMigMemorySlices) return starts;
  for (int s = 0; s + span <= kMigMemorySlices && static_cast<int>(starts.size()) < max_instances;
       s += span) {
    starts.push_back(static_cast<uint8_t>(s));
  }
  return starts;
}

Result<Ledger> Ledger::Create(std::vector<NodeCapacity> nodes, size_t pool_count) {
  Ledger l;
  l.pools_.resize(pool_count);
  l.nodes_.resize(nodes.size());
  l.free_.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeCapacity& c = nodes[i];
    std::string where = NodeName(NodeId(static_cast<uint32_t>(i)));
    if (c.gpus < 0 || c.gpus > kMaxGpusPerNode) {
      return Status::Invalid(where + ": " + std::to_string(c.gpus) + " GPUs; at most " +
                             std::to_string(kMaxGpusPerNode) + " per node");
    }
    if (c.vcpus < 0 || c.ram_mib < 0) return Status::Invalid(where + ": negative vCPUs or RAM");
    uint64_t all = c.gpus == 64 ? ~0ull : ((1ull << c.gpus) - 1);
    if ((c.mig_gpus & ~all) != 0) return Status::Invalid(where + ": MIG GPU beyond its GPU count");
    uint8_t used = 0;
    for (const MigShape& s : c.mig_layout) {
      if (!ShapeInside(s) || (used & s.mask()) != 0) {
        return Status::Invalid(where + ": MIG layout instances overlap or leave the GPU");
      }
      used |= s.mask();
    }
    NodeState& st = l.nodes_[i];
    st.free_gpus = all & ~c.mig_gpus;
    l.free_[i] = {0, c.vcpus, c.ram_mib};
    st.mig_used.assign(static_cast<size_t>(c.gpus), 0);
    for (PoolId p : c.pools) {
      if (p.index() >= pool_count) return Status::Invalid(where + ": pool out of range");
      st.positions.emplace_back(p, static_cast<uint32_t>(l.pools_[p.index()].members.size()));
      l.pools_[p.index()].members.push_back(NodeId(static_cast<uint32_t>(i)));
    }
    st.cap = std::move(c);
  }
  for (Pool& p : l.pools_) {
    p.gpus.Reset(p.members.size());
    p.mig.Reset(p.members.size());
    p.vcpus.Reset(p.members.size());
  }
  for (size_t i = 0; i < l.nodes_.size(); ++i) l.Reindex(NodeId(static_cast<uint32_t>(i)));
  return l;
}

Ledger::Ledger(const Ledger& o)
    : nodes_(o.nodes_), free_(o.free_), pools_(o.pools_), allocations_(o.allocations_),
      aside_(o.aside_), ends_(o.ends_), freed_(o.freed_), freed_base_(o.freed_base_), stamp_(o.stamp_),
      preemptible_held_(o.preemptible_held_), preemptible_placed_(o.preemptible_placed_) {
  RelinkEnds();
}

Ledger& Ledger::operator=(const Ledger& o) {
  if (this != &o) {
    nodes_ = o.nodes_;
    free_ = o.free_;
    pools_ = o.pools_;
    allocations_ = o.allocations_;
    aside_ = o.aside_;
    ends_ = o.ends_;
    freed_ = o.freed_;
    freed_base_ = o.freed_base_;
    stamp_ = o.stamp_;
    preemptible_held_ = o.preemptible_held_;
    preemptible_placed_ = o.preemptible_placed_;
    RelinkEnds();
  }
  return *this;
}

void Ledger::RelinkEnds() {
  for (End& e : ends_) e.held = &allocations_.find(e.job)->second;
}

void Ledger::PlaceEnd(size_t i, const End& e) {
  ends_[i] = e;
  e.held->end_pos = static_cast<uint32_t>(i);
}

void Ledger::EndUp(size_t i) {
  const End e = ends_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!(e < ends_[parent])) break;
    PlaceEnd(i, ends_[parent]);
    i = parent;
  }
  PlaceEnd(i, e);
}

void Ledger::EndDown(size_t i) {
  const End e = ends_[i];
  const size_t n = ends_.size();
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && ends_[child + 1] < ends_[child]) ++child;
    if (!(ends_[child] < e)) break;
    PlaceEnd(i, ends_[child]);
    i = child;
  }
  PlaceEnd(i, e);
}

void Ledger::RemoveEnd(size_t i) {
  const End last = ends_.back();
  ends_.pop_back();
  if (i == ends_.size()) return;
  PlaceEnd(i, last);
  if (i > 0 && last < ends_[(i - 1) / 2]) {
    EndUp(i);
  } else {
    EndDown(i);
  }
}

std::vector<std::pair<UnixSeconds, JobId>> Ledger::EarliestEnds(size_t k) const {
  std::vector<std::pair<UnixSeconds, JobId>> out;
  // The heap's smallest entries in order: a frontier of heap positions whose
  // parents are out, itself a small heap (the earliest on top).
  std::vector<uint32_t> frontier;
  auto later = [&](uint32_t a, uint32_t b) { return ends_[b] < ends_[a]; };
  if (!ends_.empty() && k > 0) frontier.push_back(0);
  while (!frontier.empty() && out.size() < k) {
    std::pop_heap(frontier.begin(), frontier.end(), later);
    const uint32_t i = frontier.back();
    frontier.pop_back();
    out.emplace_back(ends_[i].end, ends_[i].job);
    for (uint32_t c = 2 * i + 1; c <= 2 * i + 2 && c < ends_.size(); ++c) {
      frontier.push_back(c);
      std::push_heap(frontier.begin(), frontier.end(), later);
    }
  }
  return out;
}

bool Ledger::MigFree(NodeId n, int gpu, MigShape shape) const {
  const NodeState& s = nodes_[n.index()];
  if (gpu < 0 || gpu >= s.cap.gpus || ((s.cap.mig_gpus >> gpu) & 1) == 0) return false;
  bool valid = s.cap.mig_layout.empty()
                   ? AlignedShape(shape)
                   : std::find(s.cap.mig_layout.begin(), s.cap.mig_layout.end(), shape) !=
                         s.cap.mig_layout.end();
  return valid && (s.mig_used[static_cast<size_t>(gpu)] & shape.mask()) == 0;
}

int Ledger::LargestFreeMig(const NodeState& s) const {
  int best = 0;
  for (int g = 0; g < s.cap.gpus; ++g) {
    if (((s.cap.mig_gpus >> g) & 1) == 0) continue;
    uint8_t used = s.mig_used[static_cast<size_t>(g)];
    if (s.cap.mig_layout.empty()) {
      for (int span = kMigMemorySlices; span > best; span /= 2) {
        for (int start = 0; start + span <= kMigMemorySlices; start += span) {
          MigShape sh{static_cast<uint8_t>(start), static_cast<uint8_t>(span)};
          if (AlignedShape(sh) && (used & sh.mask()) == 0) {
            best = span;
            break;
          }
        }
      }
    } else {
      for (const MigShape& sh : s.cap.mig_layout) {
        if ((used & sh.mask()) == 0 && sh.span > best) best = sh.span;
      }
    }
    if (best == kMigMemorySlices) break;
  }
  return best;
}

void Ledger::Reindex(NodeId n) {
  NodeState& s = nodes_[n.index()];
  s.largest_mig = LargestFreeMig(s);
  FreeCounts& f = free_[n.index()];
  const int gpus = f.gpus = std::popcount(s.free_gpus);
  for (auto [pool, pos] : s.positions) {
    Pool& p = pools_[pool.index()];
    p.gpus.Set(pos, gpus);
    p.mig.Set(pos, s.largest_mig);
    p.vcpus.Set(pos, f.vcpus);
  }
}

Status Ledger::CheckShare(const NodeShare& sh) const {
  if (!sh.node.valid() || sh.node.index() >= nodes_.size()) {
    return Status::Invalid("unknown " + NodeName(sh.node));
  }
  const NodeState& s = nodes_[sh.node.index()];
  auto where = [&] { return NodeName(sh.node); };  // only on the way out with an error
  if (sh.vcpus < 0 || sh.ram_mib < 0) return Status::Invalid(where() + ": negative vCPUs or RAM");
  uint64_t all = s.cap.gpus == 64 ? ~0ull : ((1ull << s.cap.gpus) - 1);
  if ((sh.gpus & ~all) != 0) return Status::Invalid(where() + ": GPU index beyond its GPU count");
  if ((sh.gpus & s.cap.mig_gpus) != 0) {
    return Status::Invalid(where() + ": a MIG-mode GPU cannot be allocated whole");
  }
  if ((sh.gpus & ~s.free_gpus) != 0) {
    return Status::Unschedulable(where() + ": GPU " +
                                 std::to_string(std::countr_zero(sh.gpus & ~s.free_gpus)) +
                                 " is already allocated");
  }
  if (sh.mig) {
    const MigShare& m = *sh.mig;
    if (m.gpu >= s.cap.gpus || ((s.cap.mig_gpus >> m.gpu) & 1) == 0) {
      return Status::Invalid(where() + ": GPU " + std::to_string(m.gpu) + " is not in MIG mode");
    }
    if (!MigFree(sh.node, m.gpu, m.shape)) {
      bool shape_ok = s.cap.mig_layout.empty()
                          ? AlignedShape(m.shape)
                          : std::find(s.cap.mig_layout.begin(), s.cap.mig_layout.end(),
                                      m.shape) != s.cap.mig_layout.end();
      if (!shape_ok) {
        return Status::Invalid(where() + ": GPU " + std::to_string(m.gpu) + " has no MIG instance at slice " +
                               std::to_string(m.shape.start) + " spanning " +
                               std::to_string(m.shape.span));
      }
      return Status::Unschedulable(where() + ": MIG slices " + std::to_string(m.shape.start) + ".." +
                                   std::to_string(m.shape.start + m.shape.span - 1) + " of GPU " +
                                   std::to_string(m.gpu) + " are already allocated");
    }
  }
  const FreeCounts& f = free_[sh.node.index()];
  if (sh.vcpus > f.vcpus) {
    return Status::Unschedulable(where() + ": needs " + std::to_string(sh.vcpus) + " vCPUs, " +
                                 std::to_string(f.vcpus) + " free");
  }
  if (sh.ram_mib > f.ram_mib) {
    return Status::Unschedulable(where() + ": needs " + std::to_string(sh.ram_mib) + " MiB RAM, " +
                                 std::to_string(f.ram_mib) + " free");
  }
  return Status::Ok();
}

Status Ledger::Check(const Allocation& a) const {
  if (!a.job.valid()) return Status::Invalid("allocation without a job id");
  if (a.end < a.start) return Status::Invalid(JobName(a.job) + ": allocation ends before it starts");
  if (a.nodes.empty() && !a.elastic) {
    return Status::Invalid(JobName(a.job) + ": allocation holds neither nodes nor a lease");
  }
  if (a.elastic && a.elastic->instances < 1) {
    return Status::Invalid(JobName(a.job) + ": elastic lease of fewer than one instance");
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (a.nodes[j].node == a.nodes[i].node) {
        return Status::Invalid(JobName(a.job) + ": " + NodeName(a.nodes[i].node) + " listed twice");
      }
    }
    Status st = CheckShare(a.nodes[i]);
    if (!st.ok()) return st.WithContext(JobName(a.job));
  }
  return Status::Ok();
}

Status Ledger::CanReserve(const Allocation& a) const {
  auto it = allocations_.find(a.job);
  if (it != allocations_.end() && a.job != aside_) {
    if (it->second.alloc == a) return Status::Ok();
    return Status::Invalid(JobName(a.job) + " already holds a different allocation");
  }
  return Check(a);
}

void Ledger::Hold(const Allocation& a, const NodeShare& sh, size_t at) {
  NodeState& s = nodes_[sh.node.index()];
  s.holders.insert(s.holders.begin() + static_cast<ptrdiff_t>(at),
                   Holder{a.job, a.end, std::popcount(sh.gpus), sh.mig ? sh.mig->shape.span : 0,
                          sh.vcpus, sh.ram_mib, a.priority, a.preemptible});
  s.free_gpus &= ~sh.gpus;
  if (sh.mig) s.mig_used[sh.mig->gpu] |= sh.mig->shape.mask();
  free_[sh.node.index()].vcpus -= sh.vcpus;
  free_[sh.node.index()].ram_mib -= sh.ram_mib;
  Reindex(sh.node);
}

void Ledger::Free(const Allocation& a, const NodeShare& sh) {
  NodeState& s = nodes_[sh.node.index()];
  s.holders.erase(std::find_if(s.holders.begin(), s.holders.end(),
                               [&](const Holder& h) { return h.job == a.job; }));
  s.free_gpus |= sh.gpus;
  if (sh.mig) s.mig_used[sh.mig->gpu] &= static_cast<uint8_t>(~sh.mig->shape.mask());
  free_[sh.node.index()].vcpus += sh.vcpus;
  free_[sh.node.index()].ram_mib += sh.ram_mib;
  Reindex(sh.node);
}

uint64_t Ledger::NextStamp() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Status Ledger::Reserve(const Allocation& a) {
  auto it = allocations_.find(a.job);
  if (it != allocations_.end()) {
    if (it->second.alloc == a) return Status::Ok();
    return Status::Invalid(JobName(a.job) + " already holds a different allocation");
  }
  MERIDIAN_RETURN_IF_ERROR(Check(a));  // all shares, before any is applied
  for (const NodeShare& sh : a.nodes) Hold(a, sh, nodes_[sh.node.index()].holders.size());
  stamp_ = NextStamp();
  Held& held = allocations_.emplace(a.job, Held{a, 0}).first->second;
  ends_.push_back({a.end, a.job, &held});
  EndUp(ends_.size() - 1);
  if (a.preemptible && !a.nodes.empty()) {
    ++preemptible_held_[static_cast<size_t>(a.priority)];
    ++preemptible_placed_[static_cast<size_t>(a.priority)];
  }
  return Status::Ok();
}

void Ledger::Unreserve(JobId job) { (void)Take(job); }

std::optional<Allocation> Ledger::Take(JobId job) {
  auto it = allocations_.find(job);
  if (it == allocations_.end()) return std::nullopt;
  if (freed_.size() >= 2 * kFreedKept) {
    const size_t drop = freed_.size() - kFreedKept;
    freed_.erase(freed_.begin(), freed_.begin() + static_cast<ptrdiff_t>(drop));
    freed_base_ += drop;
  }
  Release(it->second);
  std::optional<Allocation> taken(std::move(it->second.alloc));
  allocations_.erase(it);
  return taken;
}

void Ledger::Release(Held& held) {
  for (const NodeShare& sh : held.alloc.nodes) Free(held.alloc, sh);
  stamp_ = NextStamp();
  RemoveEnd(held.end_pos);
  for (const NodeShare& sh : held.alloc.nodes) freed_.push_back(static_cast<uint32_t>(sh.node.index()));
  // Elastic capacity is counted only for spot (instances a market shares).
  if (held.alloc.elastic && held.alloc.elastic->pricing == PricingModel::kSpot) {
    freed_.push_back(kElasticFreed);
  }
  if (held.alloc.preemptible && !held.alloc.nodes.empty()) {
    --preemptible_held_[static_cast<size_t>(held.alloc.priority)];
  }
}

Ledger::SetAside::SetAside(Ledger& ledger, JobId job) : ledger_(&ledger) {
  auto it = ledger.allocations_.find(job);
  if (it == ledger.allocations_.end()) return;
  job_ = job;
  stamp_ = ledger.stamp_;
  freed_size_ = ledger.freed_.size();
  Held& held = it->second;
  holder_at_.reserve(held.alloc.nodes.size());
  for (const NodeShare& sh : held.alloc.nodes) {
    const std::vector<Holder>& hs = ledger.nodes_[sh.node.index()].holders;
    holder_at_.push_back(static_cast<size_t>(
        std::find_if(hs.begin(), hs.end(), [&](const Holder& h) { return h.job == job; }) - hs.begin()));
  }
  ledger.Release(held);
  ledger.aside_ = job;
}

// Release undone in reverse: the preemptible count, the end back in the heap
// (EarliestEnds reads it in (end, job) order, so its place in the heap is not
// observable), each share's holder at its old place, the log and the stamp.
Ledger::SetAside::~SetAside() {
  if (!job_.valid()) return;
  Ledger& l = *ledger_;
  l.aside_ = JobId();
  Held& held = l.allocations_.find(job_)->second;
  const Allocation& a = held.alloc;
  if (a.preemptible && !a.nodes.empty()) ++l.preemptible_held_[static_cast<size_t>(a.priority)];
  l.ends_.push_back({a.end, a.job, &held});
  l.EndUp(l.ends_.size() - 1);
  for (size_t i = 0; i < a.nodes.size(); ++i) l.Hold(a, a.nodes[i], holder_at_[i]);
  l.freed_.resize(freed_size_);
  l.stamp_ = stamp_;
}

int64_t Ledger::NextWithFreeGpus(PoolId p, size_t from, int k) const {
  return pools_[p.index()].gpus.FirstAtLeast(from, k);
}
int64_t Ledger::NextWithFreeMig(PoolId p, size_t from, int span) const {
  return pools_[p.index()].mig.FirstAtLeast(from, span);
}
int64_t Ledger::NextWithFreeVcpus(PoolId p, size_t from, int vcpus) const {
  return pools_[p.index()].vcpus.FirstAtLeast(from, vcpus);
}

}  // namespace meridian
