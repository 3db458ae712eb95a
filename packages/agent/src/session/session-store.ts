/**
 * Where sessions live: `$CRUSTCORE_HOME/sessions/<repo-id>/<session-id>.jsonl`,
 * one directory per repository, with a `latest` file naming the most recently
 * started session (for "resume latest"). Loading decodes every line with
 * io-ts, migrates old formats (rewriting the file atomically and keeping the
 * old one as `<id>.jsonl.v<N>.bak`), and tolerates a line torn by a crash.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { decodeEntry, type SessionEntry, SessionHeaderC } from './entries.js';
import { migrateSession } from './migrate.js';
import { newHeader, Session, type SessionClock, type SessionError, sessionError } from './session.js';

export const SESSION_ID = /^[A-Za-z0-9_-]{1,80}$/;
/** Bound on a session file read whole into memory. */
export const MAX_SESSION_FILE_BYTES = 256 * 1024 * 1024;
const LATEST_FILE = 'latest';

export interface LoadReport {
  /** The version the file had before migration. */
  readonly fromVersion: number;
  readonly migrated: boolean;
  /** A last line cut short by a crash was dropped. */
  readonly tornTail: boolean;
  /** Lines that did not decode (skipped). */
  readonly skippedLines: number;
}

export interface SessionSummary {
  readonly id: string;
  readonly path: string;
  readonly modifiedMs: number;
}

export const sessionsDirectory = (home: string, repoId: string): string => join(home, 'sessions', repoId);

const defaultClock: SessionClock = {
  nowMs: Date.now,
  newId: () => randomBytes(6).toString('hex'),
};

function newSessionId(nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

function atomicWrite(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/** Parses a session file's text: header, decoded entries, and where the valid prefix ends. */
export function parseSessionText(text: string): Result<
  SessionError,
  {
    readonly header: Record<string, unknown>;
    readonly rawLines: unknown[];
    readonly tornTail: boolean;
    readonly validBytes: number;
    readonly unterminatedTail: string | null;
  }
> {
  const endsClean = text.endsWith('\n');
  const lastNewline = text.lastIndexOf('\n');
  const body = endsClean ? text.slice(0, -1) : text;
  const lines = body === '' ? [] : body.split('\n');
  let tornTail = false;
  let unterminatedTail: string | null = null;
  if (!endsClean && lines.length > 0) {
    const tail = lines.pop() as string;
    try {
      JSON.parse(tail);
      unterminatedTail = tail;
    } catch {
      tornTail = true;
    }
  }
  const first = lines[0] ?? unterminatedTail;
  if (first === undefined || first === null) return err(sessionError('SessionCorrupt', 'the session file is empty'));
  let header: unknown;
  try {
    header = JSON.parse(first);
  } catch {
    return err(sessionError('SessionCorrupt', 'the session header is not JSON'));
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    return err(sessionError('SessionCorrupt', 'the session header is not an object'));
  }
  const rawLines: unknown[] = [];
  const rest = lines[0] === undefined ? [] : lines.slice(1);
  if (unterminatedTail !== null && lines.length > 0) rest.push(unterminatedTail);
  for (const line of rest) {
    if (line === '') continue;
    try {
      rawLines.push(JSON.parse(line));
    } catch {
      rawLines.push(undefined);
    }
  }
  // Only a torn or unterminated tail needs the byte offset of the valid prefix.
  const validBytes = endsClean
    ? Buffer.byteLength(text)
    : lastNewline === -1
      ? 0
      : Buffer.byteLength(text.slice(0, lastNewline + 1));
  return ok({ header: header as Record<string, unknown>, rawLines, tornTail, validBytes, unterminatedTail });
}

export class SessionStore {
  readonly directory: string;
  readonly #clock: SessionClock;

  constructor(directory: string, clock: SessionClock = defaultClock) {
    this.directory = directory;
    this.#clock = clock;
  }

  static forRepository(home: string, repoId: string, clock?: SessionClock): SessionStore {
    return new SessionStore(sessionsDirectory(home, repoId), clock);
  }

  pathOf(id: string): string {
    return join(this.directory, `${id}.jsonl`);
  }

  #markLatest = (session: Session): void => {
    try {
      atomicWrite(join(this.directory, LATEST_FILE), `${session.id}\n`);
    } catch {
      // "latest" is a convenience; listing by modification time still finds the session.
    }
  };

  /** A new session (nothing is written until its first assistant message). */
  create(extra: { readonly repoId?: string; readonly cwd?: string; readonly forkedFrom?: string } = {}): Session {
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    const nowMs = this.#clock.nowMs();
    const id = newSessionId(nowMs);
    return new Session({
      path: this.pathOf(id),
      header: newHeader(id, nowMs, extra),
      entries: [],
      clock: this.#clock,
      materialized: false,
      onMaterialize: this.#markLatest,
    });
  }

  /** Loads a session by id: decoded, migrated to the current format, torn tail dropped. */
  open(id: string): Result<SessionError, { readonly session: Session; readonly report: LoadReport }> {
    if (!SESSION_ID.test(id)) return err(sessionError('BadSessionId', `not a session id: ${JSON.stringify(id)}`));
    const path = this.pathOf(id);
    let text: string;
    try {
      if (statSync(path).size > MAX_SESSION_FILE_BYTES)
        return err(sessionError('SessionCorrupt', `${path} is larger than ${MAX_SESSION_FILE_BYTES} bytes`));
      text = readFileSync(path, 'utf8');
    } catch (error) {
      return err(sessionError('SessionIoError', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`));
    }
    const parsed = parseSessionText(text);
    if (parsed._tag === 'Left') return parsed;
    const migrated = migrateSession({ header: parsed.right.header, lines: parsed.right.rawLines });
    if (!migrated.ok) {
      return err(
        sessionError(
          'UnsupportedSessionVersion',
          `session format version ${String(migrated.version)} is not supported`,
        ),
      );
    }
    const header = SessionHeaderC.decode(migrated.raw.header);
    if (header._tag === 'Left') return err(sessionError('SessionCorrupt', 'the session header does not decode'));
    const entries: SessionEntry[] = [];
    let skippedLines = 0;
    for (const line of migrated.raw.lines) {
      const decoded = decodeEntry(line);
      if (decoded !== null) entries.push(decoded);
      else skippedLines += 1;
    }
    let truncateTo: number | null =
      parsed.right.tornTail || parsed.right.unterminatedTail !== null ? parsed.right.validBytes : null;
    let pendingLines: string[] = [];
    if (migrated.migrated) {
      try {
        const rewritten = [header.right, ...entries].map((value) => `${JSON.stringify(value)}\n`).join('');
        writeFileSync(`${path}.v${migrated.from}.bak`, text, { mode: 0o600 });
        atomicWrite(path, rewritten);
        truncateTo = null;
      } catch (error) {
        return err(sessionError('SessionIoError', `cannot rewrite migrated ${path}: ${(error as Error).message}`));
      }
    } else if (parsed.right.validBytes === 0) {
      // Even the header lost its newline: the whole file is rewritten after the cut.
      pendingLines = [header.right, ...entries].map((value) => `${JSON.stringify(value)}\n`);
    } else if (parsed.right.unterminatedTail !== null && entries.length > 0) {
      // The last entry is whole but lost its newline: it is rewritten after the cut.
      pendingLines = [`${JSON.stringify(entries[entries.length - 1])}\n`];
    }
    const session = new Session({
      path,
      header: header.right,
      entries,
      clock: this.#clock,
      materialized: true,
      truncateTo,
      pendingLines,
      onMaterialize: this.#markLatest,
    });
    return ok({
      session,
      report: {
        fromVersion: migrated.from,
        migrated: migrated.migrated,
        tornTail: parsed.right.tornTail,
        skippedLines,
      },
    });
  }

  /** Sessions of this repository, newest first (by modification time). */
  list(limit = 50): SessionSummary[] {
    let names: string[];
    try {
      names = readdirSync(this.directory);
    } catch {
      return [];
    }
    const found: SessionSummary[] = [];
    for (const name of names) {
      if (!name.endsWith('.jsonl')) continue;
      const id = name.slice(0, -'.jsonl'.length);
      if (!SESSION_ID.test(id)) continue;
      try {
        found.push({ id, path: join(this.directory, name), modifiedMs: statSync(join(this.directory, name)).mtimeMs });
      } catch {
        // Removed while listing.
      }
    }
    return found.sort((a, b) => b.modifiedMs - a.modifiedMs || b.id.localeCompare(a.id)).slice(0, limit);
  }

  /** The most recent session's id: the `latest` file, else the newest file. */
  latestId(): string | null {
    try {
      const named = readFileSync(join(this.directory, LATEST_FILE), 'utf8').trim();
      if (SESSION_ID.test(named)) {
        statSync(this.pathOf(named));
        return named;
      }
    } catch {
      // Fall through to listing.
    }
    return this.list(1)[0]?.id ?? null;
  }

  /** Copies the path from the root to `entryId` of session `id` into a new session. */
  fork(id: string, entryId: string): Result<SessionError, Session> {
    const opened = this.open(id);
    if (opened._tag === 'Left') return opened;
    const source = opened.right.session;
    if (source.get(entryId) === undefined) return err(sessionError('UnknownEntry', `no entry ${entryId} in ${id}`));
    const path = source.pathTo(entryId);
    const fork = this.create({
      forkedFrom: `${id}#${entryId}`,
      ...(source.header.repoId === undefined ? {} : { repoId: source.header.repoId }),
      ...(source.header.cwd === undefined ? {} : { cwd: source.header.cwd }),
    });
    for (const entry of path) {
      const { id: _id, parentId: _parent, timestamp: _timestamp, ...rest } = entry;
      fork.append(rest as Parameters<Session['append']>[0]);
    }
    const flushed = fork.flush({ sync: true, force: true });
    return flushed._tag === 'Left' ? flushed : ok(fork);
  }
}
