/**
 * A queryable mirror of ledger events in the database. The ledger file is the
 * audit truth; this copy exists for queries (by task, by kind) and is checked
 * against the ledger by `crossCheckLedgerMirror`, which `crustcore inspect
 * --database-url` runs. The database keeps each ledger's mirror gap-free,
 * unique and append-only; many ledgers share the table, each under its id.
 */
import { canonicalJson, err, isHash32, type Json, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { Db } from './db.js';
import { DbInt, DbJson, decodeRow, encodeJson, nullable } from './db-values.js';
import { catchStateErrors, invalidInput, type StateError } from './errors.js';

/** What the mirror keeps of one ledger frame. The ledger maps its frames to this. */
export interface LedgerFrameSummary {
  readonly seq: number;
  /** Lowercase hex SHA-256 of the frame as written in the ledger. */
  readonly frameHash: string;
  readonly kind: string;
  readonly taskId: string | null;
  readonly payload: Json;
}

export const LEDGER_MIRROR_LIMITS = { maxBatch: 1000, maxPayloadBytes: 1_048_576, crossCheckBatch: 500 } as const;

/** The ledger rows mirrored before ledgers had ids belong to (and calls without one use). */
export const DEFAULT_LEDGER_ID = 'default';
const LEDGER_ID = /^[0-9A-Za-z._:-]{1,128}$/;

/** Which ledger a call is about. */
export interface LedgerRef {
  readonly ledgerId?: string;
}

function ledgerIdOf(ref: LedgerRef): Result<StateError, string> {
  const id = ref.ledgerId ?? DEFAULT_LEDGER_ID;
  return LEDGER_ID.test(id) ? ok(id) : err(invalidInput('ledgerId', 'must be 1..128 of [0-9A-Za-z._:-]'));
}

function ledgerIdOrThrow(ref: LedgerRef): string {
  const id = ledgerIdOf(ref);
  if (id._tag === 'Left')
    throw new Error(`ledgerId ${JSON.stringify(ref.ledgerId)}: must be 1..128 of [0-9A-Za-z._:-]`);
  return id.right;
}

const MirrorRow = t.type({
  seq: DbInt,
  frame_hash: t.string,
  kind: t.string,
  task_id: nullable(t.string),
  payload: DbJson,
});

function frameProblem(frame: LedgerFrameSummary): string | null {
  if (!Number.isSafeInteger(frame.seq) || frame.seq < 1) return 'seq must be an integer >= 1';
  if (!isHash32(frame.frameHash)) return 'frameHash must be 64 lowercase hex';
  if (frame.kind.length === 0 || Buffer.byteLength(frame.kind, 'utf8') > 128) return 'kind must be 1..128 bytes';
  if (frame.taskId !== null && !/^t_[0-9A-Za-z-]{1,40}$/.test(frame.taskId)) return 'taskId must be a TaskId';
  return null;
}

export interface MirrorReport {
  readonly inserted: number;
  /** Frames already mirrored with the same hash (mirroring is idempotent). */
  readonly skipped: number;
  readonly head: number;
}

/**
 * Appends frames in order, in one transaction. A frame already mirrored with
 * the same hash is skipped; with a different hash it is a conflict; a gap is
 * refused by the database (LedgerDiscontinuity).
 */
export async function mirrorLedgerFrames(
  db: Db,
  frames: readonly LedgerFrameSummary[],
  ref: LedgerRef = {},
): Promise<Result<StateError, MirrorReport>> {
  const ledgerId = ledgerIdOf(ref);
  if (ledgerId._tag === 'Left') return ledgerId;
  if (frames.length > LEDGER_MIRROR_LIMITS.maxBatch) {
    return err(invalidInput('frames', `at most ${LEDGER_MIRROR_LIMITS.maxBatch} per call`));
  }
  const payloads: string[] = [];
  for (const frame of frames) {
    const problem = frameProblem(frame);
    if (problem !== null) return err(invalidInput(`frames[seq ${frame.seq}]`, problem));
    const payload = encodeJson(frame.payload, 'payload', LEDGER_MIRROR_LIMITS.maxPayloadBytes);
    if (payload._tag === 'Left') return payload;
    payloads.push(payload.right);
  }
  return catchStateErrors(() =>
    db.transaction(async (tx): Promise<Result<StateError, MirrorReport>> => {
      let inserted = 0;
      let skipped = 0;
      for (const [index, frame] of frames.entries()) {
        const existing = await tx.query<{ frame_hash: string }>(
          'SELECT frame_hash FROM crust_ledger_mirror WHERE ledger_id = $1::text AND seq = $2::int8',
          [ledgerId.right, frame.seq],
        );
        const mirrored = existing.rows[0];
        if (mirrored !== undefined) {
          if (mirrored.frame_hash !== frame.frameHash) {
            return err({
              _tag: 'LedgerMirrorConflict',
              seq: frame.seq,
              mirrorHash: mirrored.frame_hash,
              frameHash: frame.frameHash,
            });
          }
          skipped += 1;
          continue;
        }
        await tx.query(
          `INSERT INTO crust_ledger_mirror (ledger_id, seq, frame_hash, kind, task_id, payload)
           VALUES ($1::text, $2::int8, $3::text, $4::text, $5::text, ($6::text)::jsonb)`,
          [ledgerId.right, frame.seq, frame.frameHash, frame.kind, frame.taskId, payloads[index] ?? 'null'],
        );
        inserted += 1;
      }
      const head = await tx.query<{ head: unknown }>(
        'SELECT coalesce(max(seq), 0)::int8::text AS head FROM crust_ledger_mirror WHERE ledger_id = $1::text',
        [ledgerId.right],
      );
      return ok({ inserted, skipped, head: decodeRow(DbInt, head.rows[0]?.head, 'mirror head') });
    }),
  );
}

export async function ledgerMirrorHead(db: Db, ref: LedgerRef = {}): Promise<number> {
  const head = await db.query<{ head: unknown }>(
    'SELECT coalesce(max(seq), 0)::text AS head FROM crust_ledger_mirror WHERE ledger_id = $1::text',
    [ledgerIdOrThrow(ref)],
  );
  return decodeRow(DbInt, head.rows[0]?.head, 'mirror head');
}

export type MirrorMismatch =
  | { readonly _tag: 'MissingInMirror'; readonly seq: number }
  | { readonly _tag: 'HashMismatch'; readonly seq: number; readonly ledgerHash: string; readonly mirrorHash: string }
  | { readonly _tag: 'FieldMismatch'; readonly seq: number; readonly field: 'kind' | 'taskId' | 'payload' }
  | { readonly _tag: 'ExtraInMirror'; readonly seq: number }
  | { readonly _tag: 'LedgerOutOfOrder'; readonly seq: number; readonly expectedSeq: number };

export interface CrossCheckReport {
  /** True when every mirrored frame matches the ledger and nothing extra is mirrored. */
  readonly consistent: boolean;
  readonly framesChecked: number;
  readonly ledgerHead: number;
  readonly mirrorHead: number;
  /** Ledger frames after the mirror's head: not yet mirrored (lag, not corruption). */
  readonly behind: number;
  readonly mismatches: readonly MirrorMismatch[];
  /** More mismatches existed than `maxMismatches`. */
  readonly truncated: boolean;
}

/**
 * Compares the mirror with the ledger's frames (given in seq order, e.g.
 * streamed from the ledger file). Reads the mirror in batches; reports at
 * most `maxMismatches` (default 100).
 */
export async function crossCheckLedgerMirror(
  db: Db,
  frames: Iterable<LedgerFrameSummary> | AsyncIterable<LedgerFrameSummary>,
  options: { readonly maxMismatches?: number } & LedgerRef = {},
): Promise<CrossCheckReport> {
  const ledgerId = ledgerIdOrThrow(options);
  const maxMismatches = Math.max(1, Math.min(options.maxMismatches ?? 100, 10_000));
  const mismatches: MirrorMismatch[] = [];
  let truncated = false;
  const report = (mismatch: MirrorMismatch): void => {
    if (mismatches.length < maxMismatches) mismatches.push(mismatch);
    else truncated = true;
  };
  const mirrorHead = await ledgerMirrorHead(db, { ledgerId });
  let framesChecked = 0;
  let ledgerHead = 0;
  let behind = 0;
  let batch: LedgerFrameSummary[] = [];

  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const seqs = batch.map((frame) => frame.seq);
    const rows = await db.query(
      `SELECT seq::text AS seq, frame_hash, kind, task_id, payload FROM crust_ledger_mirror
        WHERE ledger_id = $1::text AND seq >= $2::int8 AND seq <= $3::int8`,
      [ledgerId, Math.min(...seqs), Math.max(...seqs)],
    );
    const bySeq = new Map(
      rows.rows.map((row) => {
        const r = decodeRow(MirrorRow, row, 'ledger mirror');
        return [r.seq, r] as const;
      }),
    );
    for (const frame of batch) {
      const mirrored = bySeq.get(frame.seq);
      if (mirrored === undefined) {
        if (frame.seq > mirrorHead) behind += 1;
        else report({ _tag: 'MissingInMirror', seq: frame.seq });
        continue;
      }
      if (mirrored.frame_hash !== frame.frameHash) {
        report({ _tag: 'HashMismatch', seq: frame.seq, ledgerHash: frame.frameHash, mirrorHash: mirrored.frame_hash });
      }
      if (mirrored.kind !== frame.kind) report({ _tag: 'FieldMismatch', seq: frame.seq, field: 'kind' });
      if (mirrored.task_id !== frame.taskId) report({ _tag: 'FieldMismatch', seq: frame.seq, field: 'taskId' });
      if (!sameJson(mirrored.payload, frame.payload))
        report({ _tag: 'FieldMismatch', seq: frame.seq, field: 'payload' });
    }
    batch = [];
  };

  for await (const frame of frames) {
    const expectedSeq = ledgerHead + 1;
    if (frame.seq !== expectedSeq) report({ _tag: 'LedgerOutOfOrder', seq: frame.seq, expectedSeq });
    ledgerHead = Math.max(ledgerHead, frame.seq);
    framesChecked += 1;
    batch.push(frame);
    if (batch.length >= LEDGER_MIRROR_LIMITS.crossCheckBatch) await flush();
  }
  await flush();

  if (mirrorHead > ledgerHead) {
    const extra = await db.query(
      `SELECT seq::text AS seq FROM crust_ledger_mirror WHERE ledger_id = $1::text AND seq > $2::int8
        ORDER BY seq LIMIT $3::int4`,
      [ledgerId, ledgerHead, maxMismatches + 1],
    );
    for (const row of extra.rows) {
      report({ _tag: 'ExtraInMirror', seq: decodeRow(t.type({ seq: DbInt }), row, 'mirror seq').seq });
    }
  }
  return {
    consistent: mismatches.length === 0 && !truncated,
    framesChecked,
    ledgerHead,
    mirrorHead,
    behind,
    mismatches,
    truncated,
  };
}

const sameJson = (a: Json, b: Json): boolean => {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
};

/** Mirrored frames of one task, in order. */
export async function mirroredFramesOfTask(
  db: Db,
  taskId: string,
  limit = 1000,
  ref: LedgerRef = {},
): Promise<readonly LedgerFrameSummary[]> {
  const rows = await db.query(
    `SELECT seq::text AS seq, frame_hash, kind, task_id, payload FROM crust_ledger_mirror
      WHERE ledger_id = $1::text AND task_id = $2::text ORDER BY seq LIMIT $3::int4`,
    [ledgerIdOrThrow(ref), taskId, Math.max(1, Math.min(limit, 100_000))],
  );
  return rows.rows.map((row) => {
    const r = decodeRow(MirrorRow, row, 'ledger mirror');
    return { seq: r.seq, frameHash: r.frame_hash, kind: r.kind, taskId: r.task_id, payload: r.payload };
  });
}
