// The scheduling framework's extension points, after the Kubernetes scheduler
// framework. A plugin is a class deriving from Plugin and from every
// extension-point interface it implements; the profile lists plugins by name
// (plugins/registry.cc maps names to factories) and the framework calls each
// at its points, in profile order:
//
//   QueueSort     which waiting job goes next (lexicographic over the plugins)
//   PreFilter     per job: reject early (Unresolvable/Unschedulable) or narrow
//                 the regions and GPU models the candidates come from
//   AddCandidates per job: add candidates the built-in generator does not make
//                 (CPU nodes, MIG repartitions, later start times)
//   Filter        per batch of candidates: keep the feasible subset (const)
//   PostFilter    when nothing is feasible now: nominate a preemption
//   Score         per feasible candidate: a raw score, higher = better, then
//   NormalizeScore per plugin over all candidates into 0..100; the profile's
//                 weight multiplies it
//   Permit        the chosen candidate: allow, or reject (the next best is tried)
//   Reserve / Unreserve  at commit: the plugin's own bookkeeping (idempotent)
//   Bind          at commit: hand the placement on (a backend)
//
// Decide-time points are const and borrow all state read-only through the
// CycleContext; only the commit step (Scheduler::Commit) mutates the ledger,
// and only Reserve/Unreserve/Bind may change a plugin's own state. Plugins must
// not read a clock, a file, a socket or a global; randomness comes from
// CycleContext::rng(). Hot-path points must not allocate per candidate.
#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sched/candidate.h"
#include "sched/decision.h"
#include "sched/rng.h"
#include "sched/snapshot.h"
#include "sched/tenant_usage.h"

namespace meridian::sched {

class Plugin;

// How much text a decision carries: kFull formats example reasons and score
// arithmetic; kCounts keeps numbers only (the benchmark, the simulator).
enum class ExplainLevel { kCounts, kFull };

// Per-decision scratch for plugins: a plugin may Put a small trivially
// copyable value in PreFilter and Get it in later points of the same decision.
class CycleState {
 public:
  static constexpr size_t kSlotBytes = 64;
  static constexpr size_t kSlots = 32;

  void Clear() { used_ = 0; }
  template <typename T>
  void Put(const Plugin* owner, const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kSlotBytes);
    Slot* s = Find(owner);
    if (!s && used_ < kSlots) {
      s = &slots_[used_++];
      s->owner = owner;
    }
    if (s) std::memcpy(s->bytes.data(), &value, sizeof(T));
  }
  template <typename T>
  std::optional<T> Get(const Plugin* owner) const {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kSlotBytes);
    for (size_t i = 0; i < used_; ++i) {
      if (slots_[i].owner == owner) {
        T v;
        std::memcpy(&v, slots_[i].bytes.data(), sizeof(T));
        return v;
      }
    }
    return std::nullopt;
  }

 private:
  struct Slot {
    const Plugin* owner = nullptr;
    alignas(8) std::array<unsigned char, kSlotBytes> bytes{};
  };
  Slot* Find(const Plugin* owner) {
    for (size_t i = 0; i < used_; ++i) {
      if (slots_[i].owner == owner) return &slots_[i];
    }
    return nullptr;
  }
  std::array<Slot, kSlots> slots_{};
  size_t used_ = 0;
};

// The read-only world of one decision, as plugins see it.
class CycleContext {
 public:
  const QueuedJob& job() const { return *job_; }
  const Snapshot& snapshot() const { return *snapshot_; }
  UnixSeconds now() const { return snapshot_->now; }
  const Fleet& fleet() const { return *snapshot_->fleet; }
  const catalog::Catalog& catalog() const { return snapshot_->fleet->catalog(); }
  const MarketView& market() const { return *snapshot_->market; }
  // The capacity candidates are judged against: the live ledger, or in the
  // "can it ever run" pass an empty one (every node wholly free).
  const Ledger& ledger() const { return *ledger_; }
  bool ever_pass() const { return ever_pass_; }
  // In the framework's check of a preemption (after a PostFilter plugin
  // nominates, Scheduler::Decide): the jobs the nomination evicts first.
  // ledger() may still show them as holders (the filters' empty ledger does
  // not); a plugin that keeps its own record of what jobs hold (quota)
  // counts them as released. Empty and false in every other decision step.
  bool preemption() const { return preemption_; }
  std::span<const JobId> victims() const { return victims_; }
  // For a PostFilter plugin: victims may only be allocations of the job's
  // own tenant (the framework asks again so when a nomination with others'
  // victims is refused; see sched/plugins/preemption.h).
  bool own_tenant_victims() const { return own_tenant_victims_; }
  const CycleState& state() const { return *state_; }
  Rng& rng() const { return *rng_; }
  ExplainLevel explain() const { return explain_; }

  // The demand a candidate serves (not kCpuNode).
  const ModelDemand& demand(const Candidate& c) const { return job_->demands[c.demand]; }
  // The nodes of a fleet candidate: one, or the gang's members.
  std::span<const NodeId> members(const Candidate& c) const {
    if (c.kind == CandidateKind::kGang) {
      return std::span<const NodeId>(members_->data() + c.gang_offset, c.gang_size);
    }
    return std::span<const NodeId>(&c.node, 1);
  }
  // Hours the candidate runs: the demand's run time (the MIG slice's on
  // kMigSlice), times its span factor over several nodes or instances, times
  // the spot rework factor of its instances on spot. The same model as
  // `plan`'s options (estimate/run_time.h, estimate::SpotRunMultiplier).
  double RunHours(const Candidate& c) const {
    if (c.kind == CandidateKind::kCpuNode) return CpuRunHours();
    const ModelDemand& d = job_->demands[c.demand];
    double h = c.kind == CandidateKind::kMigSlice ? d.mig_run_hours : d.run_hours;
    const int nodes = c.kind == CandidateKind::kElastic ? c.instances
                      : c.kind == CandidateKind::kGang  ? c.gang_size
                                                        : 1;
    if (nodes > 1) h *= d.span_factor;
    if (c.kind == CandidateKind::kElastic && c.pricing == PricingModel::kSpot &&
        job_->spot_run_multiplier) {
      h *= c.instances <= 1 ? *job_->spot_run_multiplier
                            : job_->SpotRunMultiplier(c.instances).value_or(*job_->spot_run_multiplier);
    }
    return h;
  }
  // What decisions read of an offering: the snapshot's ElasticIndex row,
  // else the same facts from the catalog's record.
  OfferingFacts offering(OfferingId o) const {
    if (const ElasticIndex* index = snapshot_->elastic) {
      if (const OfferingFacts* f = index->Facts(o)) return *f;
    }
    return CatalogFacts(o);
  }
  // GPUs the candidate holds on each member node (kNode, kGang).
  int GpusPerNode(const Candidate& c) const { return c.gpus_per_node; }

  // Set by the framework.
  struct Parts {
    const QueuedJob* job;
    const Snapshot* snapshot;
    const Ledger* ledger;
    const CycleState* state;
    Rng* rng;
    const std::vector<NodeId>* members;
    ExplainLevel explain;
    bool ever_pass;
  };
  explicit CycleContext(const Parts& p)
      : job_(p.job), snapshot_(p.snapshot), ledger_(p.ledger), state_(p.state), rng_(p.rng),
        members_(p.members), explain_(p.explain), ever_pass_(p.ever_pass) {}
  // Set by the framework: a preemption's check (see preemption()), and the
  // own-tenant restriction on victims.
  void SetPreemption(std::span<const JobId> victims) {
    preemption_ = true;
    victims_ = victims;
  }
  void SetOwnTenantVictims() { own_tenant_victims_ = true; }

 private:
  double CpuRunHours() const;               // RunHours of a kCpuNode candidate
  OfferingFacts CatalogFacts(OfferingId o) const;  // offering() without an index

  const QueuedJob* job_;
  const Snapshot* snapshot_;
  const Ledger* ledger_;
  const CycleState* state_;
  Rng* rng_;
  const std::vector<NodeId>* members_;
  ExplainLevel explain_;
  bool ever_pass_;
  bool preemption_ = false;
  bool own_tenant_victims_ = false;
  std::span<const JobId> victims_;
};

// A filter's record of what it turned away: a count, and the first few
// reasons (only formatted when the decision is explained in full).
class Rejections {
 public:
  static constexpr size_t kMaxExamples = 3;
  void Reset(std::string_view plugin, bool keep_examples) {
    plugin_ = plugin;
    keep_ = keep_examples;
    count_ = 0;
    examples_.clear();
  }
  // Whether Add would keep the reason text: format it only then.
  bool wants_example() const { return keep_ && examples_.size() < kMaxExamples; }
  // Counts `c` and the equivalent candidates it stands for (Candidate::repeats).
  void Add(const Candidate& c, std::string_view reason) {
    count_ += 1u + c.repeats;
    if (wants_example()) examples_.push_back({c, std::string(reason)});
  }
  void Count() { ++count_; }
  uint32_t count() const { return count_; }
  std::string_view plugin() const { return plugin_; }
  const std::vector<std::pair<Candidate, std::string>>& examples() const { return examples_; }

 private:
  std::string_view plugin_;
  bool keep_ = false;
  uint32_t count_ = 0;
  std::vector<std::pair<Candidate, std::string>> examples_;
};

// Keeps the candidates for which `reason(c)` returns an empty string_view,
// moving them to the front in order; records the others. Returns the count kept.
template <typename ReasonFn>
size_t KeepIf(std::span<Candidate> cands, Rejections& out, ReasonFn reason) {
  size_t kept = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    std::string_view why = reason(cands[i]);
    if (why.empty()) {
      if (kept != i) cands[kept] = cands[i];
      ++kept;
    } else {
      out.Add(cands[i], why);
    }
  }
  return kept;
}

// Options of the preparation step: what a plugin may precompute from.
struct PrepareContext {
  const Fleet& fleet;
  const catalog::Catalog& catalog;
};

// What may turn a waiting job's verdict into another, as a plugin declares
// it (Plugin::WaitInputs): the scheduler keeps the verdict of a job that
// waits with no feasible candidate (Scheduler::DecideInCycle) until one of
// its plugins' inputs changes, and the decision's retry_at comes.
enum WaitInput : uint32_t {
  kWaitStatic = 0,
  // Capacity on a node the job could use was freed (a node of one of its GPU
  // models left with at least the GPUs it needs there; any CPU node; any
  // spot lease where the fleet has elastic capacity).
  kWaitFreedFit = 1u << 0,
  // Any capacity anywhere was freed (shares between tenants: anyone's usage).
  kWaitAnyFreed = 1u << 1,
  // Capacity the job's own tenant held was released, by this scheduler
  // (Scheduler::Release): what a Reserve plugin's per-tenant record counts
  // (quota) fell.
  kWaitTenantFreed = 1u << 4,
  // A preemptible fleet allocation of a lower priority than the job's was
  // placed (a victim preemption may choose); with one held, never kept.
  kWaitVictims = 1u << 2,
  // The market moved (prices, flex-start waits) where the fleet has elastic
  // capacity: the verdict holds only at the time it was reached.
  kWaitMarket = 1u << 3,
  // Anything else, the clock included: asked at every decision.
  kWaitAnything = ~0u,
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  // The registry name ("gpu_fit"); a string literal.
  virtual std::string_view name() const = 0;
  // Once per fleet, before any decision: precompute tables. Default: nothing.
  virtual Status Prepare(const PrepareContext&) { return Status::Ok(); }
  // For a PreFilter, Filter, AddCandidates or PostFilter plugin: the inputs
  // (WaitInput bits) on which its part in `job` waiting with no feasible
  // candidate may change, beyond its RetryAt time rules. The default,
  // kWaitAnything, is always correct: such a job is decided again every
  // time. Score, QueueSort and Permit roles never count (they do not make a
  // candidate feasible); Reserve and Cycle state is declared by
  // CyclePlugin::WantsDecision.
  virtual uint32_t WaitInputs(const QueuedJob&) const { return kWaitAnything; }
};

class QueueSortPlugin {
 public:
  virtual ~QueueSortPlugin() = default;
  // less = `a` goes first. Ties fall to the next QueueSort plugin, then to
  // submission time, trace sequence and job id.
  virtual std::weak_ordering Compare(const Snapshot& snap, const QueuedJob& a,
                                     const QueuedJob& b) const = 0;
  // A plugin whose Compare is the order of one number per job (smaller
  // first) says so here and gives it in SortKey: SortQueue then computes it
  // once per job instead of twice per comparison. Default: no key.
  virtual bool HasSortKey() const { return false; }
  virtual double SortKey(const Snapshot&, const QueuedJob&) const { return 0; }
  // SortKey of every job of `jobs` into `keys` (same length): a plugin that
  // computes them faster together overrides it.
  virtual void SortKeys(const Snapshot& snap, std::span<const QueuedJob* const> jobs,
                        std::span<double> keys) const {
    for (size_t i = 0; i < jobs.size(); ++i) keys[i] = SortKey(snap, *jobs[i]);
  }
  // Whether Compare reads Snapshot::tenants (SortQueue builds it if so).
  virtual bool ReadsTenantUsage() const { return false; }
  // Whether SortKey depends on the job alone (not the snapshot, the clock or
  // other jobs): a queue kept across cycles (Scheduler::RunQueue) then keeps
  // its jobs in order once instead of sorting them at every cycle.
  virtual bool SortKeyIsStatic() const { return false; }
  // Whether SortKey is a function of what the job's tenant holds plus what
  // its jobs queued ahead of it ask for (TenantUsage::Before: DRF's
  // progressive filling), the same for every job of a tenant at one time
  // and never smaller for more: along a tenant's jobs in grant order (tier,
  // submission, sequence, id) it never falls. RunQueue then finds the next
  // job of a tenant without sorting the tenant's queue. ProgressiveKey gives
  // it from `before` (TenantUsage::Before) and the fleet's capacity.
  virtual bool SortKeyIsProgressive() const { return false; }
  virtual double ProgressiveKey(const QueuedJob&, UnixSeconds, const ResourceAmounts&,
                                const ResourceAmounts&) const {
    return 0;
  }
};

struct PreFilterResult {
  Status status;                       // kUnresolvable / kUnschedulable stop the decision
  std::optional<RegionSet> regions;    // narrow candidate regions to these
  std::optional<GpuModelSet> models;   // narrow GPU models to these
  // false: no built-in fleet candidates in the now pass (the plugin's own
  // filter would reject every one; its AddCandidates makes the placements)
  bool fleet = true;
  // false: no built-in elastic candidates in either pass (likewise)
  bool elastic = true;
  static PreFilterResult Ok() { return {}; }
};

class PreFilterPlugin {
 public:
  virtual ~PreFilterPlugin() = default;
  virtual PreFilterResult PreFilter(const CycleContext& ctx, CycleState& state) const = 0;
};

// Where AddCandidates plugins append; bounded by the profile's limits.
class CandidateSink {
 public:
  CandidateSink(std::vector<Candidate>* out, std::vector<NodeId>* members, size_t limit,
                uint16_t source)
      : out_(out), members_(members), limit_(limit), source_(source) {}
  bool full() const { return out_->size() >= limit_; }
  // Appends `c` (source set to the calling plugin); false when full.
  bool Add(Candidate c) {
    if (full()) return false;
    c.source = source_;
    out_->push_back(c);
    return true;
  }
  // Appends a gang over `nodes`.
  bool AddGang(Candidate c, std::span<const NodeId> nodes) {
    if (full()) return false;
    c.kind = CandidateKind::kGang;
    c.gang_offset = static_cast<uint32_t>(members_->size());
    c.gang_size = static_cast<uint16_t>(nodes.size());
    c.node = nodes.empty() ? NodeId() : nodes[0];
    members_->insert(members_->end(), nodes.begin(), nodes.end());
    return Add(c);
  }

 private:
  std::vector<Candidate>* out_;
  std::vector<NodeId>* members_;
  size_t limit_;
  uint16_t source_;
};

class AddCandidatesPlugin {
 public:
  virtual ~AddCandidatesPlugin() = default;
  // `generated`: the built-in generator's candidates so far (unfiltered).
  virtual void AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                             CandidateSink& sink) const = 0;
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  // Moves the candidates the job may run on to the front of `cands`, in their
  // order (KeepIf does this), records the rest in `rejected`; returns the count kept.
  virtual size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                        Rejections& rejected) const = 0;
  // Whether the verdict can differ between two whole-GPU candidates on nodes
  // of one node group with the same free GPUs, vCPUs and RAM (it does if it
  // reads a node's name or position, or which of its GPUs are free; the
  // node's model, region, cluster and free capacity do not). While no filter
  // of a profile does, the generator lists a run of such nodes once
  // (Candidate::repeats) and the filters judge them together.
  virtual bool DistinguishesEquivalentNodes() const { return false; }
  // For a job that waits: the earliest time after ctx.now() at which this
  // filter may keep a candidate it turns away now, by a time rule of its own
  // (a deadline's safety net, a progress line); nullopt: none (the default).
  // The decision's retry_at (decision.h) takes the earliest over the filters.
  virtual std::optional<UnixSeconds> RetryAt(const CycleContext&) const { return std::nullopt; }
};

// A preemption proposal: evict `victims`, then run on `candidate`.
struct Nomination {
  Candidate candidate;
  std::vector<NodeId> members;  // kGang
  std::vector<JobId> victims;
  std::string reason;
};

class PostFilterPlugin {
 public:
  virtual ~PostFilterPlugin() = default;
  // Called when no candidate is feasible now; nullopt = nothing to propose.
  virtual std::optional<Nomination> PostFilter(const CycleContext& ctx) const = 0;
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  // Raw score of a feasible candidate, higher = better, in the plugin's units.
  virtual int64_t Score(const CycleContext& ctx, const Candidate& c) const = 0;
  // The raw scores of all feasible candidates of a decision: out[i] =
  // Score(ctx, cands[i]). The framework calls this, once per plugin and
  // decision. Default: Score for each. A plugin overrides it to work out once
  // what does not depend on the candidate, or with ScoreEach (below) to
  // score without a virtual call per candidate.
  virtual void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                          std::span<int64_t> out) const;
  // Maps the raw scores of all candidates to 0..100 in place. Default: min-max
  // (best 100, worst 0; all equal: 100).
  virtual void NormalizeScore(const CycleContext& ctx, std::span<int64_t> scores) const;
  // The arithmetic behind `raw` for `c`, for a full explanation. Default: "".
  virtual std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const;
  // Whether the score can differ between two whole-GPU candidates on nodes of
  // one node group with the same free capacity, or two gangs of such nodes (a
  // node's position does; its price, region, power and free share do not). While no score plugin of a
  // profile does and ties go to the first candidate, the scheduler scores one
  // candidate per such class: the others could not win.
  virtual bool DistinguishesEquivalentNodes() const { return false; }
};

// ScoreBatch for a plugin class `P`: P's own Score for each candidate, bound
// statically (P is final), so it inlines instead of one virtual call each.
template <typename P>
void ScoreEach(const P& plugin, const CycleContext& ctx, std::span<const Candidate> cands,
               std::span<int64_t> out) {
  for (size_t i = 0; i < cands.size(); ++i) out[i] = plugin.P::Score(ctx, cands[i]);
}

// ScoreEach where the plugin concerns the job; 0 for every candidate where
// it does not (a neutral column: all equal normalize to 100).
template <typename P>
void ScoreEachIf(bool concerns, const P& plugin, const CycleContext& ctx,
                 std::span<const Candidate> cands, std::span<int64_t> out) {
  if (!concerns) {
    std::fill(out.begin(), out.end(), 0);
    return;
  }
  ScoreEach(plugin, ctx, cands, out);
}

// Min-max over `scores` into 0..100: (s - min) x 100 / (max - min), rounded
// down; all equal: 100.
void NormalizeMinMax(std::span<int64_t> scores);

class PermitPlugin {
 public:
  virtual ~PermitPlugin() = default;
  // OK allows; a non-OK status rejects this candidate (the next best is tried).
  virtual Status Permit(const CycleContext& ctx, const Candidate& c) const = 0;
};

// Queue-level state across the decisions of one Scheduler::RunCycle (backfill
// reservations). RunCycle calls BeginCycle before its first decision, Decided
// after each (after its commit), EndCycle after the last; a lone Decide calls
// none of them. Like Reserve, these may change the plugin's own state; Decided
// may note on the decision what it did for the job (Decision::reserved).
class CyclePlugin {
 public:
  virtual ~CyclePlugin() = default;
  virtual void BeginCycle(const Snapshot& snap) = 0;
  virtual void Decided(const Snapshot& snap, const QueuedJob& job, Decision* d) = 0;
  virtual void EndCycle() = 0;
  // Whether Decided needs a full decision for `job` now (backfill: while it
  // has reservations to make). false lets the scheduler hand it a kept
  // verdict (Decision::kept) instead. The default asks every time. Decided
  // must change nothing for a kept verdict it did not want: Scheduler::RunQueue
  // does not hand those over (nor look at those jobs at all).
  virtual bool WantsDecision(const QueuedJob&) const { return true; }
};

// What the commit step tells Reserve/Bind plugins.
struct CommitContext {
  const Snapshot& snapshot;
  const Decision& decision;
};

class ReservePlugin {
 public:
  virtual ~ReservePlugin() = default;
  // Both idempotent; Unreserve undoes Reserve and is called on a failed commit.
  virtual Status Reserve(const CommitContext& ctx, const Allocation& a) = 0;
  virtual void Unreserve(const CommitContext& ctx, const Allocation& a) = 0;
};

class BindPlugin {
 public:
  virtual ~BindPlugin() = default;
  virtual Status Bind(const CommitContext& ctx, const Allocation& a) = 0;
};

}  // namespace meridian::sched
