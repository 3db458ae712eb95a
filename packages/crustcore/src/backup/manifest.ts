/**
 * The backup archive's manifest and the checks restore makes on it before
 * anything is written. The archive is untrusted input (it may come from
 * another machine, or be made by hand to attack): every entry is decoded with
 * io-ts and then judged as a path — relative, no `.`/`..` segment, no NUL,
 * one entry per path, a parent that is a directory of the archive — and as a
 * kind: files, directories and symlinks whose target stays inside the home.
 * Nothing else (devices, fifos, sockets) is ever restored.
 */
import { isLeft } from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';

export const ARCHIVE_FORMAT = 'crustcore-backup';
export const ARCHIVE_VERSION = 1;

const EntryCodec = t.intersection([
  t.type({ path: t.string, kind: t.string, mode: t.number }),
  t.partial({ size: t.number, sha256: t.string, target: t.string }),
]);

export const ManifestCodec = t.type({
  format: t.literal(ARCHIVE_FORMAT),
  version: t.literal(ARCHIVE_VERSION),
  entries: t.array(EntryCodec),
  /** What the archive leaves out on purpose (disposable worktrees, live sockets), for the reader. */
  excluded: t.array(t.string),
});
export type Manifest = t.TypeOf<typeof ManifestCodec>;
type RawEntry = t.TypeOf<typeof EntryCodec>;

export type BackupEntry =
  | { readonly kind: 'dir'; readonly path: string; readonly mode: number }
  | {
      readonly kind: 'file';
      readonly path: string;
      readonly mode: number;
      readonly size: number;
      readonly sha256: string;
    }
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string };

export type EntryProblem =
  | { readonly _tag: 'UnsafePath'; readonly path: string; readonly why: string }
  | { readonly _tag: 'UnsupportedKind'; readonly path: string; readonly kind: string }
  | { readonly _tag: 'SymlinkEscapes'; readonly path: string; readonly target: string }
  | { readonly _tag: 'BadEntry'; readonly path: string; readonly why: string };

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Why `path` may not be written under the home, or null. */
export function unsafePathReason(path: string): string | null {
  if (path === '') return 'empty path';
  if (path.includes('\0')) return 'NUL in path';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'absolute path';
  if (path.includes('\\')) return 'backslash in path (a separator elsewhere)';
  const segments = path.split('/');
  if (segments.some((s) => s === '..')) return '".." segment';
  if (segments.some((s) => s === '' || s === '.')) return 'empty or "." segment';
  return null;
}

/** Whether a symlink at `path` pointing to `target` resolves inside the archive root. */
export function symlinkStaysInside(path: string, target: string): boolean {
  if (target === '' || target.startsWith('/') || target.includes('\0')) return false;
  let depth = path.split('/').length - 1;
  for (const segment of target.split('/')) {
    if (segment === '..') depth -= 1;
    else if (segment !== '.' && segment !== '') depth += 1;
    // Below the root at any point: `a/../../x` leaves the home even if it comes back.
    if (depth < 0) return false;
  }
  return true;
}

const isMode = (mode: number): boolean => Number.isInteger(mode) && mode >= 0 && mode <= 0o7777;

function judge(raw: RawEntry): EntryProblem | BackupEntry {
  const why = unsafePathReason(raw.path);
  if (why !== null) return { _tag: 'UnsafePath', path: raw.path, why };
  if (!isMode(raw.mode)) return { _tag: 'BadEntry', path: raw.path, why: `mode ${raw.mode} is not a permission mode` };
  // Permission bits only: setuid, setgid and sticky are never restored.
  const mode = raw.mode & 0o777;
  if (raw.kind === 'dir') return { kind: 'dir', path: raw.path, mode };
  if (raw.kind === 'file') {
    if (raw.size === undefined || !Number.isSafeInteger(raw.size) || raw.size < 0)
      return { _tag: 'BadEntry', path: raw.path, why: 'a file entry needs a size' };
    if (raw.sha256 === undefined || !SHA256_HEX.test(raw.sha256))
      return { _tag: 'BadEntry', path: raw.path, why: 'a file entry needs a SHA-256' };
    return { kind: 'file', path: raw.path, mode, size: raw.size, sha256: raw.sha256 };
  }
  if (raw.kind === 'symlink') {
    const target = raw.target ?? '';
    if (!symlinkStaysInside(raw.path, target)) return { _tag: 'SymlinkEscapes', path: raw.path, target };
    return { kind: 'symlink', path: raw.path, target };
  }
  return { _tag: 'UnsupportedKind', path: raw.path, kind: raw.kind };
}

export type ManifestCheck =
  | { readonly _tag: 'Right'; readonly right: readonly BackupEntry[] }
  | { readonly _tag: 'Left'; readonly left: readonly EntryProblem[] };

/** Every entry judged; any problem refuses the whole archive (restore writes all or nothing). */
export function checkEntries(entries: readonly RawEntry[]): ManifestCheck {
  const problems: EntryProblem[] = [];
  const judged: BackupEntry[] = [];
  const kinds = new Map<string, string>();
  for (const raw of entries) {
    const verdict = judge(raw);
    if ('_tag' in verdict) problems.push(verdict);
    else if (kinds.has(verdict.path)) problems.push({ _tag: 'BadEntry', path: verdict.path, why: 'listed twice' });
    else {
      kinds.set(verdict.path, verdict.kind);
      judged.push(verdict);
    }
  }
  for (const entry of judged) {
    const parent = entry.path.includes('/') ? entry.path.slice(0, entry.path.lastIndexOf('/')) : null;
    // A parent must be a directory of this archive: never a symlink to write through.
    if (parent !== null && kinds.get(parent) !== 'dir')
      problems.push({
        _tag: 'BadEntry',
        path: entry.path,
        why: `its parent ${parent} is not a directory in the archive`,
      });
  }
  return problems.length > 0 ? { _tag: 'Left', left: problems } : { _tag: 'Right', right: judged };
}

export function decodeManifest(value: unknown): { _tag: 'Right'; right: Manifest } | { _tag: 'Left'; left: string } {
  const decoded = ManifestCodec.decode(value);
  if (isLeft(decoded)) {
    const first = decoded.left[0];
    const where =
      first?.context
        .map((c) => c.key)
        .filter((k) => k !== '')
        .join('.') ?? '';
    return { _tag: 'Left', left: `the manifest does not decode (at ${where || 'the root'})` };
  }
  return { _tag: 'Right', right: decoded.right };
}

export function describeProblem(problem: EntryProblem): string {
  switch (problem._tag) {
    case 'UnsafePath':
      return `${JSON.stringify(problem.path)}: ${problem.why}`;
    case 'UnsupportedKind':
      return `${JSON.stringify(problem.path)}: a ${problem.kind} entry (only files, directories and symlinks are restored)`;
    case 'SymlinkEscapes':
      return `${JSON.stringify(problem.path)}: a symlink to ${JSON.stringify(problem.target)}, outside the home`;
    case 'BadEntry':
      return `${JSON.stringify(problem.path)}: ${problem.why}`;
  }
}
