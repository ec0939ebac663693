#include "control/pg_statements.h"

#include <map>
#include <set>

#include "control/pg_schema.h"

namespace meridian::control {

const char* const kPgJobCols =
    "seq,id,tenant,name,kind,priority,state,submitted_at,started_at,ended_at,attempts,exit_code,"
    "node,gpus,mig,region,pricing,reason,spec,handle,allocation,cancel_requested,cost_micro_usd,"
    "co2_mg";

namespace {

constexpr const char* kFinished = "state IN ('succeeded','failed','cancelled')";
// Any fixed number: the advisory lock that migrating processes take turns on.
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(7250309)";

Result<JobRow> ReadPgJob(const PgRows& r, int i) {
  JobRow j;
  j.seq = r.Int(i, 0);
  j.id = r.Text(i, 1);
  j.tenant = r.Text(i, 2);
  j.name = r.Text(i, 3);
  j.kind = r.Text(i, 4);
  j.priority = r.Text(i, 5);
  auto state = ParseStoredJobState(r.Text(i, 6), j.id);
  if (!state.ok()) return state.status();
  j.state = *state;
  j.submitted_at = r.Int(i, 7);
  j.started_at = r.OptInt(i, 8);
  j.ended_at = r.OptInt(i, 9);
  j.attempts = static_cast<int>(r.Int(i, 10));
  j.exit_code = r.OptInt(i, 11);
  j.placement = Placement{r.Text(i, 12), ParseStoredGpuList(r.Text(i, 13)), r.Text(i, 14), r.Text(i, 15),
                          r.Text(i, 16)};
  j.reason = r.Text(i, 17);
  j.spec_json = r.Text(i, 18);
  j.handle = r.Text(i, 19);
  j.allocation_json = r.Text(i, 20);
  j.cancel_requested = r.Bool(i, 21);
  j.cost_micro_usd = r.Int(i, 22);
  j.co2_mg = r.Int(i, 23);
  return j;
}

// Applies `m` and records it, unless another process did first.
Status ApplyMigration(PgConn& db, const PgMigration& m) {
  MERIDIAN_RETURN_IF_ERROR(db.Exec("BEGIN"));
  Status st = [&]() -> Status {
    MERIDIAN_RETURN_IF_ERROR(db.Exec(kMigrationLock));
    auto now = PgSchemaVersion(db);
    if (!now.ok()) return now.status();
    if (*now >= m.version) return Status::Ok();
    MERIDIAN_RETURN_IF_ERROR(db.Exec(m.sql));
    auto rec = db.Query(
        "INSERT INTO schema_version(version, applied_at) "
        "VALUES($1, extract(epoch from now())::bigint)",
        {Param(m.version)});
    return rec.ok() ? Status::Ok() : rec.status();
  }();
  if (!st.ok()) {
    (void)db.Exec("ROLLBACK");
    return st.WithContext("schema migration " + std::to_string(m.version));
  }
  return db.Exec("COMMIT");
}

Status AddEvent(PgConn& db, const JobUpdate& u, const std::string& id, JobState from) {
  return db.Send(
      "INSERT INTO events(job_id,seq,at,type,from_state,to_state,message) "
      "VALUES($1,(SELECT COALESCE(MAX(seq),0)+1 FROM events WHERE job_id=$1),$2,$3,$4,$5,$6)",
      {Param(id), Param(u.at), Param(u.state ? "state" : "note"),
       Param(u.state ? JobStateName(from) : ""), Param(u.state ? JobStateName(*u.state) : ""),
       Param(u.message)},
      nullptr);
}

// The attempts table: a launch adds (or replaces) its attempt's row; an end
// closes the current one.
Status RecordAttempt(PgConn& db, const JobUpdate& u, const JobRow& j) {
  if (u.handle && u.placement && u.attempts) {
    return db.Send(
        "INSERT INTO attempts(job_id,attempt,node,handle,started_at) VALUES($1,$2,$3,$4,$5) "
        "ON CONFLICT(job_id,attempt) DO UPDATE SET node=excluded.node,handle=excluded.handle,"
        "started_at=excluded.started_at,ended_at=NULL,exit_code=NULL",
        {Param(j.id), Param(*u.attempts), Param(u.placement->node), Param(*u.handle),
         Param(u.at)},
        nullptr);
  }
  if (u.ended_at && j.attempts > 0) {
    return db.Send("UPDATE attempts SET ended_at=$1, exit_code=$2 WHERE job_id=$3 AND attempt=$4",
                   {Param(*u.ended_at), Param(u.exit_code), Param(j.id), Param(j.attempts)},
                   nullptr);
  }
  return Status::Ok();
}

// Writes `u` over `before` (the locked row): the job, its event and its
// attempt, each sent with PgConn::Send. Returns the row as `u` leaves it.
Result<JobRow> WritePgUpdate(PgConn& db, const JobUpdate& u, const JobRow& before) {
  JobRow j = WithUpdate(before, u);
  MERIDIAN_RETURN_IF_ERROR(db.Send(
      "UPDATE jobs SET state=$2,started_at=$3,ended_at=$4,attempts=$5,exit_code=$6,node=$7,"
      "gpus=$8,mig=$9,region=$10,pricing=$11,reason=$12,handle=$13,allocation=$14,"
      "cancel_requested=$15,cost_micro_usd=$16,co2_mg=$17 WHERE id=$1",
      {Param(j.id), Param(JobStateName(j.state)), Param(j.started_at), Param(j.ended_at),
       Param(j.attempts), Param(j.exit_code), Param(j.placement.node),
       Param(StoredGpuList(j.placement.gpus)), Param(j.placement.mig), Param(j.placement.region),
       Param(j.placement.pricing), Param(j.reason), Param(j.handle), Param(j.allocation_json),
       Param(j.cancel_requested), Param(j.cost_micro_usd), Param(j.co2_mg)},
      nullptr));
  if (u.state || !u.message.empty()) MERIDIAN_RETURN_IF_ERROR(AddEvent(db, u, j.id, before.state));
  MERIDIAN_RETURN_IF_ERROR(RecordAttempt(db, u, j));
  return j;
}

// `ids` as a PostgreSQL text[] literal: each element quoted, with its quotes
// and backslashes escaped.
std::string TextArray(const std::set<std::string>& ids) {
  std::string out = "{";
  for (const std::string& id : ids) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : id) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace

Result<int> PgSchemaVersion(PgConn& db) {
  auto r = db.Query("SELECT COALESCE(MAX(version),0) FROM schema_version");
  if (!r.ok()) return r.status();
  return static_cast<int>(r->Int(0, 0));
}

Status MigratePg(PgConn& db) {
  MERIDIAN_RETURN_IF_ERROR(db.Exec(
      "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
      "applied_at BIGINT NOT NULL)"));
  for (const PgMigration& m : kPgMigrations) MERIDIAN_RETURN_IF_ERROR(ApplyMigration(db, m));
  return Status::Ok();
}

Result<std::vector<JobRow>> ReadPgJobs(const PgRows& rows) {
  std::vector<JobRow> out;
  for (int i = 0; i < rows.size(); ++i) {
    auto job = ReadPgJob(rows, i);
    if (!job.ok()) return job.status();
    out.push_back(std::move(job).value());
  }
  return out;
}

Result<SubmitResult> SubmitPg(PgConn& db, const NewJob& job) {
  if (!job.idempotency_key.empty()) {
    auto k = db.Query("SELECT body_hash, job_id, created_at FROM idempotency WHERE tenant=$1 AND key=$2",
                      {Param(job.tenant), Param(job.idempotency_key)});
    if (!k.ok()) return k.status();
    if (k->size() > 0 && k->Int(0, 2) > job.submitted_at - kIdempotencyKeyTtlS) {
      return SubmitResult{k->Text(0, 0) == job.body_hash ? SubmitOutcome::kReplayed
                                                          : SubmitOutcome::kConflict,
                          k->Text(0, 1)};
    }
    if (k->size() > 0) {  // expired: the key goes to the new job
      auto d = db.Query("DELETE FROM idempotency WHERE tenant=$1 AND key=$2",
                        {Param(job.tenant), Param(job.idempotency_key)});
      if (!d.ok()) return d.status();
    }
  }
  auto seq = db.Query("SELECT nextval('jobs_seq')");
  if (!seq.ok()) return seq.status();
  const std::string id = JobIdFor(seq->Int(0, 0));
  auto t = db.Query("INSERT INTO tenants(name, created_at) VALUES($1,$2) ON CONFLICT DO NOTHING",
                    {Param(job.tenant), Param(job.submitted_at)});
  if (!t.ok()) return t.status();
  auto ins = db.Query(
      "INSERT INTO jobs(seq,id,tenant,name,kind,priority,state,submitted_at,spec) "
      "VALUES($1,$2,$3,$4,$5,$6,'queued',$7,$8)",
      {Param(seq->Int(0, 0)), Param(id), Param(job.tenant), Param(job.name), Param(job.kind),
       Param(job.priority), Param(job.submitted_at), Param(job.spec_json)});
  if (!ins.ok()) return ins.status();
  auto ev = db.Query(
      "INSERT INTO events(job_id,seq,at,type,from_state,to_state,message) "
      "VALUES($1,1,$2,'state','','queued','submitted')",
      {Param(id), Param(job.submitted_at)});
  if (!ev.ok()) return ev.status();
  if (!job.idempotency_key.empty()) {
    auto k = db.Query(
        "INSERT INTO idempotency(tenant,key,body_hash,job_id,created_at) VALUES($1,$2,$3,$4,$5)",
        {Param(job.tenant), Param(job.idempotency_key), Param(job.body_hash), Param(id),
         Param(job.submitted_at)});
    if (!k.ok()) return k.status();
  }
  return SubmitResult{SubmitOutcome::kCreated, id};
}

Status SendPgSubmit(PgConn& db, const NewJob& job, std::optional<Result<SubmitResult>>* out) {
  return db.Send(
      "SELECT result, result_id FROM meridian_submit($1,$2,$3,$4,$5,$6,$7,$8,$9)",
      {Param(job.tenant), Param(job.idempotency_key), Param(job.body_hash), Param(job.name),
       Param(job.kind), Param(job.priority), Param(job.submitted_at), Param(job.spec_json),
       Param(kIdempotencyKeyTtlS)},
      [out](const PgRows& r) -> Status {
        const std::string result = r.size() == 1 ? r.Text(0, 0) : "";
        const SubmitOutcome outcome = result == "replayed"   ? SubmitOutcome::kReplayed
                                      : result == "conflict" ? SubmitOutcome::kConflict
                                                             : SubmitOutcome::kCreated;
        if (result != "created" && outcome == SubmitOutcome::kCreated) {
          // This submission's answer, not the batch's: the batch's COMMIT
          // went with it (RunBatchOnce), and a batch that failed would be
          // run again, write by write.
          *out = Status::Internal("meridian_submit answered \"" + result +
                                  "\", not created, replayed or conflict");
        } else {
          *out = SubmitResult{outcome, r.Text(0, 1)};
        }
        return Status::Ok();
      });
}

Result<bool> ApplyPg(PgConn& db, const JobUpdate& u) {
  auto g = db.Query(std::string("SELECT ") + kPgJobCols + " FROM jobs WHERE id=$1 FOR UPDATE",
                    {Param(u.job_id)});
  if (!g.ok()) return g.status();
  auto rows = ReadPgJobs(*g);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return false;
  const JobRow& before = (*rows)[0];
  if (u.expect_state && before.state != *u.expect_state) return false;
  auto written = WritePgUpdate(db, u, before);
  return written.ok() ? Result<bool>(true) : Result<bool>(written.status());
}

Result<std::vector<bool>> ApplyPgBatch(PgConn& db, const std::vector<JobUpdate>& updates,
                                       bool pipeline) {
  std::set<std::string> ids;
  for (const JobUpdate& u : updates) ids.insert(u.job_id);
  // Locked in id order, so two writers locking overlapping sets take turns.
  auto g = db.Query(std::string("SELECT ") + kPgJobCols +
                        " FROM jobs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
                    {Param(TextArray(ids))}, PgPlan::kEachCall);
  if (!g.ok()) return g.status();
  auto rows = ReadPgJobs(*g);
  if (!rows.ok()) return rows.status();
  std::map<std::string, JobRow> current;
  for (JobRow& j : *rows) current.emplace(j.id, std::move(j));
  // The read ended the pipeline; the writes go in a new one, with the batch's
  // COMMIT's round trip or the next read's.
  if (pipeline) MERIDIAN_RETURN_IF_ERROR(db.BeginPipeline());
  std::vector<bool> applied(updates.size(), false);
  for (size_t i = 0; i < updates.size(); ++i) {
    const JobUpdate& u = updates[i];
    auto it = current.find(u.job_id);
    if (it == current.end() || (u.expect_state && it->second.state != *u.expect_state)) continue;
    auto written = WritePgUpdate(db, u, it->second);
    if (!written.ok()) return written.status();
    it->second = std::move(written).value();  // a later update of the job starts from here
    applied[i] = true;
  }
  return applied;
}

Result<std::vector<Store::JobTotal>> SelectPgJobTotals(PgConn& db, const std::string& tenant) {
  // $1 = '' matches every tenant; MIN(id): a job to name if the state does not parse.
  auto r = db.Query(
      "SELECT state, priority, pricing, COUNT(*), SUM(cost_micro_usd), SUM(co2_mg), MIN(id) "
      "FROM jobs WHERE $1::text = '' OR tenant = $1 GROUP BY state, priority, pricing",
      {Param(tenant)});
  if (!r.ok()) return r.status();
  std::vector<Store::JobTotal> out;
  for (int i = 0; i < r->size(); ++i) {
    auto state = ParseStoredJobState(r->Text(i, 0), r->Text(i, 6));
    if (!state.ok()) return state.status();
    out.push_back({*state, r->Text(i, 1), r->Text(i, 2), r->Int(i, 3), r->Int(i, 4), r->Int(i, 5)});
  }
  return out;
}

Result<int64_t> CountPgPreemptions(PgConn& db, const std::string& tenant) {
  // Only a job that ran more than once, or is preempted now, can have been
  // preempted: the events of the others are not read.
  auto r = db.Query(
      "SELECT COUNT(*) FROM jobs j JOIN events e ON e.job_id = j.id "
      "WHERE ($1::text = '' OR j.tenant = $1) AND (j.attempts >= 2 OR j.state = 'preempted') "
      "AND e.type = 'state' AND e.to_state = 'preempted'",
      {Param(tenant)});
  if (!r.ok()) return r.status();
  return r->Int(0, 0);
}

Result<std::vector<Store::FinishedJob>> SelectPgFinishedBefore(PgConn& db, UnixSeconds cutoff,
                                                               int limit) {
  auto r = db.Query(std::string("SELECT id, attempts FROM jobs WHERE ended_at < $1 AND ") +
                        kFinished + " ORDER BY ended_at, seq LIMIT $2",
                    {Param(cutoff), Param(limit)}, PgPlan::kEachCall);
  if (!r.ok()) return r.status();
  std::vector<Store::FinishedJob> jobs;
  for (int i = 0; i < r->size(); ++i) {
    jobs.push_back({r->Text(i, 0), static_cast<int>(r->Int(i, 1))});
  }
  return jobs;
}

Result<std::vector<std::string>> DeletePgFinished(PgConn& db, const std::vector<std::string>& ids,
                                                  UnixSeconds cutoff) {
  std::vector<std::string> deleted;
  for (const std::string& id : ids) {
    // Checked again here: only a job still finished before the cutoff goes.
    auto j = db.Query(
        std::string("DELETE FROM jobs WHERE id=$1 AND ended_at < $2 AND ") + kFinished,
        {Param(id), Param(cutoff)});
    if (!j.ok()) return j.status();
    if (j->Changed() == 0) continue;
    for (const char* table : {"events", "attempts", "utilization", "idempotency"}) {
      auto d = db.Query(std::string("DELETE FROM ") + table + " WHERE job_id=$1", {Param(id)});
      if (!d.ok()) return d.status();
    }
    deleted.push_back(id);
  }
  return deleted;
}

Result<int64_t> DeletePgKeysMadeBy(PgConn& db, UnixSeconds expired_at, int limit) {
  auto r = db.Query(
      "DELETE FROM idempotency WHERE (tenant,key) IN (SELECT tenant,key FROM idempotency "
      "WHERE created_at <= $1 ORDER BY created_at LIMIT $2)",
      {Param(expired_at), Param(limit)}, PgPlan::kEachCall);
  if (!r.ok()) return r.status();
  return r->Changed();
}

Status InsertPgUtilization(PgConn& db, const std::vector<UtilizationRow>& rows, int keep_per_job) {
  std::set<std::string> jobs;
  for (const UtilizationRow& u : rows) {
    auto r = db.Query(
        "INSERT INTO utilization(job_id,at,cpu_cores,iowait_frac,read_mb_per_s,gpu_sm_pct,"
        "gpu_mem_bw_pct,gpu_mem_used_mib,gpu_power_w,class) VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) "
        "ON CONFLICT(job_id,at) DO UPDATE SET cpu_cores=excluded.cpu_cores,"
        "iowait_frac=excluded.iowait_frac,read_mb_per_s=excluded.read_mb_per_s,"
        "gpu_sm_pct=excluded.gpu_sm_pct,gpu_mem_bw_pct=excluded.gpu_mem_bw_pct,"
        "gpu_mem_used_mib=excluded.gpu_mem_used_mib,gpu_power_w=excluded.gpu_power_w,"
        "class=excluded.class",
        {Param(u.job_id), Param(u.at), Param(u.cpu_cores), Param(u.iowait_frac),
         Param(u.read_mb_per_s), Param(u.gpu_sm_pct), Param(u.gpu_mem_bw_pct),
         Param(u.gpu_mem_used_mib), Param(u.gpu_power_w), Param(u.job_class)});
    if (!r.ok()) return r.status();
    jobs.insert(u.job_id);
  }
  for (const std::string& job : jobs) {
    auto d = db.Query(
        "DELETE FROM utilization WHERE job_id=$1 AND at < (SELECT at FROM utilization WHERE "
        "job_id=$1 ORDER BY at DESC LIMIT 1 OFFSET $2)",
        {Param(job), Param(keep_per_job - 1)});
    if (!d.ok()) return d.status();
  }
  return Status::Ok();
}

Result<std::vector<UtilizationRow>> ReadPgUtilization(PgConn& db, const std::string& job_id,
                                                      int limit) {
  auto r = db.Query(
      "SELECT at,cpu_cores,iowait_frac,read_mb_per_s,gpu_sm_pct,gpu_mem_bw_pct,gpu_mem_used_mib,"
      "gpu_power_w,class FROM (SELECT * FROM utilization WHERE job_id=$1 ORDER BY at DESC "
      "LIMIT $2) newest ORDER BY at",
      {Param(job_id), Param(limit)});
  if (!r.ok()) return r.status();
  std::vector<UtilizationRow> out;
  for (int i = 0; i < r->size(); ++i) {
    UtilizationRow u;
    u.job_id = job_id;
    u.at = r->Int(i, 0);
    u.cpu_cores = r->Double(i, 1);
    u.iowait_frac = r->Double(i, 2);
    u.read_mb_per_s = r->Double(i, 3);
    u.gpu_sm_pct = r->Double(i, 4);
    u.gpu_mem_bw_pct = r->Double(i, 5);
    u.gpu_mem_used_mib = r->Double(i, 6);
    u.gpu_power_w = r->Double(i, 7);
    u.job_class = r->Text(i, 8);
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace meridian::control
