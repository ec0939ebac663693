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
    // A submission as one statement (SendPgSubmit, pg_statements.cc): what
    // SubmitPg does in four to six, so a group-commit batch of submissions
    // goes to the server in one round trip. result is 'created', 'replayed'
    // or 'conflict'; result_id the job's id ("j-" and at least 8 digits, as
    // JobIdFor writes it).
    {3, R"sql(
CREATE FUNCTION meridian_submit(p_tenant TEXT, p_key TEXT, p_body_hash TEXT, p_name TEXT,
    p_kind TEXT, p_priority TEXT, p_at BIGINT, p_spec TEXT, p_key_ttl BIGINT,
    OUT result TEXT, OUT result_id TEXT) LANGUAGE plpgsql AS $$
DECLARE
  k RECORD;
  s BIGINT;
BEGIN
  IF p_key <> '' THEN
    SELECT i.body_hash, i.job_id, i.created_at INTO k FROM idempotency i
      WHERE i.tenant = p_tenant AND i.key = p_key;
    IF FOUND AND k.created_at > p_at - p_key_ttl THEN
      result := CASE WHEN k.body_hash = p_body_hash THEN 'replayed' ELSE 'conflict' END;
      result_id := k.job_id;
      RETURN;
    END IF;
    IF FOUND THEN  -- expired: the key goes to the new job
      DELETE FROM idempotency i WHERE i.tenant = p_tenant AND i.key = p_key;
    END IF;
  END IF;
  s := nextval('jobs_seq');
  result_id := 'j-' || CASE WHEN s < 100000000 THEN lpad(s::text, 8, '0') ELSE s::text END;
  INSERT INTO tenants(name, created_at) VALUES (p_tenant, p_at) ON CONFLICT DO NOTHING;
  INSERT INTO jobs(seq, id, tenant, name, kind, priority, state, submitted_at, spec)
    VALUES (s, result_id, p_tenant, p_name, p_kind, p_priority, 'queued', p_at, p_spec);
  INSERT INTO events(job_id, seq, at, type, from_state, to_state, message)
    VALUES (result_id, 1, p_at, 'state', '', 'queued', 'submitted');
  IF p_key <> '' THEN
    INSERT INTO idempotency(tenant, key, body_hash, job_id, created_at)
      VALUES (p_tenant, p_key, p_body_hash, result_id, p_at);
  END IF;
  result := 'created';
END
$$;
)sql"},
    // What the leader reads each cycle (Store::ChangedMarks, pg_lease.cc):
    // the transaction that last made a job or changed its state or cancel
    // flag, so the leader reads the jobs changed since its last read, not
    // every unfinished one. Set by default when a row is made and by the
    // trigger when one of those two changes; indexed for the reads.
    {4, R"sql(
ALTER TABLE jobs ADD COLUMN mark_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE FUNCTION meridian_mark_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.mark_xid := pg_current_xact_id();
  RETURN NEW;
END
$$;
CREATE TRIGGER jobs_mark_xid BEFORE UPDATE OF state, cancel_requested ON jobs FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.cancel_requested IS DISTINCT FROM NEW.cancel_requested)
  EXECUTE FUNCTION meridian_mark_xid();
CREATE INDEX jobs_mark_xid ON jobs(mark_xid);
)sql"},
    // The leader's fence (CheckPgFence, pg_lease.cc) checked by the server:
    // the lease row held FOR SHARE to the transaction's end, and a lease at
    // another epoch raised as an error (kPgRefusal, pg.h), which aborts the
    // transaction, so a batch can send its COMMIT with its writes without
    // reading the fence's answer first. The message is the Status's as is:
    // "deposed: " is kDeposedPrefix (backend.h), read by IsDeposed.
    {5, R"sql(
CREATE FUNCTION meridian_fence(p_epoch BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
  e BIGINT;
BEGIN
  SELECT l.epoch INTO e FROM leader_lease l WHERE l.id = 1 FOR SHARE;
  IF e IS DISTINCT FROM p_epoch THEN
    RAISE EXCEPTION USING ERRCODE = 'MR001', MESSAGE = format(
      'deposed: the leader''s lease is at epoch %s, not this replica''s %s: another replica '
      'took over, so this one writes and launches nothing as leader', COALESCE(e, 0), p_epoch);
  END IF;
  RETURN e;
END
$$;
)sql"},
};

}  // namespace meridian::control
