/**
 * Version 3: content-addressed blobs and jobs with leases and fencing tokens.
 *
 * - A blob's key is the SHA-256 of its bytes, checked by the database.
 * - Job status changes follow `crust_job_status_edges` (trigger-enforced): the
 *   kernel's JOB_TRANSITIONS. A lease that runs out goes to Expired, then on
 *   to Retrying (attempt + 1) or Failed.
 * - Every lease grant takes a new token from one sequence; the trigger
 *   refuses a token that does not increase, or a grant without a new token.
 * - `crust_require_fence(job, token)` refuses a worker whose lease is not the
 *   current one (re-granted, expired on the database clock, or ended). It
 *   share-locks the job row, so the lease cannot be re-granted while the
 *   writing transaction is open. Tables that workers write call it from a
 *   trigger, so a stale worker's raw INSERT is refused too.
 */
import type { Migration } from './migration.js';

export const migration003: Migration = {
  version: 3,
  name: 'blobs, jobs, leases and fencing tokens',
  statements: [
    `CREATE TABLE crust_blobs (
       sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
       byte_size integer NOT NULL,
       content bytea NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       CONSTRAINT crust_blobs_size CHECK (byte_size = octet_length(content) AND byte_size <= 33554432),
       CONSTRAINT crust_blobs_content_address CHECK (sha256 = encode(sha256(content), 'hex'))
     )`,
    `CREATE TRIGGER crust_blobs_immutable BEFORE UPDATE ON crust_blobs
       FOR EACH ROW EXECUTE FUNCTION crust_append_only()`,
    `CREATE TABLE crust_job_statuses (
       name text PRIMARY KEY,
       live boolean NOT NULL,
       terminal boolean NOT NULL
     )`,
    // Expired (the lease ran out) is a passing state: recovery moves it on to Retrying or Failed.
    `INSERT INTO crust_job_statuses (name, live, terminal) VALUES
       ('Queued', false, false), ('Leased', true, false), ('Running', true, false),
       ('HeartbeatMissing', true, false), ('Expired', false, false), ('Retrying', false, false),
       ('Completed', false, true), ('Failed', false, true), ('Killed', false, true)`,
    `CREATE TABLE crust_job_status_edges (
       from_status text NOT NULL REFERENCES crust_job_statuses (name),
       to_status text NOT NULL REFERENCES crust_job_statuses (name),
       PRIMARY KEY (from_status, to_status),
       CHECK (from_status <> to_status)
     )`,
    // The kernel's JOB_TRANSITIONS, plus Leased/HeartbeatMissing -> Retrying (a retryable failure
    // before or after a missed heartbeat), which the kernel's step also performs.
    `INSERT INTO crust_job_status_edges (from_status, to_status) VALUES
       ('Queued', 'Leased'), ('Queued', 'Killed'),
       ('Leased', 'Running'), ('Leased', 'HeartbeatMissing'), ('Leased', 'Expired'), ('Leased', 'Completed'),
       ('Leased', 'Failed'), ('Leased', 'Killed'), ('Leased', 'Retrying'),
       ('Running', 'HeartbeatMissing'), ('Running', 'Expired'), ('Running', 'Completed'), ('Running', 'Failed'),
       ('Running', 'Killed'), ('Running', 'Retrying'),
       ('HeartbeatMissing', 'Running'), ('HeartbeatMissing', 'Expired'), ('HeartbeatMissing', 'Completed'),
       ('HeartbeatMissing', 'Failed'), ('HeartbeatMissing', 'Killed'), ('HeartbeatMissing', 'Retrying'),
       ('Expired', 'Retrying'), ('Expired', 'Failed'),
       ('Retrying', 'Leased'), ('Retrying', 'Killed'), ('Retrying', 'Failed')`,
    `CREATE TRIGGER crust_job_statuses_read_only BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON crust_job_statuses
       FOR EACH STATEMENT EXECUTE FUNCTION crust_catalog_guard()`,
    `CREATE TRIGGER crust_job_status_edges_read_only
       BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON crust_job_status_edges
       FOR EACH STATEMENT EXECUTE FUNCTION crust_catalog_guard()`,
    `CREATE SEQUENCE crust_fence_seq AS bigint MINVALUE 1 NO CYCLE`,
    `CREATE TABLE crust_jobs (
       id text PRIMARY KEY CHECK (id ~ '^j_[0-9A-Za-z-]{1,40}$'),
       seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
       task_id text NULL REFERENCES crust_tasks (id) ON DELETE CASCADE,
       kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_.-]{0,63}$'),
       payload jsonb NOT NULL DEFAULT '{}' CHECK (octet_length(payload::text) <= 1048576),
       budget jsonb NOT NULL DEFAULT '{}' CHECK (octet_length(budget::text) <= 65536),
       status text NOT NULL DEFAULT 'Queued' REFERENCES crust_job_statuses (name),
       attempt integer NOT NULL DEFAULT 1,
       max_attempts integer NOT NULL DEFAULT 3,
       retry_base_delay_ms integer NOT NULL DEFAULT 1000,
       retry_max_delay_ms integer NOT NULL DEFAULT 60000,
       deadline_at timestamptz NULL,
       available_at timestamptz NOT NULL DEFAULT now(),
       owner text NULL CHECK (octet_length(owner) BETWEEN 1 AND 256),
       fence_token bigint NULL,
       lease_ms integer NULL CHECK (lease_ms BETWEEN 50 AND 86400000),
       leased_at timestamptz NULL,
       lease_expires_at timestamptz NULL,
       heartbeat_at timestamptz NULL,
       process_handle text NULL CHECK (octet_length(process_handle) <= 256),
       cancel_requested boolean NOT NULL DEFAULT false,
       result jsonb NULL CHECK (octet_length(result::text) <= 1048576),
       last_error text NULL CHECK (octet_length(last_error) <= 65536),
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now(),
       CONSTRAINT crust_jobs_attempts CHECK (attempt >= 1 AND max_attempts BETWEEN 1 AND 100 AND attempt <= max_attempts),
       CONSTRAINT crust_jobs_backoff CHECK (
         retry_base_delay_ms BETWEEN 0 AND 86400000 AND retry_max_delay_ms BETWEEN 0 AND 86400000),
       CONSTRAINT crust_jobs_live_lease CHECK (
         status NOT IN ('Leased', 'Running', 'HeartbeatMissing')
         OR (owner IS NOT NULL AND fence_token IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_ms IS NOT NULL))
     )`,
    `CREATE INDEX crust_jobs_claimable ON crust_jobs (available_at, seq) WHERE status IN ('Queued', 'Retrying')`,
    `CREATE INDEX crust_jobs_live ON crust_jobs (lease_expires_at) WHERE status IN ('Leased', 'Running', 'HeartbeatMissing')`,
    `CREATE INDEX crust_jobs_task ON crust_jobs (task_id)`,
    `CREATE FUNCTION crust_jobs_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       IF TG_OP = 'INSERT' THEN
         IF NEW.status <> 'Queued' OR NEW.fence_token IS NOT NULL OR NEW.attempt <> 1 THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC004',
             MESSAGE = 'a job is created Queued, at attempt 1, without a lease',
             DETAIL = json_build_object('job_id', NEW.id, 'from', '', 'to', NEW.status)::text;
         END IF;
         NEW.created_at := now();
         NEW.updated_at := now();
         RETURN NEW;
       END IF;
       IF NEW.id <> OLD.id OR NEW.seq <> OLD.seq OR NEW.kind <> OLD.kind OR NEW.payload <> OLD.payload
          OR NEW.budget <> OLD.budget OR NEW.task_id IS DISTINCT FROM OLD.task_id
          OR NEW.max_attempts <> OLD.max_attempts OR NEW.retry_base_delay_ms <> OLD.retry_base_delay_ms
          OR NEW.retry_max_delay_ms <> OLD.retry_max_delay_ms OR NEW.created_at <> OLD.created_at THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC006',
           MESSAGE = format('job %s: identity, payload, budget and retry policy are immutable', OLD.id);
       END IF;
       IF NEW.fence_token IS DISTINCT FROM OLD.fence_token THEN
         IF NEW.fence_token IS NULL OR NEW.fence_token <= coalesce(OLD.fence_token, 0) THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC005',
             MESSAGE = format('job %s: fencing tokens only increase (%s -> %s)', OLD.id, OLD.fence_token, NEW.fence_token);
         END IF;
         IF NEW.status <> 'Leased' OR OLD.status NOT IN ('Queued', 'Retrying') THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC005',
             MESSAGE = format('job %s: a new fencing token comes only with a new lease', OLD.id);
         END IF;
       END IF;
       IF NEW.status = OLD.status THEN
         IF NEW.attempt <> OLD.attempt THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = format('job %s: attempt advances only on retry', OLD.id);
         END IF;
         NEW.updated_at := now();
         RETURN NEW;
       END IF;
       IF NOT EXISTS (SELECT 1 FROM crust_job_status_edges WHERE from_status = OLD.status AND to_status = NEW.status) THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC004',
           MESSAGE = format('illegal job status change %s -> %s for job %s', OLD.status, NEW.status, OLD.id),
           DETAIL = json_build_object('job_id', OLD.id, 'from', OLD.status, 'to', NEW.status)::text;
       END IF;
       IF NEW.status = 'Leased' AND NEW.fence_token IS NOT DISTINCT FROM OLD.fence_token THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC005',
           MESSAGE = format('job %s: every lease grant takes a new fencing token', OLD.id);
       END IF;
       IF NOT (NEW.attempt = OLD.attempt OR (NEW.attempt = OLD.attempt + 1 AND NEW.status = 'Retrying')) THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = format('job %s: attempt advances by one, only on retry', OLD.id);
       END IF;
       NEW.updated_at := now();
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER crust_jobs_guard BEFORE INSERT OR UPDATE ON crust_jobs
       FOR EACH ROW EXECUTE FUNCTION crust_jobs_guard()`,
    `CREATE FUNCTION crust_require_fence(p_job_id text, p_token bigint) RETURNS void
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     DECLARE
       v_status text;
       v_token bigint;
       v_expires timestamptz;
       v_reason text;
     BEGIN
       SELECT status, fence_token, lease_expires_at INTO v_status, v_token, v_expires
         FROM crust_jobs WHERE id = p_job_id FOR SHARE;
       IF NOT FOUND THEN
         v_reason := 'ended';
       ELSIF v_token IS DISTINCT FROM p_token THEN
         v_reason := 'regranted';
       ELSIF v_status NOT IN ('Leased', 'Running', 'HeartbeatMissing') THEN
         v_reason := 'ended';
       ELSIF v_expires <= now() THEN
         v_reason := 'expired';
       ELSE
         RETURN;
       END IF;
       RAISE EXCEPTION USING ERRCODE = 'ZC003',
         MESSAGE = format('fencing token %s refused for job %s: %s', p_token, p_job_id, v_reason),
         DETAIL = json_build_object('job_id', p_job_id, 'presented', coalesce(p_token::text, ''),
                                    'current', v_token::text, 'reason', v_reason)::text;
     END $$`,
    `CREATE FUNCTION crust_fenced_write() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       IF NEW.job_id IS NOT NULL OR NEW.fence_token IS NOT NULL THEN
         PERFORM crust_require_fence(NEW.job_id, NEW.fence_token);
       END IF;
       RETURN NEW;
     END $$`,
    `CREATE TABLE crust_job_progress (
       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       job_id text NOT NULL REFERENCES crust_jobs (id) ON DELETE CASCADE,
       fence_token bigint NOT NULL,
       message text NOT NULL CHECK (octet_length(message) <= 65536),
       data jsonb NOT NULL DEFAULT '{}' CHECK (octet_length(data::text) <= 1048576),
       at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX crust_job_progress_job ON crust_job_progress (job_id, id)`,
    `CREATE TRIGGER crust_job_progress_fenced BEFORE INSERT ON crust_job_progress
       FOR EACH ROW EXECUTE FUNCTION crust_fenced_write()`,
    `CREATE TRIGGER crust_job_progress_append_only BEFORE UPDATE ON crust_job_progress
       FOR EACH ROW EXECUTE FUNCTION crust_append_only()`,
    `CREATE TABLE crust_job_artifacts (
       job_id text NOT NULL REFERENCES crust_jobs (id) ON DELETE CASCADE,
       sha256 text NOT NULL REFERENCES crust_blobs (sha256),
       label text NOT NULL CHECK (octet_length(label) BETWEEN 1 AND 256),
       fence_token bigint NOT NULL,
       at timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (job_id, label)
     )`,
    `CREATE TRIGGER crust_job_artifacts_fenced BEFORE INSERT ON crust_job_artifacts
       FOR EACH ROW EXECUTE FUNCTION crust_fenced_write()`,
    `CREATE TRIGGER crust_job_artifacts_append_only BEFORE UPDATE ON crust_job_artifacts
       FOR EACH ROW EXECUTE FUNCTION crust_append_only()`,
  ],
};
