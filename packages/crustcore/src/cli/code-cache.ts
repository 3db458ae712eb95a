/**
 * Starts the CLI from its CommonJS bundle (dist/crustcore-cli.cjs) with a V8
 * code cache. Node 20 has no compile cache for ES modules, and a command that
 * runs loads ~500 kB of them: parsing and compiling that, and compiling each
 * function again on its first call, cost `crustcore run` ~70 ms of a ~600 ms
 * task (benches/run.bench.ts). Compiled from a cache, the same bundle starts
 * without either.
 *
 * The cache is written once, when the process exits (so it holds every
 * function the command compiled), to the first writable of: next to the
 * bundle, then `$XDG_CACHE_HOME/crustcore` (or `~/.cache/crustcore`). Its
 * name carries the bundle's content hash and Node's version and architecture,
 * so a new build or a new Node never reads an old file; V8 itself refuses
 * data made for other source or flags (`cachedDataRejected`), and the file is
 * then written again. Nothing of this runs in a sandbox, and no sandbox can
 * write either place: the worktree and a throwaway HOME are all it may write.
 */
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { Script } from 'node:vm';

/** Where a cache file for `bundleId` may live, most preferred first. */
export function cacheCandidates(bundlePath: string, env: NodeJS.ProcessEnv): string[] {
  const xdg = env.XDG_CACHE_HOME;
  const userCache =
    xdg !== undefined && isAbsolute(xdg) ? join(xdg, 'crustcore') : join(env.HOME ?? homedir(), '.cache', 'crustcore');
  return [dirname(bundlePath), userCache];
}

/** The cache file's name: another bundle, Node version or architecture never shares it. */
export const cacheFileName = (bundleId: string): string =>
  `crustcore-cli-${bundleId}-${process.version}-${process.arch}.v8cache`;

const CACHE_FILE = /^crustcore-cli-.+\.v8cache$/;

/** Far above any real cache (~1.2 MB): a file larger than this is not ours. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

function readFirst(paths: readonly string[]): Buffer | undefined {
  for (const path of paths) {
    let fd: number | undefined;
    try {
      // Non-blocking, then a regular file of sane size only: a FIFO or a device in its place must not hang the CLI.
      fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
      const stat = fstatSync(fd);
      if (stat.isFile() && stat.size <= MAX_CACHE_BYTES) return readFileSync(fd);
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
 * half a file, and two CLIs finishing together each rename a whole one), and removes the caches of
 * other builds there.
 */
export function writeCodeCache(directories: readonly string[], name: string, data: Buffer): void {
  for (const directory of directories) {
    const temp = join(directory, `.${name}.${process.pid}.tmp`);
    try {
      mkdirSync(directory, { recursive: true });
      writeFileSync(temp, data, { flag: 'wx', mode: 0o644 });
      renameSync(temp, join(directory, name));
      for (const entry of readdirSync(directory))
        if (entry !== name && CACHE_FILE.test(entry)) removeQuietly(join(directory, entry));
      return;
    } catch {
      removeQuietly(temp);
    }
  }
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
    cached = readFirst(directories.map((directory) => join(directory, name)));
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
