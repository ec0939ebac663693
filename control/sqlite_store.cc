// SQLite implementation of Store: WAL mode, one write connection owned by a
// group-commit writer thread, a pool of read connections.
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "control/group_commit.h"
#include "control/schema.h"
#include "control/sqlite.h"
#include "control/sqlite_retention.h"
#include "control/sqlite_totals.h"
#include "control/sqlite_utilization.h"
#include "control/store.h"

namespace meridian::control {

namespace {

constexpr const char* kJobCols =
    "seq,id,tenant,name,kind,priority,state,submitted_at,started_at,ended_at,attempts,exit_code,"
    "node,gpus,mig,region,pricing,reason,spec,handle,allocation,cancel_requested,cost_micro_usd,"
    "co2_mg";

// A state the store does not know (a database edited by hand, or written by a
// newer daemon) is an error for the caller, not a guess.
Result<JobRow> ReadJob(const Stmt& s) {
  JobRow j;
  j.seq = s.Int(0);
  j.id = s.Text(1);
  j.tenant = s.Text(2);
  j.name = s.Text(3);
  j.kind = s.Text(4);
  j.priority = s.Text(5);
  auto state = ParseStoredJobState(s.Text(6), j.id);
  if (!state.ok()) return state.status();
  j.state = *state;
  j.submitted_at = s.Int(7);
  j.started_at = s.OptInt(8);
  j.ended_at = s.OptInt(9);
  j.attempts = static_cast<int>(s.Int(10));
  j.exit_code = s.OptInt(11);
  j.placement.node = s.Text(12);
  j.placement.gpus = ParseStoredGpuList(s.Text(13));
  j.placement.mig = s.Text(14);
  j.placement.region = s.Text(15);
  j.placement.pricing = s.Text(16);
  j.reason = s.Text(17);
  j.spec_json = s.Text(18);
  j.handle = s.Text(19);
  j.allocation_json = s.Text(20);
  j.cancel_requested = s.Int(21) != 0;
  j.cost_micro_usd = s.Int(22);
  j.co2_mg = s.Int(23);
  return j;
}

// Columns: tenant, admin, created_at, expires_at, revoked_at, id, node.
TokenRow ReadToken(const Stmt& s) {
  return TokenRow{s.Text(0), s.Int(1) != 0, s.Int(2), s.OptInt(3), s.OptInt(4), s.Text(5),
                  s.Text(6)};
}

// Adds the id and node columns to a tokens table made before they existed.
Status AddTokenColumns(Db& db) {
  auto s = db.Prepare("SELECT COUNT(*) FROM pragma_table_info('tokens') WHERE name='id'");
  if (!s.ok()) return s.status();
  auto r = (*s)->Step();
  if (!r.ok()) return r.status();
  const bool has_id = (*s)->Int(0) > 0;
  (*s)->Reset();
  if (has_id) return Status::Ok();
  return db.Exec(
      "ALTER TABLE tokens ADD COLUMN id TEXT; "
      "ALTER TABLE tokens ADD COLUMN node TEXT NOT NULL DEFAULT ''");
}

Result<std::vector<JobRow>> ReadJobs(Stmt* s) {
  std::vector<JobRow> out;
  for (;;) {
    auto r = s->Step();
    if (!r.ok()) return r.status();
    if (!*r) return out;
    auto job = ReadJob(*s);
    if (!job.ok()) return job.status();
    out.push_back(std::move(job).value());
  }
}

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(SqliteOptions o) : options_(std::move(o)) {}

  Status Init() {
    DbOptions wo;
    wo.synchronous = options_.synchronous;
    auto w = Db::Open(options_.path, wo);
    if (!w.ok()) return w.status();
    write_ = std::move(w).value();
    MERIDIAN_RETURN_IF_ERROR(write_->Exec(kSchemaSql));
    MERIDIAN_RETURN_IF_ERROR(AddTokenColumns(*write_));
    MERIDIAN_RETURN_IF_ERROR(write_->Exec(kTokenIdsSql));
    MERIDIAN_RETURN_IF_ERROR(MigrateForRetention(*write_));
    auto s = write_->Prepare("SELECT COALESCE(MAX(seq),0) FROM jobs");
    if (!s.ok()) return s.status();
    auto row = (*s)->Step();
    if (!row.ok()) return row.status();
    auto deleted = DeletedMaxSeq(*write_);
    if (!deleted.ok()) return deleted.status();
    next_seq_ = std::max((*s)->Int(0), *deleted) + 1;
    write_->ResetAll();
    for (int i = 0; i < std::max(1, options_.readers); ++i) {
      auto r = Db::Open(options_.path, DbOptions{});
      if (!r.ok()) return r.status();
      readers_.Add(std::move(r).value());
    }
    writes_ = std::make_unique<GroupCommit<Db>>(
        options_.group_commit, options_.max_batch,
        [this](const std::vector<WriteFn*>& batch) { return RunBatch(batch); });
    return Status::Ok();
  }

  Result<SubmitResult> Submit(const NewJob& job) override {
    SubmitResult result;
    Status st = Write([&](Db& db) -> Status {
      if (!job.idempotency_key.empty()) {
        auto key = LiveKey(db, job.tenant, job.idempotency_key,
                           job.submitted_at - kIdempotencyKeyTtlS);
        if (!key.ok()) return key.status();
        if (*key) {
          result.job_id = (*key)->job_id;
          result.outcome = (*key)->body_hash == job.body_hash ? SubmitOutcome::kReplayed
                                                              : SubmitOutcome::kConflict;
          return Status::Ok();
        }
      }
      const int64_t seq = next_seq_++;
      result.job_id = JobIdFor(seq);
      result.outcome = SubmitOutcome::kCreated;
      auto t = db.Prepare("INSERT OR IGNORE INTO tenants(name, created_at) VALUES(?,?)");
      if (!t.ok()) return t.status();
      MERIDIAN_RETURN_IF_ERROR((*t)->Bind(1, job.tenant).Bind(2, job.submitted_at).Run());
      auto ins = db.Prepare(
          "INSERT INTO jobs(seq,id,tenant,name,kind,priority,state,submitted_at,spec) "
          "VALUES(?,?,?,?,?,?,'queued',?,?)");
      if (!ins.ok()) return ins.status();
      (*ins)->Bind(1, seq).Bind(2, result.job_id).Bind(3, job.tenant).Bind(4, job.name);
      (*ins)->Bind(5, job.kind).Bind(6, job.priority).Bind(7, job.submitted_at);
      MERIDIAN_RETURN_IF_ERROR((*ins)->Bind(8, job.spec_json).Run());
      auto ev = db.Prepare(
          "INSERT INTO events(job_id,seq,at,type,from_state,to_state,message) "
          "VALUES(?,1,?,'state','','queued','submitted')");
      if (!ev.ok()) return ev.status();
      MERIDIAN_RETURN_IF_ERROR((*ev)->Bind(1, result.job_id).Bind(2, job.submitted_at).Run());
      if (!job.idempotency_key.empty()) {
        auto k = db.Prepare(
            "INSERT INTO idempotency(tenant,key,body_hash,job_id,created_at) VALUES(?,?,?,?,?)");
        if (!k.ok()) return k.status();
        (*k)->Bind(1, job.tenant).Bind(2, job.idempotency_key).Bind(3, job.body_hash);
        MERIDIAN_RETURN_IF_ERROR((*k)->Bind(4, result.job_id).Bind(5, job.submitted_at).Run());
      }
      return Status::Ok();
    });
    if (!st.ok()) return st;
    if (result.outcome == SubmitOutcome::kCreated) changes_.Add({result.job_id});
    return result;
  }

  Result<JobRow> GetJob(const std::string& id) override {
    auto lease = Lease();
    auto s = lease->Prepare(std::string("SELECT ") + kJobCols + " FROM jobs WHERE id=?");
    if (!s.ok()) return s.status();
    (*s)->Bind(1, id);
    auto rows = ReadJobs(*s);
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status::NotFound("job " + id + " not found");
    return std::move((*rows)[0]);
  }

  Result<std::vector<JobRow>> ListJobs(const ListFilter& f) override {
    auto lease = Lease();
    std::string sql = std::string("SELECT ") + kJobCols + " FROM jobs WHERE seq " +
                      (f.newest_first ? "< ?1" : "> ?1");
    if (!f.tenant.empty()) sql += " AND tenant = ?2";
    if (f.state) sql += " AND state = ?3";
    if (!f.kind.empty()) sql += " AND kind = ?4";
    sql += f.newest_first ? " ORDER BY seq DESC LIMIT ?5" : " ORDER BY seq LIMIT ?5";
    auto s = lease->Prepare(sql);
    if (!s.ok()) return s.status();
    const bool from_newest = f.newest_first && f.after_seq == 0;
    (*s)->Bind(1, from_newest ? std::numeric_limits<int64_t>::max() : f.after_seq);
    if (!f.tenant.empty()) (*s)->Bind(2, f.tenant);
    if (f.state) (*s)->Bind(3, JobStateName(*f.state));
    if (!f.kind.empty()) (*s)->Bind(4, f.kind);
    (*s)->Bind(5, static_cast<int64_t>(f.limit));
    return ReadJobs(*s);
  }

  Result<std::vector<JobRow>> ActiveJobs() override {
    auto lease = Lease();
    auto s = lease->Prepare(std::string("SELECT ") + kJobCols +
                            " FROM jobs WHERE state NOT IN ('succeeded','failed','cancelled') "
                            "ORDER BY seq");
    if (!s.ok()) return s.status();
    return ReadJobs(*s);
  }

  Result<std::vector<EventRow>> Events(const std::string& job_id) override {
    auto lease = Lease();
    auto s = lease->Prepare(
        "SELECT seq,at,type,from_state,to_state,message FROM events WHERE job_id=? ORDER BY seq");
    if (!s.ok()) return s.status();
    (*s)->Bind(1, job_id);
    std::vector<EventRow> out;
    for (;;) {
      auto r = (*s)->Step();
      if (!r.ok()) return r.status();
      if (!*r) return out;
      out.push_back({(*s)->Int(0), (*s)->Int(1), (*s)->Text(2), (*s)->Text(3), (*s)->Text(4),
                     (*s)->Text(5)});
    }
  }

  Result<std::vector<std::pair<JobState, int64_t>>> CountByState() override {
    auto lease = Lease();
    // MIN(id): a job to name if the state does not parse.
    auto s = lease->Prepare("SELECT state, COUNT(*), MIN(id) FROM jobs GROUP BY state");
    if (!s.ok()) return s.status();
    std::vector<std::pair<JobState, int64_t>> out;
    for (;;) {
      auto r = (*s)->Step();
      if (!r.ok()) return r.status();
      if (!*r) return out;
      auto state = ParseStoredJobState((*s)->Text(0), (*s)->Text(2));
      if (!state.ok()) return state.status();
      out.emplace_back(*state, (*s)->Int(1));
    }
  }

  Result<std::vector<QueueCount>> QueueDepth() override {
    auto lease = Lease();
    auto s = lease->Prepare(
        "SELECT priority, tenant, COUNT(*) FROM jobs WHERE state='queued' GROUP BY priority, "
        "tenant ORDER BY priority, tenant");
    if (!s.ok()) return s.status();
    std::vector<QueueCount> out;
    for (;;) {
      auto r = (*s)->Step();
      if (!r.ok()) return r.status();
      if (!*r) return out;
      out.push_back({(*s)->Text(0), (*s)->Text(1), (*s)->Int(2)});
    }
  }

  Result<std::vector<bool>> Apply(const std::vector<JobUpdate>& updates) override {
    std::vector<bool> applied(updates.size(), false);
    Status st = Write([&](Db& db) -> Status {
      for (size_t i = 0; i < updates.size(); ++i) {
        auto r = ApplyOne(db, updates[i]);
        if (!r.ok()) return r.status();
        applied[i] = *r;
      }
      return Status::Ok();
    });
    if (!st.ok()) return st;
    std::vector<std::string> marked;
    for (size_t i = 0; i < updates.size(); ++i) {
      if (applied[i] && (updates[i].state || updates[i].cancel_requested)) {
        marked.push_back(updates[i].job_id);
      }
    }
    changes_.Add(marked);
    return applied;
  }

  Result<std::string> CreateToken(const NewToken& token) override {
    std::string id;
    Status st = Write([&](Db& db) -> Status {
      auto t = db.Prepare("INSERT OR IGNORE INTO tenants(name, created_at) VALUES(?,?)");
      if (!t.ok()) return t.status();
      MERIDIAN_RETURN_IF_ERROR((*t)->Bind(1, token.tenant).Bind(2, token.created_at).Run());
      auto s = db.Prepare(
          "INSERT INTO tokens(hash,tenant,admin,created_at,expires_at,id,node) "
          "VALUES(?,?,?,?,?,'tok_' || lower(hex(randomblob(8))),?) RETURNING id");
      if (!s.ok()) return s.status();
      (*s)->Bind(1, token.hash).Bind(2, token.tenant).Bind(3, int64_t{token.admin ? 1 : 0});
      (*s)->Bind(4, token.created_at).Bind(5, token.expires_at).Bind(6, token.node);
      auto r = (*s)->Step();
      if (!r.ok()) return r.status();
      id = (*s)->Text(0);
      (*s)->Reset();
      return Status::Ok();
    });
    if (!st.ok()) return st;
    return id;
  }

  Result<std::optional<TokenRow>> LookupToken(const std::string& hash) override {
    auto lease = Lease();
    auto s = lease->Prepare(
        "SELECT tenant,admin,created_at,expires_at,revoked_at,id,node FROM tokens WHERE hash=?");
    if (!s.ok()) return s.status();
    (*s)->Bind(1, hash);
    auto r = (*s)->Step();
    if (!r.ok()) return r.status();
    if (!*r) return std::optional<TokenRow>();
    TokenRow t = ReadToken(**s);
    (*s)->Reset();
    return std::optional<TokenRow>(t);
  }

  Result<std::vector<TokenRow>> Tokens() override {
    auto lease = Lease();
    auto s = lease->Prepare(
        "SELECT tenant,admin,created_at,expires_at,revoked_at,id,node FROM tokens "
        "ORDER BY created_at, rowid");
    if (!s.ok()) return s.status();
    std::vector<TokenRow> out;
    for (;;) {
      auto r = (*s)->Step();
      if (!r.ok()) return r.status();
      if (!*r) return out;
      out.push_back(ReadToken(**s));
    }
  }

  Status RevokeToken(const std::string& hash, UnixSeconds now) override {
    return Revoke("hash", hash, now);
  }

  Status RevokeTokenById(const std::string& id, UnixSeconds now) override {
    return Revoke("id", id, now);
  }

  Result<std::vector<std::string>> Tenants() override {
    auto lease = Lease();
    auto s = lease->Prepare("SELECT name FROM tenants WHERE name <> ? ORDER BY name");
    if (!s.ok()) return s.status();
    (*s)->Bind(1, std::string_view(kNodeTokenTenant));
    std::vector<std::string> out;
    for (;;) {
      auto r = (*s)->Step();
      if (!r.ok()) return r.status();
      if (!*r) return out;
      out.push_back((*s)->Text(0));
    }
  }

  Status UpsertNode(const NodeRow& n) override {
    return Write([&](Db& db) -> Status {
      auto s = db.Prepare(
          "INSERT INTO nodes(name,gpu_model,gpus,vcpus,ram_gib,state,last_heartbeat,registered) "
          "VALUES(?,?,?,?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET gpu_model=excluded.gpu_model,"
          "gpus=excluded.gpus,vcpus=excluded.vcpus,ram_gib=excluded.ram_gib,state=excluded.state,"
          "last_heartbeat=excluded.last_heartbeat,registered=excluded.registered");
      if (!s.ok()) return s.status();
      (*s)->Bind(1, n.name).Bind(2, n.gpu_model).Bind(3, int64_t{n.gpus});
      (*s)->Bind(4, int64_t{n.vcpus});
      (*s)->Bind(6, NodeStateName(n.state)).Bind(7, n.last_heartbeat);
      (*s)->Bind(8, int64_t{n.registered ? 1 : 0});
      return BindDoubleAndRun(**s, 5, n.ram_gib);
    });
  }

  Status SetNodeState(const std::string& name, NodeState state) override {
    return UpdateNode("UPDATE nodes SET state=? WHERE name=?", std::string(NodeStateName(state)),
                      name);
  }

  Status Heartbeat(const std::string& name, UnixSeconds at) override {
    return UpdateNode(
        "UPDATE nodes SET last_heartbeat=?, state=CASE state WHEN 'down' THEN 'ready' ELSE state "
        "END WHERE name=?",
        std::to_string(at), name);
  }

  Result<std::vector<NodeRow>> Nodes() override {
    auto lease = Lease();
    auto s = lease->Prepare(
        "SELECT name,gpu_model,gpus,vcpus,ram_gib,state,last_heartbeat,registered FROM nodes "
        "ORDER BY name");
    if (!s.ok()) return s.status();
    std::vector<NodeRow> out;
    for (;;) {
      auto r = (*s)->Step();
      if (!r.ok()) return r.status();
      if (!*r) return out;
      NodeRow n;
      n.name = (*s)->Text(0);
      n.gpu_model = (*s)->Text(1);
      n.gpus = static_cast<int>((*s)->Int(2));
      n.vcpus = static_cast<int>((*s)->Int(3));
      n.ram_gib = (*s)->Double(4);
      const std::string state = (*s)->Text(5);
      auto parsed = ParseNodeState(state);
      if (!parsed) {
        return Status::Internal("node " + n.name + ": stored state \"" + state +
                                "\" is not a node state");
      }
      n.state = *parsed;
      n.last_heartbeat = (*s)->Int(6);
      n.registered = (*s)->Int(7) != 0;
      out.push_back(std::move(n));
    }
  }

  Status AppendUtilization(const std::vector<UtilizationRow>& rows, int keep_per_job) override {
    if (rows.empty()) return Status::Ok();
    return Write([&](Db& db) { return InsertUtilization(db, rows, keep_per_job); });
  }

  Result<std::vector<UtilizationRow>> Utilization(const std::string& job_id, int limit) override {
    auto lease = Lease();
    return ReadUtilization(*lease, job_id, limit);
  }

  Result<std::vector<ActiveMark>> ActiveMarks() override {
    auto lease = Lease();
    return SelectActiveMarks(*lease);
  }

  // From this store's change log: the jobs it made, or whose state or cancel
  // flag it changed, since `*cursor`; every unfinished job when the log
  // cannot say (the first read, or a cursor older than one already read
  // past).
  Result<std::vector<ActiveMark>> ChangedMarks(int64_t* cursor) override {
    std::vector<std::string> ids;
    int64_t upto = 0;
    if (!changes_.Since(*cursor, &ids, &upto)) {
      auto all = ActiveMarks();
      if (all.ok()) *cursor = upto;
      return all;
    }
    if (ids.empty()) {
      *cursor = upto;
      return std::vector<ActiveMark>{};
    }
    auto lease = Lease();
    auto marks = SelectMarksOf(*lease, nlohmann::json(ids).dump());
    if (marks.ok()) *cursor = upto;
    return marks;
  }

  // A SQLite file is served by one daemon: it always holds the lease, at
  // epoch 1, and has no other writer to fence off.
  Result<int64_t> TakeLease(const std::string&, int64_t) override { return 1; }
  Result<bool> RenewLease(const std::string&, int64_t epoch, int64_t) override { return epoch == 1; }
  void FenceWrites(int64_t) override {}

  Result<std::vector<JobTotal>> JobTotals(const std::string& tenant) override {
    auto lease = Lease();
    return SelectJobTotals(*lease, tenant);
  }

  Result<int64_t> Preemptions(const std::string& tenant) override {
    auto lease = Lease();
    return CountPreemptions(*lease, tenant);
  }

  Result<std::vector<JobRow>> EndedSince(const std::string& tenant, UnixSeconds since) override {
    auto lease = Lease();
    auto s = lease->Prepare(std::string("SELECT ") + kJobCols +
                            " FROM jobs WHERE ended_at >= ?1 AND state IN "
                            "('succeeded','failed','cancelled') AND (?2 = '' OR tenant = ?2) "
                            "ORDER BY seq");
    if (!s.ok()) return s.status();
    (*s)->Bind(1, since).Bind(2, tenant);
    return ReadJobs(*s);
  }

  Result<std::vector<FinishedJob>> FinishedBefore(UnixSeconds cutoff, int limit) override {
    auto lease = Lease();
    return SelectFinishedBefore(*lease, cutoff, limit);
  }

  Result<std::vector<std::string>> DeleteFinishedJobs(const std::vector<std::string>& ids,
                                                      UnixSeconds cutoff) override {
    return writes_->WriteValue([&](Db& db) { return DeleteFinished(db, ids, cutoff); });
  }

  Result<int64_t> DeleteExpiredKeys(UnixSeconds expired_at, int limit) override {
    return writes_->WriteValue([&](Db& db) { return DeleteKeysMadeBy(db, expired_at, limit); });
  }

 private:
  using WriteFn = GroupCommit<Db>::WriteFn;

  ReaderPool<Db>::Lease Lease() { return readers_.Take(); }

  static Status BindDoubleAndRun(Stmt& s, int i, double v);

  // Revokes the token whose `column` (hash or id) is `key`.
  Status Revoke(const std::string& column, const std::string& key, UnixSeconds now) {
    bool found = false;
    Status st = Write([&](Db& db) -> Status {
      auto s = db.Prepare("UPDATE tokens SET revoked_at=? WHERE " + column +
                          "=? AND revoked_at IS NULL");
      if (!s.ok()) return s.status();
      MERIDIAN_RETURN_IF_ERROR((*s)->Bind(1, now).Bind(2, key).Run());
      found = db.Changes() > 0;
      return Status::Ok();
    });
    if (!st.ok()) return st;
    return found ? Status::Ok() : Status::NotFound("no such token, or already revoked");
  }

  Status UpdateNode(const std::string& sql, const std::string& v, const std::string& name) {
    bool found = false;
    Status st = Write([&](Db& db) -> Status {
      auto s = db.Prepare(sql);
      if (!s.ok()) return s.status();
      MERIDIAN_RETURN_IF_ERROR((*s)->Bind(1, v).Bind(2, name).Run());
      found = db.Changes() > 0;
      return Status::Ok();
    });
    if (!st.ok()) return st;
    return found ? Status::Ok() : Status::NotFound("node \"" + name + "\" is not registered");
  }

  Result<bool> ApplyOne(Db& db, const JobUpdate& u) {
    auto g = db.Prepare(std::string("SELECT ") + kJobCols + " FROM jobs WHERE id=?");
    if (!g.ok()) return g.status();
    (*g)->Bind(1, u.job_id);
    auto rows = ReadJobs(*g);
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return false;
    JobRow j = std::move((*rows)[0]);
    if (u.expect_state && j.state != *u.expect_state) return false;
    const JobState from = j.state;
    j = WithUpdate(std::move(j), u);
    auto w = db.Prepare(
        "UPDATE jobs SET state=?2,started_at=?3,ended_at=?4,attempts=?5,exit_code=?6,node=?7,"
        "gpus=?8,mig=?9,region=?10,pricing=?11,reason=?12,handle=?13,allocation=?14,"
        "cancel_requested=?15,cost_micro_usd=?16,co2_mg=?17 WHERE id=?1");
    if (!w.ok()) return w.status();
    Stmt& s = **w;
    s.Bind(1, j.id).Bind(2, JobStateName(j.state)).Bind(3, j.started_at).Bind(4, j.ended_at);
    s.Bind(5, int64_t{j.attempts}).Bind(6, j.exit_code).Bind(7, j.placement.node);
    s.Bind(8, StoredGpuList(j.placement.gpus)).Bind(9, j.placement.mig).Bind(10, j.placement.region);
    s.Bind(11, j.placement.pricing).Bind(12, j.reason).Bind(13, j.handle);
    s.Bind(14, j.allocation_json).Bind(15, int64_t{j.cancel_requested ? 1 : 0});
    s.Bind(16, j.cost_micro_usd).Bind(17, j.co2_mg);
    MERIDIAN_RETURN_IF_ERROR(s.Run());
    if (u.state || !u.message.empty()) {
      auto e = db.Prepare(
          "INSERT INTO events(job_id,seq,at,type,from_state,to_state,message) "
          "VALUES(?1,(SELECT COALESCE(MAX(seq),0)+1 FROM events WHERE job_id=?1),?2,?3,?4,?5,?6)");
      if (!e.ok()) return e.status();
      (*e)->Bind(1, j.id).Bind(2, u.at).Bind(3, std::string_view(u.state ? "state" : "note"));
      (*e)->Bind(4, u.state ? JobStateName(from) : "");
      (*e)->Bind(5, u.state ? JobStateName(*u.state) : "").Bind(6, u.message);
      MERIDIAN_RETURN_IF_ERROR((*e)->Run());
    }
    if (u.handle && u.placement && u.attempts) {
      auto a = db.Prepare(
          "INSERT OR REPLACE INTO attempts(job_id,attempt,node,handle,started_at) "
          "VALUES(?,?,?,?,?)");
      if (!a.ok()) return a.status();
      (*a)->Bind(1, j.id).Bind(2, int64_t{*u.attempts}).Bind(3, u.placement->node);
      MERIDIAN_RETURN_IF_ERROR((*a)->Bind(4, *u.handle).Bind(5, u.at).Run());
    } else if (u.ended_at && j.attempts > 0) {
      auto a = db.Prepare("UPDATE attempts SET ended_at=?, exit_code=? WHERE job_id=? AND attempt=?");
      if (!a.ok()) return a.status();
      (*a)->Bind(1, *u.ended_at).Bind(2, u.exit_code).Bind(3, j.id);
      MERIDIAN_RETURN_IF_ERROR((*a)->Bind(4, int64_t{j.attempts}).Run());
    }
    return true;
  }

  // Runs `fn` in a committed transaction (group commit unless the options
  // ask for the baseline).
  Status Write(WriteFn fn) { return writes_->Write(std::move(fn)); }

  // One transaction for the batch, rolled back when a write fails.
  Status RunBatch(const std::vector<WriteFn*>& batch) {
    Status st = RunBatchOnce(batch);
    write_->ResetAll();  // no statement keeps a stale snapshot between batches
    return st;
  }

  Status RunBatchOnce(const std::vector<WriteFn*>& batch) {
    const int64_t seq_before = next_seq_;
    MERIDIAN_RETURN_IF_ERROR(write_->Exec("BEGIN IMMEDIATE"));
    for (WriteFn* fn : batch) {
      Status st = (*fn)(*write_);
      if (!st.ok()) {
        (void)write_->Exec("ROLLBACK");
        next_seq_ = seq_before;
        return st;
      }
    }
    Status c = write_->Exec("COMMIT");
    if (!c.ok()) {
      (void)write_->Exec("ROLLBACK");
      next_seq_ = seq_before;
    }
    return c;
  }

  // The jobs this store made, or whose state or cancel flag it changed, by
  // change number, for ChangedMarks. A SQLite file is written by one daemon
  // (its seqs come from next_seq_, in this process too), so this process's
  // writes are every change the file sees. A change is logged once its
  // transaction has committed, so a read that starts after the log says
  // "changed" finds the row changed; one that commits between a read's look
  // at the log and its read of the rows is logged past that read's cursor.
  class ChangeLog {
   public:
    void Add(const std::vector<std::string>& ids) {
      if (ids.empty()) return;
      std::lock_guard<std::mutex> l(mu_);
      for (const std::string& id : ids) ids_.emplace(++last_, id);
      if (ids_.size() > kMaxLogged) {  // no one reads them: the next read reads every job
        ids_.clear();
        complete_from_ = last_;
      }
    }
    // The ids changed after `cursor` (each once), and in `*upto` the cursor
    // that follows them. False when the log cannot say (cursor 0, a cursor
    // older than one already read past, or changes dropped): `*upto` is still
    // set, for the read of every job. A cursor past the last change is
    // another store's.
    bool Since(int64_t cursor, std::vector<std::string>* ids, int64_t* upto) {
      std::lock_guard<std::mutex> l(mu_);
      *upto = last_;
      if (cursor <= 0 || cursor < read_ || cursor < complete_from_ || cursor > last_) {
        ids_.clear();  // the read of every job takes them all in
        complete_from_ = read_ = last_;
        return false;
      }
      read_ = cursor;
      ids_.erase(ids_.begin(), ids_.upper_bound(cursor));  // taken in by that read
      std::set<std::string> unique;
      for (const auto& [n, id] : ids_) {
        if (unique.insert(id).second) ids->push_back(id);
      }
      return true;
    }

   private:
    static constexpr size_t kMaxLogged = 1'000'000;
    std::mutex mu_;
    int64_t last_ = 1;            // the last change's number; cursors are at least 1
    int64_t read_ = 0;            // the newest cursor a read started from
    int64_t complete_from_ = 0;   // every change after this one is in ids_
    std::multimap<int64_t, std::string> ids_;
  };

  SqliteOptions options_;
  ChangeLog changes_;
  std::unique_ptr<Db> write_;
  int64_t next_seq_ = 1;  // only in RunBatchOnce: one batch at a time
  std::unique_ptr<GroupCommit<Db>> writes_;  // after write_: stopped before it closes
  // A returned reader ends its read transaction: the next lease sees new commits.
  ReaderPool<Db> readers_{[](Db& db) { db.ResetAll(); }};
};

Status SqliteStore::BindDoubleAndRun(Stmt& s, int i, double v) {
  s.BindDouble(i, v);
  return s.Run();
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options) {
  if (options.synchronous != "FULL" && options.synchronous != "NORMAL") {
    return Status::Invalid("synchronous: \"" + options.synchronous + "\" must be FULL or NORMAL");
  }
  auto s = std::make_unique<SqliteStore>(options);
  MERIDIAN_RETURN_IF_ERROR(s->Init());
  return std::unique_ptr<Store>(std::move(s));
}

}  // namespace meridian::control
