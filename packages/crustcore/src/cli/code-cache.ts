/**
 * Starts the CLI from its CommonJS bundle (dist/crustcore-cli.cjs) with a V8
 * code cache. Node 20 has no compile cache for ES modules, and a command that
 * runs loads ~500 kB of them: parsing and compiling that, and compiling each
 * function again on its first call, cost `crustcore run` ~70 ms of a ~600 ms
 * task (benches/run.bench.ts). Compiled from a cache, the same bundle starts
 * without either.
 *
 * The cache is written once, when the process exits (so it holds every
 * function the command compiled), to the first writable and trusted of: next
 * to the bundle, `$XDG_CACHE_HOME/crustcore` (or `~/.cache/crustcore`), then
 * `$CRUSTCORE_HOME/cache` (or `~/.crustcore/cache`, for umask 002). Its
 * name carries the bundle's content hash and Node's version and architecture,
 * so a new build or a new Node never reads an old file; V8 itself refuses
 * data made for other source or flags (`cachedDataRejected`), and the file is
 * then written again. Nothing of this runs in a sandbox, and no sandbox can
 * write either place: the worktree and a throwaway HOME are all it may write.
 *
 * V8's check is weaker than it looks: its "source hash" is the source's
 * length, so a cache made from any other script of the same length is
 * accepted and its code runs instead of the bundle (redteam/code-cache-attacks
 * .test.ts shows it). Whoever can write the file runs code as the user, so a
 * cache is read, and written, only where no one else can change it: a real
 * directory that this user or root owns and no one else may write, below
 * directories just as safe (root's sticky /tmp aside), holding a regular file
 * of this user or root that no one else may write. Only absolute places count:
 * a relative (or empty) HOME would make the cache the repository's.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { Script } from 'node:vm';

/** The user's home: $HOME when absolute, else the account's (a relative or empty HOME would be the cwd). */
function absoluteHome(env: NodeJS.ProcessEnv): string | null {
  if (env.HOME !== undefined && isAbsolute(env.HOME)) return env.HOME;
  try {
    const home = userInfo().homedir;
    return isAbsolute(home) ? home : null;
  } catch {
    return null; // No account entry: no user cache.
  }
}

/**
 * Where a cache file for `bundleId` may live, most preferred first; absolute places only: next to
 * the bundle, the user's cache directory, then CrustCore's own state directory. The last is for
 * umask 002 (user private groups, Debian's and Ubuntu's default): `~/.cache` is then
 * group-writable, which trustedDirectory refuses, while `~/.crustcore` is made 0700 by CrustCore.
 */
export function cacheCandidates(bundlePath: string, env: NodeJS.ProcessEnv): string[] {
  const home = absoluteHome(env);
  const xdg = env.XDG_CACHE_HOME;
  const userCache =
    xdg !== undefined && isAbsolute(xdg)
      ? join(xdg, 'crustcore')
      : home === null
        ? null
        : join(home, '.cache', 'crustcore');
  const own = env.CRUSTCORE_HOME;
  const stateCache =
    own !== undefined && isAbsolute(own)
      ? join(own, 'cache')
      : home === null
        ? null
        : join(home, '.crustcore', 'cache');
  return [dirname(bundlePath), userCache, stateCache].filter((place): place is string => place !== null);
}

/** The cache file's name: another bundle, Node version or architecture never shares it. */
export const cacheFileName = (bundleId: string): string =>
  `crustcore-cli-${bundleId}-${process.version}-${process.arch}.v8cache`;

const CACHE_FILE = /^crustcore-cli-.+\.v8cache$/;

/** Far above any real cache (~1.2 MB): a file larger than this is not ours. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

/** This user or root owns it, and no one else may write it. */
function ownedSafely(stat: Stats, uid: number): boolean {
  return (stat.uid === uid || stat.uid === 0) && (stat.mode & 0o022) === 0;
}

/**
 * The real path of `directory` when no one but this user or root can change what it holds: it and
 * every directory above it are theirs and written by no one else. Above it, root's sticky
 * directories (/tmp) pass: no one else may rename or remove what this user owns there.
 */
export function trustedDirectory(directory: string): string | null {
  const uid = process.geteuid?.();
  if (uid === undefined) return null;
  try {
    const real = realpathSync(directory);
    for (let dir = real; ; dir = dirname(dir)) {
      const stat = statSync(dir);
      const stickyOfRoot = dir !== real && stat.uid === 0 && (stat.mode & 0o1000) !== 0;
      if (!stat.isDirectory() || !(ownedSafely(stat, uid) || stickyOfRoot)) return null;
      if (dirname(dir) === dir) return real;
    }
  } catch {
    return null;
  }
}

/** The whole file behind `fd` when it is a safe cache: regular, ours or root's, sane size, read to the size fstat gave. */
function readCacheFile(fd: number, uid: number): Buffer | undefined {
  const stat = fstatSync(fd);
  if (!stat.isFile() || !ownedSafely(stat, uid) || stat.size === 0 || stat.size > MAX_CACHE_BYTES) return undefined;
  // Never more than that size: a file that grows as it is read (a /proc file has size 0) must not exhaust memory.
  const data = Buffer.alloc(stat.size);
  let got = 0;
  for (let n = 1; n > 0 && got < data.length; got += n) n = readSync(fd, data, got, data.length - got, got);
  return got === data.length ? data : undefined;
}

function readFirst(directories: readonly string[], name: string): Buffer | undefined {
  const uid = process.geteuid?.();
  if (uid === undefined) return undefined;
  for (const directory of directories) {
    const real = trustedDirectory(directory);
    if (real === null) continue;
    let fd: number | undefined;
    try {
      // Not a symlink; non-blocking, so a FIFO or a device in its place cannot hang the CLI.
      fd = openSync(join(real, name), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
      const data = readCacheFile(fd, uid);
      if (data !== undefined) return data;
    } catch {
      // Absent or unreadable: the next place, or compile from source.
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return undefined;
}

/**
 * Writes `data` to the first directory that takes it (temp file, then rename: a reader never sees
 * half a file, and two CLIs finishing together each rename a whole one), and removes all but the
 * newest caches of other builds there (removeOlderCaches).
 */
export function writeCodeCache(directories: readonly string[], name: string, data: Buffer): void {
  for (const directory of directories) {
    try {
      // A directory it makes is the user's alone (the XDG spec's 0700).
      mkdirSync(directory, { recursive: true, mode: 0o700 });
    } catch {
      continue;
    }
    // Written only where it would be read: a cache others could change is never made.
    const real = trustedDirectory(directory);
    if (real === null) continue;
    const temp = join(real, `.${name}.${process.pid}.tmp`);
    try {
      writeFileSync(temp, data, { flag: 'wx', mode: 0o644 });
      renameSync(temp, join(real, name));
      removeOlderCaches(real, name);
      return;
    } catch {
      removeQuietly(temp);
    }
  }
}

/**
 * Other builds' caches beside this one, newest first, beyond OTHER_CACHES_KEPT are removed. A few
 * stay because two installs may share a user cache (a global one and a project's `npx`): removing
 * every other one made each start of either rewrite its cache, and compile without one.
 */
const OTHER_CACHES_KEPT = 2;

function removeOlderCaches(directory: string, name: string): void {
  const others: { path: string; mtimeMs: number }[] = [];
  for (const entry of readdirSync(directory)) {
    if (entry === name || !CACHE_FILE.test(entry)) continue;
    const path = join(directory, entry);
    try {
      // The entry itself: a symlink planted here is judged (and removed) as a link, never followed.
      others.push({ path, mtimeMs: lstatSync(path).mtimeMs });
    } catch {
      // Gone meanwhile.
    }
  }
  others.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const older of others.slice(OTHER_CACHES_KEPT)) removeQuietly(older.path);
}

/** At exit, nothing may throw: a cache that could not be written only costs the next start its speed. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // ENOTDIR and the like: there is nothing to remove.
  }
}

export interface CachedStart {
  /** The file asking (the bin), and the bundle's path relative to it (dist/crustcore-cli.cjs). */
  readonly from: string;
  readonly bundle: string;
  /** The bundle's content hash, fixed at build time. */
  readonly bundleId: string;
  readonly env: NodeJS.ProcessEnv;
  /**
   * The bin's own `import()`: the bundle's imports of packages outside it (PGlite, the MCP SDK) go
   * through it (build.mjs rewrites them), because on Node 20 a function compiled from a code cache
   * has no dynamic-import callback of its own.
   */
  readonly importModule: (specifier: string) => Promise<unknown>;
}

/** CommonJS's own wrapper, and one more parameter: the import function above. */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname, __crustcoreImport) { ';
const WRAPPER_TAIL = '\n});';

/**
 * Compiles the bundle (from the cache when one fits) and runs it. Returns false, having run
 * nothing, when the bundle cannot be read or compiled — the caller then starts the ES module CLI;
 * once the bundle runs, the command is under way and there is no going back.
 */
export function startWithCodeCache({ from, bundle, bundleId, env, importModule }: CachedStart): boolean {
  let script: Script;
  let bundlePath: string;
  let directories: string[];
  let cached: Buffer | undefined;
  const name = cacheFileName(bundleId);
  try {
    // Resolved like a module (not joined by hand), so a loader hook sees which file the bin starts.
    bundlePath = createRequire(from).resolve(bundle);
    directories = cacheCandidates(bundlePath, env);
    cached = readFirst(directories, name);
    script = new Script(`${WRAPPER_HEAD}${readFileSync(bundlePath, 'utf8')}${WRAPPER_TAIL}`, {
      filename: bundlePath,
      ...(cached === undefined ? {} : { cachedData: cached }),
    });
  } catch {
    return false;
  }
  if (cached === undefined || script.cachedDataRejected === true)
    process.once('exit', () => writeCodeCache(directories, name, script.createCachedData()));
  const run = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
    importModule: CachedStart['importModule'],
  ) => void;
  const module = { exports: {} };
  const require = createRequire(bundlePath);
  run.call(module.exports, module.exports, require, module, bundlePath, dirname(bundlePath), importModule);
  return true;
}
