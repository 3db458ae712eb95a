/**
 * Attacks on the CLI's V8 code cache (packages/crustcore/src/cli/code-cache.ts).
 *
 * V8 checks a code cache against a "source hash" that is only the source's
 * length: a cache compiled from any other script of the same length is
 * accepted and ITS code runs instead of the bundle. So a planted cache is
 * code execution as the user, and where the bin reads (and writes) caches is
 * the whole defence. Each test plants an evil same-length cache and starts a
 * small bundle through `startWithCodeCache` in a separate Node process (its
 * own cwd and environment), which prints GENUINE when the bundle's own code
 * runs and EVIL when the cache's does. CONTROLS: the same evil bytes as a
 * regular file of the user's in a safe directory do run (EVIL), so a GENUINE
 * elsewhere is the defence, not a cache V8 refused.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Script } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheCandidates, cacheFileName, writeCodeCache } from '../packages/crustcore/src/cli/code-cache.js';

const repoRoot = resolve(import.meta.dirname, '..');
const codeCacheSource = join(repoRoot, 'packages/crustcore/src/cli/code-cache.ts');
const NOBODY = 65534;
const BUNDLE_ID = '0123456789abcdef';
const NAME = cacheFileName(BUNDLE_ID);
// code-cache.ts wraps the bundle in CommonJS's function wrapper plus one parameter.
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname, __crustcoreImport) { ';
const WRAPPER_TAIL = '\n});';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});
function scratch(): string {
  const root = mkdtempSync(join(tmpdir(), 'crustcore-cache-attack-'));
  roots.push(root);
  return root;
}

const BUNDLE = `process.stdout.write('GENUINE ' + ${JSON.stringify('x'.repeat(400))}.length + '\\n');`;

/** A cache V8 accepts for the wrapped BUNDLE (same length) whose code prints EVIL. */
function evilCache(): Buffer {
  const length = WRAPPER_HEAD.length + BUNDLE.length + WRAPPER_TAIL.length;
  const head = "(function () { process.stdout.write('EVIL\\n'); ";
  const evil = `${head}${' '.repeat(length - head.length - 3)}\n})`;
  expect(evil.length).toBe(length);
  // A fresh flag-free process makes it, as the victim's Node would (V8 also checks its flags).
  const made = spawnSync(
    process.execPath,
    ['-e', `process.stdout.write(new (require('vm').Script)(${JSON.stringify(evil)}).createCachedData())`],
    { maxBuffer: 1 << 24 },
  );
  return made.stdout;
}

/** A dist directory (bin beside the bundle), owned by this user and written by no one else. */
function dist(root: string): string {
  const directory = join(root, 'dist');
  mkdirSync(directory, { mode: 0o755 });
  writeFileSync(join(directory, 'crustcore-cli.cjs'), BUNDLE);
  writeFileSync(join(directory, 'crustcore.cjs'), '// the bin');
  return directory;
}

/** Starts the bundle through startWithCodeCache in a fresh Node, in `cwd` with exactly `env`. */
function start(distDir: string, cwd: string, env: Record<string, string>): string {
  const driver = `
const { startWithCodeCache } = await import(${JSON.stringify(codeCacheSource)});
const started = startWithCodeCache({ from: ${JSON.stringify(join(distDir, 'crustcore.cjs'))}, bundle: './crustcore-cli.cjs', bundleId: ${JSON.stringify(BUNDLE_ID)}, env: process.env, importModule: (s) => import(s) });
if (!started) process.stdout.write('NOT STARTED\\n');
`;
  const run = spawnSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      join(repoRoot, 'node_modules/tsx/dist/esm/index.mjs'),
      '--input-type=module',
      '-e',
      driver,
    ],
    { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, encoding: 'utf8', timeout: 60_000 },
  );
  expect(run.status, run.stderr).toBe(0);
  // The run writes the bundle's own cache beside it at exit; gone again, so the next run reads where the test planted.
  rmSync(join(distDir, NAME), { force: true });
  return run.stdout.trim();
}

describe('redteam: the CLI code cache', () => {
  it('V8 runs a foreign cache of the same length instead of the source (the observable every test below uses)', () => {
    const source = `${WRAPPER_HEAD}${BUNDLE}${WRAPPER_TAIL}`;
    const script = new Script(source, { cachedData: evilCache() });
    expect(script.cachedDataRejected).toBe(false);
    let printed = '';
    const write = process.stdout.write;
    process.stdout.write = ((text: string) => {
      printed += text;
      return true;
    }) as typeof process.stdout.write;
    try {
      (script.runInThisContext() as () => void)();
    } finally {
      process.stdout.write = write;
    }
    expect(printed).toBe('EVIL\n');
  });

  it('a repository cannot plant the cache through an empty or relative HOME; CONTROL: next to the bundle it runs', () => {
    const root = scratch();
    const distDir = dist(root);
    const repo = join(root, 'repo');
    mkdirSync(join(repo, '.cache/crustcore'), { recursive: true, mode: 0o755 });
    mkdirSync(join(repo, 'sub/.cache/crustcore'), { recursive: true, mode: 0o755 });
    writeFileSync(join(repo, '.cache/crustcore', NAME), evilCache());
    writeFileSync(join(repo, 'sub/.cache/crustcore', NAME), evilCache());
    for (const home of ['', '.', 'sub']) {
      expect(cacheCandidates(join(distDir, 'crustcore-cli.cjs'), { HOME: home }).every((p) => p.startsWith('/'))).toBe(
        true,
      );
      expect(start(distDir, repo, { HOME: home })).toMatch(/^GENUINE/);
    }
    writeFileSync(join(distDir, NAME), evilCache());
    expect(start(distDir, repo, { HOME: '' })).toBe('EVIL');
  });

  it("is not read from a cache directory others can write or own, nor below one; CONTROL: the user's own one runs", () => {
    const root = scratch();
    const distDir = dist(root);
    // No cache beside the bundle (start removes the one each run writes there): the user cache is read.
    const plant = (xdg: string, setUp: (directory: string) => void): string => {
      const directory = join(xdg, 'crustcore');
      mkdirSync(directory, { recursive: true, mode: 0o755 });
      writeFileSync(join(directory, NAME), evilCache(), { mode: 0o644 });
      setUp(directory);
      return start(distDir, root, { HOME: root, XDG_CACHE_HOME: xdg });
    };
    expect(plant(join(root, 'world'), (d) => chmodSync(d, 0o777))).toMatch(/^GENUINE/);
    expect(plant(join(root, 'group'), (d) => chmodSync(d, 0o775))).toMatch(/^GENUINE/);
    expect(plant(join(root, 'other-user'), (d) => chownSync(d, NOBODY, NOBODY))).toMatch(/^GENUINE/);
    // Below a directory anyone may write (not sticky): the directory itself can be swapped.
    const open = join(root, 'open');
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    expect(plant(join(open, 'xdg'), () => {})).toMatch(/^GENUINE/);
    // The file itself: another user's, or writable by others.
    expect(plant(join(root, 'file-owner'), (d) => chownSync(join(d, NAME), NOBODY, NOBODY))).toMatch(/^GENUINE/);
    expect(plant(join(root, 'file-mode'), (d) => chmodSync(join(d, NAME), 0o666))).toMatch(/^GENUINE/);
    // CONTROL: the same bytes, the user's own file in the user's own directory, run.
    expect(plant(join(root, 'own'), () => {})).toBe('EVIL');
  });

  it('a symlink where the cache would be is not followed (nor into an endless /proc file); CONTROL: the file itself runs', () => {
    const root = scratch();
    const distDir = dist(root);
    const elsewhere = join(root, 'elsewhere.v8cache');
    writeFileSync(elsewhere, evilCache());
    symlinkSync(elsewhere, join(distDir, NAME));
    expect(start(distDir, root, { HOME: root, XDG_CACHE_HOME: join(root, 'xdg') })).toMatch(/^GENUINE/);
    // A regular file of size 0 that never ends: read whole, it would take the machine's memory.
    symlinkSync('/proc/self/pagemap', join(distDir, NAME));
    expect(start(distDir, root, { HOME: root, XDG_CACHE_HOME: join(root, 'xdg') })).toMatch(/^GENUINE/);
    // CONTROL (the observable): it is a regular file, fstat says 0 bytes, and it has far more.
    const fd = openSync('/proc/self/pagemap', 'r');
    expect(statSync('/proc/self/pagemap').size).toBe(0);
    expect(readSync(fd, Buffer.alloc(1 << 20), 0, 1 << 20, 0)).toBe(1 << 20);
    writeFileSync(join(distDir, NAME), evilCache());
    expect(start(distDir, root, { HOME: root, XDG_CACHE_HOME: join(root, 'xdg') })).toBe('EVIL');
  });

  it("the writer neither writes into nor cleans a directory others can write, and never follows a planted name; CONTROL: in the user's own it cleans", () => {
    const root = scratch();
    const victim = join(root, 'victim.txt');
    writeFileSync(victim, 'precious');
    const stale = 'crustcore-cli-ffffffffffffffff-v20.0.0-x64.v8cache';
    const shared = join(root, 'shared');
    mkdirSync(shared, { mode: 0o777 });
    chmodSync(shared, 0o777);
    symlinkSync(victim, join(shared, stale));
    // The writer's temp name, planted as a symlink to the victim in a directory the writer uses.
    const own = join(root, 'own');
    mkdirSync(own, { mode: 0o700 });
    symlinkSync(victim, join(own, `.${NAME}.${process.pid}.tmp`));
    symlinkSync(victim, join(own, stale));
    // The writer keeps the two newest other caches: two newer ones make the planted link the one it removes.
    lutimesSync(join(own, stale), 1_000_000, 1_000_000);
    for (const id of ['1111111111111111', '2222222222222222'])
      writeFileSync(join(own, `crustcore-cli-${id}-v20.0.0-x64.v8cache`), 'another build');
    writeCodeCache([shared, own], NAME, Buffer.from('cache bytes'));
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(() => statSync(join(shared, NAME))).toThrow();
    // The planted temp made that write fail: no cache, nothing followed.
    expect(() => statSync(join(own, NAME))).toThrow();
    writeCodeCache([shared, own], NAME, Buffer.from('cache bytes'));
    expect(readFileSync(join(own, NAME), 'utf8')).toBe('cache bytes');
    // CONTROL: in its own directory the writer does remove other builds' entries (the link, not its target).
    expect(() => statSync(join(own, stale))).toThrow();
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    // CONTROL: a plain write through the planted name would have clobbered the victim.
    symlinkSync(victim, join(own, 'plain.tmp'));
    writeFileSync(join(own, 'plain.tmp'), 'clobbered');
    expect(readFileSync(victim, 'utf8')).toBe('clobbered');
  });
});
