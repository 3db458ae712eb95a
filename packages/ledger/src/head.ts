/**
 * The head file: the last acknowledged (seq, frame hash, end offset) of a
 * log, kept outside the log so a cut-off tail is visible. It is replaced
 * atomically (temp + fsync + rename + directory fsync) after each group
 * commit's fsync and before the commit is acknowledged. With a receipt key it
 * carries an HMAC, so rewriting the log and the head together needs the key.
 *
 * Format: one line of canonical JSON, e.g.
 * `{"end":4096,"hash":"<64 hex>","mac":"<64 hex>","seq":12,"v":1}`.
 * An empty log's head is seq 0 with the all-zero hash.
 */
import { readFileSync } from 'node:fs';
import { canonicalJson, err, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { ReceiptKey } from './receipt-key.js';

export const HEAD_VERSION = 1;
const HEAD_MAC_DOMAIN = 'crustcore.ledger.head.v1';
/** A head file is one short line; anything longer is not ours. */
export const MAX_HEAD_BYTES = 512;

export interface Head {
  readonly seq: number;
  /** Hex frame hash of frame `seq` (all zeros when seq is 0). */
  readonly hash: string;
  /** Byte offset just past frame `seq`. */
  readonly end: number;
  readonly mac: string | undefined;
}

const hex64 = new t.Type<string, string, unknown>(
  'Hex64',
  (u): u is string => typeof u === 'string' && /^[0-9a-f]{64}$/.test(u),
  (u, c) =>
    typeof u === 'string' && /^[0-9a-f]{64}$/.test(u) ? t.success(u) : t.failure(u, c, 'expected 64 hex chars'),
  (a) => a,
);
const nonNegativeSafe = new t.Type<number, number, unknown>(
  'NonNegativeSafeInteger',
  (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= 0,
  (u, c) => (typeof u === 'number' && Number.isSafeInteger(u) && u >= 0 ? t.success(u) : t.failure(u, c)),
  (a) => a,
);
const HeadC = t.intersection([
  t.strict({ v: t.literal(HEAD_VERSION), seq: nonNegativeSafe, hash: hex64, end: nonNegativeSafe }),
  t.partial({ mac: hex64 }),
]);

/** The head as found on disk. */
export type HeadState =
  | { readonly _tag: 'Present'; readonly head: Head }
  | { readonly _tag: 'Absent' }
  | { readonly _tag: 'Malformed'; readonly reason: string };

export const ZERO_HASH_HEX = '0'.repeat(64);
export const EMPTY_HEAD: Head = { seq: 0, hash: ZERO_HASH_HEX, end: 0, mac: undefined };

export interface HeadError {
  readonly _tag: 'HeadError';
  readonly reason: string;
}

const macMessage = (head: Pick<Head, 'seq' | 'hash' | 'end'>): string =>
  canonicalJson({ v: HEAD_VERSION, seq: head.seq, hash: head.hash, end: head.end });

export function encodeHead(head: Pick<Head, 'seq' | 'hash' | 'end'>, key: ReceiptKey | undefined): string {
  const mac = key?.mac(HEAD_MAC_DOMAIN, macMessage(head));
  return `${canonicalJson({ v: HEAD_VERSION, seq: head.seq, hash: head.hash, end: head.end, mac })}\n`;
}

export function decodeHead(text: string): Result<HeadError, Head> {
  if (text.length > MAX_HEAD_BYTES) return err({ _tag: 'HeadError', reason: 'head file too long' });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return err({ _tag: 'HeadError', reason: 'head file is not JSON' });
  }
  const decoded = HeadC.decode(value);
  if (decoded._tag === 'Left') return err({ _tag: 'HeadError', reason: 'head file has the wrong shape' });
  const { seq, hash, end } = decoded.right;
  if ((seq === 0) !== (end === 0)) return err({ _tag: 'HeadError', reason: 'head seq and end disagree' });
  return ok({ seq, hash, end, mac: decoded.right.mac });
}

/** With a key, the head must carry a valid MAC: an unauthenticated head could be anyone's. */
export function checkHeadMac(head: Head, key: ReceiptKey): boolean {
  return head.mac !== undefined && key.verify(HEAD_MAC_DOMAIN, macMessage(head), head.mac);
}

/** Reads the head file; a missing file is Absent (a new log, or a crash before the first commit). */
export function readHeadState(path: string): HeadState {
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > MAX_HEAD_BYTES) return { _tag: 'Malformed', reason: 'head file too long' };
    text = bytes.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { _tag: 'Absent' };
    return { _tag: 'Malformed', reason: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
  const decoded = decodeHead(text);
  return decoded._tag === 'Right'
    ? { _tag: 'Present', head: decoded.right }
    : { _tag: 'Malformed', reason: decoded.left.reason };
}
