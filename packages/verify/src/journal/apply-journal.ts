/**
 * Crash-safe multi-file apply, in the manner of a storage engine's WAL.
 *
 *   drift check (read only) → journal PENDING → preimages durable
 *   → journal APPLYING → per file: temp sibling (O_EXCL) + fsync + rename
 *   → fsync touched directories → journal APPLIED (the commit point)
 *
 * Recovery rule: a journal that did not durably reach APPLIED is rolled back
 * to all-old. Renames are atomic, so every target is always either its old or
 * its new content; rollback restores old content from the preimage pack and
 * removes files that did not exist. See docs/apply-journal.md.
 *
 * Synchronous on purpose: the sequence is short, ordered and must not
 * interleave with other writers (a lock enforces one writer per journal root).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { currentOwner, isOwnerAlive, type ProcessOwner } from '../owner.js';
import {
  createSymlink,
  fsyncDirectory,
  rmdirIfEmpty,
  unlinkIfPresent,
  writeFileAtomic,
  writeNewFileSynced,
} from './durable.js';
import { isLock, tryLockJournalRoot } from './lock.js';
import {
  applyTempName,
  decodeJournal,
  ENDED_SUFFIX,
  encodeJournal,
  type FileMode,
  JOURNAL_FILE,
  JOURNAL_FORMAT,
  JOURNAL_ID,
  type JournalEntry,
  type JournalRecord,
  type JournalState,
  PREIMAGE_PACK,
  rollbackTempName,
} from './record.js';

export type { FileMode, JournalState };

/** Content and mode a target is expected to have (or to get). */
export interface FileImage {
  readonly sha256: string;
  readonly mode: FileMode;
}

export interface FileContent {
  readonly bytes: Uint8Array;
  readonly mode: FileMode;
}

/**
 * One file of a batch. `before` is the base preimage (null: must not exist);
 * `after` the new content (null: delete). A rename is a delete plus a create.
 */
export interface FileChange {
  readonly path: string;
  readonly before: FileImage | null;
  readonly after: FileContent | null;
}

export type ObservedFile =
  | { readonly kind: 'absent' }
  | { readonly kind: 'not-a-file' }
  | { readonly kind: 'file'; readonly sha256: string; readonly mode: FileMode };

export interface DriftedFile {
  readonly path: string;
  readonly expected: FileImage | null;
  readonly actual: ObservedFile;
}

export type ApplyError =
  | { readonly _tag: 'Drift'; readonly drifted: readonly DriftedFile[] }
  | { readonly _tag: 'UnsafePath'; readonly path: string; readonly reason: string }
  | { readonly _tag: 'JournalBusy'; readonly owner: ProcessOwner }
  | {
      readonly _tag: 'ApplyFailed';
      readonly message: string;
      /** True when the tree was put back to all-old in process; false means run recovery. */
      readonly rolledBack: boolean;
      readonly journalDir: string | null;
    };

export interface ApplyReceipt {
  readonly journalId: string;
  readonly journalDir: string;
  readonly state: 'APPLIED';
  readonly paths: readonly string[];
}

/** Fault-injection hook: called at every step, in order. Tests kill the process here. */
export type StepHook = (step: string) => void;

export interface ApplyOptions {
  /** The user's working tree (absolute). */
  readonly root: string;
  /** Directory holding journals: `$CRUSTCORE_HOME/journal` or an artifact directory. */
  readonly journalRoot: string;
  /** Defaults to a random id. `[A-Za-z0-9_-]{1,80}`. */
  readonly journalId?: string;
  /** Free text recorded in the journal (e.g. the task id). ≤ 200 chars. */
  readonly label?: string;
  readonly nowMs?: number;
  readonly onStep?: StepHook;
}

export const MAX_BATCH_FILES = 10_000;
export const MAX_PATH_CHARS = 4096;

const noStep: StepHook = () => {};

// ── reading the tree ────────────────────────────────────────────────────────

const sha256Of = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

function readFd(fd: number, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size);
  let offset = 0;
  while (offset < size) {
    const read = readSync(fd, buffer, offset, size - offset, offset);
    if (read === 0) break;
    offset += read;
  }
  return offset === size ? buffer : buffer.subarray(0, offset);
}

/** Current content of a path without following a final symlink. Hashes bytes; size and mtime are never trusted. */
function observe(path: string): { observed: ObservedFile; bytes: Uint8Array | null } {
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { observed: { kind: 'absent' }, bytes: null };
    throw error;
  }
  if (info.isSymbolicLink()) {
    const bytes = readlinkSync(path, { encoding: 'buffer' });
    return { observed: { kind: 'file', sha256: sha256Of(bytes), mode: 'symlink' }, bytes };
  }
  if (!info.isFile()) return { observed: { kind: 'not-a-file' }, bytes: null };
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) return { observed: { kind: 'not-a-file' }, bytes: null };
    const bytes = readFd(fd, opened.size);
    const mode: FileMode = (opened.mode & 0o100) !== 0 ? 'executable' : 'regular';
    return { observed: { kind: 'file', sha256: sha256Of(bytes), mode }, bytes };
  } finally {
    closeSync(fd);
  }
}

const sameImage = (observed: ObservedFile, image: FileImage | null): boolean =>
  image === null
    ? observed.kind === 'absent'
    : observed.kind === 'file' && observed.sha256 === image.sha256 && observed.mode === image.mode;

// ── path safety ─────────────────────────────────────────────────────────────

function checkRelativePath(path: string): string | null {
  if (path.length === 0 || path.length > MAX_PATH_CHARS) return 'bad length';
  if (path.includes('\0')) return 'NUL byte';
  if (path.startsWith('/')) return 'absolute path';
  for (const part of path.split('/')) {
    if (part === '' || part === '.' || part === '..') return `bad component "${part}"`;
    if (part.toLowerCase() === '.git') return 'inside .git';
  }
  return null;
}

/**
 * Walks the parents of `path` under `root`: each existing one must be a real
 * directory (a symlinked directory could point the write outside the tree).
 * Returns the parents that do not exist yet, shallowest first.
 */
function missingParents(root: string, path: string): { missing: string[]; problem: string | null } {
  const parts = path.split('/').slice(0, -1);
  const missing: string[] = [];
  let relative = '';
  for (const part of parts) {
    relative = relative === '' ? part : `${relative}/${part}`;
    if (missing.length > 0) {
      missing.push(relative);
      continue;
    }
    try {
      const info = lstatSync(join(root, relative));
      if (!info.isDirectory()) return { missing, problem: `${relative} is not a directory` };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.push(relative);
    }
  }
  return { missing, problem: null };
}

// ── journal files ───────────────────────────────────────────────────────────

function writeRecord(journalDir: string, record: JournalRecord): void {
  writeFileAtomic(join(journalDir, JOURNAL_FILE), encodeJournal(record), journalDir);
}

const octal = (mode: FileMode): number => (mode === 'executable' ? 0o755 : 0o644);

function parentsToSync(root: string, record: JournalRecord): string[] {
  const dirs = new Set<string>();
  for (const entry of record.entries) dirs.add(dirname(join(root, entry.path)));
  for (const dir of record.createdDirs) dirs.add(dirname(join(root, dir)));
  return [...dirs];
}

/** Puts new content at `target` through a fresh temp sibling and an atomic rename. */
function placeContent(target: string, temp: string, bytes: Uint8Array, mode: FileMode, onHalf?: () => void): void {
  unlinkIfPresent(temp);
  if (mode === 'symlink') createSymlink(temp, Buffer.from(bytes).toString('utf8'));
  else writeNewFileSynced(temp, bytes, octal(mode), onHalf);
  renameSync(temp, target);
}

// ── apply ───────────────────────────────────────────────────────────────────

function validateBatch(changes: readonly FileChange[]): ApplyError | null {
  if (changes.length > MAX_BATCH_FILES) {
    return { _tag: 'UnsafePath', path: '', reason: `more than ${MAX_BATCH_FILES} files in one batch` };
  }
  const seen = new Set<string>();
  for (const change of changes) {
    const problem = checkRelativePath(change.path);
    if (problem !== null) return { _tag: 'UnsafePath', path: change.path.slice(0, 200), reason: problem };
    if (seen.has(change.path)) return { _tag: 'UnsafePath', path: change.path, reason: 'listed twice' };
    seen.add(change.path);
    if (change.after?.mode === 'symlink' && change.after.bytes.includes(0)) {
      return { _tag: 'UnsafePath', path: change.path, reason: 'symlink target holds a NUL byte' };
    }
  }
  return null;
}

/**
 * Applies a batch of file changes to `options.root` all-or-nothing. Drift in
 * any target aborts the whole batch before any write.
 */
export function applyChanges(changes: readonly FileChange[], options: ApplyOptions): Result<ApplyError, ApplyReceipt> {
  if (!isAbsolute(options.root))
    return err({ _tag: 'UnsafePath', path: options.root, reason: 'root must be absolute' });
  const invalid = validateBatch(changes);
  if (invalid !== null) return err(invalid);
  const journalId = options.journalId ?? `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
  if (!JOURNAL_ID.test(journalId)) return err({ _tag: 'UnsafePath', path: journalId, reason: 'bad journal id' });
  const step = options.onStep ?? noStep;
  mkdirSync(options.journalRoot, { recursive: true, mode: 0o700 });
  const lock = tryLockJournalRoot(options.journalRoot);
  if (!isLock(lock)) return err({ _tag: 'JournalBusy', owner: lock });
  try {
    removeStaleMarker(join(options.journalRoot, journalId));
    const applied = applyLocked(changes, options, journalId, step);
    // After APPLIED is durable (a rollback marks its own journal).
    if (applied._tag === 'Right') markEnded(applied.right.journalDir);
    return applied;
  } finally {
    lock.release();
  }
}

function applyLocked(
  changes: readonly FileChange[],
  options: ApplyOptions,
  journalId: string,
  step: StepHook,
): Result<ApplyError, ApplyReceipt> {
  const { root } = options;
  // 1. Drift check and path safety: read only, so an abort here writes nothing.
  const drifted: DriftedFile[] = [];
  const preimages: (Uint8Array | null)[] = [];
  const created = new Set<string>();
  for (const change of changes) {
    const parents = missingParents(root, change.path);
    if (parents.problem !== null) return err({ _tag: 'UnsafePath', path: change.path, reason: parents.problem });
    if (change.after !== null) for (const dir of parents.missing) created.add(dir);
    const { observed, bytes } = observe(join(root, change.path));
    if (!sameImage(observed, change.before))
      drifted.push({ path: change.path, expected: change.before, actual: observed });
    preimages.push(change.before === null ? null : bytes);
  }
  if (drifted.length > 0) return err({ _tag: 'Drift', drifted });
  step('checked');

  // 2. Journal PENDING, then the preimage pack, durable before the first write.
  const journalDir = join(options.journalRoot, journalId);
  try {
    mkdirSync(journalDir, { mode: 0o700 });
  } catch (error) {
    const message = `cannot create journal ${journalDir}: ${(error as Error).message}`;
    return err({ _tag: 'ApplyFailed', message, rolledBack: true, journalDir: null });
  }
  fsyncDirectory(options.journalRoot);
  const packOffsets = new Map<string, number>();
  const packParts: Uint8Array[] = [];
  let packSize = 0;
  const entries: JournalEntry[] = changes.map((change, index) => {
    let before: JournalEntry['before'] = null;
    if (change.before !== null) {
      const bytes = preimages[index] as Uint8Array;
      let offset = packOffsets.get(change.before.sha256);
      if (offset === undefined) {
        // Content-addressed: each distinct preimage is stored once.
        offset = packSize;
        packOffsets.set(change.before.sha256, offset);
        packParts.push(bytes);
        packSize += bytes.length;
      }
      before = { sha256: change.before.sha256, mode: change.before.mode, size: bytes.length, offset };
    }
    const after: JournalEntry['after'] =
      change.after === null
        ? null
        : { sha256: sha256Of(change.after.bytes), mode: change.after.mode, size: change.after.bytes.length };
    return { path: change.path, before, after };
  });
  let record: JournalRecord = {
    format: JOURNAL_FORMAT,
    journalId,
    label: (options.label ?? '').slice(0, 200),
    root,
    state: 'PENDING',
    owner: currentOwner(),
    createdAtMs: options.nowMs ?? Date.now(),
    entries,
    createdDirs: [...created].sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1)),
    note: '',
  };
  writeRecord(journalDir, record);
  step('pending');
  writeNewFileSynced(join(journalDir, PREIMAGE_PACK), Buffer.concat(packParts), 0o600);
  fsyncDirectory(journalDir);
  step('preimages');
  record = { ...record, state: 'APPLYING' };
  writeRecord(journalDir, record);
  step('applying');

  // 3. The writes. Any unexpected error rolls back in process.
  try {
    for (const dir of record.createdDirs) {
      mkdirSync(join(root, dir));
      step(`mkdir:${dir}`);
    }
    changes.forEach((change, index) => {
      const target = join(root, change.path);
      if (change.after === null) {
        unlinkIfPresent(target);
        step(`delete:${index}`);
        return;
      }
      const temp = join(dirname(target), applyTempName(journalId, index));
      placeContent(target, temp, change.after.bytes, change.after.mode, () => step(`half:${index}`));
      step(`rename:${index}`);
    });
    // Renames need not be durable one by one: until APPLIED is durable, recovery rolls back anyway.
    for (const dir of parentsToSync(root, record)) fsyncDirectory(dir);
    step('synced');
    record = { ...record, state: 'APPLIED' };
    writeRecord(journalDir, record);
    step('applied');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    try {
      rollBack(record, journalDir, `apply failed: ${message}`, noStep);
      return err({ _tag: 'ApplyFailed', message, rolledBack: true, journalDir });
    } catch {
      return err({ _tag: 'ApplyFailed', message, rolledBack: false, journalDir });
    }
  }
  return ok({ journalId, journalDir, state: 'APPLIED', paths: changes.map((c) => c.path) });
}

// ── rollback and recovery ───────────────────────────────────────────────────

function readPreimage(journalDir: string, entry: JournalEntry): Uint8Array {
  const before = entry.before as NonNullable<JournalEntry['before']>;
  const fd = openSync(join(journalDir, PREIMAGE_PACK), constants.O_RDONLY);
  try {
    const buffer = Buffer.allocUnsafe(before.size);
    let offset = 0;
    while (offset < before.size) {
      const read = readSync(fd, buffer, offset, before.size - offset, before.offset + offset);
      if (read === 0) break;
      offset += read;
    }
    const bytes = buffer.subarray(0, offset);
    // The pack is the only copy of the old content: refuse to restore anything that does not hash right.
    if (sha256Of(bytes) !== before.sha256) throw new Error(`preimage of ${entry.path} is damaged in ${journalDir}`);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/**
 * Restores every entry to its preimage. Each step is idempotent, so an
 * interrupted rollback is finished by running it again. Returns paths left
 * alone because someone else changed them after the crash.
 */
function rollBack(record: JournalRecord, journalDir: string, note: string, step: StepHook): string[] {
  const { root, journalId } = record;
  const conflicts: string[] = [];
  record.entries.forEach((entry, index) => {
    const target = join(root, entry.path);
    const dir = dirname(target);
    // Temp siblings only exist where the parent exists; a missing parent means nothing to clean.
    try {
      unlinkIfPresent(join(dir, applyTempName(journalId, index)));
      unlinkIfPresent(join(dir, rollbackTempName(journalId, index)));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTDIR') throw error;
    }
    step(`rollback-clean:${index}`);
    const { observed } = observe(target);
    if (sameImage(observed, entry.before)) return;
    const isOurs = entry.after === null ? observed.kind === 'absent' : sameImage(observed, entry.after);
    if (!isOurs && observed.kind !== 'absent') {
      conflicts.push(entry.path);
      return;
    }
    if (entry.before === null) {
      unlinkIfPresent(target);
    } else {
      mkdirSync(dir, { recursive: true });
      placeContent(
        target,
        join(dir, rollbackTempName(journalId, index)),
        readPreimage(journalDir, entry),
        entry.before.mode,
      );
    }
    step(`rollback:${index}`);
  });
  for (const dir of [...record.createdDirs].reverse()) rmdirIfEmpty(join(root, dir));
  for (const dir of parentsToSync(root, record)) {
    try {
      fsyncDirectory(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  step('rollback-synced');
  const detail = conflicts.length > 0 ? `; left alone (changed by someone else): ${conflicts.join(', ')}` : '';
  writeRecord(journalDir, { ...record, state: 'ROLLED_BACK', note: `${note}${detail}`.slice(0, 2000) });
  step('rolled-back');
  markEnded(journalDir);
  return conflicts;
}

/**
 * Writes the journal's ENDED_SUFFIX marker, after its terminal state is durable. Not synced:
 * a marker lost in a crash only costs the next recovery one read. Best effort for the same reason.
 */
function markEnded(journalDir: string): void {
  try {
    // A new regular file only: never through a symlink or into a FIFO someone left at the path.
    const flags =
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    closeSync(openSync(endedMarker(journalDir), flags, 0o600));
  } catch {
    // Already marked (EEXIST), or something else stands there: the next recovery reads the journal.
  }
}

const endedMarker = (journalDir: string): string => join(dirname(journalDir), `${basename(journalDir)}${ENDED_SUFFIX}`);

/**
 * A marker a journal of the same id left (its directory removed by hand) would make start-up
 * recovery skip this one: it goes before the new journal exists. Not a regular file: not a marker.
 */
function removeStaleMarker(journalDir: string): void {
  try {
    unlinkIfPresent(endedMarker(journalDir));
  } catch {
    // A directory or the like at that path is never taken for a marker (recoverJournals).
  }
}

export interface RecoveredJournal {
  readonly journalId: string;
  readonly journalDir: string;
  /** State found on disk. 'MISSING': the directory had no journal (crash before the first journal write). */
  readonly found: JournalState | 'MISSING' | 'UNREADABLE';
  readonly action: 'none' | 'rolled-back' | 'removed-empty' | 'left-unreadable';
  /** Paths left alone during rollback because their content was neither old nor new. */
  readonly conflicts: readonly string[];
}

export type RecoveryError = { readonly _tag: 'JournalBusy'; readonly owner: ProcessOwner };

export interface RecoveryOptions {
  readonly journalRoot: string;
  readonly onStep?: StepHook;
  /**
   * Also read journals marked ended (ENDED_SUFFIX): `crustcore recover` lists every journal;
   * start-up recovery skips them, so its cost does not grow with every apply ever made.
   */
  readonly includeEnded?: boolean;
}

/**
 * Finishes every interrupted apply under `journalRoot`: journals not APPLIED
 * are rolled back to all-old. Idempotent and safe to interrupt: running it
 * again after a kill gives the same tree and the same final states.
 */
export function recoverJournals(options: RecoveryOptions): Result<RecoveryError, readonly RecoveredJournal[]> {
  let entries: Dirent[];
  try {
    entries = readdirSync(options.journalRoot, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ok([]);
    throw error;
  }
  const lock = tryLockJournalRoot(options.journalRoot);
  if (!isLock(lock)) return err({ _tag: 'JournalBusy', owner: lock });
  try {
    const step = options.onStep ?? noStep;
    const ended = new Set(entries.filter((e) => e.isFile() && e.name.endsWith(ENDED_SUFFIX)).map((e) => e.name));
    const results: RecoveredJournal[] = [];
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const name = entry.name;
      if (!JOURNAL_ID.test(name)) {
        removeDeadLockTemp(options.journalRoot, name);
        continue;
      }
      // The Dirent's type is lstat's: a symlink named like a journal is never followed.
      if (!entry.isDirectory()) continue;
      if (options.includeEnded !== true && ended.has(`${name}${ENDED_SUFFIX}`)) continue;
      const recovered = recoverOne(name, join(options.journalRoot, name), step);
      // A rollback marks its journal itself; one found ended (before markers, or a crash
      // between its last write and its marker) is marked here.
      if (recovered.found === 'APPLIED' || recovered.found === 'ROLLED_BACK') markEnded(recovered.journalDir);
      results.push(recovered);
    }
    return ok(results);
  } finally {
    lock.release();
  }
}

function removeDeadLockTemp(journalRoot: string, name: string): void {
  const match = /^\.lock\.(\d+)\.tmp$/.exec(name);
  if (match !== null && !isOwnerAlive({ pid: Number(match[1]), startTime: null }))
    unlinkIfPresent(join(journalRoot, name));
}

function recoverOne(journalId: string, journalDir: string, step: StepHook): RecoveredJournal {
  let text: string;
  try {
    text = readFileSync(join(journalDir, JOURNAL_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // No journal: the crash came before PENDING was durable, so no target was written.
    rmSync(journalDir, { recursive: true, force: true });
    return { journalId, journalDir, found: 'MISSING', action: 'removed-empty', conflicts: [] };
  }
  unlinkIfPresent(join(journalDir, `${JOURNAL_FILE}.tmp`));
  const record = decodeJournal(text);
  if (record === null || record.journalId !== journalId) {
    return { journalId, journalDir, found: 'UNREADABLE', action: 'left-unreadable', conflicts: [] };
  }
  if (record.state === 'APPLIED' || record.state === 'ROLLED_BACK') {
    return { journalId, journalDir, found: record.state, action: 'none', conflicts: [] };
  }
  const conflicts = rollBack(record, journalDir, `recovered from ${record.state}`, step);
  return { journalId, journalDir, found: record.state, action: 'rolled-back', conflicts };
}

/** Reads one journal (for `crustcore recover --json` and tests). Null when missing or unreadable. */
export function readJournal(journalDir: string): JournalRecord | null {
  try {
    return decodeJournal(readFileSync(join(journalDir, JOURNAL_FILE), 'utf8'));
  } catch {
    return null;
  }
}
