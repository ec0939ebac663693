// PostgreSQL implementation of Store: one write connection owned by a
// group-commit writer thread (as SqliteStore's), a pool of read connections,
// the schema applied as numbered migrations at open (pg_schema.h). A fenced
// store checks the lease's epoch once per group-committed transaction.
#include <atomic>
#include <limits>

#include "control/backend.h"
#include "control/group_commit.h"
#include "control/pg.h"
#include "control/pg_lease.h"
#include "control/pg_statements.h"
#include "control/store.h"
#include "control/token.h"

namespace meridian::control {

namespace {

// Store::HoldLaunches on PostgreSQL: the transaction ends with the hold.
class PgLaunchHold final : public Store::LaunchHold {
 public:
  explicit PgLaunchHold(ReaderPool<PgConn>::Lease conn) : conn_(std::move(conn)) {}
  ~PgLaunchHold() override { (void)conn_->Exec("COMMIT"); }

 private:
  ReaderPool<PgConn>::Lease conn_;
};

class PgStore final : public Store {
 public:
  explicit PgStore(PostgresOptions o) : options_(std::move(o)) {}

  Status Init() {
    auto w = PgConn::Open(options_.uri);
    if (!w.ok()) return w.status();
    write_ = std::move(w).value();
    MERIDIAN_RETURN_IF_ERROR(MigratePg(*write_));
    for (int i = 0; i < std::max(1, options_.readers); ++i) {
      auto r = PgConn::Open(options_.uri);
      if (!r.ok()) return r.status();
      readers_.Add(std::move(r).value());
    }
    writes_ = std::make_unique<GroupCommit<PgConn>>(
        options_.group_commit, options_.max_batch,
        [this](const std::vector<WriteFn*>& batch) { return RunBatch(batch); });
    return Status::Ok();
  }

  Result<SubmitResult> Submit(const NewJob& job) override {
    if (!options_.pipeline) {
      return writes_->WriteValue([&](PgConn& db) { return SubmitPg(db, job); });
    }
    std::optional<Result<SubmitResult>> out;  // set again if the batch runs write by write
    Status st = Write([&](PgConn& db) { return SendPgSubmit(db, job, &out); });
    if (!st.ok()) return st;
    if (!out) return Status::Internal("a committed submission left no answer");
    return std::move(*out);
  }

  Result<JobRow> GetJob(const std::string& id) override {
    auto rows = Jobs(std::string("SELECT ") + kPgJobCols + " FROM jobs WHERE id=$1", {Param(id)});
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status::NotFound("job " + id + " not found");
    return std::move((*rows)[0]);
  }

  Result<std::vector<JobRow>> ListJobs(const ListFilter& f) override {
    const bool from_newest = f.newest_first && f.after_seq == 0;
    std::vector<PgParam> params{
        Param(from_newest ? std::numeric_limits<int64_t>::max() : f.after_seq)};
    std::string sql = std::string("SELECT ") + kPgJobCols + " FROM jobs WHERE seq " +
                      (f.newest_first ? "< $1" : "> $1");
    auto also = [&](const std::string& column, PgParam v) {
      params.push_back(std::move(v));
      sql += " AND " + column + " = $" + std::to_string(params.size());
    };
    if (!f.tenant.empty()) also("tenant", Param(f.tenant));
    if (f.state) also("state", Param(JobStateName(*f.state)));
    if (!f.kind.empty()) also("kind", Param(f.kind));
    params.push_back(Param(f.limit));
    sql += std::string(f.newest_first ? " ORDER BY seq DESC" : " ORDER BY seq") + " LIMIT $" +
           std::to_string(params.size());
    return Jobs(sql, params, PgPlan::kEachCall);  // a range of seq: planned with it
  }

  Result<std::vector<JobRow>> ActiveJobs() override {
    return Jobs(std::string("SELECT ") + kPgJobCols +
                    " FROM jobs WHERE state NOT IN ('succeeded','failed','cancelled') ORDER BY seq",
                {});
  }

  Result<std::vector<EventRow>> Events(const std::string& job_id) override {
    auto lease = Lease();
    auto r = lease->Query(
        "SELECT seq,at,type,from_state,to_state,message FROM events WHERE job_id=$1 ORDER BY seq",
        {Param(job_id)});
    if (!r.ok()) return r.status();
    std::vector<EventRow> out;
    for (int i = 0; i < r->size(); ++i) {
      out.push_back({r->Int(i, 0), r->Int(i, 1), r->Text(i, 2), r->Text(i, 3), r->Text(i, 4),
                     r->Text(i, 5)});
    }
    return out;
  }

  Result<std::vector<std::pair<JobState, int64_t>>> CountByState() override {
    auto lease = Lease();
    // MIN(id): a job to name if the state does not parse.
    auto r = lease->Query("SELECT state, COUNT(*), MIN(id) FROM jobs GROUP BY state");
    if (!r.ok()) return r.status();
    std::vector<std::pair<JobState, int64_t>> out;
    for (int i = 0; i < r->size(); ++i) {
      auto state = ParseStoredJobState(r->Text(i, 0), r->Text(i, 2));
      if (!state.ok()) return state.status();
      out.emplace_back(*state, r->Int(i, 1));
    }
    return out;
  }

  Result<std::vector<QueueCount>> QueueDepth() override {
    auto lease = Lease();
    auto r = lease->Query(
        "SELECT priority, tenant, COUNT(*) FROM jobs WHERE state='queued' GROUP BY priority, "
        "tenant ORDER BY priority, tenant");
    if (!r.ok()) return r.status();
    std::vector<QueueCount> out;
    for (int i = 0; i < r->size(); ++i) out.push_back({r->Text(i, 0), r->Text(i, 1), r->Int(i, 2)});
    return out;
  }

  Result<std::vector<bool>> Apply(const std::vector<JobUpdate>& updates) override {
    if (options_.pipeline) {
      return writes_->WriteValue([&](PgConn& db) { return ApplyPgBatch(db, updates, true); });
    }
    std::vector<bool> applied(updates.size(), false);
    Status st = Write([&](PgConn& db) -> Status {
      for (size_t i = 0; i < updates.size(); ++i) {
        auto r = ApplyPg(db, updates[i]);
        if (!r.ok()) return r.status();
        applied[i] = *r;
      }
      return Status::Ok();
    });
    if (!st.ok()) return st;
    return applied;
  }

  Result<std::string> CreateToken(const NewToken& token) override {
    // 8 random bytes as hex, from the same source as the tokens themselves.
    auto random = GenerateToken();
    if (!random.ok()) return random.status();
    const std::string id = "tok_" + random->substr(4, 16);
    Status st = Write([&](PgConn& db) -> Status {
      auto t = db.Query("INSERT INTO tenants(name, created_at) VALUES($1,$2) ON CONFLICT DO NOTHING",
                        {Param(token.tenant), Param(token.created_at)});
      if (!t.ok()) return t.status();
      auto s = db.Query(
          "INSERT INTO tokens(hash,tenant,admin,created_at,expires_at,id,node) "
          "VALUES($1,$2,$3,$4,$5,$6,$7)",
          {Param(token.hash), Param(token.tenant), Param(token.admin), Param(token.created_at),
           Param(token.expires_at), Param(id), Param(token.node)});
      return s.ok() ? Status::Ok() : s.status();
    });
    if (!st.ok()) return st;
    return id;
  }

  Result<std::optional<TokenRow>> LookupToken(const std::string& hash) override {
    auto rows = SelectTokens("WHERE hash=$1", {Param(hash)});
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return std::optional<TokenRow>();
    return std::optional<TokenRow>((*rows)[0]);
  }

  Result<std::vector<TokenRow>> Tokens() override { return SelectTokens("ORDER BY created_at, n", {}); }

  Status RevokeToken(const std::string& hash, UnixSeconds now) override {
    return Revoke("UPDATE tokens SET revoked_at=$1 WHERE hash=$2 AND revoked_at IS NULL", hash, now);
  }

  Status RevokeTokenById(const std::string& id, UnixSeconds now) override {
    return Revoke("UPDATE tokens SET revoked_at=$1 WHERE id=$2 AND revoked_at IS NULL", id, now);
  }

  Result<std::vector<std::string>> Tenants() override {
    auto lease = Lease();
    auto r = lease->Query("SELECT name FROM tenants WHERE name <> $1 ORDER BY name",
                          {Param(kNodeTokenTenant)});
    if (!r.ok()) return r.status();
    std::vector<std::string> out;
    for (int i = 0; i < r->size(); ++i) out.push_back(r->Text(i, 0));
    return out;
  }

  Status UpsertNode(const NodeRow& n) override {
    return Write([&](PgConn& db) -> Status {
      auto r = db.Query(
          "INSERT INTO nodes(name,gpu_model,gpus,vcpus,ram_gib,state,last_heartbeat,registered) "
          "VALUES($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT(name) DO UPDATE SET "
          "gpu_model=excluded.gpu_model,gpus=excluded.gpus,vcpus=excluded.vcpus,"
          "ram_gib=excluded.ram_gib,state=excluded.state,last_heartbeat=excluded.last_heartbeat,"
          "registered=excluded.registered",
          {Param(n.name), Param(n.gpu_model), Param(n.gpus), Param(n.vcpus), Param(n.ram_gib),
           Param(NodeStateName(n.state)), Param(n.last_heartbeat), Param(n.registered)});
      return r.ok() ? Status::Ok() : r.status();
    });
  }

  Status SetNodeState(const std::string& name, NodeState state) override {
    return UpdateNode("UPDATE nodes SET state=$1 WHERE name=$2", Param(NodeStateName(state)), name);
  }

  Status Heartbeat(const std::string& name, UnixSeconds at) override {
    return UpdateNode(
        "UPDATE nodes SET last_heartbeat=$1, state=CASE state WHEN 'down' THEN 'ready' ELSE state "
        "END WHERE name=$2",
        Param(at), name);
  }

  Result<std::vector<NodeRow>> Nodes() override;

  Status AppendUtilization(const std::vector<UtilizationRow>& rows, int keep_per_job) override {
    if (rows.empty()) return Status::Ok();
    return Write([&](PgConn& db) { return InsertPgUtilization(db, rows, keep_per_job); });
  }

  Result<std::vector<UtilizationRow>> Utilization(const std::string& job_id, int limit) override {
    auto lease = Lease();
    return ReadPgUtilization(*lease, job_id, limit);
  }

  Result<std::vector<ActiveMark>> ActiveMarks() override {
    auto lease = Lease();
    return SelectPgActiveMarks(*lease);
  }

  Result<std::vector<ActiveMark>> ChangedMarks(int64_t* cursor) override {
    auto lease = Lease();
    return SelectPgChangedMarks(*lease, cursor);
  }

  // On a read connection, outside the writer's transactions: a renewal waits
  // only for a fenced transaction that holds the lease row to commit.
  Result<int64_t> TakeLease(const std::string& holder, int64_t lease_ms) override {
    auto lease = Lease();
    return TakePgLease(*lease, holder, lease_ms);
  }

  Result<bool> RenewLease(const std::string& holder, int64_t epoch, int64_t lease_ms) override {
    auto lease = Lease();
    return RenewPgLease(*lease, holder, epoch, lease_ms);
  }

  void FenceWrites(int64_t epoch) override { fence_ = epoch; }

  // A read connection in a transaction that holds the lease row FOR SHARE
  // (CheckPgFence) until the hold ends: a takeover's UPDATE waits for it.
  Result<std::unique_ptr<LaunchHold>> HoldLaunches(int64_t epoch) override {
    auto lease = Lease();
    if (Status st = lease->Exec("BEGIN"); !st.ok()) return st;
    // Outside a pipeline the check runs at once: Deposed, or the database's
    // own error (which says nothing of the epoch).
    if (Status st = CheckPgFence(*lease, epoch); !st.ok()) {
      (void)lease->Exec("ROLLBACK");
      return st;
    }
    return std::unique_ptr<LaunchHold>(new PgLaunchHold(std::move(lease)));
  }

  Result<std::vector<JobTotal>> JobTotals(const std::string& tenant) override {
    auto lease = Lease();
    return SelectPgJobTotals(*lease, tenant);
  }

  Result<int64_t> Preemptions(const std::string& tenant) override {
    auto lease = Lease();
    return CountPgPreemptions(*lease, tenant);
  }

  Result<std::vector<JobRow>> EndedSince(const std::string& tenant, UnixSeconds since) override {
    return Jobs(std::string("SELECT ") + kPgJobCols +
                    " FROM jobs WHERE ended_at >= $1 AND state IN "
                    "('succeeded','failed','cancelled') AND ($2::text = '' OR tenant = $2) "
                    "ORDER BY seq",
                {Param(since), Param(tenant)}, PgPlan::kEachCall);
  }

  Result<std::vector<FinishedJob>> FinishedBefore(UnixSeconds cutoff, int limit) override {
    auto lease = Lease();
    return SelectPgFinishedBefore(*lease, cutoff, limit);
  }

  Result<std::vector<std::string>> DeleteFinishedJobs(const std::vector<std::string>& ids,
                                                      UnixSeconds cutoff) override {
    return writes_->WriteValue([&](PgConn& db) { return DeletePgFinished(db, ids, cutoff); });
  }

  Result<int64_t> DeleteExpiredKeys(UnixSeconds expired_at, int limit) override {
    return writes_->WriteValue([&](PgConn& db) { return DeletePgKeysMadeBy(db, expired_at, limit); });
  }

 private:
  using WriteFn = GroupCommit<PgConn>::WriteFn;

  ReaderPool<PgConn>::Lease Lease() { return readers_.Take(); }

  Result<std::vector<JobRow>> Jobs(const std::string& sql, const std::vector<PgParam>& params,
                                   PgPlan plan = PgPlan::kOnce) {
    auto lease = Lease();
    auto r = lease->Query(sql, params, plan);
    if (!r.ok()) return r.status();
    return ReadPgJobs(*r);
  }

  // Tokens as TokenRow, `tail` (WHERE ... / ORDER BY ...) choosing which.
  Result<std::vector<TokenRow>> SelectTokens(const std::string& tail,
                                             const std::vector<PgParam>& params) {
    auto lease = Lease();
    auto r = lease->Query(
        "SELECT tenant,admin,created_at,expires_at,revoked_at,id,node FROM tokens " + tail, params);
    if (!r.ok()) return r.status();
    std::vector<TokenRow> out;
    for (int i = 0; i < r->size(); ++i) {
      out.push_back(TokenRow{r->Text(i, 0), r->Bool(i, 1), r->Int(i, 2), r->OptInt(i, 3),
                             r->OptInt(i, 4), r->Text(i, 5), r->Text(i, 6)});
    }
    return out;
  }

  // Runs `sql` ($1 = now, $2 = key) and says whether it revoked a token.
  Status Revoke(const std::string& sql, const std::string& key, UnixSeconds now) {
    int64_t changed = 0;
    Status st = Write([&](PgConn& db) -> Status {
      auto r = db.Query(sql, {Param(now), Param(key)});
      if (!r.ok()) return r.status();
      changed = r->Changed();
      return Status::Ok();
    });
    if (!st.ok()) return st;
    return changed > 0 ? Status::Ok() : Status::NotFound("no such token, or already revoked");
  }

  Status UpdateNode(const std::string& sql, PgParam v, const std::string& name) {
    int64_t changed = 0;
    Status st = Write([&](PgConn& db) -> Status {
      auto r = db.Query(sql, {v, Param(name)});
      if (!r.ok()) return r.status();
      changed = r->Changed();
      return Status::Ok();
    });
    if (!st.ok()) return st;
    return changed > 0 ? Status::Ok() : Status::NotFound("node \"" + name + "\" is not registered");
  }

  // Runs `fn` in a committed transaction (group commit unless the options
  // ask for the baseline).
  Status Write(WriteFn fn) { return writes_->Write(std::move(fn)); }

  // One transaction for the batch, rolled back when a write fails. In a
  // pipeline, BEGIN, the fence, every write that sends its statements and
  // the COMMIT go in one round trip: the server refuses what must not
  // commit (a statement's error, the fence's epoch), and the first refusal
  // skips the rest of the pipeline, the COMMIT with it. A write that reads
  // before it writes (Apply) ends the pipeline with its read, and its writes
  // go with the COMMIT in the next.
  Status RunBatch(const std::vector<WriteFn*>& batch) {
    const bool preparing = write_->preparing();
    Status st = RunBatchOnce(batch);
    // The server lost the connection's prepared statements (a pooler in
    // transaction mode): rolled back, and run again unprepared, as is.
    if (!st.ok() && preparing && !write_->preparing()) st = RunBatchOnce(batch);
    return st;
  }

  Status RunBatchOnce(const std::vector<WriteFn*>& batch) {
    Status st = options_.pipeline ? write_->BeginPipeline() : Status::Ok();
    if (st.ok()) st = write_->Send("BEGIN", {}, nullptr);
    if (const int64_t epoch = fence_; st.ok() && epoch != 0) st = CheckPgFence(*write_, epoch);
    for (size_t i = 0; st.ok() && i < batch.size(); ++i) st = (*batch[i])(*write_);
    const bool pipelined = write_->pipelined();
    if (st.ok() && pipelined) st = write_->Send("COMMIT", {}, nullptr);
    if (st.ok()) st = write_->Sync();
    if (st.ok() && !pipelined) st = write_->Exec("COMMIT");
    if (!st.ok()) (void)write_->Exec("ROLLBACK");  // ends a pipeline left open
    return st;
  }

  PostgresOptions options_;
  std::unique_ptr<PgConn> write_;
  std::unique_ptr<GroupCommit<PgConn>> writes_;  // after write_: stopped before it closes
  ReaderPool<PgConn> readers_;
  std::atomic<int64_t> fence_{0};  // FenceWrites: the epoch every write checks (0: none)
};

Result<std::vector<NodeRow>> PgStore::Nodes() {
  auto lease = Lease();
  auto r = lease->Query(
      "SELECT name,gpu_model,gpus,vcpus,ram_gib,state,last_heartbeat,registered FROM nodes "
      "ORDER BY name");
  if (!r.ok()) return r.status();
  std::vector<NodeRow> out;
  for (int i = 0; i < r->size(); ++i) {
    NodeRow n;
    n.name = r->Text(i, 0);
    n.gpu_model = r->Text(i, 1);
    n.gpus = static_cast<int>(r->Int(i, 2));
    n.vcpus = static_cast<int>(r->Int(i, 3));
    n.ram_gib = r->Double(i, 4);
    const std::string state = r->Text(i, 5);
    auto parsed = ParseNodeState(state);
    if (!parsed) {
      return Status::Internal("node " + n.name + ": stored state \"" + state +
                              "\" is not a node state");
    }
    n.state = *parsed;
    n.last_heartbeat = r->Int(i, 6);
    n.registered = r->Bool(i, 7);
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options) {
  if (!IsPostgresUri(options.uri)) {
    return Status::Invalid("--db: \"" + RedactedUri(options.uri) +
                           "\" must start with postgresql:// or postgres://");
  }
  auto s = std::make_unique<PgStore>(options);
  MERIDIAN_RETURN_IF_ERROR(s->Init());
  return std::unique_ptr<Store>(std::move(s));
}

Result<std::unique_ptr<Store>> OpenStore(const SqliteOptions& options) {
  if (!IsPostgresUri(options.path)) return OpenSqliteStore(options);
  PostgresOptions po;
  po.uri = options.path;
  po.max_batch = options.max_batch;
  po.readers = options.readers;
  po.group_commit = options.group_commit;
  po.pipeline = options.pg_pipeline;
  return OpenPostgresStore(po);
}

}  // namespace meridian::control
