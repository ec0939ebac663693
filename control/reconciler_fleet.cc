// The reconciler's fleet and scheduling steps: the fleet from the backend's
// and the registered nodes, decisions over the queue, launches, and the plan
// dry run.
#include <algorithm>
#include <bit>
#include <chrono>
#include <iostream>

#include "control/reconciler_state.h"
#include "control/submission.h"
#include "sched/mig_fleet.h"
#include "sched/work_left.h"
#include "telemetry/adjust.h"

namespace meridian::control {

namespace {

std::string ClusterName(const std::string& node, size_t i) {
  std::string n;
  for (char c : node) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    n += ok ? c : '-';
  }
  if (n.empty() || !std::isalnum(static_cast<unsigned char>(n[0]))) n = "n" + n;
  if (n.size() > 50) n.resize(50);
  return n + "-" + std::to_string(i);
}

std::vector<int> GpuIndexes(uint64_t mask) {
  std::vector<int> v;
  for (int i = 0; i < 64; ++i) {
    if (mask & (uint64_t{1} << i)) v.push_back(i);
  }
  return v;
}

// A real-time service's replica set: one replica per member of its
// allocation (the scheduler's gang of n members in n nodes); none for any
// other job.
std::vector<Replica> ReplicasOf(const Reconciler::Active& a, const Allocation& al,
                                const Reconciler::FleetState& fs) {
  std::vector<Replica> set;
  if (!a.spec || a.spec->kind != WorkloadKind::kRealtimeInference) return set;
  for (const NodeShare& s : al.nodes) {
    Replica r;
    r.index = static_cast<int>(set.size());
    r.node = fs.nodes[s.node.index()].name;
    r.gpus = GpuIndexes(s.gpus);
    set.push_back(std::move(r));
  }
  return set;
}

std::string JoinGpus(const std::vector<int>& g) {
  std::string s;
  for (size_t i = 0; i < g.size(); ++i) s += (i ? "," : "") + std::to_string(g[i]);
  return s;
}

}  // namespace

Status Reconciler::RefreshFleet(UnixSeconds now, const std::vector<BackendNode>& offered,
                                std::vector<JobUpdate>* out) {
  (void)out;
  auto stored = store_->Nodes();
  if (!stored.ok()) return stored.status();
  std::map<std::string, NodeRow> by_name;
  for (NodeRow& n : *stored) by_name[n.name] = n;
  std::vector<NodeRow> all;
  std::map<std::string, std::vector<std::string>> mig_of;  // the backend's MIG nodes
  for (const BackendNode& b : offered) {
    if (!b.mig.empty()) mig_of[b.name] = b.mig;
    NodeRow n;
    n.name = b.name;
    n.gpu_model = b.gpu_model;
    n.gpus = b.gpus;
    n.vcpus = b.vcpus;
    n.ram_gib = b.ram_gib;
    n.registered = false;
    n.last_heartbeat = now;
    auto it = by_name.find(b.name);
    const bool drained = it != by_name.end() && it->second.state == NodeState::kDrained;
    n.state = drained ? NodeState::kDrained : b.schedulable ? NodeState::kReady : NodeState::kDown;
    if (it == by_name.end() || it->second.state != n.state || it->second.gpus != n.gpus ||
        it->second.gpu_model != n.gpu_model || it->second.vcpus != n.vcpus ||
        it->second.registered) {
      MERIDIAN_RETURN_IF_ERROR(store_->UpsertNode(n));
    }
    by_name.erase(b.name);
    all.push_back(n);
  }
  for (auto& [name, n] : by_name) {
    if (!n.registered) continue;  // the backend's node of an earlier run
    if (n.state == NodeState::kReady && now - n.last_heartbeat > options_.node_timeout_s) {
      MERIDIAN_RETURN_IF_ERROR(store_->SetNodeState(name, NodeState::kDown));
      n.state = NodeState::kDown;
    }
    all.push_back(n);
  }
  std::vector<NodeRow> ready;
  std::vector<std::string> without_agent;
  std::string sig;
  for (const NodeRow& n : all) {
    if (n.state != NodeState::kReady) continue;
    if (n.registered) {  // nothing runs jobs there (kNoAgentReason)
      without_agent.push_back(n.name);
      sig += "no-agent:" + n.name + ";";
      continue;
    }
    ready.push_back(n);
    sig += n.name + "|" + n.gpu_model + "|" + std::to_string(n.gpus) + "|" +
           std::to_string(n.vcpus) + "|" + std::to_string(n.ram_gib);
    if (auto m = mig_of.find(n.name); m != mig_of.end()) {
      for (const std::string& profile : m->second) sig += "|" + profile;
    }
    sig += ";";
  }
  if (fleet_ && fleet_->signature == sig) return Status::Ok();

  auto fs = std::make_unique<FleetState>();
  fs->signature = sig;
  fs->generation = ++fleet_generations_;
  fs->without_agent = without_agent;
  fs->market = std::make_unique<sched::CatalogMarket>(options_.catalog);
  FleetSpec spec;
  spec.elastic = false;
  for (size_t i = 0; i < ready.size(); ++i) {
    ClusterSpec c;
    c.name = ClusterName(ready[i].name, i);
    c.region = options_.region;
    c.pricing = CapacityPricing::kOwned;
    if (ready[i].gpus > 0) c.gpu_hour = Money::FromDollars(options_.gpu_hour_usd);
    c.vcpu_hour = Money::FromDollars(options_.vcpu_hour_usd);
    c.ram_gib_hour = Money::FromDollars(options_.ram_gib_hour_usd);
    NodeGroup g;
    g.count = 1;
    g.names = {ready[i].name};  // decisions name the node as the API does
    g.gpu = ready[i].gpus > 0 ? ready[i].gpu_model : "";
    g.gpus = ready[i].gpus;
    g.vcpus = ready[i].vcpus;
    g.ram_gib = ready[i].ram_gib;
    if (auto m = mig_of.find(ready[i].name); m != mig_of.end() && g.gpus > 0) g.mig = m->second;
    c.nodes.push_back(g);
    spec.clusters.push_back(std::move(c));
  }
  if (!ready.empty()) {
    auto fleet = sched::Fleet::Build(spec, options_.catalog);
    if (!fleet.ok()) {
      std::cerr << "meridian serve: fleet: " << fleet.status().message() << "\n";
    } else {
      sched::SchedulerOptions so;
      so.keep_waits = options_.keep_waits;
      auto sch = sched::Scheduler::Create(options_.profile, *fleet, so);
      auto ledger = (*fleet)->NewLedger();
      if (!sch.ok()) return sch.status();
      if (!ledger.ok()) return ledger.status();
      fs->fleet = *fleet;
      fs->scheduler = std::move(sch).value();
      fs->ledger = std::move(ledger).value();
      fs->nodes = ready;
      for (size_t i = 0; i < ready.size(); ++i) {
        fs->by_name[ready[i].name] = NodeId(static_cast<uint32_t>(i));
      }
    }
  }
  // Running jobs go back into the new ledger through the scheduler's commit,
  // the path a fresh placement takes, so what Reserve plugins keep (quota's
  // per-tenant usage) is rebuilt with it, after a restart as after a change.
  sched::Snapshot snap;
  snap.now = now;
  snap.fleet = fs->fleet.get();
  snap.ledger = &fs->ledger;
  snap.market = fs->market.get();
  for (auto& [id, a] : active_) {
    if (!a->holds || !fs->fleet) continue;
    auto alloc = AllocationFromJson(a->row.allocation_json, JobId(static_cast<uint32_t>(a->row.seq)),
                                    TenantId(tenant_ids_.emplace(a->row.tenant, tenant_ids_.size())
                                                 .first->second),
                                    *fs);
    if (!alloc) continue;  // its node left the fleet; it still runs, outside the ledger
    sched::Decision held;
    held.job = alloc->job;
    held.kind = sched::DecisionKind::kPlace;
    held.start = alloc->start;
    held.allocation = std::move(alloc);
    if (Status st = fs->scheduler->Commit(held, snap, &fs->ledger); !st.ok()) {
      std::cerr << "meridian serve: " << id << ": " << st.message() << "\n";
    }
  }
  std::map<std::string, NodeLayout> layouts;
  if (fs->fleet) {
    for (size_t i = 0; i < fs->nodes.size(); ++i) {
      const sched::Node& n = fs->fleet->node(NodeId(static_cast<uint32_t>(i)));
      NodeLayout& l = layouts[fs->nodes[i].name];
      l.mig_gpus = std::popcount(n.mig_gpus);
      for (const sched::MigInstance& m : n.mig) {
        l.slices.push_back({options_.catalog->gpus()[n.gpu_model.index()].mig_profiles[m.profile].name,
                            m.shape.start, m.shape.span});
      }
    }
  }
  {
    std::lock_guard<std::mutex> l(explain_mu_);
    layouts_.swap(layouts);
  }
  fleet_ = std::move(fs);
  return Status::Ok();
}

namespace {

WaitExplanation Explain(const sched::Decision& d, const std::string& reason) {
  WaitExplanation e;
  e.decision = std::string(sched::ToString(d.kind));
  e.message = reason;
  for (const sched::FilterLine& f : d.filters) e.filters.push_back({f.plugin, f.rejected, f.examples});
  if (d.start > 0) e.earliest_start = d.start;
  e.start_reason = d.start_reason;
  e.pricing = d.pricing ? std::string(ToString(*d.pricing)) : "owned";
  e.pricing_reason = d.pricing_reason;
  e.candidates = d.candidates;
  e.feasible = d.feasible;
  return e;
}

// "; registered node(s) a, b: <kNoAgentReason>", or "" when there are none.
std::string NoAgentNote(const Reconciler::FleetState& fs) {
  if (fs.without_agent.empty()) return "";
  std::string names;
  for (const std::string& n : fs.without_agent) names += (names.empty() ? "" : ", ") + n;
  return std::string("; registered node") + (fs.without_agent.size() > 1 ? "s " : " ") + names +
         ": " + kNoAgentReason;
}

// The nodes a backfill reservation keeps, by name.
std::string HeldNodes(const sched::Decision& d, const Reconciler::FleetState& fs) {
  std::string s;
  for (NodeId n : d.start_nodes) s += (s.empty() ? "" : ", ") + fs.nodes[n.index()].name;
  return s;
}

}  // namespace

std::map<std::string, WaitExplanation> Reconciler::Waiting() const {
  std::lock_guard<std::mutex> l(explain_mu_);
  return waiting_;
}

std::map<std::string, NodeLayout> Reconciler::Layouts() const {
  std::lock_guard<std::mutex> l(explain_mu_);
  return layouts_;
}

std::shared_ptr<const JobSpec> Reconciler::ProfiledSpec(Active& a, UnixSeconds now,
                                                         std::vector<JobUpdate>* out) {
  if (!a.measured || !fleet_ || !fleet_->fleet) return a.spec;
  const JobTelemetry m = std::move(*a.measured);
  a.measured.reset();
  telemetry::FleetShape shape;
  for (const NodeRow& n : fleet_->nodes) {
    if (n.gpus > 0) shape.gpu_models.insert(n.gpu_model);
    shape.max_node_vcpus = std::max(shape.max_node_vcpus, n.vcpus);
  }
  telemetry::Adjustment adj = telemetry::AdjustForProfile(*a.spec, m.classification,
                                                          m.recommendation, shape,
                                                          options_.thresholds);
  if (!adj.changed) return a.spec;
  JobUpdate note;
  note.job_id = a.row.id;
  note.message = "next attempt: " + adj.note;
  note.at = now;
  out->push_back(note);
  return std::make_shared<const JobSpec>(std::move(adj.spec));
}

void Reconciler::ExplainNoFleet(std::vector<JobUpdate>* out) {
  const std::string none = "no schedulable nodes" + (fleet_ ? NoAgentNote(*fleet_) : "");
  std::lock_guard<std::mutex> l(explain_mu_);
  for (auto& [id, ap] : active_) {
    Active& a = *ap;
    if (a.done || a.row.state != JobState::kQueued || a.row.cancel_requested) continue;
    // Told at an earlier cycle: a queue of thousands waiting for a first
    // node is not rewritten at every cycle.
    if (auto w = waiting_.find(a.row.id); a.explained && a.row.reason == none &&
                                          w != waiting_.end() && w->second.decision == "none" &&
                                          w->second.message == none) {
      continue;
    }
    waiting_[a.row.id] = {"none", none, {}, std::nullopt, "", "", "", 0, 0};
    a.explained = true;
    if (a.row.reason != none) {
      a.row.reason = none;
      JobUpdate u;
      u.job_id = a.row.id;
      u.reason = a.row.reason;
      out->push_back(u);
    }
  }
}

Status Reconciler::Schedule(UnixSeconds now, std::vector<JobUpdate>* out) {
  // The scheduler keeps the queue across cycles (Scheduler::Enqueue,
  // RunQueue), as the simulator's does: the jobs that entered the queue go
  // in, those that left it come out, and a cycle decides in full only what a
  // change since could move (sched/queue_state.h).
  const bool fleet = fleet_ && fleet_->scheduler;
  // The jobs to look at: those that changed since the last cycle, or every
  // active job when the queue is a new fleet's (or there is none).
  std::vector<Active*> look;
  if (!fleet || queue_generation_ != fleet_->generation) {
    look.reserve(active_.size());
    for (auto& [id, a] : active_) look.push_back(a.get());
    queue_generation_ = fleet ? fleet_->generation : 0;
  } else {
    for (int64_t seq : changed_) {
      if (auto it = by_seq_.find(seq); it != by_seq_.end()) look.push_back(it->second);
    }
  }
  changed_.clear();
  for (Active* ap : look) {
    Active& a = *ap;
    if (a.done || a.row.state != JobState::kQueued || a.row.cancel_requested) {
      Unqueue(a);
      continue;
    }
    if (!a.spec) {
      Unqueue(a);
      Transition(a, JobState::kFailed, "the stored spec does not parse", now, out);
      continue;
    }
    if (!fleet || a.enqueued_in == fleet_->generation) continue;
    if (!a.queued) {
      uint32_t tenant = tenant_ids_.emplace(a.row.tenant, tenant_ids_.size()).first->second;
      sched::EnqueueRequest req{JobId(static_cast<uint32_t>(a.row.seq)), TenantId(tenant),
                                a.row.submitted_at, static_cast<uint64_t>(a.row.seq)};
      auto q = sched::MakeQueuedJob(ProfiledSpec(a, now, out), *options_.catalog, req);
      if (!q.ok()) {
        Unqueue(a);
        JobUpdate u;
        u.ended_at = now;
        Transition(a, JobState::kFailed, q.status().message(), now, out, u);
        continue;
      }
      a.queued = std::move(q).value();
      // A job with saved work is queued for what is left of it.
      a.full.reset();
      if (a.work_done > 0) {
        a.full = std::make_unique<sched::QueuedJob>(std::move(*a.queued));
        a.queued = sched::WithWorkLeft(*a.full, a.work_done);
      }
    }
    fleet_->scheduler->Enqueue(*a.queued);
    a.enqueued_in = fleet_->generation;
  }
  if (!fleet) {
    ExplainNoFleet(out);
    return Status::Ok();
  }
  FleetState& fs = *fleet_;
  if (fs.scheduler->queued() == 0) return Status::Ok();
  sched::Snapshot snap;
  snap.now = now;
  snap.fleet = fs.fleet.get();
  snap.ledger = &fs.ledger;
  snap.market = fs.market.get();
  std::vector<Active*> to_launch;
  std::vector<Active*> decided;  // in full this cycle
  std::vector<Active*> to_stop;  // preemptions' victims, stopped once the cycle is over
  std::vector<std::pair<Active*, WaitExplanation>> explained;
  const int64_t kept_before = fs.scheduler->kept_verdicts();
  // A decision's time is from the previous one's end (or the cycle's start):
  // the kept verdicts looked at on the way count with it.
  auto t0 = std::chrono::steady_clock::now();
  // One cycle of the core, as the simulator runs it: cycle plugins see each
  // decision (backfill reserves the waiting head's start, so later jobs do
  // not take the GPUs it waits for), and head-of-line blocking stops it. A
  // placement is committed in the cycle; a preemption only once its victims
  // have stopped (the preemptor is decided again then).
  fs.scheduler->RunQueue(snap, &fs.ledger, [&](sched::Decision& d) {
    auto found = by_seq_.find(d.job.value());
    if (found == by_seq_.end()) return;
    Active& a = *found->second;
    decided.push_back(&a);
    const auto t1 = std::chrono::steady_clock::now();
    metrics_->decision_seconds.Observe(std::chrono::duration<double>(t1 - t0).count());
    t0 = t1;
    metrics_->decisions[static_cast<size_t>(d.kind)]++;
    std::string reason;
    switch (d.kind) {
      case sched::DecisionKind::kPlace: {
        RecordPlacement(a, d, "placed on", now, out);
        to_launch.push_back(&a);
        return;
      }
      case sched::DecisionKind::kPreempt: {
        for (JobId v : d.victims) {
          auto it = by_seq_.find(v.value());
          if (it == by_seq_.end()) continue;
          Active& victim = *it->second;
          if (victim.stop_kind != StopKind::kNone || victim.pending != PendingCall::kNone ||
              victim.row.handle.empty()) {
            continue;
          }
          const int64_t grace = GraceOf(victim);
          victim.stop_kind = StopKind::kPreempt;
          metrics_->preemptions++;
          Transition(victim, JobState::kCheckpointing,
                     "preempted for " + a.row.id + ": SIGTERM, " + std::to_string(grace) +
                         "s to checkpoint before SIGKILL",
                     now, out);
          to_stop.push_back(&victim);
        }
        reason = "waiting for preempted jobs to stop";
        break;
      }
      case sched::DecisionKind::kReject: {
        if (!fs.without_agent.empty()) {
          // It may be meant for a registered node: it waits, saying why.
          reason = "cannot run on the nodes that run jobs (" + d.status.message() + ")" +
                   NoAgentNote(fs);
          break;
        }
        JobUpdate u;
        u.ended_at = now;
        Transition(a, JobState::kFailed, "cannot run on this fleet: " + d.status.message(), now,
                   out, u);
        return;
      }
      case sched::DecisionKind::kDefer:
        reason = "deferred to " + FormatRfc3339(d.start) +
                 (d.start_reason.empty() ? "" : ": " + d.start_reason);
        break;
      default:
        reason = d.status.message().empty() ? d.start_reason : d.status.message();
        if (d.reserved) {
          reason = "held: " + HeldNodes(d, fs) + " reserved from " + FormatRfc3339(d.start) +
                   " (backfill); " + reason;
        }
        break;
    }
    explained.emplace_back(&a, Explain(d, reason));
    if (reason != a.row.reason) {
      a.row.reason = reason;
      JobUpdate u;
      u.job_id = a.row.id;
      u.reason = reason;
      out->push_back(u);
    }
  }, /*commit_preemptions=*/false);
  metrics_->kept_verdicts += fs.scheduler->kept_verdicts() - kept_before;
  // Made once the cycle's decisions are written (CallBackend): a stop the
  // backend refuses for good ends the attempt, which releases its GPUs, and
  // the cycle must not see the ledger change under it.
  for (Active* v : to_stop) StopAttempt(*v, "", now, out);  // retried until the backend takes it
  {
    std::lock_guard<std::mutex> l(explain_mu_);
    for (auto& [a, e] : explained) {
      waiting_[a->row.id] = std::move(e);
      a->explained = true;
    }
  }
  for (Active* a : decided) {
    if (a->row.state != JobState::kQueued) Unqueue(*a);
  }
  // MIG fragmentation against what the queue asks for (only a fleet with
  // MIG GPUs looks at the queue).
  const bool mig_fleet = std::any_of(fs.fleet->nodes().begin(), fs.fleet->nodes().end(),
                                     [](const sched::Node& n) { return n.mig_gpus != 0; });
  const std::vector<const sched::QueuedJob*> waiting =
      mig_fleet ? fs.scheduler->Queued() : std::vector<const sched::QueuedJob*>{};
  sched::MigFleetFragmentation mig = sched::MeasureMigFragmentation(*fs.fleet, fs.ledger, waiting);
  metrics_->mig_gpus = mig.structural.gpus;
  metrics_->mig_free_slices = mig.structural.free_memory;
  metrics_->mig_unallocatable_slices = mig.structural.unallocatable_memory();
  metrics_->mig_unallocatable_demand_slices = mig.demand.unallocatable_memory();
  // Launched once "scheduled" is written (CallBackend), if the store took it.
  for (Active* a : to_launch) RequestLaunch(*a);
  return Status::Ok();
}

void Reconciler::RecordPlacement(Active& a, const sched::Decision& d, const std::string& verb,
                                 UnixSeconds now, std::vector<JobUpdate>* out) {
  FleetState& fs = *fleet_;
  a.holds = true;
  a.placed = d.chosen;
  a.run_since = 0;  // until this attempt is seen running (StartCheckpoints)
  const Allocation& al = *d.allocation;
  Placement p;
  p.node = fs.nodes[al.nodes[0].node.index()].name;
  p.gpus = GpuIndexes(al.nodes[0].gpus);
  p.region = options_.region;
  p.pricing = d.pricing ? std::string(ToString(*d.pricing)) : "owned";
  if (al.nodes[0].mig) {
    const sched::Node& n = fs.fleet->node(al.nodes[0].node);
    for (const sched::MigInstance& m : n.mig) {
      if (m.shape == al.nodes[0].mig->shape) {
        p.mig = options_.catalog->gpus()[n.gpu_model.index()].mig_profiles[m.profile].name;
      }
    }
  }
  a.replicas = ReplicasOf(a, al, fs);
  a.replicas_wanted = -1;
  if (!a.replicas.empty()) SizeReplicaSet(a, now, out);  // those beyond it stay stopped
  JobUpdate u;
  u.placement = p;
  u.attempts = a.row.attempts + 1;
  u.allocation_json = AllocationToJson(al, fs).dump();
  // A service's set is stored before any replica is launched, so that
  // a launch not recorded before a restart is found by its name.
  u.handle = a.replicas.empty() ? "" : ReplicaSetHandle(a.replicas, a.slo);
  u.clear_ended = true;
  std::string where = p.node + (p.gpus.empty() ? "" : " GPUs " + JoinGpus(p.gpus)) +
                      (p.mig.empty() ? "" : " MIG " + p.mig);
  Transition(a, JobState::kScheduled, verb + " " + where + " (" + p.pricing + ")", now, out, u);
}

Result<nlohmann::json> Reconciler::Plan(const JobSpec& job) {
  std::lock_guard<std::mutex> l(mu_);
  if (!fleet_ || !fleet_->scheduler) return Status::Unschedulable("no schedulable nodes");
  const UnixSeconds now = Now();
  // A tenant the daemon has not seen plans under an id no job holds, and is
  // not remembered: a plan changes nothing, so names in plans cannot grow the map.
  auto known = tenant_ids_.find(job.tenant);
  const uint32_t tenant = known != tenant_ids_.end() ? known->second
                                                     : static_cast<uint32_t>(tenant_ids_.size());
  auto spec = std::make_shared<const JobSpec>(job);
  sched::EnqueueRequest req{JobId(0x7fffffffu), TenantId(tenant), now, 0};
  auto q = sched::MakeQueuedJob(spec, *options_.catalog, req);
  if (!q.ok()) return q.status();
  sched::Snapshot snap;
  snap.now = now;
  snap.fleet = fleet_->fleet.get();
  snap.ledger = &fleet_->ledger;
  snap.market = fleet_->market.get();
  sched::Decision d = fleet_->scheduler->Decide(*q, snap);
  if (options_.plan_renderer) {
    return options_.plan_renderer(job, d, *fleet_->fleet, options_.profile, now);
  }
  return nlohmann::json{{"decision", std::string(sched::ToString(d.kind))},
                        {"status_message", d.status.message()}};
}

}  // namespace meridian::control
