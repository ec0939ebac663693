#include "control/sqlite_retention.h"

#include <algorithm>

namespace meridian::control {

namespace {

constexpr const char* kFinished = "state IN ('succeeded','failed','cancelled')";

Result<bool> HasColumn(Db& db, const std::string& table, const std::string& column) {
  auto s = db.Prepare("SELECT COUNT(*) FROM pragma_table_info(?) WHERE name=?");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, table).Bind(2, column);
  auto r = (*s)->Step();
  if (!r.ok()) return r.status();
  const bool has = (*s)->Int(0) > 0;
  (*s)->Reset();
  return has;
}

}  // namespace

Status MigrateForRetention(Db& db) {
  auto has = HasColumn(db, "idempotency", "created_at");
  if (!has.ok()) return has.status();
  if (!*has) {
    // A database from before retention: its keys are dated by their jobs'
    // submissions, and its finished jobs without an end (a spec that no
    // longer parsed at recovery) end at their last event.
    MERIDIAN_RETURN_IF_ERROR(db.Exec(
        "ALTER TABLE idempotency ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;"
        "UPDATE idempotency SET created_at = COALESCE((SELECT submitted_at FROM jobs "
        "WHERE jobs.id = idempotency.job_id), 0);"
        "UPDATE jobs SET ended_at = COALESCE((SELECT MAX(at) FROM events WHERE "
        "events.job_id = jobs.id), submitted_at) WHERE ended_at IS NULL AND " +
        std::string(kFinished) + ";"));
  }
  return db.Exec(
      "CREATE INDEX IF NOT EXISTS jobs_by_end ON jobs(ended_at);"
      "CREATE INDEX IF NOT EXISTS idempotency_by_age ON idempotency(created_at);");
}

Result<int64_t> DeletedMaxSeq(Db& db) {
  auto s = db.Prepare("SELECT COALESCE(MAX(value),0) FROM meta WHERE key='deleted_max_seq'");
  if (!s.ok()) return s.status();
  auto r = (*s)->Step();
  if (!r.ok()) return r.status();
  const int64_t v = (*s)->Int(0);
  (*s)->Reset();
  return v;
}

Result<std::optional<StoredKey>> LiveKey(Db& db, const std::string& tenant, const std::string& key,
                                         UnixSeconds expired_at) {
  auto q = db.Prepare(
      "SELECT body_hash, job_id, created_at FROM idempotency WHERE tenant=? AND key=?");
  if (!q.ok()) return q.status();
  (*q)->Bind(1, tenant).Bind(2, key);
  auto row = (*q)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<StoredKey>();
  StoredKey k{(*q)->Text(0), (*q)->Text(1)};
  const UnixSeconds made = (*q)->Int(2);
  (*q)->Reset();
  if (made > expired_at) return std::optional<StoredKey>(std::move(k));
  auto d = db.Prepare("DELETE FROM idempotency WHERE tenant=? AND key=?");
  if (!d.ok()) return d.status();
  MERIDIAN_RETURN_IF_ERROR((*d)->Bind(1, tenant).Bind(2, key).Run());
  return std::optional<StoredKey>();
}

Result<std::vector<Store::FinishedJob>> SelectFinishedBefore(Db& db, UnixSeconds cutoff,
                                                             int limit) {
  auto s = db.Prepare(std::string("SELECT id, attempts FROM jobs WHERE ended_at < ? AND ") + kFinished +
                      " ORDER BY ended_at, seq LIMIT ?");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, cutoff).Bind(2, static_cast<int64_t>(limit));
  std::vector<Store::FinishedJob> jobs;
  for (;;) {
    auto r = (*s)->Step();
    if (!r.ok()) return r.status();
    if (!*r) return jobs;
    jobs.push_back({(*s)->Text(0), static_cast<int>((*s)->Int(1))});
  }
}

Result<std::vector<std::string>> DeleteFinished(Db& db, const std::vector<std::string>& ids,
                                                UnixSeconds cutoff) {
  std::vector<std::string> deleted;
  int64_t max_seq = 0;
  for (const std::string& id : ids) {
    // Checked again here: only a job still finished before the cutoff goes.
    auto j = db.Prepare(std::string("DELETE FROM jobs WHERE id=? AND ended_at < ? AND ") +
                        kFinished + " RETURNING seq");
    if (!j.ok()) return j.status();
    (*j)->Bind(1, id).Bind(2, cutoff);
    auto r = (*j)->Step();
    if (!r.ok()) return r.status();
    if (!*r) continue;
    max_seq = std::max(max_seq, (*j)->Int(0));
    MERIDIAN_RETURN_IF_ERROR((*j)->Run());  // RETURNING: step to the end
    for (const char* table : {"events", "attempts", "utilization", "idempotency"}) {
      auto d = db.Prepare(std::string("DELETE FROM ") + table + " WHERE job_id=?");
      if (!d.ok()) return d.status();
      MERIDIAN_RETURN_IF_ERROR((*d)->Bind(1, id).Run());
    }
    deleted.push_back(id);
  }
  if (max_seq > 0) {
    auto m = db.Prepare(
        "INSERT INTO meta(key,value) VALUES('deleted_max_seq',?) "
        "ON CONFLICT(key) DO UPDATE SET value=MAX(value, excluded.value)");
    if (!m.ok()) return m.status();
    MERIDIAN_RETURN_IF_ERROR((*m)->Bind(1, max_seq).Run());
  }
  return deleted;
}

Result<int64_t> DeleteKeysMadeBy(Db& db, UnixSeconds expired_at, int limit) {
  auto s = db.Prepare(
      "DELETE FROM idempotency WHERE (tenant,key) IN (SELECT tenant,key FROM idempotency "
      "WHERE created_at <= ? ORDER BY created_at LIMIT ?)");
  if (!s.ok()) return s.status();
  MERIDIAN_RETURN_IF_ERROR((*s)->Bind(1, expired_at).Bind(2, static_cast<int64_t>(limit)).Run());
  return static_cast<int64_t>(db.Changes());
}

}  // namespace meridian::control
