/**
 * Caller-chosen extra mounts (the `worker` profile's model-proxy socket and
 * throwaway HOME). Each is checked before a capability is minted: absolute
 * normalized paths, a source that exists and — after resolving symlinks —
 * stays clear of credentials and system directories, and a target that
 * cannot shadow the system view.
 */
import { realpathSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { err, ok, type Result } from '@crustcore/kernel';
import { isInside, isNormalizedAbsolute, overlaps } from './path-shape.js';

/** Access the sandbox gets to an extra bind. */
export type BindMode = 'read-only' | 'read-write';

/** A requested extra bind. `target` defaults to `source`. */
export interface ExtraBindRequest {
  readonly source: string;
  readonly target?: string;
  readonly mode: BindMode;
}

/** A checked extra bind; `source` is the resolved real path. */
export interface ExtraBind {
  readonly source: string;
  readonly target: string;
  readonly mode: BindMode;
}

/** Why an extra bind was refused. */
export interface ExtraBindError {
  readonly _tag: 'ExtraBindError';
  readonly index: number;
  readonly message: string;
}

/** HOME inside every bubblewrap sandbox (a tmpfs unless an extra bind targets it). */
export const SANDBOX_HOME = '/home/sandbox';
/** At most this many extra binds per capability. */
export const MAX_EXTRA_BINDS = 16;

/** Targets that would shadow or expose the system view. */
const FORBIDDEN_TARGET_ROOTS = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/proc',
  '/dev',
  '/sys',
];
/** Sources that must never be visible, nor any directory containing them. */
const CREDENTIAL_DIRECTORY_NAMES = ['.ssh', '.gnupg', '.aws', '.azure', '.kube', '.docker', '.config/gcloud'];
const CREDENTIAL_FILE_NAMES = [
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.gitconfig',
  '.yarnrc',
  '.yarnrc.yml',
];
const FORBIDDEN_SOURCE_ROOTS = ['/proc', '/sys', '/dev', '/etc', '/boot', '/run', '/var/run'];

function hostHomes(): string[] {
  const homes = new Set<string>(['/root']);
  try {
    homes.add(userInfo().homedir);
  } catch {
    // No passwd entry: HOME below still counts.
  }
  const fromEnv = homedir();
  if (fromEnv !== '') homes.add(fromEnv);
  return [...homes].filter((home) => isNormalizedAbsolute(home));
}

/** Why `source` (a real path) may not be visible in a sandbox, or null. Shared with environment binds. */
export function sourceProblem(source: string): string | null {
  if (source === '/') return 'cannot bind the host root';
  for (const root of FORBIDDEN_SOURCE_ROOTS) if (isInside(source, root)) return `cannot bind under ${root}`;
  for (const home of hostHomes()) {
    if (isInside(home, source)) return `would expose the host home ${home}`;
    for (const name of [...CREDENTIAL_DIRECTORY_NAMES, ...CREDENTIAL_FILE_NAMES]) {
      if (overlaps(source, `${home}/${name}`)) return `would expose ${home}/${name}`;
    }
  }
  if (isInside('/home', source)) return 'would expose every home under /home';
  return null;
}

/** Why `target` may not be a mount point inside a sandbox, or null. */
export function targetProblem(target: string): string | null {
  if (target === '/') return 'cannot bind over the root';
  for (const root of FORBIDDEN_TARGET_ROOTS) if (overlaps(target, root)) return `cannot bind over or under ${root}`;
  if (target === '/tmp') return 'cannot bind over /tmp (bind below it instead)';
  if (isInside(SANDBOX_HOME, target) && target !== SANDBOX_HOME) return `cannot bind over a parent of ${SANDBOX_HOME}`;
  return null;
}

/** Checks a list of requested binds; the first problem is reported. */
export function checkExtraBinds(requests: readonly ExtraBindRequest[]): Result<ExtraBindError, readonly ExtraBind[]> {
  if (requests.length > MAX_EXTRA_BINDS) {
    return err({ _tag: 'ExtraBindError', index: MAX_EXTRA_BINDS, message: `at most ${MAX_EXTRA_BINDS} extra binds` });
  }
  const checked: ExtraBind[] = [];
  for (const [index, request] of requests.entries()) {
    const fail = (message: string) => err<ExtraBindError>({ _tag: 'ExtraBindError', index, message });
    const target = request.target ?? request.source;
    if (request.mode !== 'read-only' && request.mode !== 'read-write')
      return fail('mode must be read-only or read-write');
    if (!isNormalizedAbsolute(request.source)) return fail('source must be a normalized absolute path');
    if (!isNormalizedAbsolute(target)) return fail('target must be a normalized absolute path');
    let source: string;
    try {
      source = realpathSync(request.source);
    } catch {
      return fail(`source does not exist: ${request.source}`);
    }
    const badSource = sourceProblem(source);
    if (badSource !== null) return fail(`source ${source}: ${badSource}`);
    const badTarget = targetProblem(target);
    if (badTarget !== null) return fail(`target ${target}: ${badTarget}`);
    if (checked.some((other) => overlaps(other.target, target))) return fail(`target ${target} overlaps another bind`);
    checked.push({ source, target: target.length > 1 ? target.replace(/\/$/, '') : target, mode: request.mode });
  }
  return ok(checked);
}
