/**
 * Version 6: one mirror table for many ledgers. A daemon runs tasks in many
 * repositories, each with its own ledger (and several hosts share one
 * database), so every mirrored frame names its ledger and continuity, seq and
 * hash uniqueness hold per ledger. Rows mirrored before this version belong to
 * the ledger 'default'.
 */
import type { Migration } from './migration.js';

export const migration006: Migration = {
  version: 6,
  name: 'ledger mirror keyed by ledger',
  statements: [
    `ALTER TABLE crust_ledger_mirror ADD COLUMN ledger_id text NOT NULL DEFAULT 'default'
       CHECK (ledger_id ~ '^[0-9A-Za-z._:-]{1,128}$')`,
    `ALTER TABLE crust_ledger_mirror DROP CONSTRAINT crust_ledger_mirror_pkey`,
    `ALTER TABLE crust_ledger_mirror DROP CONSTRAINT crust_ledger_mirror_frame_hash_key`,
    `ALTER TABLE crust_ledger_mirror ADD CONSTRAINT crust_ledger_mirror_pkey PRIMARY KEY (ledger_id, seq)`,
    `ALTER TABLE crust_ledger_mirror ADD CONSTRAINT crust_ledger_mirror_frame_hash_key UNIQUE (ledger_id, frame_hash)`,
    `DROP INDEX crust_ledger_mirror_task`,
    `CREATE INDEX crust_ledger_mirror_task ON crust_ledger_mirror (ledger_id, task_id, seq) WHERE task_id IS NOT NULL`,
    `CREATE OR REPLACE FUNCTION crust_ledger_mirror_continuity() RETURNS trigger
     LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
     DECLARE
       v_expected bigint;
     BEGIN
       SELECT coalesce(max(seq), 0) + 1 INTO v_expected FROM crust_ledger_mirror WHERE ledger_id = NEW.ledger_id;
       IF NEW.seq <> v_expected THEN
         RAISE EXCEPTION USING ERRCODE = 'ZC008',
           MESSAGE = format('ledger mirror %s expects seq %s, got %s', NEW.ledger_id, v_expected, NEW.seq),
           DETAIL = json_build_object('expected_seq', v_expected, 'presented_seq', NEW.seq)::text;
       END IF;
       NEW.mirrored_at := now();
       RETURN NEW;
     END $$`,
  ],
};
