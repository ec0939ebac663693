#include "control/pg.h"

#include <libpq-fe.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace meridian::control {

namespace {

// The statement's first words, to name it in an error without its values.
std::string Head(const std::string& sql) {
  std::string h = sql.substr(0, 60);
  for (char& c : h) {
    if (c == '\n') c = ' ';
  }
  return sql.size() > 60 ? h + "..." : h;
}

// "prepared statement ... does not exist" (SQLSTATE 26000).
bool LostPrepared(pg_result* r) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  return state != nullptr && std::string_view(state) == "26000";
}

std::string ConnError(pg_conn* c) {
  std::string m = c ? PQerrorMessage(c) : "out of memory";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

}  // namespace

bool IsPostgresUri(std::string_view db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

std::string RedactedUri(std::string_view uri) {
  const size_t scheme = uri.find("://");
  if (scheme == std::string_view::npos) return std::string(uri);
  const size_t at = uri.find('@', scheme + 3);
  const size_t colon = uri.find(':', scheme + 3);
  if (at == std::string_view::npos || colon == std::string_view::npos || colon > at) {
    return std::string(uri);
  }
  return std::string(uri.substr(0, colon)) + ":***" + std::string(uri.substr(at));
}

PgParam Param(std::string_view v) { return std::string(v); }
PgParam Param(const char* v) { return std::string(v); }
PgParam Param(int64_t v) { return std::to_string(v); }
PgParam Param(int v) { return std::to_string(v); }
PgParam Param(bool v) { return std::string(v ? "true" : "false"); }
PgParam Param(double v) {
  if (std::isnan(v)) return std::nullopt;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);  // round-trips every double
  return std::string(buf);
}
PgParam Param(const std::optional<int64_t>& v) {
  return v ? PgParam(std::to_string(*v)) : std::nullopt;
}

PgRows& PgRows::operator=(PgRows&& o) noexcept {
  if (this != &o) {
    if (r_) PQclear(r_);
    r_ = o.r_;
    o.r_ = nullptr;
  }
  return *this;
}

PgRows::~PgRows() {
  if (r_) PQclear(r_);
}

int PgRows::size() const { return PQntuples(r_); }
bool PgRows::IsNull(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
std::string PgRows::Text(int row, int col) const { return PQgetvalue(r_, row, col); }
int64_t PgRows::Int(int row, int col) const {
  return IsNull(row, col) ? 0 : std::strtoll(PQgetvalue(r_, row, col), nullptr, 10);
}
std::optional<int64_t> PgRows::OptInt(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  return Int(row, col);
}
double PgRows::Double(int row, int col) const {
  if (IsNull(row, col)) return std::numeric_limits<double>::quiet_NaN();
  return std::strtod(PQgetvalue(r_, row, col), nullptr);
}
bool PgRows::Bool(int row, int col) const { return Text(row, col) == "t"; }
int64_t PgRows::Changed() const { return std::strtoll(PQcmdTuples(r_), nullptr, 10); }

Result<std::unique_ptr<PgConn>> PgConn::Open(const std::string& uri) {
  pg_conn* c = PQconnectdb(uri.c_str());
  if (c == nullptr || PQstatus(c) != CONNECTION_OK) {
    const std::string why = ConnError(c);
    if (c) PQfinish(c);
    return Status::Internal("PostgreSQL " + RedactedUri(uri) + ": cannot connect: " + why);
  }
  auto conn = std::unique_ptr<PgConn>(new PgConn(c, uri));
  // Notices (a CREATE ... IF NOT EXISTS that found the thing) are not errors.
  MERIDIAN_RETURN_IF_ERROR(conn->Exec("SET client_min_messages = warning"));
  return conn;
}

PgConn::~PgConn() { PQfinish(c_); }

Status PgConn::Reconnect() {
  if (PQstatus(c_) == CONNECTION_OK) return Status::Ok();
  PQreset(c_);
  prepared_.clear();
  if (PQstatus(c_) != CONNECTION_OK) {
    return Status::Internal("PostgreSQL " + RedactedUri(uri_) + ": connection lost: " +
                            ConnError(c_));
  }
  return Exec("SET client_min_messages = warning");
}

Status PgConn::Exec(const std::string& sql) {
  if (pipelined_) (void)Sync();  // the caller's next step reports a failure
  if (PQstatus(c_) != CONNECTION_OK) MERIDIAN_RETURN_IF_ERROR(Reconnect());
  pg_result* r = PQexec(c_, sql.c_str());
  Status st = Check(r, sql);
  if (r) PQclear(r);
  return st;
}

Status PgConn::Check(pg_result* r, const std::string& sql) const {
  const ExecStatusType st = PQresultStatus(r);
  if (r && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)) return Status::Ok();
  if (const char* code = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
      code != nullptr && code == kPgRefusal) {
    const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    return Status::Internal(primary ? primary : "");
  }
  std::string m = r ? PQresultErrorMessage(r) : ConnError(c_);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return Status::Internal("PostgreSQL: " + Head(sql) + ": " + m);
}

namespace {

std::vector<const char*> Values(const std::vector<PgParam>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const PgParam& p : params) values.push_back(p ? p->c_str() : nullptr);
  return values;
}

}  // namespace

Result<std::string> PgConn::Prepared(const std::string& sql, int params, PgPlan plan) {
  if (params == 0 || !prepare_ || plan == PgPlan::kEachCall) return std::string();
  if (auto it = prepared_.find(sql); it != prepared_.end()) return it->second;
  if (prepared_.size() >= kMaxPrepared) return std::string();
  std::string name = "meridian_" + std::to_string(next_name_++);
  if (pipelined_) {
    // Its answer comes in turn; a failure there forgets the name (Receive).
    if (PQsendPrepare(c_, name.c_str(), sql.c_str(), params, nullptr) != 1) {
      return Status::Internal("PostgreSQL: " + Head(sql) + ": cannot send: " + ConnError(c_));
    }
    sent_.push_back({sql, nullptr, true});
  } else {
    pg_result* r = PQprepare(c_, name.c_str(), sql.c_str(), params, nullptr);
    Status st = Check(r, sql);
    if (r) PQclear(r);
    MERIDIAN_RETURN_IF_ERROR(st);
  }
  prepared_.emplace(sql, name);
  return name;
}

Result<PgRows> PgConn::Query(const std::string& sql, const std::vector<PgParam>& params,
                             PgPlan plan) {
  if (pipelined_) MERIDIAN_RETURN_IF_ERROR(Sync());
  if (PQstatus(c_) != CONNECTION_OK) MERIDIAN_RETURN_IF_ERROR(Reconnect());
  const std::vector<const char*> values = Values(params);
  const int n = static_cast<int>(params.size());
  auto name = Prepared(sql, n, plan);
  if (!name.ok()) return name.status();
  pg_result* r =
      name->empty()
          ? PQexecParams(c_, sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0)
          : PQexecPrepared(c_, name->c_str(), n, values.data(), nullptr, nullptr, 0);
  if (!name->empty() && LostPrepared(r)) {
    StopPreparing();
    PQclear(r);
    r = PQexecParams(c_, sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0);
  }
  Status st = Check(r, sql);
  if (!st.ok()) {
    if (r) PQclear(r);
    return st;
  }
  return PgRows(r);
}

Status PgConn::BeginPipeline() {
  if (pipelined_) return Status::Ok();
  if (PQstatus(c_) != CONNECTION_OK) MERIDIAN_RETURN_IF_ERROR(Reconnect());
  if (PQenterPipelineMode(c_) != 1) {
    return Status::Internal("PostgreSQL: cannot start a pipeline: " + ConnError(c_));
  }
  pipelined_ = true;
  return Status::Ok();
}

Status PgConn::Send(const std::string& sql, const std::vector<PgParam>& params, RowsFn on_rows,
                    PgPlan plan) {
  if (!pipelined_) {
    auto rows = Query(sql, params, plan);
    if (!rows.ok()) return rows.status();
    return on_rows ? on_rows(*rows) : Status::Ok();
  }
  const std::vector<const char*> values = Values(params);
  const int n = static_cast<int>(params.size());
  auto name = Prepared(sql, n, plan);
  if (!name.ok()) return name.status();
  const int sent =
      name->empty()
          ? PQsendQueryParams(c_, sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0)
          : PQsendQueryPrepared(c_, name->c_str(), n, values.data(), nullptr, nullptr, 0);
  if (sent != 1) {
    return Status::Internal("PostgreSQL: " + Head(sql) + ": cannot send: " + ConnError(c_));
  }
  sent_.push_back({sql, std::move(on_rows)});
  return Status::Ok();
}

Status PgConn::Receive(const Sent& sent) {
  pg_result* r = PQgetResult(c_);
  if (r == nullptr) return Status::Internal("PostgreSQL: " + Head(sent.sql) + ": no answer");
  PgRows rows(r);
  while (pg_result* extra = PQgetResult(c_)) PQclear(extra);  // to the statement's end
  // A statement that was not prepared (it failed, or an earlier failure
  // skipped it) is prepared again the next time it is sent.
  if (sent.prepare && PQresultStatus(r) != PGRES_COMMAND_OK) prepared_.erase(sent.sql);
  if (LostPrepared(r)) StopPreparing();
  // Skipped after an earlier failure, which is the error reported.
  if (PQresultStatus(r) == PGRES_PIPELINE_ABORTED) return Status::Ok();
  MERIDIAN_RETURN_IF_ERROR(Check(r, sent.sql));
  return sent.on_rows ? sent.on_rows(rows) : Status::Ok();
}

Status PgConn::Sync() {
  if (!pipelined_) return Status::Ok();
  Status first = Status::Ok();
  if (PQpipelineSync(c_) != 1) {
    first = Status::Internal("PostgreSQL: cannot send a pipeline: " + ConnError(c_));
    for (const Sent& s : sent_) {
      if (s.prepare) prepared_.erase(s.sql);
    }
  } else {
    for (const Sent& s : sent_) {
      Status st = Receive(s);
      if (first.ok()) first = st;
    }
    pg_result* sync = PQgetResult(c_);
    if (sync == nullptr || PQresultStatus(sync) != PGRES_PIPELINE_SYNC) {
      if (first.ok()) first = Status::Internal("PostgreSQL: a pipeline ended without its sync point");
    }
    if (sync) PQclear(sync);
  }
  sent_.clear();
  pipelined_ = false;
  if (PQexitPipelineMode(c_) != 1) {  // answers left unread (a broken connection): start clean
    PQreset(c_);
    prepared_.clear();
    if (PQstatus(c_) == CONNECTION_OK) (void)Exec("SET client_min_messages = warning");
  }
  return first;
}

}  // namespace meridian::control
