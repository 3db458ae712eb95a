/**
 * Restoring an archive into `$CRUSTCORE_HOME`, all or nothing. The archive is
 * verified first (container.ts: every path, kind, size and SHA-256); then it is
 * written into a fresh staging directory beside the home — directories, then
 * files created with O_EXCL|O_NOFOLLOW, then symlinks last, so nothing is ever
 * written through a link — and only then moved into place. A home that exists
 * and is not empty is refused unless `force`; with `force` the old home is
 * renamed aside (its path is reported), never deleted.
 */
import {
  chmodSync,
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type ArchiveError, describeArchiveError, type VerifiedArchive, verifyArchive } from './container.js';
import { describeTakeError, withHomeLocked } from './take.js';

export type RestoreError =
  | { readonly _tag: 'Archive'; readonly error: ArchiveError }
  | { readonly _tag: 'HomeNotEmpty'; readonly home: string }
  | { readonly _tag: 'HomeInUse'; readonly why: string }
  | { readonly _tag: 'Unreadable'; readonly file: string; readonly why: string };

export interface RestoreReport {
  readonly home: string;
  readonly files: number;
  readonly entries: number;
  /** Where the replaced home went (with --force), or null. */
  readonly previousHome: string | null;
}

function homeState(home: string): 'missing' | 'empty' | 'full' {
  try {
    return readdirSync(home).length === 0 ? 'empty' : 'full';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    // A file where the home should be is not empty: --force moves it aside like a home.
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return 'full';
    throw error;
  }
}

function writeFileExclusive(path: string, content: Uint8Array, mode: number): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  // The umask may have narrowed the mode at creation; the recorded one is what the home had.
  chmodSync(path, mode);
}

function writeStaging(staging: string, archive: VerifiedArchive): void {
  const dirs = archive.entries.filter((e) => e.kind === 'dir');
  for (const dir of dirs) mkdirSync(join(staging, dir.path), { mode: 0o700 });
  for (const entry of archive.entries) {
    if (entry.kind === 'file')
      writeFileExclusive(join(staging, entry.path), archive.files.get(entry.path) ?? Buffer.alloc(0), entry.mode);
  }
  for (const entry of archive.entries)
    if (entry.kind === 'symlink') symlinkSync(entry.target, join(staging, entry.path));
  // Deepest first, so a read-only directory is closed only after its contents are in.
  for (const dir of [...dirs].reverse()) chmodSync(join(staging, dir.path), dir.mode);
}

function asidePath(home: string): string {
  for (let n = 1; ; n++) {
    const candidate = `${home}.before-restore-${n}`;
    if (homeState(candidate) === 'missing') return candidate;
  }
}

export function restoreBackup(
  file: string,
  homeArg: string,
  force: boolean,
): { _tag: 'Right'; right: RestoreReport } | { _tag: 'Left'; left: RestoreError } {
  const home = resolve(homeArg);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    return { _tag: 'Left', left: { _tag: 'Unreadable', file, why: (error as Error).message } };
  }
  const verified = verifyArchive(bytes);
  if (verified._tag === 'Left') return { _tag: 'Left', left: { _tag: 'Archive', error: verified.left } };
  const state = homeState(home);
  if (state === 'full' && !force) return { _tag: 'Left', left: { _tag: 'HomeNotEmpty', home } };
  // Never move a home aside under a running daemon or run: they would keep writing into the old one.
  const inUse = state === 'full' ? withHomeLocked(home, () => null) : null;
  if (inUse?._tag === 'Left') return { _tag: 'Left', left: { _tag: 'HomeInUse', why: describeTakeError(inUse.left) } };
  mkdirSync(dirname(home), { recursive: true });
  const staging = mkdtempSync(join(dirname(home), `.${basename(home)}.restore-`));
  try {
    writeStaging(staging, verified.right);
    chmodSync(staging, 0o700);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  let previousHome: string | null = null;
  if (state === 'full') {
    previousHome = asidePath(home);
    renameSync(home, previousHome);
  } else if (state === 'empty') rmdirSync(home);
  renameSync(staging, home);
  const files = verified.right.files.size;
  return { _tag: 'Right', right: { home, files, entries: verified.right.entries.length, previousHome } };
}

export function describeRestoreError(error: RestoreError): string {
  switch (error._tag) {
    case 'Archive':
      return `${describeArchiveError(error.error)}; nothing was written`;
    case 'HomeNotEmpty':
      return `refused: ${error.home} is not empty. Restore into an empty or new --home, or add --force to move the current one aside (it is kept, not deleted)`;
    case 'HomeInUse':
      return `${error.why}; nothing was written`;
    case 'Unreadable':
      return `cannot read ${error.file}: ${error.why}`;
  }
}
