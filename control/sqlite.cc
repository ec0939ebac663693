#include "control/sqlite.h"

namespace meridian::control {

Stmt::~Stmt() { sqlite3_finalize(s_); }

void Stmt::Reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

Stmt& Stmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}

Stmt& Stmt::Bind(int i, std::string_view v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::BindDouble(int i, double v) {
  sqlite3_bind_double(s_, i, v);
  return *this;
}

Stmt& Stmt::BindNull(int i) {
  sqlite3_bind_null(s_, i);
  return *this;
}

Stmt& Stmt::Bind(int i, const std::optional<int64_t>& v) {
  return v ? Bind(i, *v) : BindNull(i);
}

Result<bool> Stmt::Step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string msg = std::string("sqlite: ") + sqlite3_errmsg(db_) + " in: " + sqlite3_sql(s_);
  sqlite3_reset(s_);
  return Status::Internal(msg);
}

Status Stmt::Run() {
  for (;;) {
    auto r = Step();
    if (!r.ok()) return r.status();
    if (!*r) return Status::Ok();
  }
}

std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

std::string Stmt::Text(int col) const {
  const unsigned char* t = sqlite3_column_text(s_, col);
  if (t == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(t),
                     static_cast<size_t>(sqlite3_column_bytes(s_, col)));
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, const DbOptions& options) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX |
              (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = path + ": cannot open the database: " +
                      (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
    sqlite3_close(raw);
    return Status::Invalid(msg);
  }
  std::unique_ptr<Db> db(new Db(raw));
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  if (!options.read_only) {
    MERIDIAN_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL"));
    MERIDIAN_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=" + options.synchronous));
  }
  MERIDIAN_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  return db;
}

Db::~Db() {
  cache_.clear();
  sqlite3_close(db_);
}

Status Db::Exec(std::string_view sql) {
  char* err = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = std::string("sqlite: ") + (err ? err : "error") + " in: " + text;
    sqlite3_free(err);
    return Status::Internal(msg);
  }
  return Status::Ok();
}

void Db::ResetAll() {
  for (auto& [sql, st] : cache_) st->Reset();
}

Result<Stmt*> Db::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) {
    it->second->Reset();
    return it->second.get();
  }
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                         SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK) {
    return Status::Internal(std::string("sqlite: ") + sqlite3_errmsg(db_) + " in: " + sql);
  }
  auto owned = std::make_unique<Stmt>(db_, s);
  Stmt* p = owned.get();
  cache_.emplace(sql, std::move(owned));
  return p;
}

}  // namespace meridian::control
