/**
 * Taking a backup of `$CRUSTCORE_HOME`. A consistent copy, not a refusal: before
 * reading anything it takes the same locks the writers take — the data-directory
 * lock of every embedded PGlite database (the daemon's, the MCP server's, each
 * repository's memory) and the writer lock of every ledger — and holds them
 * until the archive is written. So while a daemon, `run` or `chat` holds one,
 * backup refuses and names the holder; and none of them can start halfway
 * through the copy. What it leaves out, and why, goes in the manifest:
 * disposable worktrees and scratch (`crustcore gc` territory), live sockets and
 * the lock files themselves. The vault and receipt.key are copied as they are
 * on disk (encrypted vault, 0600 key): the archive is written 0600 for that reason.
 */
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { acquireLock, type FileLock } from '@crustcore/ledger';
import { DataDirLock, LOCK_FILE_NAME } from '@crustcore/state';
import { encodeArchive, sha256Hex } from './container.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, type Manifest } from './manifest.js';

/** Top-level directories that are disposable by design: task worktrees, the worktree pool, their object stores, scratch. */
const DISPOSABLE = ['worktrees', 'pool', 'objects', 'tmp'];
const LEDGER_LOG = 'events.log';

export type TakeError =
  | { readonly _tag: 'HomeMissing'; readonly home: string }
  | { readonly _tag: 'StateInUse'; readonly path: string; readonly holder: string }
  | { readonly _tag: 'OutInsideHome'; readonly out: string }
  | { readonly _tag: 'OutExists'; readonly out: string };

export interface TakeReport {
  readonly out: string;
  readonly files: number;
  readonly bytes: number;
  readonly excluded: readonly string[];
}

interface Walked {
  readonly manifest: Manifest['entries'];
  readonly contents: Buffer[];
  readonly excluded: string[];
  readonly pgliteDirs: string[];
  readonly ledgers: string[];
}

const isLockFile = (name: string): boolean =>
  name === LOCK_FILE_NAME || name.endsWith('.lock') || name.endsWith('.lock.takeover');

/** Lists the home (no contents read yet): entries, and which are databases and ledgers to lock. */
function survey(home: string): Walked {
  const walked: Walked = { manifest: [], contents: [], excluded: [], pgliteDirs: [], ledgers: [] };
  const visit = (dir: string): void => {
    const names = readdirSync(dir).sort();
    if (names.includes('PG_VERSION') || names.includes(LOCK_FILE_NAME)) walked.pgliteDirs.push(dir);
    for (const name of names) {
      const path = join(dir, name);
      const rel = relative(home, path).split(sep).join('/');
      const info = lstatSync(path);
      if (dir === home && DISPOSABLE.includes(name) && info.isDirectory()) walked.excluded.push(`${rel}/ (disposable)`);
      else if (info.isSymbolicLink())
        walked.manifest.push({ path: rel, kind: 'symlink', mode: 0o777, target: readlinkSync(path) });
      else if (info.isDirectory()) {
        walked.manifest.push({ path: rel, kind: 'dir', mode: info.mode & 0o777 });
        visit(path);
      } else if (info.isFile() && isLockFile(name)) walked.excluded.push(`${rel} (a lock)`);
      else if (info.isFile()) {
        if (name === LEDGER_LOG) walked.ledgers.push(path);
        walked.manifest.push({ path: rel, kind: 'file', mode: info.mode & 0o777, size: 0, sha256: '' });
      } else walked.excluded.push(`${rel} (${info.isSocket() ? 'a socket' : 'not a regular file'})`);
    }
  };
  visit(home);
  return walked;
}

/** Takes every lock the home's writers take, or releases what it took and says who holds the rest. */
function lockAll(walked: Walked): { locks: Array<{ release: () => void }>; paths: Set<string> } | TakeError {
  const locks: Array<{ release: () => void }> = [];
  const refuse = (path: string, holder: string): TakeError => {
    for (const lock of locks) lock.release();
    return { _tag: 'StateInUse', path, holder };
  };
  for (const dir of walked.pgliteDirs) {
    const lock = DataDirLock.acquire(dir);
    if (lock._tag === 'Left')
      return refuse(dir, `pid ${lock.left.holderPid} on ${lock.left.holderHost || 'this host'}: ${lock.left.reason}`);
    locks.push(lock.right);
  }
  for (const log of walked.ledgers) {
    const lock: ReturnType<typeof acquireLock> = acquireLock(`${log}.lock`);
    if (lock._tag === 'Left') return refuse(log, `pid ${lock.left.pid ?? 'unknown'} is writing this ledger`);
    locks.push(lock.right satisfies FileLock);
  }
  return { locks, paths: new Set([...walked.pgliteDirs, ...walked.ledgers]) };
}

function writeExclusive(out: string, bytes: Buffer): void {
  const fd = openSync(out, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

/** Holds every writer's lock of `home` for `work`, or says who holds one (restore --force checks the home it replaces). */
export function withHomeLocked<T>(
  home: string,
  work: () => T,
): { _tag: 'Right'; right: T } | { _tag: 'Left'; left: TakeError } {
  const locked = lockAll(survey(home));
  if ('_tag' in locked) return { _tag: 'Left', left: locked };
  try {
    return { _tag: 'Right', right: work() };
  } finally {
    for (const lock of locked.locks) lock.release();
  }
}

type Taken<T> = { _tag: 'Right'; right: T } | { _tag: 'Left'; left: TakeError };

/** The real home (a symlinked ~/.crustcore is archived as the directory it names) and an archive path outside it. */
function checkPaths(homeArg: string, outArg: string): Taken<{ home: string; out: string }> {
  let home: string;
  try {
    home = realpathSync(homeArg);
    if (!statSync(home).isDirectory()) return { _tag: 'Left', left: { _tag: 'HomeMissing', home } };
  } catch {
    return { _tag: 'Left', left: { _tag: 'HomeMissing', home: resolve(homeArg) } };
  }
  const out = resolve(outArg);
  let outDir = dirname(out);
  try {
    outDir = realpathSync(outDir);
  } catch {
    // A directory that does not exist yet cannot be inside the home through a link.
  }
  if (outDir === home || outDir.startsWith(`${home}${sep}`))
    return { _tag: 'Left', left: { _tag: 'OutInsideHome', out } };
  try {
    lstatSync(out);
    return { _tag: 'Left', left: { _tag: 'OutExists', out } };
  } catch {
    return { _tag: 'Right', right: { home, out } };
  }
}

/** Reads every listed file (the locks are held) and writes the archive. */
function writeArchive(home: string, out: string, walked: Walked): TakeReport {
  const entries = walked.manifest.map((entry) => {
    if (entry.kind !== 'file') return entry;
    const content = readFileSync(join(home, entry.path));
    walked.contents.push(content);
    return { ...entry, size: content.length, sha256: sha256Hex(content) };
  });
  const manifest: Manifest = { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, entries, excluded: walked.excluded };
  writeExclusive(out, encodeArchive(manifest, walked.contents));
  const bytes = walked.contents.reduce((sum, c) => sum + c.length, 0);
  return { out, files: walked.contents.length, bytes, excluded: walked.excluded };
}

export function takeBackup(homeArg: string, outArg: string): Taken<TakeReport> {
  const paths = checkPaths(homeArg, outArg);
  if (paths._tag === 'Left') return paths;
  const { home, out } = paths.right;
  const locked = lockAll(survey(home));
  if ('_tag' in locked) return { _tag: 'Left', left: locked };
  try {
    // Listed again under the locks: what a writer did before they were taken is in, nothing after.
    const walked = survey(home);
    const unlocked = [...walked.pgliteDirs, ...walked.ledgers].find((path) => !locked.paths.has(path));
    if (unlocked !== undefined) {
      const holder = 'it appeared as the backup started; run backup again';
      return { _tag: 'Left', left: { _tag: 'StateInUse', path: unlocked, holder } };
    }
    return { _tag: 'Right', right: writeArchive(home, out, walked) };
  } finally {
    for (const lock of locked.locks) lock.release();
  }
}

export function describeTakeError(error: TakeError): string {
  switch (error._tag) {
    case 'HomeMissing':
      return `${error.home} is not a directory: nothing to back up (set CRUSTCORE_HOME or --home)`;
    case 'StateInUse':
      return `refused: ${error.path} is in use (${error.holder}). Stop the daemon (systemctl --user stop crustcore, or Ctrl+C) or wait for the run to end, then back up again`;
    case 'OutInsideHome':
      return `refused: ${error.out} is inside the home being backed up; write the archive somewhere else`;
    case 'OutExists':
      return `refused: ${error.out} exists; backup never overwrites, choose another --out`;
  }
}
