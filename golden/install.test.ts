/**
 * Both install paths users take, for real, from ONE signed release built once
 * for the file (a release per path cost a second build, a second CLI build and
 * a second worker, and proved nothing more).
 *
 * 1. `npm i -g crustcore` (issue #17 item 1): the release tarballs
 * (xtask release) are published with `npm publish` to a local npm
 * registry (verdaccio on 127.0.0.1), then `npm i -g crustcore` into a clean
 * prefix installs from it and the installed `crustcore` bin answers
 * `--version` and runs `demo` end to end.
 * `crustcore` itself is unscoped, so routing only the @crustcore scope to the
 * local registry would send npm to the public one for it: the local registry
 * serves `crustcore` and `@crustcore/*` from what was published and proxies
 * every other name to the default registry, as the public registry would
 * serve them to a user.
 * Handshakes only: the registry is used after it printed its address and
 * answered a ping.
 *
 * 2. scripts/install.sh (issue #17 item 7): it checks the release's signature
 * and every tarball's SHA-256 before npm runs, then installs a working
 * `crustcore` bin. The control is the untouched release, which installs and
 * answers --version; each attack is a copy of it with one thing changed, and
 * must stop with exit 6 before anything is installed.
 *
 * Both npm runs share the user's npm cache and prefer it for metadata it can
 * answer (`--prefer-offline`): what is proven is that the release installs,
 * not that the default registry can be downloaded again.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksumList, sha256Hex } from '../packages/crustcore/src/release/checksums.js';
import { generateSigningKey, signingKeyFromPem, signMinisign } from '../packages/crustcore/src/release/minisign.js';
import { buildCli, mapBounded, REPO_ROOT } from './cli-harness.js';

const VERDACCIO = join(REPO_ROOT, 'node_modules/.bin/verdaccio');
const npmConfig = (key: string): string => execFileSync('npm', ['config', 'get', key], { encoding: 'utf8' }).trim();
const DEFAULT_REGISTRY = npmConfig('registry');
/** npm reads its global config from the prefix: a clean prefix would lose this machine's CA file. */
const GLOBAL_CONFIG = npmConfig('globalconfig');
/** The user's npm cache: third-party packages come from it or from the default registry. */
const USER_CACHE = join(process.env.HOME ?? tmpdir(), '.npm');
const CA_VARIABLES = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE'];

let work: string;
let release: string;
let registry: ChildProcess | undefined;
let registryUrl: string;

/** A port the kernel just handed out on 127.0.0.1 (verdaccio prints port 0 rather than the one it got). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Starts verdaccio and resolves once it printed its http address line. */
async function startRegistry(dir: string): Promise<string> {
  const port = await freePort();
  const config = join(dir, 'verdaccio.yaml');
  writeFileSync(
    config,
    [
      `storage: ${join(dir, 'storage')}`,
      'uplinks:',
      '  npmjs:',
      `    url: ${DEFAULT_REGISTRY}`,
      'packages:',
      "  'crustcore':",
      '    access: $all',
      '    publish: $all',
      "  '@crustcore/*':",
      '    access: $all',
      '    publish: $all',
      "  '**':",
      '    access: $all',
      '    proxy: npmjs',
      // warn: the address line the handshake waits for, and no line per request.
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const child = spawn(VERDACCIO, ['--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  registry = child;
  const lines = createInterface({ input: child.stdout });
  await new Promise<void>((done, fail) => {
    child.on('exit', (code) => fail(new Error(`verdaccio exited with ${code} before it listened`)));
    lines.on('line', (line) => {
      if (line.includes('http address')) done();
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const ping = await fetch(`${url}/-/ping`);
  expect(ping.ok).toBe(true);
  return url;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<string> {
  return new Promise((done, fail) => {
    execFile(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error === null ? done(stdout) : fail(new Error(`${command} ${args.join(' ')}: ${error.message}\n${stderr}`)),
    );
  });
}

/** npm with a user config of its own: no token, registry or prefix of the person running the test leaks in. */
function npmEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    // The machine's certificate authorities (ENVIRONMENT.md): npm and Node reach the default registry.
    ...Object.fromEntries(
      CA_VARIABLES.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])),
    ),
    npm_config_globalconfig: GLOBAL_CONFIG,
    npm_config_userconfig: join(home, '.npmrc'),
    npm_config_cache: USER_CACHE,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

const INSTALL = join(REPO_ROOT, 'scripts/install.sh');

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function install(from: string, pubkey: string, prefix: string): Promise<Outcome> {
  return new Promise((done) => {
    const child = execFile(
      'bash',
      [INSTALL, '--from', from, '--pubkey', pubkey, '--prefix', prefix],
      {
        encoding: 'utf8',
        env: { ...process.env, HOME: work, npm_config_cache: USER_CACHE, npm_config_prefer_offline: 'true' },
      },
      (_error, stdout, stderr) => done({ code: child.exitCode, stdout, stderr }),
    );
  });
}

/** A copy of the signed release for one attack. */
function copyOfRelease(name: string): string {
  const dir = join(work, name);
  cpSync(release, dir, { recursive: true });
  return dir;
}

function flipByte(path: string, index: number): void {
  const bytes = readFileSync(path);
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  writeFileSync(path, bytes);
}

beforeAll(async () => {
  buildCli();
  work = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-install-')));
  const xtask = (...args: string[]) =>
    execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'xtask/main.ts', ...args], {
      cwd: REPO_ROOT,
      stdio: 'pipe',
    });
  xtask('release-keygen', '--out', join(work, 'key'));
  const keyId = readFileSync(join(work, 'key', 'crustcore.key-id'), 'utf8').trim();
  release = join(work, 'release');
  xtask('release', '--no-build', '--out', release, '--key', join(work, 'key', 'crustcore.key'), '--key-id', keyId);
  registryUrl = await startRegistry(work);
}, 300_000);

afterAll(async () => {
  const running = registry !== undefined && registry.exitCode === null && registry.signalCode === null;
  if (running && registry !== undefined) {
    const exited = new Promise<void>((resolve) => registry?.once('exit', () => resolve()));
    registry.kill();
    await exited;
  }
  // Two installs and a release: hundreds of megabytes that must not pile up in /tmp run after run.
  if (work !== undefined) rmSync(work, { recursive: true, force: true, maxRetries: 3 });
});

describe('npm i -g crustcore from a registry', () => {
  it('publishes every package, installs the bin on a clean prefix, and runs --version and demo', async () => {
    const home = join(work, 'home');
    const prefix = join(work, 'prefix');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, '.npmrc'), '');
    const env = npmEnv(home);
    const tarballs = readdirSync(release).filter((name) => name.endsWith('.tgz'));
    expect(tarballs).toContain('crustcore-0.1.0.tgz');
    const host = registryUrl.replace(/^http:/, '');
    const started = Date.now();
    await mapBounded(tarballs, 4, (tarball) =>
      run(
        'npm',
        ['publish', join(work, 'release', tarball), '--registry', registryUrl, `--${host}/:_authToken=x`],
        env,
        work,
      ),
    );
    const published = Date.now();

    await run(
      'npm',
      ['i', '-g', '--prefix', prefix, '--prefer-offline', 'crustcore', '--registry', registryUrl],
      env,
      work,
    );
    const installed = Date.now();
    const bin = join(prefix, 'bin', 'crustcore');
    const runEnv = { PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: home, NO_COLOR: '1' };
    expect((await run('crustcore', ['--version'], runEnv, home)).trim()).toBe('crustcore 0.1.0');
    expect(realpathSync(bin)).toBe(join(prefix, 'lib/node_modules/crustcore/dist/crustcore.cjs'));

    const demo = await run('crustcore', ['demo'], { ...runEnv, CRUSTCORE_HOME: join(home, 'crustcore-home') }, home);
    expect(demo).toContain('✓ verified in a fresh worktree');
    expect(demo).toContain('● completed: applied');
    expect(demo).toMatch(/intact: \d+ frames hash-chained/);
    // Reported, never asserted: how long each step took on this machine.
    console.log(
      `publish ${published - started} ms, install ${installed - published} ms, demo ${Date.now() - installed} ms`,
    );
  }, 300_000);

  it('crustcore-nano.js copied alone answers --version, and runs demo with exactly the five packages docs/install.md names', async () => {
    const installed = join(work, 'prefix/lib/node_modules/crustcore');
    const alone = join(work, 'nano-alone');
    mkdirSync(alone);
    cpSync(join(installed, 'dist/crustcore-nano.js'), join(alone, 'crustcore-nano.js'));
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(work, 'home'), NO_COLOR: '1' };
    const nano = (args: readonly string[], home: string) =>
      run(process.execPath, [join(alone, 'crustcore-nano.js'), ...args], { ...env, CRUSTCORE_HOME: home }, alone);
    expect((await nano(['--version'], join(work, 'nano-home-1'))).trim()).toBe('crustcore 0.1.0');
    // Control: without the secrets pack, demo stops before recording anything (nothing unredacted).
    await expect(nano(['demo'], join(work, 'nano-home-2'))).rejects.toThrow('the redactor could not load');
    for (const name of ['@crustcore/secrets', '@crustcore/kernel', '@crustcore/sandbox', 'fp-ts', 'io-ts'])
      cpSync(join(installed, 'node_modules', name), join(alone, 'node_modules', name), { recursive: true });
    const demo = await nano(['demo'], join(work, 'nano-home-3'));
    expect(demo).toContain('● completed: applied');
  }, 120_000);
});

describe('scripts/install.sh', () => {
  it('installs the signed release (the control) and the bin answers --version', async () => {
    const prefix = join(work, 'good');
    const outcome = await install(release, join(release, 'crustcore.pub'), prefix);
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(execFileSync(join(prefix, 'bin', 'crustcore'), ['--version'], { encoding: 'utf8' }).trim()).toBe(
      'crustcore 0.1.0',
    );
  }, 300_000);

  it('refuses a tarball with one byte flipped, whichever tarball and wherever the byte', async () => {
    for (const [name, index] of [
      ['crustcore-0.1.0.tgz', 0],
      ['crustcore-kernel-0.1.0.tgz', 100],
      ['crustcore-state-0.1.0.tgz', -1],
    ] as const) {
      const dir = copyOfRelease(`flip-${name}`);
      const path = join(dir, name);
      flipByte(path, index < 0 ? readFileSync(path).length + index : index);
      const prefix = join(dir, 'prefix');
      const outcome = await install(dir, join(release, 'crustcore.pub'), prefix);
      expect(outcome.code, name).toBe(6);
      expect(outcome.stderr).toContain('does not match the signed SHA256SUMS');
      expect(existsSync(join(prefix, 'lib'))).toBe(false);
    }
  });

  it('refuses a checksum list edited to match a changed tarball, which sha256sum alone accepts (control)', async () => {
    const dir = copyOfRelease('edited-sums');
    flipByte(join(dir, 'crustcore-0.1.0.tgz'), 10);
    const sums = readFileSync(join(dir, 'SHA256SUMS'), 'utf8').replace(
      /^[0-9a-f]{64}(?= {2}crustcore-0\.1\.0\.tgz$)/m,
      sha256Hex(readFileSync(join(dir, 'crustcore-0.1.0.tgz'))),
    );
    writeFileSync(join(dir, 'SHA256SUMS'), sums);
    execFileSync('sha256sum', ['--check', '--strict', '--quiet', 'SHA256SUMS'], { cwd: dir });
    const outcome = await install(dir, join(release, 'crustcore.pub'), join(dir, 'prefix'));
    expect(outcome.code).toBe(6);
    expect(outcome.stderr).toContain('the signature does not match SHA256SUMS');
    expect(existsSync(join(dir, 'prefix', 'lib'))).toBe(false);
  });

  it('refuses a release re-signed by another key, and a truncated or comment-edited signature', async () => {
    const other = generateSigningKey().key;
    const resigned = copyOfRelease('other-key');
    writeFileSync(
      join(resigned, 'SHA256SUMS.minisig'),
      signMinisign(readFileSync(join(resigned, 'SHA256SUMS')), other, 'x'),
    );
    const truncated = copyOfRelease('truncated');
    const sig = readFileSync(join(truncated, 'SHA256SUMS.minisig'), 'utf8');
    writeFileSync(join(truncated, 'SHA256SUMS.minisig'), sig.slice(0, sig.length - 20));
    const comment = copyOfRelease('comment');
    writeFileSync(join(comment, 'SHA256SUMS.minisig'), sig.replace('\ntrusted comment: ', '\ntrusted comment: evil '));
    for (const dir of [resigned, truncated, comment]) {
      const outcome = await install(dir, join(release, 'crustcore.pub'), join(dir, 'prefix'));
      expect(outcome.code, dir).toBe(6);
      expect(outcome.stderr).toContain('refused');
      expect(existsSync(join(dir, 'prefix', 'lib'))).toBe(false);
    }
  });

  it('refuses a signed list that names a file outside the release directory', async () => {
    const dir = copyOfRelease('traversal');
    const key = signingKeyFromPem(
      readFileSync(join(work, 'key', 'crustcore.key'), 'utf8'),
      readFileSync(join(work, 'key', 'crustcore.key-id'), 'utf8').trim(),
    );
    const tarball = readFileSync(join(dir, 'crustcore-0.1.0.tgz'));
    for (const name of ['../crustcore-0.1.0.tgz', 'sub/crustcore-0.1.0.tgz', '.crustcore-0.1.0.tgz']) {
      const list = checksumList([
        { name: 'crustcore-0.1.0.tgz', data: tarball },
        { name, data: tarball },
      ]);
      writeFileSync(join(dir, 'SHA256SUMS'), list);
      writeFileSync(join(dir, 'SHA256SUMS.minisig'), signMinisign(Buffer.from(list), key, 'file:SHA256SUMS'));
      const outcome = await install(dir, join(release, 'crustcore.pub'), join(dir, 'prefix'));
      expect(outcome.code, name).toBe(6);
      expect(outcome.stderr).toContain('not a plain file name');
    }
  });
});
