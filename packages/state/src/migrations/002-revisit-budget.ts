/**
 * Version 2: a revisit budget on the cyclic edge VERIFY -> IMPLEMENT. Each
 * revisit counts; the trigger refuses the one that would exceed
 * `max_revisits` (default 3), so a verify/implement loop cannot oscillate
 * forever whoever issues the UPDATE. Existing tasks get 0 of 3.
 */
import type { Migration } from './migration.js';

export const migration002: Migration = {
  version: 2,
  name: 'phase revisit budget',
  statements: [
    `ALTER TABLE crust_tasks
       ADD COLUMN revisits integer NOT NULL DEFAULT 0,
       ADD COLUMN max_revisits integer NOT NULL DEFAULT 3,
       ADD CONSTRAINT crust_tasks_revisit_budget
         CHECK (revisits >= 0 AND max_revisits BETWEEN 0 AND 100 AND revisits <= max_revisits)`,
    `CREATE OR REPLACE FUNCTION crust_tasks_guard() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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
       NEW.phase_seq := OLD.phase_seq + 1;
       NEW.phase_changed_at := now();
       RETURN NEW;
     END $$`,
  ],
};
