/**
 * Version 4: staged diffs, verification runs bound to the staged content,
 * apply journals, and file leases.
 *
 * The rules the database keeps, whoever writes:
 * - Diffs are staged only while the task is in IMPLEMENT.
 * - The staged content hash of a task is computed by the database
 *   (`crust_staged_content_hash`); a verification run is accepted only for the
 *   content that is staged right now.
 * - VERIFY -> APPROVAL_GATE needs a passing run on the current content; an
 *   apply journal needs APPROVAL_GATE and such a run; APPROVAL_GATE ->
 *   COMMITTED needs every staged diff applied.
 * - Diffs enter and leave APPLYING/APPLIED only through their journal's
 *   status (a trigger cascades it), never by direct UPDATE.
 * - File leases carry a token from the fencing sequence; a lease is taken
 *   over only after it expires.
 */
import type { Migration } from './migration.js';

const HEX64 = `'^[0-9a-f]{64}$'`;

export const migration004: Migration = {
  version: 4,
  name: 'staged diffs, verification runs, apply journals, file leases',
  statements: [
    `CREATE TABLE crust_staged_diffs (
       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       task_id text NOT NULL REFERENCES crust_tasks (id) ON DELETE CASCADE,
       file_path text NOT NULL CHECK (
         octet_length(file_path) BETWEEN 1 AND 4096
         AND file_path !~ '^/' AND file_path !~ '/$' AND file_path !~ '//'
         AND file_path !~ '(^|/)[.][.]?(/|$)' AND file_path !~ '[\\t\\n\\r]'),
       base_sha256 text NULL REFERENCES crust_blobs (sha256),
       staged_sha256 text NULL REFERENCES crust_blobs (sha256),
       diff_content text NOT NULL CHECK (octet_length(diff_content) <= 4194304),
       explanation text NOT NULL DEFAULT '' CHECK (octet_length(explanation) <= 65536),
       status text NOT NULL DEFAULT 'PENDING'
         CHECK (status IN ('PENDING', 'APPLYING', 'APPLIED', 'REJECTED', 'SUPERSEDED')),
       job_id text NULL REFERENCES crust_jobs (id),
       fence_token bigint NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now(),
       CHECK ((job_id IS NULL) = (fence_token IS NULL)),
       CHECK (base_sha256 IS NOT NULL OR staged_sha256 IS NOT NULL)
     )`,
    `CREATE UNIQUE INDEX crust_staged_diffs_active ON crust_staged_diffs (task_id, file_path)
       WHERE status IN ('PENDING', 'APPLYING', 'APPLIED')`,
    // One line per active diff, sorted by byte order; "-" stands for an absent side.
    `CREATE FUNCTION crust_staged_content_hash(p_task_id text) RETURNS text
     LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
       SELECT encode(sha256(convert_to(coalesce(string_agg(
                file_path || chr(9) || coalesce(base_sha256, '-') || chr(9) || coalesce(staged_sha256, '-') || chr(10),
                '' ORDER BY file_path COLLATE "C"), ''), 'UTF8')), 'hex')
         FROM crust_staged_diffs
        WHERE task_id = p_task_id AND status IN ('PENDING', 'APPLYING', 'APPLIED')
     $$`,
    `CREATE FUNCTION crust_staged_diffs_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     DECLARE
       v_phase text;
     BEGIN
       IF TG_OP = 'INSERT' THEN
         IF NEW.status <> 'PENDING' THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = 'a diff is staged PENDING';
         END IF;
         -- Share-lock the task: its phase cannot move while this diff is being staged.
         SELECT phase INTO v_phase FROM crust_tasks WHERE id = NEW.task_id FOR SHARE;
         IF v_phase IS DISTINCT FROM 'IMPLEMENT' THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC012',
             MESSAGE = format('task %s: diffs are staged only in IMPLEMENT, not %s', NEW.task_id, v_phase),
             DETAIL = json_build_object('task_id', NEW.task_id, 'phase', coalesce(v_phase, ''), 'required', 'IMPLEMENT')::text;
         END IF;
         IF NEW.job_id IS NOT NULL OR NEW.fence_token IS NOT NULL THEN
           PERFORM crust_require_fence(NEW.job_id, NEW.fence_token);
         END IF;
         NEW.created_at := now();
         NEW.updated_at := now();
         RETURN NEW;
       END IF;
       IF NEW.id <> OLD.id OR NEW.task_id <> OLD.task_id OR NEW.file_path <> OLD.file_path
          OR NEW.base_sha256 IS DISTINCT FROM OLD.base_sha256 OR NEW.staged_sha256 IS DISTINCT FROM OLD.staged_sha256
          OR NEW.diff_content <> OLD.diff_content OR NEW.explanation <> OLD.explanation
          OR NEW.job_id IS DISTINCT FROM OLD.job_id OR NEW.fence_token IS DISTINCT FROM OLD.fence_token
          OR NEW.created_at <> OLD.created_at THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = format('staged diff %s is immutable except its status', OLD.id);
       END IF;
       IF NEW.status = OLD.status THEN
         RETURN NEW;
       END IF;
       IF OLD.status = 'PENDING' AND NEW.status IN ('SUPERSEDED', 'REJECTED') THEN
         SELECT phase INTO v_phase FROM crust_tasks WHERE id = OLD.task_id FOR SHARE;
         IF NEW.status = 'SUPERSEDED' AND v_phase <> 'IMPLEMENT' THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC012',
             MESSAGE = format('task %s: diffs are superseded only in IMPLEMENT, not %s', OLD.task_id, v_phase),
             DETAIL = json_build_object('task_id', OLD.task_id, 'phase', v_phase, 'required', 'IMPLEMENT')::text;
         END IF;
       ELSIF (OLD.status, NEW.status) IN (('PENDING', 'APPLYING'), ('APPLYING', 'APPLIED'), ('APPLYING', 'PENDING')) THEN
         -- Only the apply-journal trigger moves diffs in and out of APPLYING.
         IF pg_trigger_depth() < 2 THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC006',
             MESSAGE = format('staged diff %s: %s -> %s happens only through its apply journal', OLD.id, OLD.status, NEW.status);
         END IF;
       ELSE
         RAISE EXCEPTION USING ERRCODE = 'ZC006',
           MESSAGE = format('staged diff %s: illegal status change %s -> %s', OLD.id, OLD.status, NEW.status);
       END IF;
       NEW.updated_at := now();
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER crust_staged_diffs_guard BEFORE INSERT OR UPDATE ON crust_staged_diffs
       FOR EACH ROW EXECUTE FUNCTION crust_staged_diffs_guard()`,
    `CREATE TABLE crust_verification_runs (
       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       task_id text NOT NULL REFERENCES crust_tasks (id) ON DELETE CASCADE,
       staged_hash text NOT NULL CHECK (staged_hash ~ ${HEX64}),
       argv jsonb NOT NULL CHECK (jsonb_typeof(argv) = 'array' AND octet_length(argv::text) <= 65536),
       sandbox_profile text NOT NULL CHECK (octet_length(sandbox_profile) BETWEEN 1 AND 256),
       exit_code integer NOT NULL,
       passed boolean GENERATED ALWAYS AS (exit_code = 0) STORED,
       duration_ms integer NOT NULL CHECK (duration_ms >= 0),
       stdout_sha256 text NULL CHECK (stdout_sha256 ~ ${HEX64}),
       stderr_sha256 text NULL CHECK (stderr_sha256 ~ ${HEX64}),
       job_id text NULL REFERENCES crust_jobs (id),
       fence_token bigint NULL,
       recorded_at timestamptz NOT NULL DEFAULT now(),
       CHECK ((job_id IS NULL) = (fence_token IS NULL))
     )`,
    `CREATE INDEX crust_verification_runs_task ON crust_verification_runs (task_id, staged_hash)`,
    `CREATE FUNCTION crust_verification_runs_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     DECLARE
       v_current text;
     BEGIN
       v_current := crust_staged_content_hash(NEW.task_id);
       IF NEW.staged_hash <> v_current THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC007',
           MESSAGE = format('task %s: verification run is for %s but %s is staged', NEW.task_id, NEW.staged_hash, v_current),
           DETAIL = json_build_object('task_id', NEW.task_id, 'presented', NEW.staged_hash, 'current', v_current)::text;
       END IF;
       IF NEW.job_id IS NOT NULL OR NEW.fence_token IS NOT NULL THEN
         PERFORM crust_require_fence(NEW.job_id, NEW.fence_token);
       END IF;
       NEW.recorded_at := now();
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER crust_verification_runs_guard BEFORE INSERT ON crust_verification_runs
       FOR EACH ROW EXECUTE FUNCTION crust_verification_runs_guard()`,
    `CREATE TRIGGER crust_verification_runs_append_only BEFORE UPDATE ON crust_verification_runs
       FOR EACH ROW EXECUTE FUNCTION crust_append_only()`,
    `CREATE TABLE crust_apply_journal_edges (
       from_status text NOT NULL,
       to_status text NOT NULL,
       PRIMARY KEY (from_status, to_status)
     )`,
    `INSERT INTO crust_apply_journal_edges (from_status, to_status) VALUES
       ('PENDING', 'APPLYING'), ('APPLYING', 'APPLIED'), ('APPLYING', 'ROLLED_BACK'), ('PENDING', 'ROLLED_BACK')`,
    `CREATE TRIGGER crust_apply_journal_edges_read_only
       BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON crust_apply_journal_edges
       FOR EACH STATEMENT EXECUTE FUNCTION crust_catalog_guard()`,
    `CREATE TABLE crust_apply_journals (
       id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       task_id text NOT NULL REFERENCES crust_tasks (id) ON DELETE CASCADE,
       verification_run_id bigint NOT NULL REFERENCES crust_verification_runs (id),
       staged_hash text NOT NULL CHECK (staged_hash ~ ${HEX64}),
       status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPLYING', 'APPLIED', 'ROLLED_BACK')),
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE UNIQUE INDEX crust_apply_journals_active ON crust_apply_journals (task_id)
       WHERE status IN ('PENDING', 'APPLYING', 'APPLIED')`,
    `CREATE INDEX crust_apply_journals_in_flight ON crust_apply_journals (status) WHERE status = 'APPLYING'`,
    `CREATE FUNCTION crust_apply_journals_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     DECLARE
       v_phase text;
       v_current text;
       v_run record;
     BEGIN
       IF TG_OP = 'INSERT' THEN
         IF NEW.status <> 'PENDING' THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = 'an apply journal starts PENDING';
         END IF;
         SELECT phase INTO v_phase FROM crust_tasks WHERE id = NEW.task_id FOR SHARE;
         IF v_phase IS DISTINCT FROM 'APPROVAL_GATE' THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC012',
             MESSAGE = format('task %s: an apply journal opens only in APPROVAL_GATE, not %s', NEW.task_id, v_phase),
             DETAIL = json_build_object('task_id', NEW.task_id, 'phase', coalesce(v_phase, ''), 'required', 'APPROVAL_GATE')::text;
         END IF;
         v_current := crust_staged_content_hash(NEW.task_id);
         SELECT task_id, staged_hash, passed INTO v_run FROM crust_verification_runs WHERE id = NEW.verification_run_id;
         IF NOT FOUND OR v_run.task_id <> NEW.task_id OR NOT v_run.passed
            OR v_run.staged_hash <> v_current OR NEW.staged_hash <> v_current THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC009',
             MESSAGE = format('task %s: no passing verification run %s on the staged content %s',
                              NEW.task_id, NEW.verification_run_id, v_current),
             DETAIL = json_build_object('task_id', NEW.task_id, 'staged_hash', v_current)::text;
         END IF;
         NEW.created_at := now();
         NEW.updated_at := now();
         RETURN NEW;
       END IF;
       IF NEW.id <> OLD.id OR NEW.task_id <> OLD.task_id OR NEW.verification_run_id <> OLD.verification_run_id
          OR NEW.staged_hash <> OLD.staged_hash OR NEW.created_at <> OLD.created_at THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = format('apply journal %s is immutable except its status', OLD.id);
       END IF;
       IF NEW.status = OLD.status THEN
         RETURN NEW;
       END IF;
       IF NOT EXISTS (SELECT 1 FROM crust_apply_journal_edges WHERE from_status = OLD.status AND to_status = NEW.status) THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC013',
           MESSAGE = format('apply journal %s: illegal status change %s -> %s', OLD.id, OLD.status, NEW.status),
           DETAIL = json_build_object('journal_id', OLD.id::text, 'from', OLD.status, 'to', NEW.status)::text;
       END IF;
       NEW.updated_at := now();
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER crust_apply_journals_guard BEFORE INSERT OR UPDATE ON crust_apply_journals
       FOR EACH ROW EXECUTE FUNCTION crust_apply_journals_guard()`,
    `CREATE FUNCTION crust_apply_journals_cascade() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       IF NEW.status = 'APPLYING' THEN
         UPDATE crust_staged_diffs SET status = 'APPLYING' WHERE task_id = NEW.task_id AND status = 'PENDING';
       ELSIF NEW.status = 'APPLIED' THEN
         UPDATE crust_staged_diffs SET status = 'APPLIED' WHERE task_id = NEW.task_id AND status = 'APPLYING';
       ELSIF NEW.status = 'ROLLED_BACK' THEN
         UPDATE crust_staged_diffs SET status = 'PENDING' WHERE task_id = NEW.task_id AND status = 'APPLYING';
       END IF;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER crust_apply_journals_cascade AFTER UPDATE OF status ON crust_apply_journals
       FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status) EXECUTE FUNCTION crust_apply_journals_cascade()`,
    `CREATE OR REPLACE FUNCTION crust_tasks_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     DECLARE
       v_hash text;
       v_unapplied integer;
     BEGIN
       IF TG_OP = 'INSERT' THEN
         IF NEW.phase <> 'INIT' THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC001',
             MESSAGE = format('a task starts in INIT, not %s', NEW.phase),
             DETAIL = json_build_object('task_id', NEW.id, 'from', NULL, 'to', NEW.phase)::text;
         END IF;
         NEW.phase_seq := 0;
         NEW.revisits := 0;
         NEW.created_at := now();
         NEW.phase_changed_at := now();
         RETURN NEW;
       END IF;
       IF NEW.id <> OLD.id OR NEW.created_at <> OLD.created_at OR NEW.phase_seq <> OLD.phase_seq
          OR NEW.phase_changed_at <> OLD.phase_changed_at OR NEW.max_revisits <> OLD.max_revisits
          OR NEW.revisits <> OLD.revisits THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC006',
           MESSAGE = 'task id, creation time, phase bookkeeping and revisit budget are immutable';
       END IF;
       IF NEW.phase = OLD.phase THEN
         RETURN NEW;
       END IF;
       IF NOT EXISTS (SELECT 1 FROM crust_phase_edges WHERE from_phase = OLD.phase AND to_phase = NEW.phase) THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC001',
           MESSAGE = format('illegal phase transition %s -> %s for task %s', OLD.phase, NEW.phase, OLD.id),
           DETAIL = json_build_object('task_id', OLD.id, 'from', OLD.phase, 'to', NEW.phase)::text;
       END IF;
       IF OLD.phase = 'VERIFY' AND NEW.phase = 'IMPLEMENT' THEN
         IF OLD.revisits >= OLD.max_revisits THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC002',
             MESSAGE = format('task %s used its %s phase revisits', OLD.id, OLD.max_revisits),
             DETAIL = json_build_object('task_id', OLD.id, 'revisits', OLD.revisits,
                                        'max_revisits', OLD.max_revisits)::text;
         END IF;
         NEW.revisits := OLD.revisits + 1;
       END IF;
       IF OLD.phase = 'VERIFY' AND NEW.phase = 'APPROVAL_GATE' THEN
         v_hash := crust_staged_content_hash(OLD.id);
         IF NOT EXISTS (SELECT 1 FROM crust_verification_runs
                         WHERE task_id = OLD.id AND staged_hash = v_hash AND passed) THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC009',
             MESSAGE = format('task %s: no passing verification run on the staged content %s', OLD.id, v_hash),
             DETAIL = json_build_object('task_id', OLD.id, 'staged_hash', v_hash)::text;
         END IF;
       END IF;
       IF OLD.phase = 'APPROVAL_GATE' AND NEW.phase = 'COMMITTED' THEN
         SELECT count(*) INTO v_unapplied FROM crust_staged_diffs
          WHERE task_id = OLD.id AND status IN ('PENDING', 'APPLYING');
         IF v_unapplied > 0 THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC010',
             MESSAGE = format('task %s: %s staged diff(s) not applied', OLD.id, v_unapplied),
             DETAIL = json_build_object('task_id', OLD.id, 'count', v_unapplied)::text;
         END IF;
       END IF;
       NEW.phase_seq := OLD.phase_seq + 1;
       NEW.phase_changed_at := now();
       RETURN NEW;
     END $$`,
    `CREATE TABLE crust_file_leases (
       path text PRIMARY KEY CHECK (
         octet_length(path) BETWEEN 1 AND 4096 AND path ~ '^/'
         AND (path = '/' OR path !~ '/$') AND path !~ '//' AND path !~ '(^|/)[.][.]?(/|$)'),
       holder text NOT NULL CHECK (octet_length(holder) BETWEEN 1 AND 256),
       token bigint NOT NULL,
       task_id text NULL REFERENCES crust_tasks (id) ON DELETE CASCADE,
       acquired_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL
     )`,
    `CREATE FUNCTION crust_file_leases_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       IF NEW.path <> OLD.path OR NEW.token < OLD.token THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC005', MESSAGE = format('file lease %s: tokens only increase', OLD.path);
       END IF;
       IF NEW.token = OLD.token AND NEW.holder <> OLD.holder THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC005', MESSAGE = format('file lease %s: a new holder needs a new token', OLD.path);
       END IF;
       IF NEW.token > OLD.token AND OLD.expires_at > now() THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC005', MESSAGE = format('file lease %s: still held by %s', OLD.path, OLD.holder);
       END IF;
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER crust_file_leases_guard BEFORE UPDATE ON crust_file_leases
       FOR EACH ROW EXECUTE FUNCTION crust_file_leases_guard()`,
  ],
};
