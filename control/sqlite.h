// Db and Stmt: a thin RAII layer over one SQLite connection, with prepared
// statements cached per connection (prepared once, reset and rebound on each
// use). Errors come back as Status naming the statement and SQLite's message.
//
// Threading: a Db and its statements belong to one thread at a time (the
// store hands connections out from a pool, or keeps one for its writer).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.h"

namespace meridian::control {

class Stmt {
 public:
  Stmt(sqlite3* db, sqlite3_stmt* s) : db_(db), s_(s) {}
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Clears earlier bindings and results; called by Db::Prepare.
  void Reset();
  // Binds by 1-based position; each returns *this for chaining.
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& BindNull(int i);
  Stmt& BindDouble(int i, double v);
  Stmt& Bind(int i, const std::optional<int64_t>& v);
  // Steps once: true with a row, false when done; errors as Status.
  Result<bool> Step();
  // Steps to the end, for statements without rows.
  Status Run();

  int64_t Int(int col) const { return sqlite3_column_int64(s_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::optional<int64_t> OptInt(int col) const;
  std::string Text(int col) const;
  double Double(int col) const { return sqlite3_column_double(s_, col); }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_;
};

struct DbOptions {
  bool read_only = false;
  // PRAGMA synchronous for write connections: "FULL" or "NORMAL".
  std::string synchronous = "FULL";
  int busy_timeout_ms = 10000;
};

class Db {
 public:
  // Opens (creating if needed, unless read_only) `path` in WAL mode.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, const DbOptions& options);
  ~Db();

  // Runs one or more statements without results.
  Status Exec(std::string_view sql);
  // The cached statement for `sql`, reset; nullptr after an error (see status).
  Result<Stmt*> Prepare(const std::string& sql);
  // Resets every cached statement, so none holds a read snapshot open.
  void ResetAll();
  int64_t LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  sqlite3* raw() const { return db_; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> cache_;
};

}  // namespace meridian::control
