/**
 * Version 1: tasks and their phase, checked against a transition catalog
 * inside the database. A trigger rejects any phase change that is not an edge
 * of `crust_phase_edges`, so raw SQL cannot make an illegal move either. The
 * catalogs themselves change only inside a migration.
 */
import type { Migration } from './migration.js';

export const migration001: Migration = {
  version: 1,
  name: 'tasks and phase catalog',
  statements: [
    `CREATE TABLE crust_phases (
       name text PRIMARY KEY,
       terminal boolean NOT NULL
     )`,
    `INSERT INTO crust_phases (name, terminal) VALUES
       ('INIT', false), ('PLAN', false), ('IMPLEMENT', false), ('VERIFY', false),
       ('APPROVAL_GATE', false), ('COMMITTED', true), ('ABORTED', true)`,
    `CREATE TABLE crust_phase_edges (
       from_phase text NOT NULL REFERENCES crust_phases (name),
       to_phase text NOT NULL REFERENCES crust_phases (name),
       PRIMARY KEY (from_phase, to_phase),
       CHECK (from_phase <> to_phase)
     )`,
    `INSERT INTO crust_phase_edges (from_phase, to_phase) VALUES
       ('INIT', 'PLAN'), ('PLAN', 'IMPLEMENT'), ('IMPLEMENT', 'VERIFY'), ('VERIFY', 'APPROVAL_GATE'),
       ('APPROVAL_GATE', 'COMMITTED'), ('VERIFY', 'IMPLEMENT'),
       ('INIT', 'ABORTED'), ('PLAN', 'ABORTED'), ('IMPLEMENT', 'ABORTED'), ('VERIFY', 'ABORTED'),
       ('APPROVAL_GATE', 'ABORTED')`,
    // Catalogs are law: only a migration (which sets crustcore.migrating for its transaction) may edit them.
    `CREATE FUNCTION crust_catalog_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       IF current_setting('crustcore.migrating', true) IS DISTINCT FROM 'on' THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC011',
           MESSAGE = format('catalog %s changes only through a migration', TG_TABLE_NAME);
       END IF;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER crust_phases_read_only BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON crust_phases
       FOR EACH STATEMENT EXECUTE FUNCTION crust_catalog_guard()`,
    `CREATE TRIGGER crust_phase_edges_read_only BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON crust_phase_edges
       FOR EACH STATEMENT EXECUTE FUNCTION crust_catalog_guard()`,
    `CREATE TABLE crust_tasks (
       id text PRIMARY KEY CHECK (id ~ '^t_[0-9A-Za-z-]{1,40}$'),
       title text NOT NULL DEFAULT '' CHECK (octet_length(title) <= 4096),
       phase text NOT NULL DEFAULT 'INIT' REFERENCES crust_phases (name),
       phase_seq integer NOT NULL DEFAULT 0,
       created_at timestamptz NOT NULL DEFAULT now(),
       phase_changed_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE crust_task_phase_history (
       task_id text NOT NULL REFERENCES crust_tasks (id) ON DELETE CASCADE,
       phase_seq integer NOT NULL,
       from_phase text NULL,
       to_phase text NOT NULL,
       at timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (task_id, phase_seq)
     )`,
    `CREATE FUNCTION crust_tasks_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       IF TG_OP = 'INSERT' THEN
         IF NEW.phase <> 'INIT' THEN
           RAISE EXCEPTION USING ERRCODE = 'ZC001',
             MESSAGE = format('a task starts in INIT, not %s', NEW.phase),
             DETAIL = json_build_object('task_id', NEW.id, 'from', NULL, 'to', NEW.phase)::text;
         END IF;
         NEW.phase_seq := 0;
         NEW.created_at := now();
         NEW.phase_changed_at := now();
         RETURN NEW;
       END IF;
       IF NEW.id <> OLD.id OR NEW.created_at <> OLD.created_at OR NEW.phase_seq <> OLD.phase_seq
          OR NEW.phase_changed_at <> OLD.phase_changed_at THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = 'task id, creation time and phase bookkeeping are immutable';
       END IF;
       IF NEW.phase = OLD.phase THEN
         RETURN NEW;
       END IF;
       IF NOT EXISTS (SELECT 1 FROM crust_phase_edges WHERE from_phase = OLD.phase AND to_phase = NEW.phase) THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC001',
           MESSAGE = format('illegal phase transition %s -> %s for task %s', OLD.phase, NEW.phase, OLD.id),
           DETAIL = json_build_object('task_id', OLD.id, 'from', OLD.phase, 'to', NEW.phase)::text;
       END IF;
       NEW.phase_seq := OLD.phase_seq + 1;
       NEW.phase_changed_at := now();
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER crust_tasks_guard BEFORE INSERT OR UPDATE ON crust_tasks
       FOR EACH ROW EXECUTE FUNCTION crust_tasks_guard()`,
    `CREATE FUNCTION crust_tasks_history() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       IF TG_OP = 'INSERT' OR NEW.phase <> OLD.phase THEN
         INSERT INTO crust_task_phase_history (task_id, phase_seq, from_phase, to_phase)
         VALUES (NEW.id, NEW.phase_seq, CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.phase END, NEW.phase);
       END IF;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER crust_tasks_history AFTER INSERT OR UPDATE ON crust_tasks
       FOR EACH ROW EXECUTE FUNCTION crust_tasks_history()`,
    `CREATE FUNCTION crust_append_only() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     BEGIN
       RAISE EXCEPTION USING ERRCODE = 'ZC006', MESSAGE = format('%s is append-only', TG_TABLE_NAME);
     END $$`,
    `CREATE TRIGGER crust_task_phase_history_append_only BEFORE UPDATE ON crust_task_phase_history
       FOR EACH ROW EXECUTE FUNCTION crust_append_only()`,
  ],
};
