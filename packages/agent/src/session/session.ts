/**
 * One session: an append-only JSONL file holding a tree of entries.
 *
 * Writes are deferred and batched. A new session stays in memory until its
 * first assistant message (so opening and closing a REPL leaves no file);
 * after that, appended entries are buffered and written by `flush()` — with
 * `sync: true` (at the end of every turn) the file is fsynced, so a crash
 * loses at most the current turn. Every line is written whole by one write
 * call; a line cut short by a crash (no trailing newline) is detected on load
 * and dropped, and the next write starts on a fresh line.
 *
 * The leaf is where the next entry attaches. `branch(id)` moves it back to an
 * earlier entry: later appends start a side branch, and nothing already
 * written changes. On load the leaf is the last entry in the file.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { type NewEntry, SESSION_FORMAT_VERSION, type SessionEntry, type SessionHeader } from './entries.js';

export interface SessionError {
  readonly _tag: 'SessionIoError' | 'SessionCorrupt' | 'UnsupportedSessionVersion' | 'UnknownEntry' | 'BadSessionId';
  readonly message: string;
}

export interface SessionClock {
  readonly nowMs: () => number;
  readonly newId: () => string;
}

/** Entries buffered before an automatic (unsynced) write. */
export const MAX_BUFFERED_ENTRIES = 64;

export const sessionError = (tag: SessionError['_tag'], message: string): SessionError => ({ _tag: tag, message });

function fsyncDirectory(path: string): void {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse directory fsync; the file itself was synced.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

export class Session {
  readonly path: string;
  readonly header: SessionHeader;
  readonly #entries: SessionEntry[];
  readonly #byId: Map<string, SessionEntry>;
  readonly #clock: SessionClock;
  readonly #onMaterialize: (session: Session) => void;
  #leaf: string | null;
  #pending: string[] = [];
  #fd: number | null = null;
  #materialized: boolean;
  /** Byte length of the file's valid prefix when a torn tail must be cut before appending. */
  #truncateTo: number | null;

  constructor(options: {
    readonly path: string;
    readonly header: SessionHeader;
    readonly entries: readonly SessionEntry[];
    readonly clock: SessionClock;
    readonly materialized: boolean;
    readonly truncateTo?: number | null;
    /** Lines to rewrite on the next flush (a valid last line that lost its newline). */
    readonly pendingLines?: readonly string[];
    readonly onMaterialize?: (session: Session) => void;
  }) {
    this.path = options.path;
    this.header = options.header;
    this.#entries = [...options.entries];
    this.#byId = new Map(this.#entries.map((entry) => [entry.id, entry]));
    this.#clock = options.clock;
    this.#materialized = options.materialized;
    this.#truncateTo = options.truncateTo ?? null;
    this.#pending = [...(options.pendingLines ?? [])];
    this.#onMaterialize = options.onMaterialize ?? (() => undefined);
    this.#leaf = this.#entries.length === 0 ? null : (this.#entries[this.#entries.length - 1] as SessionEntry).id;
  }

  get id(): string {
    return this.header.id;
  }
  get leafId(): string | null {
    return this.#leaf;
  }
  /** True once the file exists on disk. */
  get materialized(): boolean {
    return this.#materialized;
  }
  get pendingCount(): number {
    return this.#pending.length;
  }

  entries(): readonly SessionEntry[] {
    return this.#entries;
  }

  get(id: string): SessionEntry | undefined {
    return this.#byId.get(id);
  }

  /** Appends an entry under the leaf and makes it the leaf. Written by the next flush. */
  append(entry: NewEntry): SessionEntry {
    const full = {
      ...entry,
      id: this.#clock.newId(),
      parentId: this.#leaf,
      timestamp: new Date(this.#clock.nowMs()).toISOString(),
    } as SessionEntry;
    this.#entries.push(full);
    this.#byId.set(full.id, full);
    this.#leaf = full.id;
    this.#pending.push(`${JSON.stringify(full)}\n`);
    if (this.#materialized && this.#pending.length >= MAX_BUFFERED_ENTRIES) {
      const flushed = this.flush({ sync: false });
      if (flushed._tag === 'Left') throw new Error(`session write failed: ${flushed.left.message}`);
    }
    return full;
  }

  /** Moves the leaf to `id`: the next append starts a branch there. */
  branch(id: string): Result<SessionError, void> {
    if (!this.#byId.has(id)) return err(sessionError('UnknownEntry', `no entry ${id} in session ${this.id}`));
    this.#leaf = id;
    return ok(undefined);
  }

  /** Branches at `id` and records what the abandoned branch was about. */
  branchWithSummary(id: string, summary: string): Result<SessionError, SessionEntry> {
    const from = this.#leaf;
    const moved = this.branch(id);
    if (moved._tag === 'Left') return moved;
    return ok(this.append({ type: 'branch_summary', fromId: from ?? id, summary }));
  }

  /** Rewinds to before the first entry: the next append starts a new root. */
  resetLeaf(): void {
    this.#leaf = null;
  }

  /** Entries from the root to `leafId` (default the leaf), in order. */
  pathTo(leafId: string | null = this.#leaf): SessionEntry[] {
    const path: SessionEntry[] = [];
    const seen = new Set<string>();
    let cursor = leafId === null ? undefined : this.#byId.get(leafId);
    while (cursor !== undefined && !seen.has(cursor.id)) {
      seen.add(cursor.id);
      path.push(cursor);
      cursor = cursor.parentId === null ? undefined : this.#byId.get(cursor.parentId);
    }
    return path.reverse();
  }

  /** Direct children of `id` (null: the roots), in file order. */
  children(id: string | null): SessionEntry[] {
    return this.#entries.filter((entry) => entry.parentId === id);
  }

  #shouldMaterialize(): boolean {
    return this.#entries.some((entry) => entry.type === 'message' && entry.message.role === 'assistant');
  }

  /**
   * Writes buffered entries. Before the first assistant message nothing is
   * written (unless `force`). `sync` fsyncs the file (and, on creation, its
   * directory).
   */
  flush(options: { readonly sync: boolean; readonly force?: boolean }): Result<SessionError, void> {
    if (!this.#materialized && !(options.force === true || this.#shouldMaterialize())) return ok(undefined);
    try {
      let created = false;
      if (this.#fd === null) {
        this.#fd = openSync(this.path, 'a+', 0o600);
        if (this.#truncateTo !== null) {
          // A torn last line from a crash: cut it so the next line starts clean.
          if (fstatSync(this.#fd).size > this.#truncateTo) ftruncateSync(this.#fd, this.#truncateTo);
          this.#truncateTo = null;
        }
        if (!this.#materialized) {
          writeSync(this.#fd, `${JSON.stringify(this.header)}\n`);
          created = true;
        }
      }
      if (this.#pending.length > 0) {
        writeSync(this.#fd, this.#pending.join(''));
        this.#pending = [];
      }
      if (options.sync || created) fsyncSync(this.#fd);
      if (created) {
        fsyncDirectory(dirname(this.path));
        this.#materialized = true;
        this.#onMaterialize(this);
      }
      return ok(undefined);
    } catch (error) {
      return err(sessionError('SessionIoError', `cannot write ${this.path}: ${(error as Error).message}`));
    }
  }

  /** Flushes (synced, if on disk) and closes the file. */
  close(): Result<SessionError, void> {
    const flushed = this.#materialized || this.#shouldMaterialize() ? this.flush({ sync: true }) : ok(undefined);
    if (this.#fd !== null) {
      closeSync(this.#fd);
      this.#fd = null;
    }
    return flushed;
  }
}

export const newHeader = (
  id: string,
  nowMs: number,
  extra: Omit<SessionHeader, 'type' | 'version' | 'id' | 'createdAt'>,
): SessionHeader => ({
  type: 'session',
  version: SESSION_FORMAT_VERSION,
  id,
  createdAt: new Date(nowMs).toISOString(),
  ...extra,
});
