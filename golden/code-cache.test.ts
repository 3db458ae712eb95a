/**
 * The bin starts the CLI bundle from a V8 code cache (src/cli/code-cache.ts):
 * the first command writes the cache next to the bundle, the next ones read
 * it and write nothing; a damaged cache, or one of another build whose source
 * length differs, is refused by V8 (the command answers the same, the file is
 * written again). V8 checks only the source's length, so who may write the
 * cache's place is the real defence (redteam/code-cache-attacks.test.ts);
 * CRUSTCORE_CODE_CACHE=0 writes nothing and starts the ES module CLI.
 * Each test runs a copy of dist/ inside packages/crustcore (so the bundle
 * resolves the workspace's packages as the real one does), never the shared
 * dist/ other test files are running.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, cliEnv, makeRepo, REPO_ROOT, type Sandbox } from './cli-harness.js';

const DIST = join(REPO_ROOT, 'packages/crustcore/dist');
const CACHE_NAME = /^crustcore-cli-[0-9a-f]{16}-v\d+\.\d+\.\d+-\w+\.v8cache$/;

let box: Sandbox;
const copies: string[] = [];
beforeAll(() => {
  buildCli();
  box = makeRepo({ 'a.txt': 'a\n' });
}, 60_000);
afterEach(() => {
  for (const copy of copies.splice(0)) rmSync(copy, { recursive: true, force: true });
});

/** A private copy of the built CLI (bin, bundle, ES module CLI and its chunks), without any cache. */
function distCopy(): string {
  const copy = mkdtempSync(join(REPO_ROOT, 'packages/crustcore', '.code-cache-test-'));
  copies.push(copy);
  for (const name of ['crustcore.cjs', 'crustcore-cli.cjs', 'crustcore.js', 'chunks'])
    cpSync(join(DIST, name), join(copy, name), { recursive: true });
  return copy;
}

const cachesIn = (directory: string): string[] => readdirSync(directory).filter((name) => name.endsWith('.v8cache'));

function gc(copy: string, extraEnv: Record<string, string> = {}): { status: number | null; stdout: string } {
  return cli(copy, ['gc', '--json'], extraEnv);
}

function cli(
  copy: string,
  args: readonly string[],
  extraEnv: Record<string, string> = {},
): { status: number | null; stdout: string; stderr?: string } {
  const run = spawnSync(process.execPath, [join(copy, 'crustcore.cjs'), ...args], {
    cwd: box.repo,
    encoding: 'utf8',
    timeout: 120_000,
    env: cliEnv(box, { XDG_CACHE_HOME: join(box.root, 'xdg-cache'), ...extraEnv }),
  });
  return { status: run.status, stdout: run.stdout, ...(run.status === 0 ? {} : { stderr: run.stderr }) };
}

describe('the code cache of the CLI bundle', () => {
  it('is written by the first command next to the bundle, then read and never written again', () => {
    const copy = distCopy();
    expect(cachesIn(copy)).toEqual([]);
    const first = gc(copy);
    expect(first.status).toBe(0);
    const [name] = cachesIn(copy);
    expect(name).toMatch(CACHE_NAME);
    const written = statSync(join(copy, name as string));
    expect(written.size).toBeGreaterThan(0);
    const second = gc(copy);
    expect(second).toEqual(first);
    // Accepted, so not written again (a refused cache is rewritten: the next test's control).
    const after = statSync(join(copy, name as string));
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
    expect(JSON.parse(second.stdout)).toHaveProperty('removed');
  }, 120_000);

  it("with umask 002's group-writable directories, the cache goes to CrustCore's own state directory and is read there", () => {
    const copy = distCopy();
    const xdg = join(box.root, 'xdg-cache-002');
    mkdirSync(xdg);
    // What umask 002 makes: the bundle's directory and the user's cache directory group-writable.
    chmodSync(copy, 0o775);
    chmodSync(xdg, 0o775);
    const stateCache = join(box.home, 'cache');
    rmSync(stateCache, { recursive: true, force: true });
    // Shared by every test of this file: the others must not find this cache there.
    copies.push(stateCache);
    const first = gc(copy, { XDG_CACHE_HOME: xdg });
    expect(first.status).toBe(0);
    expect(cachesIn(copy)).toEqual([]);
    const [name] = cachesIn(stateCache);
    expect(name).toMatch(CACHE_NAME);
    expect(statSync(stateCache).mode & 0o777).toBe(0o700);
    const written = statSync(join(stateCache, name as string));
    // Read, not written again: V8 accepted it (a refused cache is rewritten).
    expect(gc(copy, { XDG_CACHE_HOME: xdg })).toEqual(first);
    const after = statSync(join(stateCache, name as string));
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
    // CONTROL: nothing was written where others of the group could change it.
    expect(readdirSync(xdg).flatMap((dir) => cachesIn(join(xdg, dir)))).toEqual([]);
  }, 120_000);

  it('compiled from the cache, a command that imports a package outside the bundle (memory: PGlite) answers', () => {
    const copy = distCopy();
    // Miss, then hit: on Node 20 a function from a code cache has no import() of its own (build.mjs).
    const miss = cli(copy, ['memory', 'list']);
    expect(miss.status).toBe(0);
    expect(cachesIn(copy)).toHaveLength(1);
    const hit = cli(copy, ['memory', 'list']);
    expect(hit).toEqual(miss);
    expect(hit.stdout).toContain('no memories yet');
  }, 120_000);

  it('a damaged cache is refused: the command answers the same and the file is written again', () => {
    const copy = distCopy();
    const expected = gc(copy, { CRUSTCORE_CODE_CACHE: '0' });
    expect(expected.status).toBe(0);
    const made = gc(copy);
    const [name] = cachesIn(copy);
    const path = join(copy, name as string);
    const garbage = Buffer.alloc(statSync(path).size, 0x5a);
    writeFileSync(path, garbage);
    expect(gc(copy)).toEqual(expected);
    expect(made).toEqual(expected);
    expect(readFileSync(path).equals(garbage)).toBe(false);
    // A truncated cache of the right build: refused too.
    writeFileSync(path, readFileSync(path).subarray(0, 4096));
    expect(gc(copy)).toEqual(expected);
    expect(statSync(path).size).toBeGreaterThan(4096);
  }, 120_000);

  it('a FIFO where the cache would be neither hangs the CLI nor is read; a real cache replaces it', () => {
    const copy = distCopy();
    gc(copy);
    const [name] = cachesIn(copy);
    const path = join(copy, name as string);
    rmSync(path);
    execFileSync('mkfifo', [path]);
    // Opened blocking, a FIFO with no writer never returns: spawnSync's timeout would end this with status null.
    expect(gc(copy).status).toBe(0);
    expect(statSync(path).isFile()).toBe(true);
  }, 120_000);

  it("other builds' caches are never read; all but the two newest go when this build's is written", () => {
    const copy = distCopy();
    // Three other builds, oldest first (mtimes set, not waited for): two installs may share a cache.
    const others = ['0000000000000000', '1111111111111111', '2222222222222222'].map(
      (id) => `crustcore-cli-${id}-v20.0.0-x64.v8cache`,
    );
    others.forEach((other, age) => {
      writeFileSync(join(copy, other), 'not a cache');
      utimesSync(join(copy, other), 1_000_000 + age, 1_000_000 + age);
    });
    expect(gc(copy).status).toBe(0);
    const caches = cachesIn(copy);
    expect(caches).toHaveLength(3);
    expect(caches).not.toContain(others[0]);
    expect(caches).toEqual(expect.arrayContaining([others[1], others[2]]));
  }, 120_000);

  it('CRUSTCORE_CODE_CACHE=0 starts the ES module CLI and writes no cache anywhere', () => {
    const copy = distCopy();
    const run = gc(copy, { CRUSTCORE_CODE_CACHE: '0' });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveProperty('removed');
    expect(cachesIn(copy)).toEqual([]);
    expect(() => readdirSync(join(box.root, 'xdg-cache'))).toThrow();
    // Control: the same copy, the cache on, writes one.
    expect(gc(copy).status).toBe(0);
    expect(cachesIn(copy)).toHaveLength(1);
  }, 120_000);

  it('a bundle that cannot be read hands over to the ES module CLI, which answers', () => {
    const copy = distCopy();
    rmSync(join(copy, 'crustcore-cli.cjs'));
    const run = gc(copy);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveProperty('removed');
    expect(cachesIn(copy)).toEqual([]);
  }, 120_000);
});
