#include "sched/scheduler.h"

#include <algorithm>

#include "sched/cost.h"
#include "sched/cycle.h"
#include "sched/registry.h"
#include "sched/tenant_usage.h"

namespace meridian::sched {

namespace {

Result<PluginSlot> BuildSlot(const PluginConfig& cfg, uint16_t index) {
  PluginArgs args = cfg.args;
  Result<std::unique_ptr<Plugin>> made = MakePlugin(cfg.name, args);
  if (!made.ok()) return made.status();
  PluginSlot s;
  s.plugin = std::move(made).value();
  s.weight = cfg.weight;
  s.index = index;
  Plugin* p = s.plugin.get();
  s.sort = dynamic_cast<const QueueSortPlugin*>(p);
  s.pre_filter = dynamic_cast<const PreFilterPlugin*>(p);
  s.add = dynamic_cast<const AddCandidatesPlugin*>(p);
  s.filter = dynamic_cast<const FilterPlugin*>(p);
  s.post_filter = dynamic_cast<const PostFilterPlugin*>(p);
  s.score = dynamic_cast<const ScorePlugin*>(p);
  s.permit = dynamic_cast<const PermitPlugin*>(p);
  s.reserve = dynamic_cast<ReservePlugin*>(p);
  s.bind = dynamic_cast<BindPlugin*>(p);
  s.cycle = dynamic_cast<CyclePlugin*>(p);
  s.move = dynamic_cast<const MovePlugin*>(p);
  if (cfg.weight_given && !s.score) {
    return Status::Invalid(cfg.weight_where + ": \"" + cfg.name +
                           "\" is not a score plugin; only score plugins take a weight");
  }
  return s;
}

DecisionKind KindFor(StatusCode c) {
  switch (c) {
    case StatusCode::kUnresolvable: return DecisionKind::kReject;
    case StatusCode::kUnschedulable: return DecisionKind::kWait;
    default: return DecisionKind::kError;
  }
}

}  // namespace

Status CheckProfile(const Profile& profile) {
  std::string errors;
  for (size_t i = 0; i < profile.plugins.size(); ++i) {
    Result<PluginSlot> s = BuildSlot(profile.plugins[i], static_cast<uint16_t>(i));
    if (!s.ok()) errors += (errors.empty() ? "" : "\n") + s.status().message();
  }
  return errors.empty() ? Status::Ok() : Status::Invalid(errors);
}

Scheduler::Scheduler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scheduler::~Scheduler() = default;

const Profile& Scheduler::profile() const { return impl_->profile; }
const Fleet& Scheduler::fleet() const { return *impl_->fleet; }

Result<std::unique_ptr<Scheduler>> Scheduler::Create(const Profile& profile,
                                                     std::shared_ptr<const Fleet> fleet,
                                                     const SchedulerOptions& options) {
  if (!fleet) return Status::Invalid("scheduler: no fleet");
  auto impl = std::make_unique<Impl>();
  impl->profile = profile;
  impl->fleet = fleet;
  impl->options = options;
  impl->explain = options.explain.value_or(profile.options.explain);
  std::string errors;
  for (size_t i = 0; i < profile.plugins.size(); ++i) {
    Result<PluginSlot> s = BuildSlot(profile.plugins[i], static_cast<uint16_t>(i));
    if (!s.ok()) {
      errors += (errors.empty() ? "" : "\n") + s.status().message();
      continue;
    }
    impl->slots.push_back(std::move(s).value());
  }
  if (!errors.empty()) return Status::Invalid(errors);
  PrepareContext prep{*fleet, fleet->catalog()};
  for (PluginSlot& s : impl->slots) {
    Status st = s.plugin->Prepare(prep);
    if (!st.ok()) return st.WithContext(profile.source + ": plugin " + std::string(s.plugin->name()));
    if (s.sort) impl->sorts.push_back(&s);
    if (s.pre_filter) impl->pre_filters.push_back(&s);
    if (s.add) impl->adds.push_back(&s);
    if (s.filter) impl->filters.push_back(&s);
    if (s.post_filter) impl->post_filters.push_back(&s);
    if (s.score) impl->scores.push_back(&s);
    if (s.permit) impl->permits.push_back(&s);
    if (s.reserve) impl->reserves.push_back(&s);
    if (s.bind) impl->binds.push_back(&s);
    if (s.cycle) impl->cycles.push_back(&s);
  }
  impl->ws.rejections.resize(impl->filters.size() + 1);
  impl->merge_equivalent =
      profile.options.tie_break == TieBreak::kFirst &&
      std::none_of(impl->scores.begin(), impl->scores.end(),
                   [](const PluginSlot* p) { return p->score->DistinguishesEquivalentNodes(); });
  impl->run_length =
      impl->merge_equivalent && impl->explain == ExplainLevel::kCounts &&
      std::none_of(impl->filters.begin(), impl->filters.end(),
                   [](const PluginSlot* p) { return p->filter->DistinguishesEquivalentNodes(); });
  Result<Ledger> empty = fleet->NewLedger();
  if (!empty.ok()) return empty.status();
  impl->empty = std::move(empty).value();
  // RunQueue decides only what changed where the queue's order is fixed per
  // job (sort keys of the job alone), so that jobs it does not look at keep
  // their place.
  // With a progressive key (DRF's share), the order changes from cycle to
  // cycle but never within a tenant's grant order: RunQueue finds the next
  // job, of the queue or of a shape, per tenant.
  QueueState& q = impl->queue;
  q.less.keys = impl->sorts.size();
  q.all = ShapeMembers(q.less);
  q.incremental = options.keep_waits && impl->sorts.size() <= kMaxStaticSortKeys;
  for (size_t i = 0; i < impl->sorts.size(); ++i) {
    const QueueSortPlugin& p = *impl->sorts[i]->sort;
    if (!p.HasSortKey()) {
      q.incremental = false;
    } else if (!p.SortKeyIsStatic()) {
      if (!p.SortKeyIsProgressive() || q.progressive >= 0) q.incremental = false;
      q.progressive = static_cast<int>(i);
    }
  }
  if (q.progressive >= 0) q.capacity = TenantUsage::Capacity(*fleet);
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(impl)));
}

namespace {

// Why a job can never run, in full: the case, with the filters that turned
// every candidate away, or what the estimator said of each allowed GPU model
// the fleet has nodes of and the job does not fit ("bf16 is not supported
// natively on V100-32GB"). Names no node, so equal jobs get equal reasons.
std::string NeverRuns(const Fleet& fleet, const QueuedJob& job, uint32_t examined,
                      const std::vector<FilterLine>& filters) {
  if (examined > 0) {
    std::string names;
    for (const FilterLine& f : filters) names += (names.empty() ? "" : ", ") + f.plugin;
    return "every candidate is turned away by a filter, even on an empty fleet" +
           (names.empty() ? std::string() : " (" + names + ")");
  }
  if (job.cpu_only) return "a CPU-only job, and no plugin of the profile places CPU work";
  std::string why = "no node or offering of an allowed GPU model in an allowed region";
  const catalog::Catalog& cat = fleet.catalog();
  for (size_t m = 0; m < cat.gpus().size() && m < job.unfit_models.size(); ++m) {
    const GpuModelId id(static_cast<uint32_t>(m));
    if (!job.unfit_models.test(m) || fleet.GroupsOf(id).empty()) continue;
    why += "; " + cat.gpus()[m].name + ": " + UnfitReason(job, id, cat);
  }
  if (fleet.elastic() || job.demands.empty()) return why;
  // A fleet without elastic capacity: which of the fitting models it lacks,
  // or whose regions or node sizes keep the job off them.
  std::string missing, regions, gangs;
  for (const ModelDemand& d : job.demands) {
    const std::string& name = cat.gpus()[d.model.index()].name;
    std::string& list = fleet.GroupsOf(d.model).empty() ? missing
                        : (fleet.RegionsWithModel(d.model) & job.allowed_regions).none() ? regions
                                                                                         : gangs;
    list += (list.empty() ? "" : ", ") + name;
    if (&list == &gangs) list += " x " + std::to_string(d.gpus);
  }
  if (!missing.empty()) why += "; the fleet has no node of " + missing;
  if (!regions.empty()) why += "; the fleet's " + regions + " nodes are outside the job's allowed regions";
  if (!gangs.empty()) why += "; the fleet's nodes never hold the job at once (" + gangs + ")";
  return why;
}

// Scores ws.feasible with every score plugin: ws.raw and ws.norm are
// [plugin x candidate], ws.total per candidate.
void ScoreAll(Scheduler::Impl& s, const CycleContext& ctx) {
  Workspace& ws = s.ws;
  const size_t n = ws.feasible.size();
  ws.raw.resize(s.scores.size() * n);
  ws.norm.resize(s.scores.size() * n);
  ws.total.assign(n, 0);
  for (Candidate& c : ws.feasible) c.run_cost_micros = ComputeRunCost(ctx, c).micros();
  for (size_t i = 0; i < s.scores.size(); ++i) {
    const ScorePlugin* p = s.scores[i]->score;
    p->ScoreBatch(ctx, ws.feasible, std::span<int64_t>(ws.raw.data() + i * n, n));
    std::copy(ws.raw.begin() + static_cast<ptrdiff_t>(i * n),
              ws.raw.begin() + static_cast<ptrdiff_t>((i + 1) * n),
              ws.norm.begin() + static_cast<ptrdiff_t>(i * n));
    std::span<int64_t> norm(ws.norm.data() + i * n, n);
    p->NormalizeScore(ctx, norm);
    for (size_t j = 0; j < n; ++j) {
      int64_t v = std::clamp<int64_t>(norm[j], 0, 100);
      norm[j] = v;
      ws.total[j] += v * s.scores[i]->weight;
    }
  }
}

// The best candidate not yet tried (ws.total < 0 marks tried), ties broken
// by order or seeded at random; -1 when none is left.
int64_t Best(Scheduler::Impl& s, const CycleContext& ctx, int64_t skip = -1) {
  const Workspace& ws = s.ws;
  int64_t best = -1;
  uint64_t ties = 0;
  for (size_t j = 0; j < ws.total.size(); ++j) {
    if (ws.total[j] < 0 || static_cast<int64_t>(j) == skip) continue;
    if (best < 0 || ws.total[j] > ws.total[static_cast<size_t>(best)]) {
      best = static_cast<int64_t>(j);
      ties = 1;
    } else if (ws.total[j] == ws.total[static_cast<size_t>(best)] &&
               s.profile.options.tie_break == TieBreak::kRandom) {
      if (ctx.rng().Below(++ties) == 0) best = static_cast<int64_t>(j);
    }
  }
  return best;
}

// Fills `sc` with candidate j's scores (and, explained in full, where it is
// and each plugin's arithmetic).
void Explain(Scheduler::Impl& s, const CycleContext& ctx, size_t j, ScoredCandidate* sc) {
  const Workspace& ws = s.ws;
  const size_t n = ws.feasible.size();
  sc->candidate = ws.feasible[j];
  sc->total = ws.total[j];
  const bool full = ctx.explain() == ExplainLevel::kFull;
  if (full) sc->where = DescribeCandidate(ctx, sc->candidate);
  sc->scores.resize(s.scores.size());
  for (size_t i = 0; i < s.scores.size(); ++i) {
    ScoreLine& l = sc->scores[i];
    l.plugin = s.scores[i]->plugin->name();
    l.raw = ws.raw[i * n + j];
    l.normalized = ws.norm[i * n + j];
    l.weight = s.scores[i]->weight;
    if (full) l.note = s.scores[i]->score->ExplainScore(ctx, sc->candidate, l.raw);
  }
}

void CollectFilters(Scheduler::Impl& s, const CycleContext& ctx, Decision* d) {
  for (const Rejections& r : s.ws.rejections) {
    if (r.count() == 0) continue;
    FilterLine f;
    f.plugin = std::string(r.plugin());
    f.rejected = r.count();
    for (const auto& [c, why] : r.examples()) f.examples.push_back(DescribeCandidate(ctx, c) + ": " + why);
    d->filters.push_back(std::move(f));
  }
}

// Picks among ws.feasible and fills `d`; false when every candidate tried was
// turned away by the ledger check or a Permit plugin.
bool Choose(Scheduler::Impl& s, const CycleContext& ctx, const Ledger& live, Decision* d) {
  Workspace& ws = s.ws;
  ScoreAll(s, ctx);
  Rejections& ledger_rej = ws.rejections.back();
  for (int attempt = 0; attempt < s.profile.options.permit_attempts + 1; ++attempt) {
    int64_t j = Best(s, ctx);
    if (j < 0) return false;
    const Candidate& c = ws.feasible[static_cast<size_t>(j)];
    Allocation a = AllocationFor(ctx, c, live);
    Status st = live.CanReserve(a);
    for (size_t k = 0; st.ok() && k < s.permits.size(); ++k) {
      st = s.permits[k]->permit->Permit(ctx, c);
      if (!st.ok()) st = st.WithContext(std::string(s.permits[k]->plugin->name()));
    }
    if (!st.ok()) {
      ledger_rej.Add(c, st.message());
      ws.total[static_cast<size_t>(j)] = -1;
      continue;
    }
    Explain(s, ctx, static_cast<size_t>(j), &d->chosen.emplace());
    if (int64_t r = Best(s, ctx, j); r >= 0) {
      Explain(s, ctx, static_cast<size_t>(r), &d->runner_up.emplace());
    }
    d->start = c.start;
    d->kind = c.start > ctx.now() ? DecisionKind::kDefer : DecisionKind::kPlace;
    if (ctx.explain() == ExplainLevel::kFull) {
      d->start_reason = c.start <= ctx.now() ? "capacity free now"
                        : c.kind == CandidateKind::kElastic && c.pricing == PricingModel::kFlexStart
                            ? "flex-start: expected wait for capacity"
                            : "deferred by " + (c.source == kFrameworkSource
                                                    ? std::string("the framework")
                                                    : s.profile.plugins[c.source].name);
    }
    ExplainPricing(ctx, c, d);
    d->allocation = std::move(a);
    return true;
  }
  return false;
}

// Whether a nominated candidate passes every filter of the profile. The
// filters run against the empty ledger: the nominating plugin has checked
// that evicting its victims frees the capacity, and the other rules (model,
// residency, driver, replicas, latency) do not depend on who holds what;
// plugins that keep their own record of what jobs hold (quota) see the
// victims as released (CycleContext::preemption).
bool PassesFilters(Scheduler::Impl& s, const CycleContext& ctx, const Candidate& c,
                   std::span<const JobId> victims) {
  Workspace& ws = s.ws;
  const size_t from = ws.batch.size();
  ws.batch.push_back(c);
  CycleContext check({&ctx.job(), &ctx.snapshot(), &s.empty, &ws.state, &ctx.rng(), &ws.members,
                      ctx.explain(), true});
  check.SetPreemption(victims);
  const bool ok = RunFilters(s, check, from) == 1;
  ws.batch.resize(from);
  return ok;
}

// Whether a nomination passes what a placement passes (Choose): the filters,
// then on the ledger as the eviction leaves it, CanReserve and every Permit
// plugin. Sets `c` (a gang's members appended to ws.members) and `a`.
bool Admits(Scheduler::Impl& s, const CycleContext& ctx, const Ledger& live,
            const Nomination& nom, Candidate* c, Allocation* a) {
  *c = nom.candidate;
  if (c->kind == CandidateKind::kGang) {
    c->gang_offset = static_cast<uint32_t>(s.ws.members.size());
    c->gang_size = static_cast<uint16_t>(nom.members.size());
    s.ws.members.insert(s.ws.members.end(), nom.members.begin(), nom.members.end());
  }
  if (!PassesFilters(s, ctx, *c, nom.victims)) return false;
  // A copy of the ledger, made only for a nomination that passed the filters.
  Ledger after = live;
  for (JobId v : nom.victims) after.Unreserve(v);
  CycleContext freed({&ctx.job(), &ctx.snapshot(), &after, &s.ws.state, &ctx.rng(), &s.ws.members,
                      ctx.explain(), false});
  freed.SetPreemption(nom.victims);
  *a = AllocationFor(freed, *c, after);
  Status st = after.CanReserve(*a);
  for (size_t k = 0; st.ok() && k < s.permits.size(); ++k) st = s.permits[k]->permit->Permit(freed, *c);
  return st.ok();
}

// A nomination from `p` that Admits; when one with victims of other tenants
// is refused, `p` is asked once more for victims of the job's own tenant only
// (their release gives the tenant's quota back; see preemption.h).
std::optional<Nomination> Nominate(Scheduler::Impl& s, const CycleContext& ctx, const Ledger& live,
                                   const PostFilterPlugin& p, Candidate* c, Allocation* a) {
  std::optional<Nomination> nom = p.PostFilter(ctx);
  if (!nom || Admits(s, ctx, live, *nom, c, a)) return nom;
  const bool others = std::any_of(nom->victims.begin(), nom->victims.end(), [&](JobId v) {
    const Allocation* va = live.Find(v);
    return va && va->tenant != ctx.job().tenant;
  });
  if (!others) return std::nullopt;
  CycleContext own = ctx;
  own.SetOwnTenantVictims();
  nom = p.PostFilter(own);
  if (nom && Admits(s, ctx, live, *nom, c, a)) return nom;
  return std::nullopt;
}

bool Preempt(Scheduler::Impl& s, const CycleContext& ctx, const Ledger& live, Decision* d) {
  for (PluginSlot* p : s.post_filters) {
    Candidate c;
    Allocation a;
    std::optional<Nomination> nom = Nominate(s, ctx, live, *p->post_filter, &c, &a);
    if (!nom) continue;
    d->kind = DecisionKind::kPreempt;
    d->allocation = std::move(a);
    d->victims = nom->victims;
    d->start = c.start;
    d->start_reason = "after preemption by " + std::string(p->plugin->name()) + ": " + nom->reason;
    ScoredCandidate sc;
    sc.candidate = c;
    if (ctx.explain() == ExplainLevel::kFull) sc.where = DescribeCandidate(ctx, c);
    d->chosen = std::move(sc);
    ExplainPricing(ctx, c, d);
    return true;
  }
  return false;
}

// When a waiting job's verdict may next change (Decision::retry_at): the
// filters' own time rules, and the next spot count change of every offering
// it could take on spot (the ever pass's feasible spot candidates in ws.feasible).
std::optional<UnixSeconds> RetryAt(Scheduler::Impl& s, const CycleContext& ever) {
  std::optional<UnixSeconds> at;
  auto earliest = [&](std::optional<UnixSeconds> t) {
    if (t && *t > ever.now() && (!at || *t < *at)) at = t;
  };
  for (PluginSlot* p : s.filters) earliest(p->filter->RetryAt(ever));
  for (const Candidate& c : s.ws.feasible) {
    if (c.kind == CandidateKind::kElastic && c.pricing == PricingModel::kSpot) {
      earliest(ever.market().NextSpotChange(c.offering, ever.now()));
    }
  }
  return at;
}

}  // namespace

Decision Scheduler::Decide(const QueuedJob& job, const Snapshot& snap) {
  Impl& s = *impl_;
  Workspace& ws = s.ws;
  Decision d;
  d.job = job.id;
  Rng rng(Rng::Mix(s.options.seed, job.id.value(), static_cast<uint64_t>(snap.now)));
  const bool full = s.explain == ExplainLevel::kFull;
  ws.state.Clear();
  for (size_t f = 0; f < s.filters.size(); ++f) {
    ws.rejections[f].Reset(s.filters[f]->plugin->name(), full);
  }
  ws.rejections.back().Reset("ledger", full);
  ws.members.clear();
  CycleContext ctx({&job, &snap, snap.ledger, &ws.state, &rng, &ws.members, s.explain, false});

  GenerationScope scope;
  scope.regions.set();
  scope.models.set();
  for (PluginSlot* p : s.pre_filters) {
    PreFilterResult r = p->pre_filter->PreFilter(ctx, ws.state);
    if (r.regions) scope.regions &= *r.regions;
    if (r.models) scope.models &= *r.models;
    if (!r.fleet) scope.fleet = false;
    if (!r.elastic) scope.elastic = false;
    if (!r.status.ok()) {
      std::string name(p->plugin->name());
      d.kind = KindFor(r.status.code());
      d.status = r.status.WithContext(name);
      d.filters.push_back({name, 1, {r.status.message()}});
      return d;
    }
  }

  d.candidates = GenerateAndFilter(s, ctx, scope);
  d.feasible = static_cast<uint32_t>(ws.feasible.size());
  if (!ws.feasible.empty() && Choose(s, ctx, *snap.ledger, &d)) {
    CollectFilters(s, ctx, &d);
    return d;
  }
  if (Preempt(s, ctx, *snap.ledger, &d)) {
    CollectFilters(s, ctx, &d);
    return d;
  }

  // Can it ever run? One representative per node group, on an empty ledger.
  d.ever_pass = true;
  CycleContext ever({&job, &snap, &s.empty, &ws.state, &rng, &ws.members, s.explain, true});
  GenerationScope ever_scope = scope;
  ever_scope.ever = true;
  uint32_t examined = GenerateAndFilter(s, ever, ever_scope);
  d.candidates += examined;
  CollectFilters(s, ctx, &d);
  // A Permit plugin that calls a candidate Unresolvable refuses it on any
  // ledger: such candidates do not count as able to run either.
  std::string permit_never;
  std::erase_if(ws.feasible, [&](const Candidate& c) {
    for (PluginSlot* p : s.permits) {
      Status st = p->permit->Permit(ever, c);
      if (st.code() == StatusCode::kUnresolvable) {
        if (permit_never.empty()) permit_never = std::string(p->plugin->name()) + ": " + st.message();
        return true;
      }
    }
    return false;
  });
  if (ws.feasible.empty()) {
    d.kind = DecisionKind::kReject;
    d.status = Status::Unresolvable(
        permit_never.empty() ? NeverRuns(*s.fleet, job, examined, d.filters)
                             : "every candidate is refused by a permit plugin, even on an empty fleet (" +
                                   permit_never + ")");
    return d;
  }
  d.kind = DecisionKind::kWait;
  d.status = Status::Unschedulable("no candidate has room now");
  d.retry_at = RetryAt(s, ever);
  if (std::optional<EarliestStart> e = FindEarliestStart(s, ever, *snap.ledger)) {
    d.start = e->at;
    d.start_reason = std::move(e->why);
    d.start_nodes = std::move(e->nodes);
  } else if (full) {
    d.start_reason = "no running allocation's end frees room on a node it could use; "
                     "it may fit after preemption or when the fleet changes";
  }
  return d;
}

namespace {

// The WaitInput bits of `job` waiting with no feasible candidate: its
// plugins' and the framework's own (fleet candidates come from free
// capacity; elastic ones from a market that may move).
uint32_t WaitInputsOf(const Scheduler::Impl& s, const QueuedJob& job, const Snapshot& snap) {
  uint32_t in = kWaitFreedFit;
  for (const PluginSlot& p : s.slots) {
    if (p.pre_filter || p.filter || p.add || p.post_filter) in |= p.plugin->WaitInputs(job);
  }
  // The market reaches a decision through elastic candidates only: without
  // them, or with a market whose prices never move, it changes nothing.
  const bool market_moves = s.fleet->elastic() && s.profile.options.elastic && snap.market &&
                            snap.market->PriceMayChange();
  if (market_moves) {
    in |= kWaitMarket;
  } else if (in != kWaitAnything) {
    in &= ~static_cast<uint32_t>(kWaitMarket);
  }
  return in;
}

constexpr uint32_t kKnownWaitInputs =
    kWaitFreedFit | kWaitAnyFreed | kWaitTenantFreed | kWaitVictims | kWaitMarket;

// Whether freeing capacity on `node` may give `job` a candidate there: a
// node of one of its GPU models now with the GPUs it needs on one node (a
// gang's member: its share, ShapeFor over this node's GPUs, which a pool of
// larger nodes only raises; a MIG slice: any free), any CPU node, any node
// for a CPU-only job. Errs towards yes.
bool MayFitOn(const Fleet& fleet, const Ledger& ledger, const QueuedJob& job, NodeId n) {
  const Node& node = fleet.node(n);
  if (job.cpu_only || !node.gpu_model.valid()) return true;
  for (const ModelDemand& d : job.demands) {
    if (d.model != node.gpu_model) continue;
    if (d.mig_profile >= 0 || node.mig_gpus != 0) return true;
    const int need = ShapeFor(d.gpus, node.gpus).gpus_per_node;
    if (ledger.free_gpu_count(n) >= need) return true;
  }
  return false;
}

}  // namespace

void CommitOrFail(Scheduler& scheduler, Decision& d, const Snapshot& snap, Ledger* ledger,
                  bool commit_preemptions) {
  if (!d.allocation || (d.kind == DecisionKind::kPreempt && !commit_preemptions)) return;
  if (Status st = scheduler.Commit(d, snap, ledger); !st.ok()) {
    d.kind = DecisionKind::kError;
    d.status = st;
    d.allocation.reset();
  }
}

int64_t PlacedBelow(const Ledger& l, Priority tier) {
  int64_t n = 0;
  for (int p = static_cast<int>(tier) + 1; p <= static_cast<int>(Priority::kLow); ++p) {
    n += l.preemptible_placed(static_cast<Priority>(p));
  }
  return n;
}

bool ShapeMayFit(Scheduler::Impl& s, uint32_t shape, const QueuedJob& job, const Ledger& l,
                 uint64_t from) {
  const uint64_t freed = l.freed_count();
  if (from >= freed) return false;
  Scheduler::Impl::WaitShape& w = s.shapes[shape];
  if (w.from != from || w.to != freed || w.stamp != l.stamp()) {
    std::optional<std::span<const uint32_t>> since = l.FreedSince(from);
    bool may_fit = !since;
    for (size_t i = 0; since && !may_fit && i < since->size(); ++i) {
      const uint32_t n = (*since)[i];
      may_fit = n == Ledger::kElasticFreed ? s.fleet->elastic()
                                           : MayFitOn(*s.fleet, l, job, NodeId(n));
    }
    w.from = from;
    w.to = freed;
    w.stamp = l.stamp();
    w.may_fit = may_fit;
  }
  return w.may_fit;
}

// The frees since the verdict are checked once per wait shape, free capacity
// and range of frees (Impl::WaitShape), from where the shape's frees were
// last all found not to fit (WaitShape::validated).
bool StillWaits(Scheduler::Impl& s, KeptWait& k, const QueuedJob& job, const Snapshot& snap) {
  const Ledger& l = *snap.ledger;
  if (k.ledger != &l || k.job != &job) return false;
  if (k.retry_at && snap.now >= *k.retry_at) return false;
  if ((k.inputs & kWaitMarket) && snap.now != k.at) return false;
  if ((k.inputs & kWaitVictims) && PlacedBelow(l, job.tier) != k.victims_placed) return false;
  if ((k.inputs & kWaitTenantFreed) && s.TenantReleased(job.tenant) != k.tenant_released) return false;
  const uint64_t freed = l.freed_count();
  const uint64_t from = std::max(k.freed, s.shapes[k.shape].validated);
  if (freed == from) return true;
  if (k.inputs & kWaitAnyFreed) return false;
  if (ShapeMayFit(s, k.shape, job, l, from)) return false;
  k.freed = freed;
  return true;
}

// The index of job's WaitShape (see MayFitOn: what it reads of the job).
uint32_t WaitShapeOf(Scheduler::Impl& s, const QueuedJob& job) {
  std::vector<uint32_t> key;
  key.reserve(1 + 3 * job.demands.size());
  key.push_back(job.cpu_only ? 1 : 0);
  for (const ModelDemand& d : job.demands) {
    key.push_back(d.model.value());
    key.push_back(d.gpus);
    key.push_back(static_cast<uint32_t>(static_cast<int32_t>(d.mig_profile)));
  }
  std::string bytes(reinterpret_cast<const char*>(key.data()), key.size() * sizeof(uint32_t));
  auto [it, added] = s.shape_index.try_emplace(std::move(bytes), static_cast<uint32_t>(s.shapes.size()));
  if (added) s.shapes.push_back({std::move(key)});
  return it->second;
}

bool Scheduler::KeepWait(const QueuedJob& job, const Snapshot& snap, Decision* d) {
  Impl& s = *impl_;
  KeptWait* k = s.kept.Find(job.id);
  if (!k) return false;
  bool wanted = false;
  for (const PluginSlot* p : s.cycles) wanted = wanted || p->cycle->WantsDecision(job);
  if (wanted || !StillWaits(s, *k, job, snap)) {
    s.kept.Erase(job.id);
    return false;
  }
  ++s.kept_verdicts;
  k->cycle = s.cycle;
  ++s.touched;
  d->job = job.id;
  d->kind = DecisionKind::kWait;
  if (d->status.code() != StatusCode::kUnschedulable) d->status = Status::Unschedulable("no room (kept)");
  d->retry_at = k->retry_at;
  d->kept = true;
  return true;
}

Decision Scheduler::DecideInCycle(const QueuedJob& job, const Snapshot& snap) {
  if (Decision d; KeepWait(job, snap, &d)) return d;
  return DecideAndKeep(job, snap);
}

Decision Scheduler::DecideAndKeep(const QueuedJob& job, const Snapshot& snap) {
  Impl& s = *impl_;
  ++s.full_decisions;
  Decision d = Decide(job, snap);
  if (!s.options.keep_waits || d.kind != DecisionKind::kWait || d.feasible != 0 || !snap.ledger) {
    return d;
  }
  const uint32_t inputs = WaitInputsOf(s, job, snap);
  if ((inputs & ~kKnownWaitInputs) != 0) return d;
  if ((inputs & kWaitVictims) && snap.ledger->preemptible_held_below(job.tier) > 0) return d;
  const uint32_t shape = WaitShapeOf(s, job);
  KeptWait& k = s.kept.Put(job.id);
  k.ledger = snap.ledger;
  k.job = &job;
  k.freed = snap.ledger->freed_count();
  k.victims_placed = PlacedBelow(*snap.ledger, job.tier);
  k.tenant_released = s.TenantReleased(job.tenant);
  k.at = snap.now;
  k.retry_at = d.retry_at;
  k.inputs = inputs;
  k.shape = shape;
  k.cycle = s.cycle;
  k.gen = ++s.kept_gen;
  ++s.touched;
  return d;
}

int64_t Scheduler::kept_verdicts() const { return impl_->kept_verdicts; }
int64_t Scheduler::full_decisions() const { return impl_->full_decisions; }

Status Scheduler::Commit(const Decision& d, const Snapshot& snap, Ledger* ledger) {
  if (!d.allocation) return Status::Ok();
  Impl& s = *impl_;
  s.kept.Erase(d.job);
  std::vector<Allocation> evicted;
  for (JobId v : d.victims) {
    if (const Allocation* a = ledger->Find(v)) evicted.push_back(*a);
    Release(v, snap, ledger);
  }
  auto restore = [&] {
    for (const Allocation& a : evicted) {
      (void)ledger->Reserve(a);
      CommitContext cc{snap, d};
      for (PluginSlot* p : s.reserves) (void)p->reserve->Reserve(cc, a);
    }
  };
  Status st = ledger->Reserve(*d.allocation);
  if (!st.ok()) {
    restore();
    return st;
  }
  CommitContext cc{snap, d};
  size_t done = 0;
  for (; done < s.reserves.size() && st.ok(); ++done) {
    st = s.reserves[done]->reserve->Reserve(cc, *d.allocation);
    if (!st.ok()) st = st.WithContext(std::string(s.reserves[done]->plugin->name()));
  }
  for (size_t b = 0; st.ok() && b < s.binds.size(); ++b) {
    st = s.binds[b]->bind->Bind(cc, *d.allocation);
    if (!st.ok()) st = st.WithContext(std::string(s.binds[b]->plugin->name()));
  }
  if (!st.ok()) {
    for (size_t k = 0; k < done; ++k) s.reserves[k]->reserve->Unreserve(cc, *d.allocation);
    ledger->Unreserve(d.allocation->job);
    restore();
  }
  return st;
}

void Scheduler::Release(JobId job, const Snapshot& snap, Ledger* ledger) {
  impl_->kept.Erase(job);
  std::optional<Allocation> a = ledger->Take(job);
  if (!a) return;
  if (a->tenant.valid()) {  // (no tenant: no tenant's record counts it)
    auto& released = impl_->tenant_released;
    if (a->tenant.index() >= released.size()) released.resize(a->tenant.index() + 1, 0);
    ++released[a->tenant.index()];
    ++impl_->released;
  }
  Decision none;
  none.job = job;
  CommitContext cc{snap, none};
  for (PluginSlot* p : impl_->reserves) p->reserve->Unreserve(cc, *a);
}

std::vector<const QueuedJob*> Scheduler::SortQueue(const Snapshot& snap,
                                                   std::span<const QueuedJob* const> jobs) const {
  const auto& sorts = impl_->sorts;
  // Fair-share plugins read per-tenant usage; build it once for this sort.
  Snapshot with_usage = snap;
  const bool usage_read = std::any_of(sorts.begin(), sorts.end(),
                                      [](const PluginSlot* p) { return p->sort->ReadsTenantUsage(); });
  if (!snap.tenants && snap.ledger && usage_read) {
    impl_->usage.Rebuild(*impl_->fleet, *snap.ledger, jobs);
    with_usage.tenants = &impl_->usage;
  }
  // Plugins with a sort key have it computed once per job (keys[plugin x job]).
  const size_t n = jobs.size(), k = sorts.size();
  std::vector<double>& keys = impl_->sort_keys;
  std::vector<char> keyed(k);
  if (k > 0) {
    keys.resize(n * k);
    for (size_t p = 0; p < k; ++p) {
      keyed[p] = sorts[p]->sort->HasSortKey();
      if (keyed[p]) sorts[p]->sort->SortKeys(with_usage, jobs, std::span<double>(keys).subspan(p * n, n));
    }
  }
  std::vector<uint32_t>& order = impl_->sort_order;
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  auto before = [&](uint32_t x, uint32_t y) {
    const QueuedJob* a = jobs[x];
    const QueuedJob* b = jobs[y];
    for (size_t p = 0; p < k; ++p) {
      if (keyed[p]) {
        const double ka = keys[p * n + x], kb = keys[p * n + y];
        if (ka != kb) return ka < kb;
        continue;
      }
      std::weak_ordering o = sorts[p]->sort->Compare(with_usage, *a, *b);
      if (o != 0) return o < 0;
    }
    if (a->submitted != b->submitted) return a->submitted < b->submitted;
    if (a->sequence != b->sequence) return a->sequence < b->sequence;
    return a->id < b->id;
  };
  // A queue kept in order between cycles is checked in one pass, not sorted again.
  if (!std::is_sorted(order.begin(), order.end(), before)) {
    std::stable_sort(order.begin(), order.end(), before);
  }
  std::vector<const QueuedJob*> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = jobs[order[i]];
  return out;
}

std::vector<Decision> Scheduler::RunCycle(const Snapshot& snap,
                                          std::span<const QueuedJob* const> jobs, Ledger* ledger) {
  std::vector<Decision> out;
  RunCycle(snap, jobs, ledger, [&](Decision& d) { out.push_back(std::move(d)); });
  return out;
}

void Scheduler::RunCycle(const Snapshot& snap, std::span<const QueuedJob* const> jobs,
                         Ledger* ledger, const std::function<void(Decision&)>& decided,
                         CycleHandover handover) {
  std::vector<const QueuedJob*> order = SortQueue(snap, jobs);
  Snapshot live = snap;
  live.ledger = ledger;
  live.queue = order;
  BeginCycle(live);
  Decision kept;
  for (const QueuedJob* j : order) {
    if (KeepWait(*j, live, &kept)) {
      Decided(live, *j, &kept);
      if (handover.report_kept) decided(kept);
      if (EndsCycle(kept)) break;
      continue;
    }
    Decision d = DecideAndKeep(*j, live);
    CommitOrFail(*this, d, live, ledger, handover.commit_preemptions);
    Decided(live, *j, &d);
    const bool ends = EndsCycle(d);
    decided(d);
    if (ends) break;
  }
  EndCycle();
}

void Scheduler::BeginCycle(const Snapshot& snap) {
  ++impl_->cycle;
  impl_->touched = 0;
  for (PluginSlot* p : impl_->cycles) p->cycle->BeginCycle(snap);
}

void Scheduler::Decided(const Snapshot& snap, const QueuedJob& job, Decision* d) {
  for (PluginSlot* p : impl_->cycles) p->cycle->Decided(snap, job, d);
}

bool Scheduler::EndsCycle(const Decision& d) const {
  const bool waits = d.kind == DecisionKind::kWait || d.kind == DecisionKind::kError;
  return waits && impl_->profile.options.head_of_line_blocking;
}

void Scheduler::EndCycle() {
  for (PluginSlot* p : impl_->cycles) p->cycle->EndCycle();
  // Verdicts of jobs no cycle asks about any more (cancelled, failed, gone
  // from the queue without a commit): dropped once they outnumber those of
  // this cycle, so the kept verdicts never outgrow the queue by much.
  Impl& s = *impl_;
  if (s.kept.size() > 2 * s.touched + 4096) {
    s.kept.EraseIf([&](const KeptWait& k) { return k.cycle != s.cycle; });
  }
}

}  // namespace meridian::sched
