/**
 * Version 5: a queryable mirror of ledger events. The ledger file stays the
 * audit truth; the mirror is for queries and is cross-checked against it.
 * The database keeps it gap-free (each row's seq is the previous one + 1),
 * unique by seq and frame hash, and append-only.
 */
import type { Migration } from './migration.js';

export const migration005: Migration = {
  version: 5,
  name: 'ledger event mirror',
  statements: [
    `CREATE TABLE crust_ledger_mirror (
       seq bigint PRIMARY KEY CHECK (seq >= 1),
       frame_hash text NOT NULL UNIQUE CHECK (frame_hash ~ '^[0-9a-f]{64}$'),
       kind text NOT NULL CHECK (octet_length(kind) BETWEEN 1 AND 128),
       task_id text NULL CHECK (task_id ~ '^t_[0-9A-Za-z-]{1,40}$'),
       payload jsonb NOT NULL CHECK (octet_length(payload::text) <= 1048576),
       mirrored_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX crust_ledger_mirror_task ON crust_ledger_mirror (task_id, seq) WHERE task_id IS NOT NULL`,
    `CREATE FUNCTION crust_ledger_mirror_continuity() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     DECLARE
       v_expected bigint;
     BEGIN
       SELECT coalesce(max(seq), 0) + 1 INTO v_expected FROM crust_ledger_mirror;
       IF NEW.seq <> v_expected THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC008',
           MESSAGE = format('ledger mirror expects seq %s, got %s', v_expected, NEW.seq),
           DETAIL = json_build_object('expected_seq', v_expected, 'presented_seq', NEW.seq)::text;
       END IF;
       NEW.mirrored_at := now();
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER crust_ledger_mirror_continuity BEFORE INSERT ON crust_ledger_mirror
       FOR EACH ROW EXECUTE FUNCTION crust_ledger_mirror_continuity()`,
    `CREATE TRIGGER crust_ledger_mirror_append_only BEFORE UPDATE OR DELETE ON crust_ledger_mirror
       FOR EACH ROW EXECUTE FUNCTION crust_append_only()`,
    `CREATE TRIGGER crust_ledger_mirror_no_truncate BEFORE TRUNCATE ON crust_ledger_mirror
       FOR EACH STATEMENT EXECUTE FUNCTION crust_append_only()`,
  ],
};
