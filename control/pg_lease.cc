#include "control/pg_lease.h"

namespace meridian::control {

namespace {

// The database's clock in Unix milliseconds. clock_timestamp(), not now():
// now() is the transaction's start.
constexpr const char* kNowMs = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

}  // namespace

Result<int64_t> TakePgLease(PgConn& db, const std::string& holder, int64_t lease_ms) {
  // A taker that waited for another's row lock re-reads the row it updated
  // (PostgreSQL's READ COMMITTED), so of two at once only one takes it.
  auto r = db.Query(std::string("UPDATE leader_lease SET holder=$1, epoch=epoch+1, expires_at_ms=") +
                        kNowMs + "+$2 WHERE id=1 AND expires_at_ms < " + kNowMs + " RETURNING epoch",
                    {Param(holder), Param(lease_ms)});
  if (!r.ok()) return r.status();
  return r->size() == 0 ? int64_t{0} : r->Int(0, 0);
}

Result<bool> RenewPgLease(PgConn& db, const std::string& holder, int64_t epoch, int64_t lease_ms) {
  auto r = db.Query(std::string("UPDATE leader_lease SET expires_at_ms=") + kNowMs +
                        "+$3 WHERE id=1 AND holder=$1 AND epoch=$2",
                    {Param(holder), Param(epoch), Param(lease_ms)});
  if (!r.ok()) return r.status();
  return r->Changed() == 1;
}

Status CheckPgFence(PgConn& db, int64_t epoch) {
  // Refused by the server (meridian_fence, pg_schema.h), as Deposed, so the
  // refusal aborts the transaction whether or not its answer was read yet.
  return db.Send("SELECT meridian_fence($1)", {Param(epoch)}, nullptr);
}

Result<std::string> SelectPgLeaseHolder(PgConn& db) {
  auto r = db.Query(std::string("SELECT holder FROM leader_lease WHERE id=1 AND expires_at_ms >= ") +
                    kNowMs);
  if (!r.ok()) return r.status();
  return r->size() == 0 ? std::string() : r->Text(0, 0);
}

Result<std::vector<Store::ActiveMark>> SelectPgActiveMarks(PgConn& db) {
  auto r = db.Query(
      "SELECT seq, id, state, cancel_requested FROM jobs "
      "WHERE state NOT IN ('succeeded','failed','cancelled') ORDER BY seq");
  if (!r.ok()) return r.status();
  std::vector<Store::ActiveMark> out;
  for (int i = 0; i < r->size(); ++i) {
    auto state = ParseStoredJobState(r->Text(i, 2), r->Text(i, 1));
    if (!state.ok()) return state.status();
    out.push_back({r->Int(i, 0), r->Text(i, 1), *state, r->Bool(i, 3)});
  }
  return out;
}

Result<std::vector<Store::ActiveMark>> SelectPgChangedMarks(PgConn& db, int64_t* cursor) {
  // One statement, so the snapshot whose oldest running transaction becomes
  // the next cursor is the one the rows were read in: every transaction older
  // than it had ended, so its changes are in this read; the next read takes
  // every row a transaction from it on wrote.
  // The join keeps one row, for the snapshot's xmin, when no job matches.
  const std::string select =
      "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, j.seq, j.id, j.state, "
      "j.cancel_requested FROM (SELECT 1) AS one LEFT JOIN jobs j ON ";
  auto r = *cursor == 0
               ? db.Query(select + "j.state NOT IN ('succeeded','failed','cancelled') ORDER BY j.seq")
               : db.Query(select + "j.mark_xid >= $1::text::xid8 ORDER BY j.seq",  // jobs_mark_xid
                          {Param(*cursor)}, PgPlan::kEachCall);
  if (!r.ok()) return r.status();
  std::vector<Store::ActiveMark> out;
  int64_t next = *cursor;
  for (int i = 0; i < r->size(); ++i) {
    next = r->Int(i, 0);
    if (r->IsNull(i, 1)) continue;  // no row changed: the join's one empty row
    auto state = ParseStoredJobState(r->Text(i, 3), r->Text(i, 2));
    if (!state.ok()) return state.status();
    out.push_back({r->Int(i, 1), r->Text(i, 2), *state, r->Bool(i, 4)});
  }
  *cursor = next;
  return out;
}

}  // namespace meridian::control
