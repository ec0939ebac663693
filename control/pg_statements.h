// The statements of PgStore (pg_store.cc) that are more than one query:
// schema migrations, a submission, a job update, the aggregates, retention and
// utilization. Each runs on the connection it is given, inside the caller's
// transaction where it writes. Internal to control/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "control/pg.h"
#include "control/store.h"

namespace meridian::control {

// The job columns every job query selects, in ReadJobs' order.
extern const char* const kPgJobCols;

// Applies the migrations (pg_schema.h) the database has not had, each in its
// own transaction with its schema_version row. Processes starting at once on
// one database take turns (an advisory lock), so each migration runs once.
Status MigratePg(PgConn& db);
// The highest migration version applied (0: none).
Result<int> PgSchemaVersion(PgConn& db);

// The rows of a query over kPgJobCols. A stored state that is not a state is
// an error naming the job and the word.
Result<std::vector<JobRow>> ReadPgJobs(const PgRows& rows);

// A submission statement by statement: four to six round trips (the
// reference, PostgresOptions::pipeline = false).
Result<SubmitResult> SubmitPg(PgConn& db, const NewJob& job);
// The same submission as one statement (the meridian_submit function,
// pg_schema.h) sent with PgConn::Send: `out` holds its result once the
// statement's answer arrives (at the pipeline's Sync, or at once outside one).
Status SendPgSubmit(PgConn& db, const NewJob& job, std::optional<Result<SubmitResult>>* out);
// One update (store.h, JobUpdate); false when the job is missing or not in
// the expected state. The job's row is locked until the transaction ends.
Result<bool> ApplyPg(PgConn& db, const JobUpdate& u);
// Every update of `updates` in two round trips, whatever their number: one
// read that locks their jobs' rows, then every write sent together (in a
// pipeline when `pipeline`; answered at the next Sync). Updates of one job
// apply in order, each over the row the one before left. Per update, as
// ApplyPg: false when the job is missing or not in the expected state.
Result<std::vector<bool>> ApplyPgBatch(PgConn& db, const std::vector<JobUpdate>& updates,
                                       bool pipeline);

Result<std::vector<Store::JobTotal>> SelectPgJobTotals(PgConn& db, const std::string& tenant);
Result<int64_t> CountPgPreemptions(PgConn& db, const std::string& tenant);

Result<std::vector<Store::FinishedJob>> SelectPgFinishedBefore(PgConn& db, UnixSeconds cutoff,
                                                               int limit);
Result<std::vector<std::string>> DeletePgFinished(PgConn& db, const std::vector<std::string>& ids,
                                                  UnixSeconds cutoff);
Result<int64_t> DeletePgKeysMadeBy(PgConn& db, UnixSeconds expired_at, int limit);

Status InsertPgUtilization(PgConn& db, const std::vector<UtilizationRow>& rows, int keep_per_job);
Result<std::vector<UtilizationRow>> ReadPgUtilization(PgConn& db, const std::string& job_id,
                                                      int limit);

}  // namespace meridian::control
