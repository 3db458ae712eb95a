/**
 * The bridge between a project's ledger file (the audit truth) and its mirror
 * in the state plane (for queries across daemons and hosts). The daemon
 * mirrors a project's ledger after each task it runs there; `crustcore
 * inspect --database-url` checks the mirror against the file.
 *
 * A ledger's id in the database is `<host>:<hash of the log's real path>`:
 * hosts sharing one PostgreSQL each keep their own ledger for the same
 * repository, and the same file always maps to the same id.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { type DecodedFrame, decodePayload, nodeSha256, scanFile, toHex } from '@crustcore/ledger';
import type { Db, LedgerFrameSummary } from '@crustcore/state';
import type { StatePlane } from './supervisor.js';

/** Frames per mirror transaction (the state plane's batch ceiling). */
const BATCH = 1_000;

export function ledgerIdFor(logPath: string): string {
  const host =
    hostname()
      .replace(/[^0-9A-Za-z._-]/g, '-')
      .slice(0, 60) || 'host';
  const path = createHash('sha256').update(realpathSync(logPath)).digest('hex').slice(0, 32);
  return `${host}:${path}`;
}

function summaryOf(frame: DecodedFrame): LedgerFrameSummary {
  const payload = decodePayload(frame);
  return {
    seq: frame.seq,
    frameHash: toHex(frame.hash),
    kind: frame.kind,
    taskId: frame.taskId ?? null,
    // A payload that is not JSON cannot be mirrored as JSON; inspect reports the ledger itself.
    payload: payload._tag === 'Right' ? payload.right : null,
  };
}

/** The log's frames with seq > `afterSeq`, in file order, up to the first damaged or torn frame. */
export function ledgerSummaries(logPath: string, afterSeq = 0): LedgerFrameSummary[] {
  const out: LedgerFrameSummary[] = [];
  scanFile(logPath, 0, nodeSha256, (frame) => {
    if (frame.seq > afterSeq) out.push(summaryOf(frame));
    return true;
  });
  return out;
}

export interface MirrorSync {
  readonly ledgerId: string;
  readonly inserted: number;
  readonly head: number;
}

/** Appends what the mirror lacks of `logPath`; idempotent, and a no-op when it is up to date. */
export async function syncLedgerMirror(state: StatePlane, db: Db, logPath: string): Promise<MirrorSync> {
  const ledgerId = ledgerIdFor(logPath);
  let head = await state.ledgerMirrorHead(db, { ledgerId });
  const missing = ledgerSummaries(logPath, head);
  let inserted = 0;
  for (let at = 0; at < missing.length; at += BATCH) {
    const done = await state.mirrorLedgerFrames(db, missing.slice(at, at + BATCH), { ledgerId });
    if (done._tag === 'Left') throw new Error(`ledger mirror ${ledgerId}: ${JSON.stringify(done.left)}`);
    inserted += done.right.inserted;
    head = done.right.head;
  }
  return { ledgerId, inserted, head };
}
