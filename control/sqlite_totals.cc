#include "control/sqlite_totals.h"

namespace meridian::control {

Result<std::vector<Store::JobTotal>> SelectJobTotals(Db& db, const std::string& tenant) {
  // ?1 = '' matches every tenant.
  auto s = db.Prepare(
      "SELECT state, priority, pricing, COUNT(*), SUM(cost_micro_usd), SUM(co2_mg), MIN(id) "
      "FROM jobs WHERE ?1 = '' OR tenant = ?1 GROUP BY state, priority, pricing");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, tenant);
  std::vector<Store::JobTotal> out;
  for (;;) {
    auto r = (*s)->Step();
    if (!r.ok()) return r.status();
    if (!*r) return out;
    auto state = ParseStoredJobState((*s)->Text(0), (*s)->Text(6));
    if (!state.ok()) return state.status();
    out.push_back({*state, (*s)->Text(1), (*s)->Text(2), (*s)->Int(3), (*s)->Int(4),
                   (*s)->Int(5)});
  }
}

Result<int64_t> CountPreemptions(Db& db, const std::string& tenant) {
  // Only a job that ran more than once, or is preempted now, can have been
  // preempted: the events of the others are not read.
  auto s = db.Prepare(
      "SELECT COUNT(*) FROM jobs j JOIN events e ON e.job_id = j.id "
      "WHERE (?1 = '' OR j.tenant = ?1) AND (j.attempts >= 2 OR j.state = 'preempted') "
      "AND e.type = 'state' AND e.to_state = 'preempted'");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, tenant);
  auto r = (*s)->Step();
  if (!r.ok()) return r.status();
  const int64_t n = (*s)->Int(0);
  (*s)->Reset();
  return n;
}

namespace {

Result<std::vector<Store::ActiveMark>> ReadMarks(Stmt* s) {
  std::vector<Store::ActiveMark> out;
  for (;;) {
    auto r = s->Step();
    if (!r.ok()) return r.status();
    if (!*r) return out;
    auto state = ParseStoredJobState(s->Text(2), s->Text(1));
    if (!state.ok()) return state.status();
    out.push_back({s->Int(0), s->Text(1), *state, s->Int(3) != 0});
  }
}

}  // namespace

Result<std::vector<Store::ActiveMark>> SelectActiveMarks(Db& db) {
  auto s = db.Prepare(
      "SELECT seq, id, state, cancel_requested FROM jobs "
      "WHERE state NOT IN ('succeeded','failed','cancelled') ORDER BY seq");
  if (!s.ok()) return s.status();
  return ReadMarks(*s);
}

Result<std::vector<Store::ActiveMark>> SelectMarksOf(Db& db, const std::string& ids_json) {
  auto s = db.Prepare(
      "SELECT seq, id, state, cancel_requested FROM jobs "
      "WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY seq");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, ids_json);
  return ReadMarks(*s);
}

}  // namespace meridian::control
