// The SQLite schema of the control plane's store (docs/control-plane.md has
// the tables and why each index exists). Internal to control/.
#pragma once

namespace meridian::control {

inline constexpr const char* kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS tenants (
  name TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
  hash TEXT PRIMARY KEY,
  tenant TEXT NOT NULL REFERENCES tenants(name),
  admin INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER,
  id TEXT,
  node TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS jobs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  priority TEXT NOT NULL,
  state TEXT NOT NULL,
  submitted_at INTEGER NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER,
  node TEXT NOT NULL DEFAULT '',
  gpus TEXT NOT NULL DEFAULT '',
  mig TEXT NOT NULL DEFAULT '',
  region TEXT NOT NULL DEFAULT '',
  pricing TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  spec TEXT NOT NULL,
  handle TEXT NOT NULL DEFAULT '',
  allocation TEXT NOT NULL DEFAULT '',
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  cost_micro_usd INTEGER NOT NULL DEFAULT 0,
  co2_mg INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs(tenant, seq);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state, seq);
CREATE TABLE IF NOT EXISTS attempts (
  job_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  node TEXT NOT NULL,
  handle TEXT NOT NULL DEFAULT '',
  started_at INTEGER,
  ended_at INTEGER,
  exit_code INTEGER,
  PRIMARY KEY (job_id, attempt)
);
CREATE TABLE IF NOT EXISTS events (
  job_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at INTEGER NOT NULL,
  type TEXT NOT NULL,
  from_state TEXT NOT NULL DEFAULT '',
  to_state TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idempotency (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  job_id TEXT NOT NULL,
  created_at INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS nodes (
  name TEXT PRIMARY KEY,
  gpu_model TEXT NOT NULL DEFAULT '',
  gpus INTEGER NOT NULL DEFAULT 0,
  vcpus INTEGER NOT NULL DEFAULT 0,
  ram_gib REAL NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'ready',
  last_heartbeat INTEGER NOT NULL DEFAULT 0,
  registered INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS utilization (
  job_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  cpu_cores REAL NOT NULL,
  iowait_frac REAL NOT NULL,
  read_mb_per_s REAL NOT NULL,
  gpu_sm_pct REAL,
  gpu_mem_bw_pct REAL,
  gpu_mem_used_mib REAL,
  gpu_power_w REAL,
  class TEXT NOT NULL,
  PRIMARY KEY (job_id, at)
) WITHOUT ROWID;
)sql";

// Databases made before tokens had ids and nodes get the columns (added by
// AddTokenColumns when missing) and a random id per token; then the index.
inline constexpr const char* kTokenIdsSql = R"sql(
UPDATE tokens SET id = 'tok_' || lower(hex(randomblob(8))) WHERE id IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS tokens_by_id ON tokens(id);
)sql";

}  // namespace meridian::control
