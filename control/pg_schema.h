// The PostgreSQL schema of the control plane's store, as numbered
// migrations (docs/control-plane.md, "PostgreSQL"). The tables are SQLite's
// (schema.h) in PostgreSQL's types; job numbers come from a sequence, so
// every process writing to the database draws distinct ones, and a number,
// once drawn, is never drawn again (not after a rollback, not after the job
// is deleted). Internal to control/.
//
// A migration is applied once, in a transaction that also records its
// version in schema_version; a database at version N gets N+1, N+2, ... at
// start. Released migrations are never edited: a change is a new one.
#pragma once

namespace meridian::control {

struct PgMigration {
  int version;
  const char* sql;
};

inline constexpr PgMigration kPgMigrations[] = {
    {1, R"sql(
CREATE SEQUENCE jobs_seq;
CREATE TABLE tenants (
  name TEXT PRIMARY KEY,
  created_at BIGINT NOT NULL
);
CREATE TABLE tokens (
  n BIGINT GENERATED ALWAYS AS IDENTITY,
  hash TEXT PRIMARY KEY,
  tenant TEXT NOT NULL REFERENCES tenants(name),
  admin BOOLEAN NOT NULL DEFAULT false,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  revoked_at BIGINT,
  id TEXT NOT NULL UNIQUE,
  node TEXT NOT NULL DEFAULT ''
);
CREATE TABLE jobs (
  seq BIGINT PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  priority TEXT NOT NULL,
  state TEXT NOT NULL,
  submitted_at BIGINT NOT NULL,
  started_at BIGINT,
  ended_at BIGINT,
  attempts INTEGER NOT NULL DEFAULT 0,
  exit_code BIGINT,
  node TEXT NOT NULL DEFAULT '',
  gpus TEXT NOT NULL DEFAULT '',
  mig TEXT NOT NULL DEFAULT '',
  region TEXT NOT NULL DEFAULT '',
  pricing TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  spec TEXT NOT NULL,
  handle TEXT NOT NULL DEFAULT '',
  allocation TEXT NOT NULL DEFAULT '',
  cancel_requested BOOLEAN NOT NULL DEFAULT false,
  cost_micro_usd BIGINT NOT NULL DEFAULT 0,
  co2_mg BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX jobs_by_tenant ON jobs(tenant, seq);
CREATE INDEX jobs_by_state ON jobs(state, seq);
CREATE INDEX jobs_by_end ON jobs(ended_at);
CREATE TABLE attempts (
  job_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  node TEXT NOT NULL,
  handle TEXT NOT NULL DEFAULT '',
  started_at BIGINT,
  ended_at BIGINT,
  exit_code BIGINT,
  PRIMARY KEY (job_id, attempt)
);
CREATE TABLE events (
  job_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at BIGINT NOT NULL,
  type TEXT NOT NULL,
  from_state TEXT NOT NULL DEFAULT '',
  to_state TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, seq)
);
CREATE TABLE idempotency (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  job_id TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, key)
);
CREATE INDEX idempotency_by_age ON idempotency(created_at);
CREATE TABLE nodes (
  name TEXT PRIMARY KEY,
  gpu_model TEXT NOT NULL DEFAULT '',
  gpus INTEGER NOT NULL DEFAULT 0,
  vcpus INTEGER NOT NULL DEFAULT 0,
  ram_gib DOUBLE PRECISION NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'ready',
  last_heartbeat BIGINT NOT NULL DEFAULT 0,
  registered BOOLEAN NOT NULL DEFAULT true
);
CREATE TABLE utilization (
  job_id TEXT NOT NULL,
  at BIGINT NOT NULL,
  cpu_cores DOUBLE PRECISION NOT NULL,
  iowait_frac DOUBLE PRECISION NOT NULL,
  read_mb_per_s DOUBLE PRECISION NOT NULL,
  gpu_sm_pct DOUBLE PRECISION,
  gpu_mem_bw_pct DOUBLE PRECISION,
  gpu_mem_used_mib DOUBLE PRECISION,
  gpu_power_w DOUBLE PRECISION,
  class TEXT NOT NULL,
  PRIMARY KEY (job_id, at)
);
)sql"},
    // The leader's lease (docs/control-plane.md, "Replicas"): one row, its
    // expiry in Unix milliseconds by the database's clock, its epoch grown by
    // one at every change of holder (epoch 0: never held).
    {2, R"sql(
CREATE TABLE leader_lease (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  holder TEXT NOT NULL,
  epoch BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL
);
INSERT INTO leader_lease(id, holder, epoch, expires_at_ms) VALUES (1, '', 0, 0);
)sql"},
};

}  // namespace meridian::control
