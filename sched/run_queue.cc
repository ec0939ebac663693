// Scheduler::Enqueue, Dequeue and RunQueue: the queue kept across cycles
// (sched/queue_state.h has the design).
#include <algorithm>
#include <tuple>

#include "sched/cycle.h"
#include "sched/scheduler.h"

namespace meridian::sched {

namespace {

// Lists m to be decided in full at the next cycle.
void MarkUnkept(QueueState& q, QueueMember& m) {
  if (m.unkept) return;
  m.unkept = true;
  q.unkept.push_back(m.job->id);
}

// m's kept verdict, if it is one DecideInCycle would look at (of this job
// object, on this ledger).
KeptWait* VerdictOf(Scheduler::Impl& s, const QueueMember& m, const Ledger& l) {
  KeptWait* k = s.kept.Find(m.job->id);
  return k && k->job == m.job && k->ledger == &l ? k : nullptr;
}

// Drops the dequeued members from `order`, keeping the others' order.
void Compact(QueueState& q) {
  size_t n = 0;
  for (QueueMember* m : q.order) {
    if (!m) continue;
    m->pos = static_cast<uint32_t>(n);
    q.order[n++] = m;
  }
  q.order.resize(n);
  q.holes = 0;
}

// Indexes a verdict kept just now by what may change it.
void IndexVerdict(QueueState& q, const KeptWait& k, const QueuedJob& job) {
  const KeptRef r{job.id, k.gen};
  if (k.retry_at) q.retries.push({*k.retry_at, r});
  if (k.inputs & kWaitMarket) q.market.entries.push_back(r);
  if (k.inputs & kWaitVictims) q.victims.entries.push_back(r);
  if (k.inputs & kWaitAnyFreed) q.any_freed.entries.push_back(r);
  if ((k.inputs & kWaitTenantFreed) && job.tenant.valid()) {
    if (q.tenants.size() <= job.tenant.index()) q.tenants.resize(job.tenant.index() + 1);
    q.tenants[job.tenant.index()].entries.push_back(r);
  }
}

// Preemptible placements of every priority so far: grows whenever a
// PlacedBelow does.
int64_t PlacedAll(const Ledger& l) {
  int64_t n = 0;
  for (int p = 0; p <= static_cast<int>(Priority::kLow); ++p) {
    n += l.preemptible_placed(static_cast<Priority>(p));
  }
  return n;
}

// Takes m out of the indexes that order it (not out of `members`).
void Unlink(QueueState& q, QueueMember& m) {
  --q.shape_count[m.shape];
  if (q.progressive < 0) {
    q.by_shape[m.shape].erase(m.in_shape);
    q.all.erase(m.in_all);
    return;
  }
  q.tenants_queued[m.tenant][static_cast<size_t>(m.part[1])].Remove(&m);  // its tier when added
  for (auto* parts : {&q.shape_parts[m.shape], &q.all_parts}) {
    auto part = parts->find(m.part);
    part->second.erase(parts == &q.all_parts ? m.in_all_parts : m.in_part);
    if (part->second.empty()) parts->erase(part);
  }
}

}  // namespace

void GrantSums::Append(QueueMember* m) {
  m->slot = static_cast<uint32_t>(slots_.size());
  slots_.push_back(m);
  last_ = {m->job->submitted, m->job->sequence, m->job->id};
  // Fenwick node i covers (i - lowbit(i), i]: the members it spans before
  // this one, summed from the nodes below it, plus this one.
  const size_t i = slots_.size();
  if (tree_.empty()) tree_.resize(1);
  ResourceAmounts node = m->demand;
  for (size_t j = i - 1, stop = i - (i & (~i + 1)); j > stop; j -= j & (~j + 1)) node += tree_[j];
  tree_.push_back(node);
  total_ += m->demand;
}

void GrantSums::Add(QueueMember* m) {
  const QueuedJob& j = *m->job;
  if (slots_.empty() || std::tie(last_.submitted, last_.sequence, last_.id) <
                            std::tie(j.submitted, j.sequence, j.id)) {
    // After the last slot's member in grant order (whether or not it has
    // left since): appended.
    Append(m);
    return;
  }
  // Before some members: those after it in grant order, from the end back
  // (with the holes among them), are taken off and appended again after it.
  // A Fenwick node covers only slots at or before its own, so the nodes of
  // the slots kept stay as they are: the cost is the tail's, not the queue's
  // (a job is mostly out of order by a few places: submitted in the same
  // second as the last ones, through another replica).
  size_t keep = slots_.size();
  while (keep > 0 && (slots_[keep - 1] == nullptr || GrantOrder{}(m, slots_[keep - 1]))) --keep;
  std::vector<QueueMember*> tail;
  tail.reserve(slots_.size() - keep);
  for (size_t i = keep; i < slots_.size(); ++i) {
    QueueMember* x = slots_[i];
    if (x == nullptr) {
      --holes_;
      continue;
    }
    for (int r = 0; r < ResourceAmounts::kCount; ++r) total_.v[r] -= x->demand.v[r];
    tail.push_back(x);
  }
  slots_.resize(keep);
  tree_.resize(keep + 1);
  Append(m);
  for (QueueMember* x : tail) Append(x);
}

void GrantSums::Remove(QueueMember* m) {
  ResourceAmounts minus;
  for (int r = 0; r < ResourceAmounts::kCount; ++r) minus.v[r] = -m->demand.v[r];
  for (size_t i = m->slot + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += minus;
  total_ += minus;
  slots_[m->slot] = nullptr;
  if (++holes_ > 64 && 2 * holes_ > slots_.size()) {
    std::vector<QueueMember*> members;
    for (QueueMember* x : slots_) {
      if (x) members.push_back(x);
    }
    Renumber(std::move(members));
  }
}

ResourceAmounts GrantSums::Before(const QueueMember& m) const {
  ResourceAmounts sum;
  for (size_t i = m.slot; i > 0; i -= i & (~i + 1)) sum += tree_[i];
  return sum;
}

void GrantSums::Renumber(std::vector<QueueMember*> members) {
  slots_.clear();
  tree_.clear();
  total_ = {};
  holes_ = 0;
  for (QueueMember* x : members) Append(x);
}

void Scheduler::Enqueue(const QueuedJob& job) {
  Impl& s = *impl_;
  QueueState& q = s.queue;
  s.kept.Erase(job.id);
  auto [it, added] = q.members.try_emplace(job.id.value());
  QueueMember& m = it->second;
  if (added) {
    m.pos = static_cast<uint32_t>(q.order.size());
    q.order.push_back(&m);
  } else if (q.incremental) {
    Unlink(q, m);
  }
  m.job = &job;
  MarkUnkept(q, m);
  if (!q.incremental) return;
  const Snapshot none;
  for (size_t i = 0; i < s.sorts.size(); ++i) {
    if (static_cast<int>(i) != q.progressive) m.keys[i] = s.sorts[i]->sort->SortKey(none, job);
  }
  m.shape = WaitShapeOf(s, job);
  if (q.shape_count.size() <= m.shape) {
    q.shape_count.resize(m.shape + 1, 0);
    q.shape_parts.resize(m.shape + 1);
    while (q.by_shape.size() <= m.shape) q.by_shape.emplace_back(q.less);
  }
  ++q.shape_count[m.shape];
  if (q.progressive < 0) {
    m.in_shape = q.by_shape[m.shape].insert(&m).first;
    m.in_all = q.all.insert(&m).first;
    return;
  }
  m.key_cycle = 0;
  m.demand = TenantUsage::Demand(job);
  m.tenant = job.tenant.valid() ? job.tenant.index() + 1 : 0;
  if (q.tenants_queued.size() <= m.tenant) q.tenants_queued.resize(m.tenant + 1);
  q.tenants_queued[m.tenant][static_cast<size_t>(job.tier)].Add(&m);
  m.part.fill(0);
  m.part[0] = m.tenant;
  m.part[1] = static_cast<double>(job.tier);
  for (int i = 0; i < q.progressive; ++i) m.part[2 + static_cast<size_t>(i)] = m.keys[static_cast<size_t>(i)];
  auto part = q.shape_parts[m.shape].try_emplace(m.part, MemberOrder{0}).first;
  m.in_part = part->second.insert(&m).first;
  m.in_all_parts = q.all_parts.try_emplace(m.part, MemberOrder{0}).first->second.insert(&m).first;
}

void Scheduler::Dequeue(JobId job) {
  Impl& s = *impl_;
  QueueState& q = s.queue;
  s.kept.Erase(job);
  auto it = q.members.find(job.value());
  if (it == q.members.end()) return;
  QueueMember& m = it->second;
  if (q.incremental) Unlink(q, m);
  q.order[m.pos] = nullptr;
  ++q.holes;
  q.members.erase(it);
  if (q.holes > 1024 && 2 * q.holes > q.order.size()) Compact(q);
}

void Scheduler::Forget(JobId job) {
  Impl& s = *impl_;
  s.kept.Erase(job);
  if (auto it = s.queue.members.find(job.value()); it != s.queue.members.end()) {
    MarkUnkept(s.queue, it->second);
  }
}

size_t Scheduler::queued() const { return impl_->queue.members.size(); }

std::vector<const QueuedJob*> Scheduler::Queued() const {
  std::vector<const QueuedJob*> out;
  out.reserve(impl_->queue.members.size());
  for (const QueueMember* m : impl_->queue.order) {
    if (m) out.push_back(m->job);
  }
  return out;
}

void Scheduler::RunQueue(const Snapshot& snap, Ledger* ledger,
                         const std::function<void(Decision&)>& decided, bool commit_preemptions) {
  Impl& s = *impl_;
  QueueState& q = s.queue;
  if (q.members.empty()) return;
  Snapshot live = snap;
  live.ledger = ledger;
  live.tenants = nullptr;  // built from the ledger and this queue, as SortQueue builds it
  const Ledger& l = *ledger;
  // Bookkeeping after a full decision of m: its new verdict indexed, or m
  // decided in full again next time.
  auto after_full = [&](QueueMember& m) {
    if (!q.incremental) return;
    if (const KeptWait* k = VerdictOf(s, m, l)) {
      IndexVerdict(q, *k, *m.job);
    } else {
      MarkUnkept(q, m);
    }
  };
  if (q.members.size() == 1) {
    // A cycle of one job is one decision and its commit (no queue to sort,
    // no reservation for later jobs to respect).
    QueueMember& m = q.members.begin()->second;
    if (m.unkept) {
      m.unkept = false;
      q.unkept.clear();
    }
    Decision d = DecideInCycle(*m.job, live);
    if (d.kept) return;
    CommitOrFail(*this, d, live, ledger, commit_preemptions);
    after_full(m);
    decided(d);
    return;
  }
  if (!q.incremental) {
    if (q.holes > 0) Compact(q);
    RunCycle(live, Queued(), ledger, decided,
             {.report_kept = false, .commit_preemptions = commit_preemptions});
    return;
  }

  BeginCycle(live);
  const uint64_t cycle = s.cycle;
  const int64_t full_before = s.full_decisions;
  int64_t kept = 0;  // kept verdicts: looked at, or passed over
  const QueueMember* at = nullptr;  // the member the cycle has reached, in queue order
  // A progressive key is computed once per cycle for the members looked at,
  // from what each tenant holds now (TenantUsage::Rebuild's arithmetic).
  const size_t progressive = static_cast<size_t>(q.progressive);
  if (q.progressive >= 0) {
    q.held.assign(q.tenants_queued.size(), ResourceAmounts{});
    for (const auto& [job, a] : l.allocations()) {
      if (!a.tenant.valid() || a.tenant.index() + 1 >= q.held.size()) continue;
      q.held[a.tenant.index() + 1] += TenantUsage::Of(*s.fleet, a);
    }
  }
  auto keyed = [&](QueueMember* m) {
    if (q.progressive >= 0 && m->key_cycle != cycle) {
      // Held, then the tenant's jobs of higher tiers, then of its own tier ahead.
      ResourceAmounts before = q.held[m->tenant];
      const auto& tiers = q.tenants_queued[m->tenant];
      const size_t tier = static_cast<size_t>(m->job->tier);
      for (size_t t = 0; t < tier; ++t) before += tiers[t].total();
      before += tiers[tier].Before(*m);
      m->keys[progressive] =
          s.sorts[progressive]->sort->ProgressiveKey(*m->job, snap.now, before, q.capacity);
      m->key_cycle = cycle;
    }
    return m;
  };
  std::vector<QueueMember*>& heap = q.heap;
  heap.clear();
  auto later = [&](const QueueMember* a, const QueueMember* b) { return q.less(b, a); };
  auto push = [&](QueueMember* m) {
    heap.push_back(keyed(m));
    std::push_heap(heap.begin(), heap.end(), later);
  };
  // A woken verdict's member joins the cycle unless the cycle has passed it
  // (then it waits for the next cycle: false).
  auto wake = [&](const KeptRef& r) {
    auto it = q.members.find(r.job.value());
    if (it == q.members.end()) return true;
    if (at && !q.less(at, keyed(&it->second))) return false;
    push(&it->second);
    return true;
  };
  // A walk's next member in queue order that the cycle has not looked at
  // and not passed; nullptr at the end.
  auto next_of_part = [&](QueueState::PartWalk& w) -> QueueMember* {
    while (true) {
      while (w.at < w.run.size() &&
             (w.run[w.at]->cycle == cycle || (at && !q.less(at, w.run[w.at])))) {
        ++w.at;
      }
      if (w.at < w.run.size()) return w.run[w.at];
      if (w.next == w.members->end()) return nullptr;
      // The next run of equal progressive keys, in queue order.
      w.run.clear();
      w.at = 0;
      const double first = keyed(*w.next)->keys[progressive];
      while (w.next != w.members->end() && keyed(*w.next)->keys[progressive] == first) {
        w.run.push_back(*w.next++);
      }
      std::sort(w.run.begin(), w.run.end(), q.less);
    }
  };
  auto next_of = [&](QueueState::Cursor& c) -> QueueMember* {
    if (q.progressive < 0) {
      const ShapeMembers& members = q.by_shape[c.shape];
      while (c.at != members.end() && (*c.at)->cycle == cycle) ++c.at;
      return c.at == members.end() ? nullptr : *c.at;
    }
    QueueMember* best = nullptr;
    for (QueueState::PartWalk& w : c.parts) {
      QueueMember* m = next_of_part(w);
      if (m && (!best || q.less(m, best))) best = m;
    }
    return best;
  };
  auto advance = [&](QueueState::Cursor& c, const QueueMember* m) {
    if (q.progressive < 0) {
      ++c.at;
      return;
    }
    for (QueueState::PartWalk& w : c.parts) {
      if (w.at < w.run.size() && w.run[w.at] == m) {
        ++w.at;
        return;
      }
    }
  };
  // Scans `w` when its signal moved: wakes the entries `changed` says moved.
  auto scan = [&](WakeList& w, uint64_t signal, auto changed) {
    if (signal == w.scanned && !w.rescan) return;
    w.scanned = signal;
    w.rescan = false;
    size_t keep = 0;
    for (const KeptRef& r : w.entries) {
      const KeptWait* k = s.kept.Find(r.job);
      if (!k || k->gen != r.gen) continue;  // decided again or dropped since
      if (changed(*k)) {
        if (wake(r)) continue;
        w.rescan = true;
      }
      w.entries[keep++] = r;
    }
    w.entries.resize(keep);
  };
  auto scan_inputs = [&] {
    scan(q.victims, static_cast<uint64_t>(PlacedAll(l)),
         [&](const KeptWait& k) { return PlacedBelow(l, k.job->tier) != k.victims_placed; });
    scan(q.any_freed, l.freed_count(), [&](const KeptWait& k) { return k.freed != l.freed_count(); });
    if (s.released != q.released_scanned) {
      q.released_scanned = s.released;
      for (size_t t = 0; t < q.tenants.size(); ++t) {
        const uint64_t released = s.TenantReleased(TenantId(static_cast<uint32_t>(t)));
        scan(q.tenants[t], released,
             [&](const KeptWait& k) { return k.tenant_released != released; });
      }
    }
  };
  std::vector<QueueState::Cursor>& cursors = q.cursors;
  cursors.clear();
  // Opens a walk over each wait shape that a free since it was last found
  // not to fit may fit, from the member the cycle has reached.
  auto open_shapes = [&] {
    const uint64_t freed = l.freed_count();
    if (freed == q.shapes_scanned) return;
    q.shapes_scanned = freed;
    for (uint32_t sh = 0; sh < q.shape_count.size(); ++sh) {
      Impl::WaitShape& w = s.shapes[sh];
      if (q.shape_count[sh] == 0 || w.validated >= freed) continue;
      if (std::any_of(cursors.begin(), cursors.end(),
                      [&](const QueueState::Cursor& c) { return c.shape == sh && !c.done; })) {
        continue;
      }
      const QueuedJob& one = q.progressive < 0 ? *(*q.by_shape[sh].begin())->job
                                               : *(*q.shape_parts[sh].begin()->second.begin())->job;
      if (!ShapeMayFit(s, sh, one, l, w.validated)) {
        w.validated = freed;
        continue;
      }
      QueueState::Cursor c;
      c.shape = sh;
      c.opened = freed;
      if (q.progressive < 0) {
        const ShapeMembers& members = q.by_shape[sh];
        c.at = at ? members.upper_bound(const_cast<QueueMember*>(at)) : members.begin();
      } else {
        for (const auto& [key, members] : q.shape_parts[sh]) {
          QueueState::PartWalk walk;
          walk.members = &members;
          walk.next = members.begin();
          c.parts.push_back(std::move(walk));
        }
      }
      cursors.push_back(std::move(c));
    }
  };

  // A full decision of m, committed, handed to the cycle plugins and the
  // caller; true: the cycle ends (head-of-line blocking).
  auto decide = [&](QueueMember& m) {
    s.kept.Erase(m.job->id);
    Decision d = DecideAndKeep(*m.job, live);
    CommitOrFail(*this, d, live, ledger, commit_preemptions);
    Decided(live, *m.job, &d);
    after_full(m);
    const bool ends = EndsCycle(d);
    decided(d);
    return ends;
  };

  // The queue's head, in order, for as long as every job there must be
  // looked at: with head-of-line blocking to the first wait; while a cycle
  // plugin wants full decisions (backfill's reservations).
  const bool blocking = s.profile.options.head_of_line_blocking;
  auto wanted = [&](const QueuedJob& job) {
    return std::any_of(s.cycles.begin(), s.cycles.end(),
                       [&](const PluginSlot* p) { return p->cycle->WantsDecision(job); });
  };
  bool ended = false;
  if (blocking || !s.cycles.empty()) {
    ended = true;  // unless the walk stops short of the queue's end
    auto head = q.all.begin();
    std::vector<QueueState::PartWalk> walks;  // progressive key: all_parts
    for (const auto& [key, members] : q.all_parts) {
      QueueState::PartWalk walk;
      walk.members = &members;
      walk.next = members.begin();
      walks.push_back(std::move(walk));
    }
    while (true) {
      QueueMember* m = nullptr;
      if (q.progressive < 0) {
        if (head == q.all.end()) break;
        m = *head++;
      } else {
        QueueState::PartWalk* from = nullptr;
        for (QueueState::PartWalk& w : walks) {
          QueueMember* next = next_of_part(w);
          if (next && (!m || q.less(next, m))) {
            m = next;
            from = &w;
          }
        }
        if (!m) break;
        ++from->at;
      }
      const bool wants = wanted(*m->job);
      if (!blocking && !wants) {
        ended = false;
        break;
      }
      m->cycle = cycle;
      at = m;
      if (KeptWait* k = VerdictOf(s, *m, l); !wants && k && StillWaits(s, *k, *m->job, live)) {
        ++kept;
        Decision d;
        d.job = m->job->id;
        d.kind = DecisionKind::kWait;
        d.status = Status::Unschedulable("no room (kept)");
        d.retry_at = k->retry_at;
        d.kept = true;
        Decided(live, *m->job, &d);
        break;  // blocking: the head waits
      }
      if (decide(*m)) break;
    }
  }

  if (!ended) {
    // The unkept members are decided in full (those the walk from the head
    // reached already were).
    {
      std::vector<JobId> unkept;
      unkept.swap(q.unkept);
      for (JobId id : unkept) {
        auto it = q.members.find(id.value());
        if (it == q.members.end() || !it->second.unkept) continue;
        if (it->second.cycle == cycle) {  // decided just now, and again next cycle
          q.unkept.push_back(id);
          continue;
        }
        it->second.unkept = false;
        if (!VerdictOf(s, it->second, l)) push(&it->second);
      }
    }

    // Kept verdicts whose inputs moved, and the wait shapes a free may fit.
    while (!q.retries.empty() && q.retries.top().at <= snap.now) {
      const KeptRef r = q.retries.top().ref;
      q.retries.pop();
      if (const KeptWait* k = s.kept.Find(r.job); k && k->gen == r.gen) wake(r);
    }
    scan(q.market, static_cast<uint64_t>(snap.now),
         [&](const KeptWait& k) { return k.at != snap.now; });
    scan_inputs();
    open_shapes();
    while (true) {
      // The next member in queue order, from the heap or a shape's walk.
      QueueMember* m = heap.empty() ? nullptr : heap.front();
      QueueState::Cursor* from = nullptr;
      for (QueueState::Cursor& c : cursors) {
        if (c.done) continue;
        QueueMember* next = next_of(c);
        if (!next) {
          // Every kept verdict of the shape was looked at from c.opened on.
          Impl::WaitShape& w = s.shapes[c.shape];
          w.validated = std::max(w.validated, c.opened);
          c.done = true;
          continue;
        }
        if (!m || q.less(next, m)) {
          m = next;
          from = &c;
        }
      }
      if (!m) break;
      if (from) {
        advance(*from, m);
      } else {
        std::pop_heap(heap.begin(), heap.end(), later);
        heap.pop_back();
      }
      if (m->cycle == cycle) continue;
      KeptWait* k = VerdictOf(s, *m, l);
      if (from) {
        // No free fits the shape any more (an earlier job took the room):
        // the rest of its kept verdicts hold without looking at them.
        Impl::WaitShape& w = s.shapes[from->shape];
        if (!ShapeMayFit(s, from->shape, *m->job, l, w.validated)) {
          w.validated = l.freed_count();
          from->done = true;
          continue;
        }
        if (!k) continue;  // unkept: in the heap
      }
      m->cycle = cycle;
      at = m;
      if (k && StillWaits(s, *k, *m->job, live)) continue;
      decide(*m);
      // What its commit changed (a preemption's victims released) may wake
      // verdicts further on.
      scan_inputs();
      open_shapes();
    }
    // Every member not decided in full kept its verdict.
    kept = static_cast<int64_t>(q.members.size()) - (s.full_decisions - full_before);
  }
  s.kept_verdicts += kept;
  for (PluginSlot* p : s.cycles) p->cycle->EndCycle();
}

}  // namespace meridian::sched
