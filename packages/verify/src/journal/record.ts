/**
 * The apply journal's on-disk record: model, io-ts codec, and the derived
 * names (temp siblings, preimage pack) every step agrees on. The record is
 * read back after a crash, so it is decoded, never trusted.
 */
import * as t from 'io-ts';

export const JOURNAL_FORMAT = 'crustcore-apply-journal/1';
export const JOURNAL_FILE = 'journal.json';
export const PREIMAGE_PACK = 'preimages.pack';
export const LOCK_FILE = '.lock';

export type FileMode = 'regular' | 'executable' | 'symlink';
export type JournalState = 'PENDING' | 'APPLYING' | 'APPLIED' | 'ROLLED_BACK';

const Mode = t.keyof({ regular: null, executable: null, symlink: null });
const Sha256 = t.refinement(t.string, (s) => /^[0-9a-f]{64}$/.test(s), 'Sha256');
const Count = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 0, 'Count');

const Before = t.type({ sha256: Sha256, mode: Mode, size: Count, offset: Count });
const After = t.type({ sha256: Sha256, mode: Mode, size: Count });

const Entry = t.type({
  path: t.string,
  before: t.union([Before, t.null]),
  after: t.union([After, t.null]),
});

export const JournalRecordCodec = t.type({
  format: t.literal(JOURNAL_FORMAT),
  journalId: t.string,
  label: t.string,
  root: t.string,
  state: t.keyof({ PENDING: null, APPLYING: null, APPLIED: null, ROLLED_BACK: null }),
  owner: t.type({ pid: t.number, startTime: t.union([t.string, t.null]) }),
  createdAtMs: t.number,
  entries: t.array(Entry),
  createdDirs: t.array(t.string),
  note: t.string,
});

export type JournalEntry = t.TypeOf<typeof Entry>;
export type JournalRecord = t.TypeOf<typeof JournalRecordCodec>;

export function decodeJournal(text: string): JournalRecord | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const decoded = JournalRecordCodec.decode(raw);
  return decoded._tag === 'Left' ? null : decoded.right;
}

export const encodeJournal = (record: JournalRecord): Uint8Array =>
  new TextEncoder().encode(`${JSON.stringify(record, null, 1)}\n`);

/** Temp sibling the new content is written to before the rename. Short, so long target names still fit NAME_MAX. */
export const applyTempName = (journalId: string, index: number): string => `.crustcore-${journalId}-${index}.tmp`;
/** Temp sibling a preimage is restored through during rollback. */
export const rollbackTempName = (journalId: string, index: number): string => `.crustcore-${journalId}-${index}.rb`;

export const JOURNAL_ID = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * `<journal id>.ended`, an empty file beside the journal's directory: the journal reached
 * APPLIED or ROLLED_BACK durably before it was made. Start-up recovery reads only journals
 * without one, so its cost follows the applies a crash interrupted, not every apply ever made.
 * A missing marker costs one read (recovery finds the terminal state and writes it); a marker
 * never stands for a journal that was not terminal.
 */
export const ENDED_SUFFIX = '.ended';
