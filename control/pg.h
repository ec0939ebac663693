// PgConn and PgRows: a thin RAII layer over one libpq connection. Every
// statement is sent with its values as parameters ($1, $2, ...), never spliced
// into the SQL text. Errors come back as Status naming the statement's first
// words and PostgreSQL's message.
//
// A connection that broke (the server restarted, or a failover moved it) is
// reset on its next use, so one failed call does not make every later one fail.
//
// A pipeline (libpq's pipeline mode) sends statements without waiting for
// their answers: Send() queues one, Sync() sends them all and reads every
// answer in one round trip, handing each statement's rows to its callback.
//
// A statement with parameters is prepared on the connection the first time
// its text is sent (a named statement per text, at most kMaxPrepared of
// them) and executed by name after that, so the server parses and plans it
// once per connection instead of at every call. A server that loses them (a
// pooler in transaction mode hands each transaction another session) answers
// "prepared statement does not exist": the connection stops preparing, and
// the call that met it runs again unprepared (outside a pipeline) or fails
// (in one; the store runs its write batch again, control/pg_store.cc).
//
// A statement whose best plan depends on its values or on how big its table
// has grown (a range such as `ended_at < $1`, a list such as `id = ANY($1)`)
// is planned at every call instead (PgPlan::kEachCall, an unnamed statement
// planned with its values): PostgreSQL may keep a prepared statement's
// generic plan, made once with no values, for the connection's life, and a
// sequential scan chosen while the table held ten rows then reads all of it
// at every call once it holds a hundred thousand.
//
// Threading: a PgConn belongs to one thread at a time (the store hands
// connections out from a pool, or keeps one for its writer).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

struct pg_conn;
struct pg_result;

namespace meridian::control {

// True when `db` names a PostgreSQL database (a "postgresql://" or
// "postgres://" URI) rather than a SQLite file.
bool IsPostgresUri(std::string_view db);

// `uri` with any password left out, for messages and logs.
std::string RedactedUri(std::string_view uri);

// The SQLSTATE of a refusal raised by meridian's own SQL functions
// (control/pg_schema.h): the statement's Status is its message as is, not
// the database's error around it.
inline constexpr std::string_view kPgRefusal = "MR001";

// How a statement with parameters is planned (see above): once per
// connection, or at each call with its values.
enum class PgPlan { kOnce, kEachCall };

// One parameter in PostgreSQL's text form; nullopt is NULL.
using PgParam = std::optional<std::string>;
PgParam Param(std::string_view v);
PgParam Param(const char* v);  // not bool: a string literal is text
PgParam Param(int64_t v);
PgParam Param(int v);
PgParam Param(bool v);
PgParam Param(double v);  // NaN is NULL
PgParam Param(const std::optional<int64_t>& v);

// The rows a statement returned (or none), and how many it changed.
class PgRows {
 public:
  explicit PgRows(pg_result* r) : r_(r) {}
  PgRows(PgRows&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgRows& operator=(PgRows&& o) noexcept;
  PgRows(const PgRows&) = delete;
  PgRows& operator=(const PgRows&) = delete;
  ~PgRows();

  int size() const;
  bool IsNull(int row, int col) const;
  std::string Text(int row, int col) const;  // "" for NULL
  int64_t Int(int row, int col) const;       // 0 for NULL
  std::optional<int64_t> OptInt(int row, int col) const;
  double Double(int row, int col) const;     // NaN for NULL
  bool Bool(int row, int col) const;         // a boolean column: "t"
  int64_t Changed() const;                   // rows an INSERT/UPDATE/DELETE changed

 private:
  pg_result* r_;
};

class PgConn {
 public:
  // Connects to `uri` (any libpq connection URI).
  static Result<std::unique_ptr<PgConn>> Open(const std::string& uri);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // Runs one or more statements without parameters or results (DDL, BEGIN).
  Status Exec(const std::string& sql);
  // Runs one statement with `params` bound to $1, $2, ...
  Result<PgRows> Query(const std::string& sql, const std::vector<PgParam>& params = {},
                       PgPlan plan = PgPlan::kOnce);

  // What a sent statement's rows go to; an error it returns is the pipeline's.
  using RowsFn = std::function<Status(const PgRows&)>;
  // Starts a pipeline: Send() queues statements until Sync(). Exec() or
  // Query() inside one first ends it (as Sync() does), so a caller that
  // needs an answer at once still gets it, one round trip later.
  Status BeginPipeline();
  // Runs `sql` with `params`: queued in a pipeline, at once outside one.
  // `on_rows` (may be empty) gets its rows when they arrive.
  Status Send(const std::string& sql, const std::vector<PgParam>& params, RowsFn on_rows,
              PgPlan plan = PgPlan::kOnce);
  // Ends the pipeline: every queued statement's answer read in order and
  // handed to its callback. The first error (a statement's, or a callback's);
  // the server skips the statements after a failed one.
  Status Sync();

  // How many statement texts one connection keeps prepared; later ones run
  // unprepared (a text built per call would otherwise grow the server's
  // memory without end).
  static constexpr size_t kMaxPrepared = 256;
  // False once the server lost a prepared statement: this connection runs
  // every statement unprepared from then on.
  bool preparing() const { return prepare_; }
  bool pipelined() const { return pipelined_; }

 private:
  struct Sent {
    std::string sql;
    RowsFn on_rows;
    bool prepare = false;  // the answer to preparing `sql`, not to running it
  };
  // The name `sql` is prepared under, preparing it first (at once, or queued
  // in the pipeline); "" when it runs unprepared.
  Result<std::string> Prepared(const std::string& sql, int params, PgPlan plan);
  // The server lost a prepared statement: run everything unprepared from now.
  void StopPreparing() {
    prepare_ = false;
    prepared_.clear();
  }
  PgConn(pg_conn* c, std::string uri) : c_(c), uri_(std::move(uri)) {}
  Status Reconnect();
  // OK for a result that succeeded; else an error naming `sql`'s first words.
  Status Check(pg_result* r, const std::string& sql) const;
  // Reads the answer to `sent` in a pipeline.
  Status Receive(const Sent& sent);
  pg_conn* c_;
  std::string uri_;
  bool pipelined_ = false;
  std::vector<Sent> sent_;  // in a pipeline: the statements awaiting answers
  // Statement text -> its name on this connection; emptied when the
  // connection is reset (a new session has none).
  std::unordered_map<std::string, std::string> prepared_;
  int next_name_ = 0;
  bool prepare_ = true;  // false once the server lost a prepared statement
};

}  // namespace meridian::control
