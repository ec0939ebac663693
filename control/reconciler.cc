#include "control/reconciler.h"

#include <chrono>
#include <iostream>
#include <set>

#include "control/attempt_rate.h"
#include "control/reconciler_state.h"
#include "control/submission.h"
#include "core/ledger.h"
#include "sched/elastic.h"
#include "sched/market.h"
#include "sched/plugins/realtime_replicas.h"
#include "sched/queued_job.h"
#include "sched/scheduler.h"

namespace meridian::control {

int64_t GraceOf(const JobSpec& s) { return s.grace_period_s.value_or(30); }


nlohmann::json AllocationToJson(const Allocation& a, const Reconciler::FleetState& fs) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeShare& s : a.nodes) {
    nlohmann::json n = {{"node", fs.nodes[s.node.index()].name},
                        {"gpus", s.gpus},
                        {"vcpus", s.vcpus},
                        {"ram_mib", s.ram_mib}};
    if (s.mig) n["mig"] = {s.mig->gpu, s.mig->shape.start, s.mig->shape.span};
    nodes.push_back(std::move(n));
  }
  return {{"nodes", nodes},
          {"start", a.start},
          {"end", a.end},
          {"priority", static_cast<int>(a.priority)},
          {"preemptible", a.preemptible},
          {"checkpoint_interval_s", a.checkpoint_interval_s},
          {"restart_overhead_s", a.restart_overhead_s}};
}

std::optional<Allocation> AllocationFromJson(const std::string& text, JobId job, TenantId tenant,
                                             const Reconciler::FleetState& fs) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  Allocation a;
  a.job = job;
  a.tenant = tenant;
  try {
    for (const auto& n : j.at("nodes")) {
      auto it = fs.by_name.find(n.at("node").get<std::string>());
      if (it == fs.by_name.end()) return std::nullopt;
      NodeShare s;
      s.node = it->second;
      s.gpus = n.at("gpus").get<uint64_t>();
      s.vcpus = n.at("vcpus").get<int>();
      s.ram_mib = n.at("ram_mib").get<int64_t>();
      if (n.contains("mig")) {
        s.mig = MigShare{n["mig"][0].get<uint8_t>(),
                         MigShape{n["mig"][1].get<uint8_t>(), n["mig"][2].get<uint8_t>()}};
      }
      a.nodes.push_back(s);
    }
    a.start = j.at("start").get<int64_t>();
    a.end = j.at("end").get<int64_t>();
    a.priority = static_cast<Priority>(j.at("priority").get<int>());
    a.preemptible = j.at("preemptible").get<bool>();
    a.checkpoint_interval_s = j.value("checkpoint_interval_s", int64_t{0});
    a.restart_overhead_s = j.value("restart_overhead_s", int64_t{0});
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return a;
}

std::string DescribeEnd(const RunObservation& o) {
  if (o.phase == RunPhase::kExited) return "exited with code " + std::to_string(o.exit_code.value_or(-1));
  if (o.phase == RunPhase::kKilled) return "killed by signal " + std::to_string(o.signal.value_or(0));
  return "lost" + (o.message.empty() ? std::string() : ": " + o.message);
}

Reconciler::Reconciler(Store* store, Backend* backend, Metrics* metrics, ReconcilerOptions options)
    : store_(store), backend_(backend), metrics_(metrics), options_(std::move(options)),
      retention_(std::make_unique<Retention>(store, backend, options_.state_dir,
                                             options_.retention)) {
  for (const sched::PluginConfig& plugin : options_.profile.plugins) {
    if (plugin.name != sched::RealtimeReplicas::kName) continue;
    sched::PluginArgs args = plugin.args;
    const sched::RealtimeReplicas::Options o = sched::RealtimeReplicas::OptionsOf(args);
    replica_terms_ = {o.availability_target, o.zone_availability, o.max_replicas};
  }
}

Reconciler::~Reconciler() { Stop(); }

UnixSeconds Reconciler::Now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Reconciler::LogDir(const std::string& id) const {
  return options_.state_dir + "/jobs/" + id + "/logs";
}

std::string Reconciler::CheckpointDir(const std::string& id) const {
  return options_.state_dir + "/jobs/" + id + "/checkpoint";
}

Status Reconciler::Start() {
  Forget();
  // Before anything is adopted or found: a deposed leader's launch under way
  // finishes (and is found), and none starts after.
  if (options_.epoch) MERIDIAN_RETURN_IF_ERROR(backend_->Fence(options_.epoch()));
  MERIDIAN_RETURN_IF_ERROR(Recover());
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void Reconciler::Forget() {
  std::lock_guard<std::mutex> l(mu_);
  watch_.clear();
  active_.clear();
  by_seq_.clear();
  changed_.clear();
  done_.clear();
  queue_generation_ = 0;
  fleet_.reset();
  tenant_ids_.clear();
  resync_.clear();
  calls_.clear();
  checkpoints_.clear();
  carbon_hours_.clear();
  {
    std::lock_guard<std::mutex> e(explain_mu_);
    waiting_.clear();
    layouts_.clear();
  }
  std::lock_guard<std::mutex> i(inbox_mu_);
  cancels_.clear();
  wake_ = false;
  stop_ = false;
}

void Reconciler::Stop() {
  {
    std::lock_guard<std::mutex> l(inbox_mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Reconciler::Notify() {
  {
    std::lock_guard<std::mutex> l(inbox_mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

void Reconciler::RequestCancel(const std::string& id) {
  {
    std::lock_guard<std::mutex> l(inbox_mu_);
    cancels_.insert(id);
    wake_ = true;
  }
  cv_.notify_all();
}

void Reconciler::Loop() {
  for (;;) {
    Status st = RunCycle();
    if (!st.ok()) std::cerr << "meridian serve: reconcile: " << st.message() << "\n";
    retention_->RunIfDue(Now());  // outside mu_: its backend calls hold up no API request
    std::unique_lock<std::mutex> l(inbox_mu_);
    cv_.wait_for(l, std::chrono::milliseconds(options_.interval_ms),
                 [&] { return stop_ || wake_; });
    if (stop_) return;
    wake_ = false;
  }
}

Status Reconciler::Recover() {
  std::unique_lock<std::mutex> l(mu_);
  const UnixSeconds now = Now();
  marks_cursor_ = 0;  // the first read after recovery takes every unfinished job
  auto rows = store_->ActiveJobs();
  if (!rows.ok()) return rows.status();
  std::vector<JobUpdate> out;
  for (JobRow& row : *rows) RecoverRow(std::move(row), "after a daemon restart", now, &out);
  Status st = Flush(&out);
  EraseDone();
  Status calls = CallBackend(l);  // the stops the adopted attempts still need
  return st.ok() ? calls : st;
}

void Reconciler::AddActive(std::unique_ptr<Active> a) {
  by_seq_[a->row.seq] = a.get();
  changed_.push_back(a->row.seq);
  Watch(*a);
  std::string id = a->row.id;
  active_[std::move(id)] = std::move(a);
}

void Reconciler::Watch(Active& a) { watch_.emplace(a.row.id, &a); }

bool Reconciler::Quiet(const Active& a) {
  return !a.done && a.row.state == JobState::kQueued && !a.row.cancel_requested &&
         a.stop_kind == StopKind::kNone && a.pending == PendingCall::kNone && !a.launch_retry &&
         !a.stop_retry && a.replicas.empty();
}

void Reconciler::EraseDone() {
  for (int64_t seq : done_) {
    auto it = by_seq_.find(seq);
    if (it == by_seq_.end() || !it->second->done) continue;
    Unqueue(*it->second);
    watch_.erase(it->second->row.id);
    active_.erase(it->second->row.id);
    by_seq_.erase(it);
  }
  done_.clear();
}

void Reconciler::Unqueue(Active& a) {
  if (a.enqueued_in != 0 && fleet_ && fleet_->generation == a.enqueued_in && fleet_->scheduler) {
    fleet_->scheduler->Dequeue(JobId(static_cast<uint32_t>(a.row.seq)));
  }
  a.enqueued_in = 0;
  if (a.explained) {
    std::lock_guard<std::mutex> l(explain_mu_);
    waiting_.erase(a.row.id);
    a.explained = false;
  }
}

void Reconciler::RecoverRow(JobRow row, const std::string& when, UnixSeconds now,
                            std::vector<JobUpdate>* out) {
  auto a = std::make_unique<Active>();
  a->row = std::move(row);
  Active& ref = *a;
  AddActive(std::move(a));
  auto spec = SpecFromJson(ref.row.spec_json, ref.row.id);
  if (!spec.ok()) {
    Transition(ref, JobState::kFailed,
               "the stored spec no longer parses: " + spec.status().message(), now, out);
    return;
  }
  ref.spec = std::make_shared<const JobSpec>(std::move(spec).value());
  if (ref.row.state == JobState::kQueued) {
    // A service queued again keeps its tally (HandleObservation).
    if (auto slo = ParseServiceTally(ref.row.handle)) ref.slo = *slo;
    return;
  }
  if (auto set = ParseReplicaSetHandle(ref.row.handle)) {
    // A set stored before its tally was kept is counted from its next whole
    // minute: what it served before is not known.
    const int64_t minutes_in = std::max<int64_t>(0, now - ref.row.submitted_at) / 60;
    ref.slo = ParseServiceTally(ref.row.handle)
                  .value_or(ServiceTally{ref.row.submitted_at + (minutes_in + 1) * 60, 0, 0});
    AdoptReplicaSet(ref, std::move(set).value(), when, now, out);
    return;
  }
  if (ref.row.state == JobState::kScheduled || ref.row.handle.empty()) {
    FindUnrecordedLaunch(ref, when, now, out);
  } else {
    AdoptStored(ref, when);
  }
}

void Reconciler::AdoptStored(Active& a, const std::string& when) {
  if (a.pending != PendingCall::kNone) return;
  BackendCall& call = RecordCall(a, PendingCall::kAdopt, &calls_);
  call.handle = a.row.handle;
  call.when = when;
  a.holds = true;  // its stored allocation, whatever the answer
}

void Reconciler::AdoptAnswered(Active& ref, const BackendCall& call, UnixSeconds now,
                               std::vector<JobUpdate>* out) {
  const std::string& when = call.when;
  const JobState st = ref.row.state;
  RunObservation o;
  if (call.adopted.ok()) {
    o = *call.adopted;
  } else {
    o.job_id = ref.row.id;
    o.attempt = ref.row.attempts;
    o.phase = RunPhase::kLost;
    o.message = call.adopted.status().message();
  }
  if (st == JobState::kCheckpointing) ref.stop_kind = StopKind::kPreempt;
  if (o.phase == RunPhase::kStarting || o.phase == RunPhase::kRunning) {
    JobUpdate note;
    note.job_id = ref.row.id;
    note.message = "re-adopted attempt " + std::to_string(ref.row.attempts) + " (" +
                   ref.row.handle + ") " + when;
    note.at = now;
    out->push_back(note);
    if (ref.row.cancel_requested) ref.stop_kind = StopKind::kCancel;
    // Sent again, and retried until the backend takes it.
    if (ref.stop_kind != StopKind::kNone) RequestStop(ref);
  } else {
    if (ref.row.cancel_requested) ref.stop_kind = StopKind::kCancel;
  }
  if (o.phase != RunPhase::kStarting) HandleObservation(o, now, out);
}

Status Reconciler::Resync(UnixSeconds now, std::vector<JobUpdate>* out) {
  if (resync_.empty()) return Status::Ok();
  std::set<std::string> ids;
  ids.swap(resync_);
  bool held = false;
  for (const std::string& id : ids) {
    auto row = store_->GetJob(id);
    if (!row.ok() && row.status().code() != StatusCode::kNotFound) {
      resync_.insert(ids.begin(), ids.end());  // the store does not answer: next cycle
      return row.status();
    }
    if (auto it = active_.find(id); it != active_.end()) {
      held = held || it->second->holds;
      Unqueue(*it->second);
      by_seq_.erase(it->second->row.seq);
      watch_.erase(id);
      active_.erase(it);
    }
    if (!row.ok() || IsTerminal(row->state)) continue;  // gone, or ended as stored
    RecoverRow(std::move(row).value(), "after the store did not take a change", now, out);
    held = true;
  }
  // The ledger is rebuilt from the stored allocations, as after a restart.
  if (held) fleet_.reset();
  return Status::Ok();
}

Status Reconciler::LoadNewJobs() {
  // What changed since the last read; the cursor moves on only once the
  // changes are taken in, so a failed read of the rows reads them again.
  int64_t cursor = marks_cursor_;
  auto marks = store_->ChangedMarks(&cursor);
  if (!marks.ok()) return marks.status();
  std::vector<const Store::ActiveMark*> queued;  // new to this view, by seq
  for (const Store::ActiveMark& m : *marks) {
    if (IsTerminal(m.state)) continue;  // ended: nothing to find or cancel
    if (auto known = by_seq_.find(m.seq); known != by_seq_.end()) {
      // A cancel written through any replica's API (HandleCancels acts on it).
      if (m.cancel_requested) {
        known->second->row.cancel_requested = true;
        Watch(*known->second);
      }
      continue;
    }
    // A job past queued that this view does not hold: read again and adopted
    // as on taking the lead.
    if (m.state != JobState::kQueued) {
      resync_.insert(m.id);
      continue;
    }
    queued.push_back(&m);
  }
  if (queued.empty()) {
    marks_cursor_ = cursor;
    return Status::Ok();
  }
  auto rows = ReadQueued(queued);
  if (!rows.ok()) return rows.status();
  for (JobRow& row : *rows) {
    if (by_seq_.count(row.seq) != 0) continue;
    auto a = std::make_unique<Active>();
    auto spec = SpecFromJson(row.spec_json, row.id);
    if (spec.ok()) a->spec = std::make_shared<const JobSpec>(std::move(spec).value());
    a->row = std::move(row);
    AddActive(std::move(a));
  }
  marks_cursor_ = cursor;
  return Status::Ok();
}

Result<std::vector<JobRow>> Reconciler::ReadQueued(
    const std::vector<const Store::ActiveMark*>& marks) {
  // One read for them all: the queued jobs from the first new one on (new
  // jobs are mostly the newest, so few known ones come with them).
  ListFilter f;
  f.state = JobState::kQueued;
  f.after_seq = marks.front()->seq - 1;  // ActiveMarks come by seq
  f.limit = static_cast<int>(std::min<size_t>(marks.size() * 2 + 64, 100000));
  auto listed = store_->ListJobs(f);
  if (!listed.ok()) return listed.status();
  std::set<int64_t> found;
  for (const JobRow& row : *listed) found.insert(row.seq);
  std::vector<JobRow> out = std::move(listed).value();
  // Those the list did not hold (past its limit, or no longer queued), one by one.
  for (const Store::ActiveMark* m : marks) {
    if (found.count(m->seq) != 0) continue;
    auto row = store_->GetJob(m->id);
    if (!row.ok() && row.status().code() == StatusCode::kNotFound) continue;
    if (!row.ok()) return row.status();
    if (IsTerminal(row->state)) continue;  // ended (cancelled) since the marks were read
    out.push_back(std::move(row).value());
  }
  return out;
}

void Reconciler::Transition(Active& a, JobState to, const std::string& message,
                            UnixSeconds now, std::vector<JobUpdate>* out, JobUpdate u) {
  Watch(a);
  u.job_id = a.row.id;
  u.expect_state = a.row.state;
  u.state = to;
  u.message = message;
  u.at = now;
  a.row.state = to;
  a.row.reason = message;
  if (u.clear_ended) {
    a.row.started_at.reset();
    a.row.ended_at.reset();
    a.row.exit_code.reset();
  }
  if (u.started_at) a.row.started_at = u.started_at;
  if (u.ended_at) a.row.ended_at = u.ended_at;
  if (u.exit_code) a.row.exit_code = u.exit_code;
  if (u.attempts) a.row.attempts = *u.attempts;
  if (u.placement) a.row.placement = *u.placement;
  if (u.handle) a.row.handle = *u.handle;
  if (u.allocation_json) a.row.allocation_json = *u.allocation_json;
  if (IsTerminal(to)) {
    a.done = true;
    done_.push_back(a.row.seq);
  }
  changed_.push_back(a.row.seq);
  out->push_back(std::move(u));
}

void Reconciler::ReleaseAttempt(Active& a, UnixSeconds now, std::vector<JobUpdate>* out) {
  if (!a.holds) return;
  a.holds = false;
  const JobId jid(static_cast<uint32_t>(a.row.seq));
  const UnixSeconds start = a.row.started_at.value_or(now);
  const double hours = static_cast<double>(std::max<int64_t>(0, now - start)) / 3600.0;
  // Billed as `simulate` bills a run (control/attempt_rate.h): GPUs at
  // gpu_hour_usd, a run on CPUs at its vCPUs' and RAM's rates.
  const std::vector<HeldShare> held = HeldShares(a.row, a.spec.get());
  const int64_t cost = AttemptHourRate(held, DaemonRates(options_)).Times(hours).micros();
  int64_t co2_mg = 0;
  if (fleet_ && fleet_->fleet) {
    if (fleet_->scheduler) {
      sched::Snapshot snap;
      snap.now = now;
      snap.fleet = fleet_->fleet.get();
      snap.ledger = &fleet_->ledger;
      snap.market = fleet_->market.get();
      fleet_->scheduler->Release(jid, snap, &fleet_->ledger);
    }
    for (const HeldShare& h : held) {
      auto it = fleet_->by_name.find(h.node);
      if (it == fleet_->by_name.end()) continue;
      const sched::Node& node = fleet_->fleet->node(it->second);
      if (!node.gpu_model.valid()) continue;
      gpus_freed_ = true;  // its vCPUs may be what a GPU there lacked
      if (h.gpu_milli == 0) continue;
      const double power_w = options_.catalog->gpus()[node.gpu_model.index()].power_w;
      const double kwh = power_w * static_cast<double>(h.gpu_milli) / 1000.0 * hours / 1000.0;
      co2_mg += std::llround(kwh * fleet_->market->CarbonGPerKwh(node.region, start) * 1000.0);
    }
  }
  metrics_->spend_micro_usd += cost;
  metrics_->co2_mg += co2_mg;
  if (!out->empty() && out->back().job_id == a.row.id) {
    out->back().add_cost_micro_usd += cost;
    out->back().add_co2_mg += co2_mg;
  } else {
    JobUpdate u;
    u.job_id = a.row.id;
    u.add_cost_micro_usd = cost;
    u.add_co2_mg = co2_mg;
    u.at = now;
    out->push_back(u);
  }
}

void Reconciler::HandleObservation(const RunObservation& o, UnixSeconds now,
                                   std::vector<JobUpdate>* out) {
  auto it = active_.find(o.job_id);
  if (it == active_.end() || o.attempt != it->second->row.attempts) return;
  Active& a = *it->second;
  if (o.phase == RunPhase::kStarting) return;
  if (o.phase == RunPhase::kRunning) {
    if (a.row.state == JobState::kScheduled || a.row.state == JobState::kStarting) {
      JobUpdate u;
      u.started_at = o.started ? o.started : now;
      Transition(a, JobState::kRunning, "running (" + o.handle + ")", now, out, u);
      StartCheckpoints(a, now);
    }
    return;
  }
  const UnixSeconds ended = o.ended ? o.ended : now;
  if (!a.row.started_at) a.row.started_at = o.started ? o.started : ended;
  JobUpdate end;
  end.ended_at = ended;
  if (o.exit_code) end.exit_code = *o.exit_code;
  const std::string how = DescribeEnd(o);
  const StopKind kind = a.stop_kind;
  a.stop_kind = StopKind::kNone;
  if (kind == StopKind::kCancel) {
    Transition(a, JobState::kCancelled, "cancelled; the process " + how, now, out, end);
  } else if (kind == StopKind::kMove) {
    MoveStopped(a, how, ended, now, out);
    return;
  } else if (kind == StopKind::kPreempt ||
             (o.phase == RunPhase::kLost && a.row.attempts <= options_.max_requeues)) {
    if (options_.measured) {
      std::optional<JobTelemetry> m = options_.measured(a.row.id);
      a.measured = m ? std::make_unique<JobTelemetry>(std::move(*m)) : nullptr;
    }
    Unqueue(a);
    // Queued again for the work left after its last checkpoint (read before
    // the release below drops its allocation), and decided again with the
    // measured profile.
    a.work_done = WorkDoneBy(a, now, true);
    a.queued.reset();
    a.placed.reset();
    if (kind == StopKind::kPreempt) {
      Transition(a, JobState::kPreempted, "preempted; the process " + how, now, out, end);
    }
    // Billed before the requeue clears the placement and start it is billed by.
    ReleaseAttempt(a, ended, out);
    JobUpdate requeue = RequeueUpdate();
    // A service's minutes met stay stored while it waits (a set of no
    // replicas with its tally), so a daemon restarted meanwhile counts on.
    if (a.slo.until != 0) requeue.handle = ReplicaSetHandle({}, a.slo);
    Transition(a, JobState::kQueued,
               kind == StopKind::kPreempt
                   ? "requeued; the next attempt resumes from its checkpoint directory"
                   : "attempt " + how + "; requeued",
               now, out, requeue);
  } else if (o.phase == RunPhase::kExited && o.exit_code == 0) {
    Transition(a, JobState::kSucceeded, "exited with code 0", now, out, end);
  } else {
    Transition(a, JobState::kFailed, how + (o.message.empty() ? "" : " (" + o.message + ")"), now,
               out, end);
  }
  ReleaseAttempt(a, ended, out);
}

void Reconciler::HandleCancels(UnixSeconds now, std::vector<JobUpdate>* out) {
  std::set<std::string> ids;
  {
    std::lock_guard<std::mutex> l(inbox_mu_);
    ids.swap(cancels_);
  }
  // Every job with cancel_requested is watched (it is never Quiet).
  for (auto it = watch_.begin(); it != watch_.end();) {
    if (Quiet(*it->second)) {
      it = watch_.erase(it);
      continue;
    }
    if (it->second->row.cancel_requested) ids.insert(it->first);
    ++it;
  }
  for (const std::string& id : ids) {
    auto it = active_.find(id);
    if (it == active_.end()) continue;
    Active& a = *it->second;
    a.row.cancel_requested = true;
    Watch(a);
    if (a.done || a.stop_kind == StopKind::kCancel) continue;
    // A launch or stop on its way: its answer is applied first, and the
    // cancel (kept in cancel_requested) acts on what it leaves.
    if (a.pending != PendingCall::kNone) continue;
    if (a.row.state == JobState::kQueued || a.row.state == JobState::kScheduled ||
        a.row.handle.empty()) {
      JobUpdate u;
      u.ended_at = now;
      Transition(a, JobState::kCancelled, "cancelled before it ran", now, out, u);
      ReleaseAttempt(a, now, out);
      continue;
    }
    const int64_t grace = GraceOf(a);
    a.stop_kind = StopKind::kCancel;
    a.stop_retry.reset();
    // A failure is noted and retried (StopAnswered, KeepReplicaSets).
    StopAttempt(a, "cancel: SIGTERM sent, SIGKILL after " + std::to_string(grace) + "s", now, out);
  }
}

Status Reconciler::Flush(std::vector<JobUpdate>* updates) {
  if (updates->empty()) return Status::Ok();
  auto r = store_->Apply(*updates);
  for (size_t i = 0; i < updates->size(); ++i) {
    const JobUpdate& u = (*updates)[i];
    if (!u.state || (r.ok() && (*r)[i])) continue;
    // This view is ahead of (or apart from) the store: read the job again.
    if (r.ok()) {
      std::cerr << "meridian serve: " << u.job_id << ": the store did not take the change to "
                << JobStateName(*u.state) << " (it holds another state); reading the job again\n";
    }
    resync_.insert(u.job_id);
  }
  updates->clear();
  return r.ok() ? Status::Ok() : r.status();
}

Status Reconciler::RunCycle() {
  const auto t0 = std::chrono::steady_clock::now();
  // Asked before the state is locked: an engine slow to answer (a hung
  // kubectl, a slurmctld that does not answer) holds this thread only, not
  // the API's plans and explanations. Only this thread calls the backend.
  const std::vector<BackendNode> offered = backend_->Nodes();
  const std::vector<RunObservation> observed = backend_->Poll();
  std::unique_lock<std::mutex> l(mu_);
  const UnixSeconds now = Now();
  std::vector<JobUpdate> out;
  MERIDIAN_RETURN_IF_ERROR(LoadNewJobs());
  MERIDIAN_RETURN_IF_ERROR(Resync(now, &out));
  MERIDIAN_RETURN_IF_ERROR(RefreshFleet(now, offered, &out));
  for (const RunObservation& o : observed) {
    if (!HandleReplicaObservation(o, now, &out)) HandleObservation(o, now, &out);
  }
  HandleCancels(now, &out);
  RetryBackendCalls(now, &out);
  KeepReplicaSets(now, &out);
  Status st = Schedule(now, &out);
  // Running jobs are asked to move once the queue has had what freed.
  ReconsiderRunning(now, &out);
  AskOnFreedGpus(now, &out);
  AskAtCarbonHour(now, &out);
  Status fl = Flush(&out);  // "scheduled" is durable before the launch
  EraseDone();
  Status calls = CallBackend(l);
  metrics_->cycle_seconds.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  MERIDIAN_RETURN_IF_ERROR(st);
  MERIDIAN_RETURN_IF_ERROR(fl);
  return calls;
}

}  // namespace meridian::control
