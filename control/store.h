// Store: the control plane's durable state (jobs, attempts, events, tenants,
// tokens, nodes, idempotency keys) behind one interface, so the daemon runs on
// SQLite (OpenSqliteStore, the embedded default) or on PostgreSQL in
// production (docs/control-plane.md) without changing above this line.
//
// Durability: every write call returns after its transaction has committed.
// Concurrent writes are group-committed: one writer thread takes every write
// waiting, runs them in one transaction and answers each after the commit, so
// a burst of submissions costs one commit (and one fsync), not one each.
//
// PostgreSQL (OpenPostgresStore) keeps the same tables, with job numbers
// from a sequence, and applies its schema as numbered migrations at open
// (docs/control-plane.md, "PostgreSQL"); OpenStore picks by the --db value.
// Any number of daemons may serve one PostgreSQL database (replicas,
// docs/control-plane.md, "Replicas"): ids never collide, every replica
// answers the API through its own store, and the lease below elects the one
// that runs the reconcile loop. A SQLite file is served by one daemon, which
// always leads.
//
// Every job state change goes through Apply with a JobUpdate that names the
// expected current state; the store writes the new state and its event row in
// the same transaction. Threading: all methods are safe to call from any
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/job_state.h"
#include "core/status.h"
#include "core/time.h"

namespace meridian::control {

struct Placement {
  std::string node;
  std::vector<int> gpus;
  std::string mig;      // MIG profile, "" = whole GPUs
  std::string region;
  std::string pricing;  // "owned", "spot", ...
};

struct JobRow {
  int64_t seq = 0;       // 42 for "j-00000042"
  std::string id;
  std::string tenant, name, kind, priority;
  JobState state = JobState::kQueued;
  UnixSeconds submitted_at = 0;
  std::optional<UnixSeconds> started_at, ended_at;
  int attempts = 0;
  std::optional<int64_t> exit_code;
  Placement placement;
  std::string reason;
  std::string spec_json;         // the spec as JSON text
  std::string handle;            // the backend's handle of the current attempt
  std::string allocation_json;   // the ledger allocation of the current attempt
  bool cancel_requested = false;
  int64_t cost_micro_usd = 0;    // spend so far, all attempts
  int64_t co2_mg = 0;
};

struct EventRow {
  int64_t seq = 0;
  UnixSeconds at = 0;
  std::string type;  // "state", "note"
  // The states as the API's words, as written ("" for a note, and the first
  // event's from): the history is shown as it was recorded, not parsed again.
  std::string from, to, message;
};

// An idempotency key answers with its job for 24 hours after it was first
// used; from then on the same key makes a new job (docs/api.md).
inline constexpr int64_t kIdempotencyKeyTtlS = 24 * 3600;

std::string JobIdFor(int64_t seq);                   // "j-00000042"
std::optional<int64_t> SeqFromJobId(const std::string& id);

// A placement's GPUs as the stores keep them: "0,1,3" ("" for none).
std::string StoredGpuList(const std::vector<int>& gpus);
std::vector<int> ParseStoredGpuList(const std::string& text);

struct NewJob {
  std::string tenant, name, kind, priority;
  std::string spec_json;
  std::string idempotency_key;  // "" = none
  std::string body_hash;        // what the key must match on a retry
  UnixSeconds submitted_at = 0;
};

enum class SubmitOutcome { kCreated, kReplayed, kConflict };
struct SubmitResult {
  SubmitOutcome outcome = SubmitOutcome::kCreated;
  std::string job_id;
};

// One change to a job in a transaction. `expect_state`, when set, must be the
// job's current state or the update is skipped (reported in the result).
struct JobUpdate {
  std::string job_id;
  std::optional<JobState> expect_state;
  std::optional<JobState> state;      // new state: writes a "state" event
  std::string message;                // the event's message (and the job's reason on a state change)
  std::optional<std::string> reason;  // sets the job's reason without an event
  std::optional<UnixSeconds> started_at, ended_at;
  std::optional<int64_t> exit_code;
  std::optional<int> attempts;
  std::optional<Placement> placement;
  std::optional<std::string> handle;
  std::optional<std::string> allocation_json;
  std::optional<bool> cancel_requested;
  int64_t add_cost_micro_usd = 0, add_co2_mg = 0;
  bool clear_ended = false;           // requeue: started/ended/exit back to null
  UnixSeconds at = 0;
};

// The job as `u` leaves it (its expected state is not checked here): what
// every store writes back for an update that applies.
JobRow WithUpdate(JobRow j, const JobUpdate& u);

struct ListFilter {
  std::string tenant, kind;         // "" = any
  std::optional<JobState> state;    // nullopt = any
  int limit = 100;
  int64_t after_seq = 0;            // the page token: jobs after it (0 = from the first)
  // Newest first: then the page token's jobs are those before it (0 = from
  // the newest), so a page of the latest jobs costs one page of rows.
  bool newest_first = false;
};

// A bearer token as the store keeps it: never the secret, only its SHA-256.
// `id` ("tok_" and 16 hex digits, random) names it in `token list` and
// `token revoke --id`. A node token (`node` set) may only heartbeat that node.
struct TokenRow {
  std::string tenant;
  bool admin = false;
  UnixSeconds created_at = 0;
  std::optional<UnixSeconds> expires_at, revoked_at;
  std::string id;
  std::string node;  // "": a tenant or admin token
};

// The tenant that node tokens are filed under (tokens need one); no tenant's
// name can start with '_', and Tenants() leaves it out.
inline constexpr const char* kNodeTokenTenant = "_nodes";

struct NewToken {
  std::string hash, tenant, node;
  bool admin = false;
  UnixSeconds created_at = 0;
  std::optional<UnixSeconds> expires_at;
};

struct NodeRow {
  std::string name, gpu_model;
  int gpus = 0, vcpus = 0;
  double ram_gib = 0;
  NodeState state = NodeState::kReady;
  UnixSeconds last_heartbeat = 0;
  bool registered = true;       // via the API (false: the backend's own)
};

// Why a node registered through the API takes no jobs: nothing there could
// run them (an agent mode is not built yet, docs/fleet.md), so the scheduler
// never places a job on it and backends refuse such placements.
inline constexpr char kNoAgentReason[] =
    "registered through the API: no agent runs jobs there (not built yet), so no job is placed on it";

// One compact row of a job's utilization series (docs/telemetry.md): the
// means over store_every seconds, written by the telemetry sampler. A figure
// not measured (no GPU) is NaN in memory and NULL in the table.
struct UtilizationRow {
  std::string job_id;
  UnixSeconds at = 0;
  double cpu_cores = 0, iowait_frac = 0, read_mb_per_s = 0;
  double gpu_sm_pct = 0, gpu_mem_bw_pct = 0, gpu_mem_used_mib = 0, gpu_power_w = 0;
  std::string job_class;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual Result<SubmitResult> Submit(const NewJob& job) = 0;
  virtual Result<JobRow> GetJob(const std::string& id) = 0;  // kNotFound
  virtual Result<std::vector<JobRow>> ListJobs(const ListFilter& filter) = 0;
  virtual Result<std::vector<JobRow>> ActiveJobs() = 0;  // every non-terminal job, by seq
  virtual Result<std::vector<EventRow>> Events(const std::string& job_id) = 0;
  // Counts of jobs per state (all tenants); a state with no jobs is left out.
  virtual Result<std::vector<std::pair<JobState, int64_t>>> CountByState() = 0;
  // Queued jobs per (priority tier, tenant).
  struct QueueCount {
    std::string tier, tenant;
    int64_t queued = 0;
  };
  virtual Result<std::vector<QueueCount>> QueueDepth() = 0;
  // Applies the updates in one transaction; returns, per update, whether it applied.
  virtual Result<std::vector<bool>> Apply(const std::vector<JobUpdate>& updates) = 0;

  // Stores the token (and its tenant, if new); returns the token's id.
  virtual Result<std::string> CreateToken(const NewToken& token) = 0;
  virtual Result<std::optional<TokenRow>> LookupToken(const std::string& token_hash) = 0;
  virtual Status RevokeToken(const std::string& token_hash, UnixSeconds now) = 0;  // kNotFound
  virtual Status RevokeTokenById(const std::string& id, UnixSeconds now) = 0;      // kNotFound
  // Every token, oldest first (revoked and expired ones too).
  virtual Result<std::vector<TokenRow>> Tokens() = 0;
  virtual Result<std::vector<std::string>> Tenants() = 0;

  virtual Status UpsertNode(const NodeRow& node) = 0;
  virtual Status SetNodeState(const std::string& name, NodeState state) = 0;  // kNotFound
  virtual Status Heartbeat(const std::string& name, UnixSeconds at) = 0;  // kNotFound
  virtual Result<std::vector<NodeRow>> Nodes() = 0;

  // The dashboard's totals, as SQL aggregates (no job is loaded): jobs of
  // `tenant` ("" = all) counted per (state, priority, pricing) with their
  // spend and CO2 summed. An unplaced job's pricing is "".
  struct JobTotal {
    JobState state = JobState::kQueued;
    std::string priority, pricing;
    int64_t jobs = 0, cost_micro_usd = 0, co2_mg = 0;
  };
  virtual Result<std::vector<JobTotal>> JobTotals(const std::string& tenant) = 0;
  // How many times jobs of `tenant` ("" = all) were preempted (their events).
  virtual Result<int64_t> Preemptions(const std::string& tenant) = 0;
  // Finished jobs of `tenant` ("" = all) that ended at or after `since`, by seq.
  virtual Result<std::vector<JobRow>> EndedSince(const std::string& tenant, UnixSeconds since) = 0;

  // Retention (docs/control-plane.md, "Retention"). The finished jobs
  // (succeeded, failed, cancelled) that ended before `cutoff`, oldest end
  // first, at most `limit`.
  struct FinishedJob {
    std::string id;
    int attempts = 0;
  };
  virtual Result<std::vector<FinishedJob>> FinishedBefore(UnixSeconds cutoff, int limit) = 0;
  // Deletes those of `ids` that are still finished before `cutoff`, with
  // their events, attempts, utilization rows and idempotency keys, in one
  // transaction; returns the ids deleted. A deleted job's id is never given
  // to a new job.
  virtual Result<std::vector<std::string>> DeleteFinishedJobs(const std::vector<std::string>& ids,
                                                              UnixSeconds cutoff) = 0;
  // Deletes at most `limit` idempotency keys made at or before `expired_at`
  // (Submit already ignores them); returns how many went.
  virtual Result<int64_t> DeleteExpiredKeys(UnixSeconds expired_at, int limit) = 0;

  // What the leader compares with its view each cycle to find the jobs and
  // cancels any replica wrote: every non-terminal job's seq, id, state and
  // cancel flag, by seq.
  struct ActiveMark {
    int64_t seq = 0;
    std::string id;
    JobState state = JobState::kQueued;
    bool cancel_requested = false;
  };
  virtual Result<std::vector<ActiveMark>> ActiveMarks() = 0;
  // What changed since the read that left `*cursor`: the marks of the jobs
  // whose row was made, or whose state or cancel flag changed, since then
  // (terminal ones too), by seq; `*cursor` is moved past them. A read may
  // give a change again but never misses one, even one whose transaction
  // commits after later ones were read. `*cursor` 0 reads every unfinished
  // job (ActiveMarks). This default reads every unfinished job each time;
  // SQLite's reads its own change log, PostgreSQL's the rows' transaction ids.
  virtual Result<std::vector<ActiveMark>> ChangedMarks(int64_t* cursor) {
    (void)cursor;
    return ActiveMarks();
  }

  // Leadership among the daemons serving one database (docs/control-plane.md,
  // "Replicas"): one lease row, timed by the database's clock, whose epoch
  // grows by one at every change of holder.
  //
  // Takes the lease for `holder` for `lease_ms` when no one holds it or its
  // holder let it expire: the new epoch, or 0 when another holds it.
  virtual Result<int64_t> TakeLease(const std::string& holder, int64_t lease_ms) = 0;
  // Extends the lease `holder` took at `epoch` by `lease_ms` from now; false
  // when the lease has another epoch (it expired and was taken).
  virtual Result<bool> RenewLease(const std::string& holder, int64_t epoch, int64_t lease_ms) = 0;
  // Fencing: from now on every write first checks, in its own transaction and
  // holding the lease row against a takeover until it commits, that `epoch`
  // is still the lease's, and fails writing nothing when it is not, so a
  // deposed leader cannot write. 0 stops the checks (a follower's writes).
  virtual void FenceWrites(int64_t epoch) = 0;

  // Held by the leader while it launches: the lease row is held against a
  // takeover until the hold ends, so a replica that takes the lead after a
  // deposed leader's launch finds that launch's attempt by its name
  // (Backend::FindLaunched) instead of launching the job a second time. It
  // fences the backends that cannot fence launches themselves (Slurm,
  // Kubernetes; the local backend has its own fence file too).
  class LaunchHold {
   public:
    virtual ~LaunchHold() = default;
  };
  // A hold for a leader at `epoch`; refused, as Deposed (control/backend.h),
  // when the lease is at another epoch. This default, for a store that one
  // process writes: nothing to hold.
  virtual Result<std::unique_ptr<LaunchHold>> HoldLaunches(int64_t epoch) {
    (void)epoch;
    return std::unique_ptr<LaunchHold>();
  }

  // Appends utilization rows and keeps the newest `keep_per_job` of each job.
  virtual Status AppendUtilization(const std::vector<UtilizationRow>& rows, int keep_per_job) = 0;
  // The job's rows, oldest first, at most the newest `limit`.
  virtual Result<std::vector<UtilizationRow>> Utilization(const std::string& job_id, int limit) = 0;
};

struct SqliteOptions {
  std::string path;  // the file; for OpenStore, a PostgreSQL URI instead picks PostgreSQL
  std::string synchronous = "FULL";  // FULL: fsync per commit; NORMAL: see docs/control-plane.md
  int max_batch = 1024;              // writes per group commit
  int readers = 8;                   // pooled read connections
  bool group_commit = true;          // false: one transaction per write (the benchmark's baseline)
  bool pg_pipeline = true;           // PostgreSQL only: PostgresOptions::pipeline
};

Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options);

struct PostgresOptions {
  std::string uri;            // postgresql://USER@HOST:PORT/DB, or any libpq connection URI
  int max_batch = 1024;       // writes per group commit
  int readers = 8;            // pooled read connections
  bool group_commit = true;   // false: one transaction per write
  // true: a batch's statements go to the server in one round trip (libpq's
  // pipeline mode, a submission one statement); false: the reference, each
  // statement its own round trip, a submission four to six.
  bool pipeline = true;
};

// Connects, applies the migrations the database has not had, and returns the
// store. Any number of processes may open one database.
Result<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options);

// The store `options.path` names: a "postgresql://" or "postgres://" URI
// opens PostgreSQL (with the batch, reader and group-commit settings; the
// synchronous mode is SQLite's only), anything else the SQLite file.
Result<std::unique_ptr<Store>> OpenStore(const SqliteOptions& options);

}  // namespace meridian::control
