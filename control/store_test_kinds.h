// For the typed store tests: each kind of store as a type, so one suite runs
// the same assertions against SQLite and PostgreSQL (TYPED_TEST over
// StoreKinds). A kind makes a database (a file in the test's directory, or a
// fresh database on the test PostgreSQL), and reads and writes it with SQL
// directly, to check what the store wrote without going through it.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "control/pg.h"
#include "control/sqlite.h"
#include "control/store.h"
#include "control/test_postgres.h"

namespace meridian::control::testing {

struct SqliteKind {
  static Result<std::string> MakeDb(const std::string& dir) { return dir + "/meridian.db"; }
  static Status Exec(const std::string& db, const std::string& sql) {
    auto d = Db::Open(db, DbOptions{});
    if (!d.ok()) return d.status();
    return (*d)->Exec(sql);
  }
  // The first column of the first row, as text ("no row" when there is none).
  static Result<std::string> Text(const std::string& db, const std::string& sql) {
    auto d = Db::Open(db, DbOptions{});
    if (!d.ok()) return d.status();
    auto s = (*d)->Prepare(sql);
    if (!s.ok()) return s.status();
    auto row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::string("no row");
    std::string v = (*s)->Text(0);
    (*s)->Reset();
    return v;
  }
};

struct PostgresKind {
  static Result<std::string> MakeDb(const std::string&) { return TestPostgres::NewDatabase(); }
  static Status Exec(const std::string& db, const std::string& sql) {
    auto c = PgConn::Open(db);
    if (!c.ok()) return c.status();
    return (*c)->Exec(sql);
  }
  static Result<std::string> Text(const std::string& db, const std::string& sql) {
    auto c = PgConn::Open(db);
    if (!c.ok()) return c.status();
    auto r = (*c)->Query(sql);
    if (!r.ok()) return r.status();
    if (r->size() == 0) return std::string("no row");
    return r->Text(0, 0);
  }
};

using StoreKinds = ::testing::Types<SqliteKind, PostgresKind>;

// Test names end in /Sqlite or /Postgres, not /0 and /1.
struct StoreKindName {
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, SqliteKind> ? "Sqlite" : "Postgres";
  }
};

// A store on `db`: a SQLite path or a PostgreSQL URI, as --db takes it;
// null (with the test failed) when it does not open.
inline std::unique_ptr<Store> OpenStoreOn(const std::string& db) {
  SqliteOptions o;
  o.path = db;
  auto s = OpenStore(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

}  // namespace meridian::control::testing
